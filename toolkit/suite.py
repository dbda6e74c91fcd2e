"""Scenario suites: versioned JSON files of tools and cases, and loading them.

The file format is documented in ``data/README.md``. ``load_suite`` reads the files; the rest
of the idea lives next door, and every name is importable from here too:

- ``toolkit.suite_model``     what a file holds: ``Tool``, ``Case``, ``ExpectedCall``, ...
- ``toolkit.suite_checks``    checking the suite as a whole; every problem in one ``SuiteError``
- ``toolkit.suite_variants``  ``Suite``: picking cases, clear or vague descriptions, enums off,
  distractors
- ``toolkit.bfcl``            BFCL's question and answer files as a suite (``import_bfcl``)
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .argument_checks import OMIT, matches_type
from .suite_checks import SuiteError, build_suite
from .suite_model import (CATEGORIES, LANGUAGES, Case, Category, ExpectedCall, Language, Message,
                          Tool)
from .suite_variants import Suite

__all__ = ["load_suite", "import_bfcl", "FORMAT_VERSION", "DEFAULT_DIR", "Suite", "SuiteError",
           "Case", "ExpectedCall", "Message", "Tool", "Category", "Language", "CATEGORIES",
           "LANGUAGES", "OMIT", "matches_type"]

FORMAT_VERSION = 1
DEFAULT_DIR = Path(__file__).resolve().parent.parent / "data" / "suite"


def _display(path: Path) -> str:
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if relative.startswith("..") else relative


def load_suite(path_or_dir: str | Path | None = None) -> Suite:
    """Load a suite file, or every ``*.json`` file of a directory (default: the shipped suite)."""
    root = Path(path_or_dir) if path_or_dir is not None else DEFAULT_DIR
    if root.is_dir():
        files = sorted(root.glob("*.json"))
        if not files:
            raise SuiteError([f"{_display(root)}: no .json suite files"])
    elif root.is_file():
        files = [root]
    else:
        raise SuiteError([f"{_display(root)}: no such file or directory"])
    problems: list[str] = []
    tool_entries: list[tuple[str, str, Any]] = []
    case_entries: list[tuple[str, Any, str | None]] = []
    for file in files:
        where = _display(file)
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
    return build_suite(tool_entries, case_entries, _display(root))


def import_bfcl(questions_path: str | Path, answers_path: str | Path | None = None) -> Suite:
    """A suite from BFCL's question and answer files: :func:`toolkit.bfcl.import_bfcl`."""
    # Imported here, not at the top: toolkit.bfcl imports this module.
    from .bfcl import import_bfcl

    return import_bfcl(questions_path, answers_path)
