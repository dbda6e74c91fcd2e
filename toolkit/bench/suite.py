"""Scenario suites: versioned JSON files of tools and cases, and loading them.

The file format is documented in ``data/README.md``; the shipped suite is package data, in
``toolkit/bench/scenarios/``, so an installed toolkit has it. ``load_suite`` reads the files;
the rest of the idea lives next door, and every name is importable from here too:

- ``suite_model``   what a file holds (``SuiteTool``, ``Case``, ``ExpectedCall``, ...) and
  ``Suite``: picking cases, clear or vague descriptions, enums off, distractors
- ``suite_checks``  checking the suite as a whole; every problem in one ``SuiteError``
- ``bfcl``          BFCL's question and answer files as a suite (``import_bfcl``);
  ``load_suite`` hands a BFCL question file to it
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from toolkit.bench.bfcl import import_bfcl, is_bfcl_file
from toolkit.bench.suite_checks import SuiteError, build_suite, display_path
from toolkit.bench.suite_model import (Suite)

__all__ = ["load_suite", "lesson_suite", "LESSON_TOOLS_FILE", "LESSON_CASES_FILE", "FORMAT_VERSION",
           "DEFAULT_DIR"]

FORMAT_VERSION = 1
DEFAULT_DIR = Path(__file__).resolve().parent / "scenarios"
LESSON_TOOLS_FILE = DEFAULT_DIR / "tools.json"
"""The 17 tools the lessons name one by one; the suite's other tool files give the bench more
cases to measure with."""
LESSON_CASES_FILE = DEFAULT_DIR / "lesson_cases.txt"
"""The ids of the 92 cases the lessons were written on, one a line (# starts a comment)."""


def lesson_suite() -> Suite:
    """The shipped suite as the lessons and the benchmarks they quote use it: the 17 tools of
    ``tools.json`` and the 92 cases of ``lesson_cases.txt``. The lessons' distractors, tool order
    and figures were measured on exactly these, so a lesson or benchmark run again draws the very
    same ones however the rest of the suite grows."""
    lines = LESSON_CASES_FILE.read_text("utf-8").splitlines()
    ids = {line.strip() for line in lines if line.strip() and not line.startswith("#")}
    narrowed = load_suite().with_tools_only(load_suite(LESSON_TOOLS_FILE).tools)
    missing = ids - {case.id for case in narrowed.cases}
    if missing:
        raise SuiteError([f"{display_path(LESSON_CASES_FILE)}: no case {', '.join(sorted(missing))} "
                          "offering only the lesson tools"])
    return Suite(narrowed.tools, tuple(case for case in narrowed.cases if case.id in ids), narrowed.source)


def load_suite(path_or_dir: str | Path | None = None, answers: str | Path | None = None, *,
               check_schemas: bool = True) -> Suite:
    """Load a suite file, or every ``*.json`` file of a directory (default: the shipped suite).

    ``check_schemas=False`` skips the check that each tool's parameters are a valid JSON Schema,
    every other check kept (a BFCL file is always checked whole). That check is the one that
    imports ``jsonschema``, which takes over a second where Jupyter's format checkers are
    installed: the app draws its form from such a load, then checks the whole suite before it
    runs anything.

    A BFCL question file (``BFCL_v4_<category>.json``: one JSON object per line, see
    :func:`toolkit.bench.bfcl.is_bfcl_file`) is imported with :func:`toolkit.bench.bfcl.import_bfcl`; its
    answers are read from ``answers``, or else from ``possible_answer/`` beside it.
    """
    root = Path(path_or_dir).expanduser() if path_or_dir is not None else DEFAULT_DIR
    if is_bfcl_file(root):
        return import_bfcl(root, answers)
    if answers is not None:
        raise SuiteError([f"{display_path(Path(answers))}: answers are read only with a BFCL "
                          f"question file (BFCL_v4_<category>.json, one JSON object per line), "
                          f"and {display_path(root)} is not one; leave the answers out"])
    if root.is_dir():
        files = sorted(root.glob("*.json"))
        if not files:
            raise SuiteError([f"{display_path(root)}: no .json suite files"])
    elif root.is_file():
        files = [root]
    else:
        raise SuiteError([f"{display_path(root)}: no such file or directory"])
    problems: list[str] = []
    tool_entries: list[tuple[str, str, Any]] = []
    case_entries: list[tuple[str, Any, str | None]] = []
    for file in files:
        where = display_path(file)
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            problems.append(f"{where}: line {error.lineno}: not valid JSON ({error.msg})")
            continue
        if not isinstance(data, dict):
            problems.append(f"{where}: the file must hold a JSON object")
            continue
        unknown = sorted(set(data) - {"format_version", "description", "tools", "cases"})
        if unknown:
            problems.append(f"{where}: unknown top-level field(s) {', '.join(unknown)}")
        if data.get("format_version") != FORMAT_VERSION:
            problems.append(f"{where}: format_version {data.get('format_version')!r} is not "
                            f"supported (expected {FORMAT_VERSION})")
            continue
        tools, cases = data.get("tools", {}), data.get("cases", [])
        if not isinstance(tools, dict):
            problems.append(f"{where}: 'tools' must be an object of name -> tool")
        else:
            tool_entries += [(where, key, value) for key, value in tools.items()]
        if not isinstance(cases, list):
            problems.append(f"{where}: 'cases' must be a list")
        else:
            case_entries += [(where, value, None) for value in cases]
    if problems:
        raise SuiteError(problems)
    return build_suite(tool_entries, case_entries, display_path(root), check_schemas)
