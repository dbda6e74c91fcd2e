"""Checking tool calls against an answer key, following the Berkeley Function Calling Leaderboard.

The rules are BFCL's AST checker: the function name must match; every required parameter must
be present; no parameter that the schema or the answer key lacks; values must have the schema's
type (an int is fine where a number is expected, a bool is never an int); every value must be
one of the answer key's accepted values; an optional parameter may be left out only when the
key lists ``""`` among its accepted values; parallel calls match in any order; an
"irrelevance" case passes only when no call is made.

Selection (right tools, right number of calls) and arguments (everything right) are reported
separately, each failure with one reason from :data:`REASONS` and one human sentence.
Where this checker parts from BFCL, the data README says so.

This module checks a whole reply: it reads the calls, compares the tools called with the tools
expected, and pairs each expected call with a call that passes. It also scores a file of
recorded replies (``score_file``, ``format_table``) and is the command that does it,
``python -m toolkit.bench.scoring``. The rest lives next door, and every name is importable from
here too:

- ``toolkit.bench.argument_checks``  the rules for one call's arguments (schema, then answer key)
- ``toolkit.bench.verdict``          ``Verdict``, ``Reason`` and ``REASONS``: what a check says
- ``toolkit.bench.rates``            ``summarise`` and ``wilson_interval``: what many verdicts add up to
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Iterable, Mapping, NamedTuple

from toolkit.bench.argument_checks import (
    Failure,
    arguments_failure,
    json_type,
    short_json,
)
from toolkit.bench.rates import summarise
from toolkit.bench.suite import load_suite
from toolkit.bench.suite_checks import SuiteError
from toolkit.bench.verdict import Verdict
from toolkit.messages import ToolCall

# The names from next door are listed so that they stay importable from here, where they were
# first.
__all__ = ["check", "CutOff", "CallsFileError", "score_file", "format_table", "main"]


class CutOff(str):
    """A parse error that is the reply running out of ``max_tokens`` in the middle of a call.

    Given to ``check`` as ``parse_error``, it is scored with a reason of its own, ``cut_off``:
    the model was not wrong about the format, it was stopped before it finished.
    """


# ---------------------------------------------------------------- one call, many calls

class _Call(NamedTuple):
    name: str | None
    arguments: dict | None
    error: str | None


def _parse_call(raw: Any, position: int) -> _Call | Failure:
    if isinstance(raw, ToolCall):  # the loop's and the experiment's calls
        raw = {"name": raw.name, "arguments": raw.arguments}
    if isinstance(raw, Mapping) and isinstance(raw.get("function"), Mapping):
        raw = raw["function"]  # OpenAI's {"id", "type", "function": {...}} shape
    if not isinstance(raw, Mapping):
        return Failure("unparsable", f"Call {position} is not an object: {short_json(repr(raw))}.")
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        return Failure("unparsable", f"Call {position} has no tool name.")
    arguments = raw.get("arguments")
    if arguments is None:
        return _Call(name, {}, None)
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError as error:
            return _Call(name, None, f"not valid JSON ({error.msg})")
    if not isinstance(arguments, dict):
        return _Call(name, None, f"a JSON {json_type(arguments)}, not an object")
    return _Call(name, arguments, None)


def _call_failure(expected: Any, call: _Call, schema: Mapping) -> Failure | None:
    if call.error:
        return Failure("unparsable", f"{call.name}: the arguments are {call.error}.")
    return arguments_failure(call.arguments, expected.arguments, schema, call.name)


# How far a failing call got: used to pick the most telling failure to report.
_PROGRESS = {"unparsable": 0, "missing_required": 1, "unexpected_parameter": 2, "wrong_type": 3}


def _max_matching(n_left: int, n_right: int, fits) -> dict[int, int]:
    """Maximum bipartite matching (augmenting paths); returns right index -> left index."""
    owner: dict[int, int] = {}

    def assign(left: int, seen: set[int]) -> bool:
        for right in range(n_right):
            if right not in seen and fits(left, right):
                seen.add(right)
                if right not in owner or assign(owner[right], seen):
                    owner[right] = left
                    return True
        return False

    for left in range(n_left):
        assign(left, set())
    return owner


def _names(names: Iterable[str]) -> str:
    counts = Counter(names)
    return ", ".join(f"{n} ×{c}" if c > 1 else n for n, c in sorted(counts.items()))


def check(case: Any, calls: list | None = None, parse_error: str | bool | None = None,
          *, schemas: Mapping[str, Mapping] | None = None) -> Verdict:
    """Check one reply (its tool calls, or the fact that it could not be parsed) against a case.

    ``calls`` holds ``toolkit.messages.ToolCall`` objects (what the loop and the experiment
    read from a reply) or dicts ``{"name": str, "arguments": dict | JSON str}``, as a file of
    recorded calls holds them (OpenAI's nested ``{"function": {...}}`` shape works too). ``schemas`` maps tool name -> parameters schema;
    by default the schemas that the suite attached to the case.
    """
    schemas = case.schemas if schemas is None else schemas
    labels = dict(case_id=case.id, category=case.category, language=case.language)

    def fail(selection_ok: bool, failure: Failure) -> Verdict:
        return Verdict(**labels, selection_ok=selection_ok, arguments_ok=False,
                       reason=failure.reason, detail=failure.detail)

    if parse_error is not None and parse_error is not False:
        if calls:
            raise ValueError("give either calls or parse_error, not both")
        because = f": {parse_error}" if isinstance(parse_error, str) and parse_error else ""
        if isinstance(parse_error, CutOff):
            return fail(False, Failure("cut_off", f"The reply was cut off before its call was complete{because}."))
        return fail(False, Failure("unparsable", f"The reply could not be parsed{because}."))

    parsed = [_parse_call(raw, position) for position, raw in enumerate(calls or [], start=1)]
    for item in parsed:
        if isinstance(item, Failure):
            return fail(False, item)
    expected = list(case.expected)
    wanted = [call.name for call in expected]
    got = [call.name for call in parsed]
    if not expected:
        if not parsed:
            return Verdict(**labels, selection_ok=True, arguments_ok=True)
        return fail(False, Failure(
            "spurious_call", f"No tool was needed, but the model called {_names(got)}."))
    if not parsed:
        return fail(False, Failure(
            "no_call", f"Expected a call to {_names(wanted)}, but the model made no call."))
    if len(parsed) != len(expected):
        return fail(False, Failure(
            "wrong_call_count",
            f"Expected {len(expected)} call(s) ({_names(wanted)}), "
            f"got {len(parsed)} ({_names(got)})."))
    if Counter(wanted) != Counter(got):
        return fail(False, Failure(
            "wrong_tool", f"Expected {_names(wanted)}, got {_names(got)}."))

    missing = sorted({name for name in wanted if name not in schemas})
    if missing:
        raise ValueError(f"no parameters schema for {', '.join(missing)} (case {case.id!r})")
    outcomes = {
        (i, j): _call_failure(expected[i], parsed[j], schemas[expected[i].name])
        for i in range(len(expected)) for j in range(len(parsed))
        if expected[i].name == parsed[j].name
    }
    owner = _max_matching(len(expected), len(parsed),
                          lambda i, j: (i, j) in outcomes and outcomes[i, j] is None)
    if len(owner) == len(expected):
        return Verdict(**labels, selection_ok=True, arguments_ok=True)
    # Report the closest miss of the first expected call left without a partner.
    free_calls = [j for j in range(len(parsed)) if j not in owner]
    first = next(i for i in range(len(expected)) if i not in owner.values())
    misses = [outcomes[first, j] for j in free_calls if (first, j) in outcomes]
    best = max(misses, key=lambda failure: _PROGRESS.get(failure.reason, 4))
    return fail(True, best)


# ---------------------------------------------------------------- recorded runs
# Scoring a file of recorded calls, and ``python -m toolkit.bench.scoring``. They live here rather
# than in a module of their own because they need ``check`` and this module offers them:
# two modules that import each other would be a circle.

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
        prog="python -m toolkit.bench.scoring",
        description="Score recorded tool calls against a scenario suite (BFCL AST rules).")
    parser.add_argument("--suite", default=None,
                        help="suite file or directory (default: the shipped toolkit/bench/scenarios)")
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


if __name__ == "__main__":
    sys.exit(main())
