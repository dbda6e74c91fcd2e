"""Importing the Berkeley Function Calling Leaderboard's files as a scenario suite.

BFCL ships its questions and its possible answers as two JSON-lines files. ``import_bfcl``
turns them into the same :class:`~toolkit.suite.Suite` that ``load_suite`` reads from this
lab's own files, so BFCL cases are checked, filtered and scored like any other. The mapping is
documented in ``data/README.md``; problems are gathered into one ``SuiteError``.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from .suite import _display
from .suite_checks import SuiteError, build_suite
from .suite_variants import Suite

_BFCL_TYPES = {"dict": "object", "float": "number", "tuple": "array", "any": None,
               "object": "object", "number": "number", "array": "array", "string": "string",
               "integer": "integer", "boolean": "boolean", "null": "null"}
_BFCL_ID = re.compile(r"^(?:live_)?(parallel_multiple|parallel|multiple|simple|irrelevance)_\d")


class _Problem(Exception):
    pass


def _bfcl_schema(schema: Any, where: str) -> Any:
    if not isinstance(schema, dict):
        return schema
    converted = {}
    for key, value in schema.items():
        if key == "type":
            if not isinstance(value, str) or value not in _BFCL_TYPES:
                raise _Problem(f"{where}.type {value!r} is not a type this importer knows")
            if _BFCL_TYPES[value]:
                converted["type"] = _BFCL_TYPES[value]
        elif key == "properties" and isinstance(value, dict):
            converted[key] = {name: _bfcl_schema(sub, f"{where}.properties.{name}")
                              for name, sub in value.items()}
        elif key in ("items", "additionalProperties"):
            converted[key] = _bfcl_schema(value, f"{where}.{key}")
        else:
            converted[key] = value
    return converted


def _read_jsonl(path: Path) -> list[tuple[int, Any]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise SuiteError([f"{_display(path)}: cannot read ({error.strerror})"]) from error
    records, problems = [], []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            problems.append(f"{_display(path)}: line {number}: not valid JSON ({error.msg})")
            continue
        if not isinstance(record, dict) or not isinstance(record.get("id"), str):
            problems.append(f"{_display(path)}: line {number}: needs a string 'id'")
            continue
        records.append((number, record))
    if problems:
        raise SuiteError(problems)
    return records


def _bfcl_messages(question: Any) -> list:
    if isinstance(question, str):
        return [{"role": "user", "content": question}]
    if isinstance(question, list) and question and all(isinstance(t, list) for t in question):
        if len(question) != 1:
            raise _Problem("question: multi-turn questions are not supported")
        return question[0]
    if isinstance(question, list):
        return question
    raise _Problem("question: expected a string or a list of turns")


def _bfcl_expected(ground_truth: Any) -> list[dict]:
    if isinstance(ground_truth, dict):
        ground_truth = [ground_truth]
    if not isinstance(ground_truth, list):
        raise _Problem("ground_truth: expected a list of {function: {parameter: [values]}}")
    calls = []
    for index, item in enumerate(ground_truth):
        if not isinstance(item, dict) or len(item) != 1:
            raise _Problem(f"ground_truth[{index}]: expected exactly one function name")
        [(name, arguments)] = item.items()
        calls.append({"name": name, "arguments": arguments})
    return calls


def import_bfcl(questions_path: str | Path, answers_path: str | Path | None = None) -> Suite:
    """A suite from BFCL's JSON-lines question file and its possible-answer file.

    BFCL types are mapped to JSON Schema ("dict" -> object, "float" -> number, "tuple" -> array,
    "any" -> no type); the category comes from the id prefix ("live_" dropped); irrelevance
    questions need no answers. BFCL has one description per function, used as clear and vague.
    """
    questions_path = Path(questions_path)
    questions = _read_jsonl(questions_path)
    answers: dict[str, tuple[int, Any]] = {}
    if answers_path is not None:
        answers_path = Path(answers_path)
        for number, record in _read_jsonl(answers_path):
            if record["id"] in answers:
                raise SuiteError([f"{_display(answers_path)}: line {number}: case "
                                  f"'{record['id']}': a second answer for this id"])
            answers[record["id"]] = (number, record)
    problems: list[str] = []
    tool_entries: list[tuple[str, str, Any]] = []
    definitions: dict[str, Any] = {}
    case_entries: list[tuple[str, Any, str | None]] = []
    for number, record in questions:
        case_id = record["id"]
        where = f"{_display(questions_path)}: line {number}"
        try:
            match = _BFCL_ID.match(case_id)
            if not match:
                raise _Problem("the id prefix is not a category this importer knows")
            category = match.group(1)
            functions = record.get("function")
            functions = [functions] if isinstance(functions, dict) else functions
            if not isinstance(functions, list) or not functions:
                raise _Problem("function: expected a list of function definitions")
            offered = []
            for index, function in enumerate(functions):
                if not isinstance(function, dict) or not isinstance(function.get("name"), str):
                    raise _Problem(f"function[{index}]: needs a 'name'")
                name = function["name"]
                parameters = _bfcl_schema(function.get("parameters", {"type": "dict"}),
                                          f"function[{index}].parameters")
                if not isinstance(parameters, dict):
                    raise _Problem(f"function[{index}].parameters: expected an object schema")
                parameters.setdefault("properties", {})
                description = function.get("description") or name
                tool = {"name": name, "clear": description, "vague": description,
                        "parameters": parameters}
                key = name if definitions.get(name, tool) == tool else f"{name}#{case_id}"
                if key not in definitions:
                    definitions[key] = tool
                    tool_entries.append((where, key, tool))
                offered.append(key)
            messages = _bfcl_messages(record.get("question"))
            expected: list[dict] = []
            answer_where = None
            if category != "irrelevance":
                if case_id not in answers:
                    raise _Problem("no possible answer with this id"
                                   + ("" if answers_path else " (no answers file given)"))
                answer_line, answer = answers[case_id]
                answer_where = f"{_display(answers_path)}: line {answer_line}"
                try:
                    expected = _bfcl_expected(answer.get("ground_truth"))
                except _Problem as problem:
                    problems.append(f"{answer_where}: case '{case_id}': {problem}")
                    continue
            text = " ".join(str(m.get("content", "")) for m in messages if isinstance(m, dict))
            language = "zh" if re.search(r"[\u4e00-\u9fff]", text) else "en"
            case_entries.append((where, {"id": case_id, "category": category,
                                         "language": language, "messages": messages,
                                         "tools": offered, "expected": expected},
                                 answer_where))
        except _Problem as problem:
            problems.append(f"{where}: case '{case_id}': {problem}")
    asked = {record["id"] for _, record in questions}
    for case_id, (number, _) in answers.items():
        if case_id not in asked:
            problems.append(f"{_display(answers_path)}: line {number}: case '{case_id}': "
                            f"no question with this id")
    if problems:
        raise SuiteError(problems)
    return build_suite(tool_entries, case_entries, _display(questions_path))
