"""Scoring a file of recorded tool calls against a suite, and the command line that does it.

``score_file`` reads one reply per line, checks each with :func:`toolkit.scoring.check`, and
``format_table`` prints the rates with their Wilson intervals, overall and per group. The file
format and the command are documented in ``data/README.md``; the command is run as
``python -m toolkit.scoring``.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from .scoring import Verdict, check, summarise
from .suite import SuiteError, load_suite


class CallsFileError(ValueError):
    """A recorded-calls file that cannot be read; the message names the file and line."""


def score_file(suite: Any, calls_path: str | Path) -> list[Verdict]:
    """Score a JSON-lines file of ``{"case_id", "calls"}`` or ``{"case_id", "parse_error"}``."""
    path = Path(calls_path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise CallsFileError(f"{path}: cannot read ({error.strerror})") from error
    cases = {case.id: case for case in suite.cases}
    verdicts = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}: line {number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise CallsFileError(f"{where}: not valid JSON ({error.msg})") from error
        if not isinstance(record, dict) or not isinstance(record.get("case_id"), str):
            raise CallsFileError(f"{where}: each line needs a string 'case_id'")
        case = cases.get(record["case_id"])
        if case is None:
            raise CallsFileError(f"{where}: case_id {record['case_id']!r} is not in the suite")
        has_calls, has_error = "calls" in record, "parse_error" in record
        if has_calls == has_error:
            raise CallsFileError(f"{where}: give exactly one of 'calls' and 'parse_error'")
        if has_calls and not isinstance(record["calls"], list):
            raise CallsFileError(f"{where}: 'calls' must be a list")
        if has_error and not isinstance(record["parse_error"], str):
            raise CallsFileError(f"{where}: 'parse_error' must be a string")
        verdicts.append(check(case, calls=record.get("calls"), parse_error=record.get("parse_error")))
    return verdicts


def format_table(verdicts: list[Verdict], z: float = 1.96, by: str | None = "category") -> str:
    """A plain-text table: one row for all cases, then one per group, then failure reasons."""
    groups: dict[str, list[Verdict]] = {"all": verdicts}
    if by:
        for verdict in verdicts:
            groups.setdefault(f"  {getattr(verdict, by)}", []).append(verdict)

    def cell(summary: dict, aspect: str) -> str:
        rate = summary[f"{aspect}_rate"]
        low, high = summary[f"{aspect}_interval"]
        shown = "   -  " if rate is None else f"{rate:6.1%}"
        return f"{shown} [{low:6.1%}, {high:6.1%}]"

    percent = f"{1 - 2 * (1 - _normal_cdf(z)):.0%}"
    rows = [f"{'group':<22}{'n':>5}  {'selection':<24}  {'arguments':<24}",
            f"{'':<22}{'':>5}  {'rate [' + percent + ' Wilson]':<24}  {'rate [' + percent + ' Wilson]':<24}"]
    for name, members in groups.items():
        summary = summarise(members, z)
        rows.append(f"{name:<22}{summary['n']:>5}  {cell(summary, 'selection'):<24}  "
                    f"{cell(summary, 'arguments'):<24}")
    reasons = summarise(verdicts, z)["reasons"]
    failing = ", ".join(f"{reason} {count}" for reason, count in reasons.items() if count)
    rows.append(f"failures: {failing or 'none'}")
    return "\n".join(row.rstrip() for row in rows)


def _normal_cdf(z: float) -> float:
    return 0.5 * (1 + math.erf(z / math.sqrt(2)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m toolkit.scoring",
        description="Score recorded tool calls against a scenario suite (BFCL AST rules).")
    parser.add_argument("--suite", default=None,
                        help="suite file or directory (default: the shipped data/suite)")
    parser.add_argument("--calls", required=True,
                        help='JSON lines: {"case_id", "calls": [...]} or {"case_id", "parse_error"}')
    parser.add_argument("--z", type=float, default=1.96, help="z for the Wilson interval")
    parser.add_argument("--by", choices=["category", "language", "none"], default="category",
                        help="one row per group")
    args = parser.parse_args(argv)

    try:
        suite = load_suite(args.suite)
        verdicts = score_file(suite, args.calls)
    except (SuiteError, CallsFileError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(format_table(verdicts, args.z, None if args.by == "none" else args.by))
    return 0
