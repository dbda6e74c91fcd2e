"""Checking a suite as a whole: every tool's schema, every case against the suite's tools, and
every answer key against the schema it answers.

All problems are gathered before anything is raised, into one :class:`SuiteError` whose lines
name the file, the case and the field: someone editing a suite file fixes them all in one go
instead of meeting them one run at a time.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable, Mapping

from pydantic import ValidationError

from toolkit.bench.argument_checks import OMIT, matches_type
from toolkit.bench.suite_model import Case, Suite, SuiteTool
from toolkit.json_schema import schema_error

__all__ = ["SuiteError", "build_suite", "display_path"]


class SuiteError(ValueError):
    """A suite that cannot be used; ``problems`` holds one line per problem."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        if len(self.problems) == 1:
            message = self.problems[0]
        else:
            message = f"{len(self.problems)} problems:\n" + "\n".join(self.problems)
        super().__init__(message)


def display_path(path: Path) -> str:
    """A path as a problem names it: relative to the working folder when inside it."""
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if relative.startswith("..") else relative


def _loc(parts: Iterable[Any]) -> str:
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _pydantic_problems(error: ValidationError) -> list[str]:
    problems = []
    for item in error.errors():
        message = item["msg"].removeprefix("Value error, ")
        where = _loc(item["loc"])
        problems.append(f"{where}: {message}" if where else message)
    return problems


def _tool_problems(key: str, tool: SuiteTool, check_schema: bool = True) -> list[str]:
    where = f"tool '{key}': parameters"
    schema = tool.parameters
    if check_schema and (error := schema_error(schema)) is not None:
        return [f"{where}: not a valid JSON Schema ({error.message})"]
    if schema.get("type") != "object" or not isinstance(schema.get("properties"), dict):
        return [f"{where}: must be an object schema with 'properties'"]
    problems = [f"{where}.required: '{name}' is not a property"
                for name in schema.get("required", []) if name not in schema["properties"]]
    problems += _enum_problems(schema, where)
    return problems


def _enum_problems(schema: Any, where: str) -> list[str]:
    if not isinstance(schema, dict):
        return []
    problems = []
    types = schema.get("type")
    types = [types] if isinstance(types, str) else (types or [])
    for value in schema.get("enum", []):
        if types and not any(matches_type(value, t) for t in types):
            problems.append(f"{where}.enum: {json.dumps(value, ensure_ascii=False)} is not "
                            f"{' or '.join(types)}")
    for name, sub in (schema.get("properties") or {}).items():
        problems += _enum_problems(sub, f"{where}.properties.{name}")
    problems += _enum_problems(schema.get("items"), f"{where}.items")
    return problems


def _options_problems(options: Any, schema: Mapping, where: str, required: bool) -> list[str]:
    if not isinstance(options, list) or not options:
        return [f"{where}: must be a non-empty list of accepted values"]
    problems = []
    for index, option in enumerate(options):
        if option == OMIT:
            if required:
                problems.append(f"{where}: \"\" (may be omitted) is not allowed for a required "
                                f"parameter")
            continue
        problems += _value_problems(option, schema, f"{where}[{index}]")
    return problems


def _value_problems(value: Any, schema: Mapping, where: str) -> list[str]:
    """Does an accepted value fit the schema? A dict is a spec: key -> list of accepted values."""
    types = schema.get("type")
    types = [types] if isinstance(types, str) else (types or [])
    shown = json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        if types and "object" not in types:
            return [f"{where}: an object is not {' or '.join(types)}"]
        properties = schema.get("properties")
        problems = []
        for name, options in value.items():
            if isinstance(properties, dict) and name not in properties \
                    and not schema.get("additionalProperties"):
                problems.append(f"{where}.{name}: not a property of the schema")
                continue
            sub = (properties or {}).get(name, {})
            problems += _options_problems(options, sub, f"{where}.{name}",
                                          name in schema.get("required", []))
        problems += [f"{where}.{name}: required by the schema but has no accepted values"
                     for name in schema.get("required", []) if name not in value]
        return problems
    if types and not any(matches_type(value, t) for t in types):
        return [f"{where}: {shown} is not {' or '.join(types)}"]
    if isinstance(value, list):
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        return [p for index, item in enumerate(value)
                for p in _value_problems(item, items, f"{where}[{index}]")]
    enum = schema.get("enum")
    if enum is not None and not any(type(value) is type(e) and value == e for e in enum):
        return [f"{where}: {shown} is not one of the enum values {json.dumps(enum, ensure_ascii=False)}"]
    return []


def _case_problems(case: Case, tools: Mapping[str, SuiteTool]) -> list[str]:
    """Cross-checks of a case against the suite's tools; attaches the schemas when all is well."""
    problems = []
    offered = {}
    for index, key in enumerate(case.tools):
        if key not in tools:
            problems.append(f"tools[{index}] '{key}' is not a tool of the suite")
        else:
            name = tools[key].name or key
            if name in offered:
                problems.append(f"tools[{index}] '{key}' offers the name '{name}' a second time")
            offered[name] = tools[key]
    names = {tool.name or key: key for key, tool in tools.items()}
    for index, call in enumerate(case.expected):
        where = f"expected[{index}]"
        if call.name not in offered:
            problems.append(f"{where}.name '{call.name}' is "
                            + ("not among the case's tools" if call.name in names
                               else "not a tool of the suite"))
            continue
        schema = offered[call.name].parameters
        problems += _value_problems(call.arguments, schema, f"{where}.arguments")
    if not problems:
        case._schemas = {name: tool.parameters for name, tool in offered.items()}
    return problems


def build_suite(tool_entries: list[tuple[str, str, Any]],
                 case_entries: list[tuple[str, Any, str | None]], source: str,
                 check_schemas: bool = True) -> Suite:
    """Validate raw tools (where, key, data) and cases (where, data, where its answer key is)
    into a suite, or raise ``SuiteError``. ``check_schemas=False`` leaves out one check: that
    each tool's parameters are a valid JSON Schema (see ``load_suite``)."""
    if check_schemas:
        return _build_suite(tool_entries, case_entries, source, check_schemas=True)
    try:
        return _build_suite(tool_entries, case_entries, source, check_schemas=False)
    except SuiteError:
        raise
    except (ValueError, TypeError, KeyError, AttributeError):
        # The other checks read each schema as a valid one. A schema they cannot read is one
        # the left-out check refuses: make it after all, so the error names the schema.
        return _build_suite(tool_entries, case_entries, source, check_schemas=True)


def _build_suite(tool_entries: list[tuple[str, str, Any]],
                 case_entries: list[tuple[str, Any, str | None]], source: str,
                 check_schemas: bool) -> Suite:
    problems: list[str] = []
    tools: dict[str, SuiteTool] = {}
    defined_in: dict[str, str] = {}
    for where, key, data in tool_entries:
        if key in tools:
            problems.append(f"{where}: tool '{key}' is already defined in {defined_in[key]}")
            continue
        try:
            tool = SuiteTool.model_validate(data)
        except ValidationError as error:
            problems += [f"{where}: tool '{key}': {p}" for p in _pydantic_problems(error)]
            continue
        found = _tool_problems(key, tool, check_schemas)
        problems += [f"{where}: {p}" for p in found]
        if not found:
            tools[key] = tool.model_copy(update={"name": tool.name or key})
            defined_in[key] = where
    cases: list[Case] = []
    seen: dict[str, str] = {}
    for where, data, answer_where in case_entries:
        case_id = data.get("id") if isinstance(data, dict) else None
        named = f": case '{case_id}'" if isinstance(case_id, str) else ""

        def label(problem: str) -> str:
            place = answer_where if answer_where and problem.startswith("expected") else where
            return f"{place}{named}: {problem}"

        if isinstance(case_id, str) and case_id in seen:
            problems.append(label(f"id is already used in {seen[case_id]}"))
            continue
        try:
            case = Case.model_validate(data)
        except ValidationError as error:
            problems += [label(p) for p in _pydantic_problems(error)]
            continue
        seen[case.id] = where
        problems += [label(p) for p in _case_problems(case, tools)]
        cases.append(case)
    if problems:
        raise SuiteError(problems)
    return Suite(tools, tuple(cases), source)
