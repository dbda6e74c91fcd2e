"""Scenario suites: versioned JSON files of tools and cases.

The file format is documented in ``data/README.md``. Loading checks every file with pydantic
models and then cross-checks cases against tools; all problems are gathered into one
:class:`SuiteError` whose lines name the file, the case and the field.
"""
from __future__ import annotations

import copy
import json
import os
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Literal, Mapping, get_args

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator

from .scoring import OMIT, matches_type

FORMAT_VERSION = 1
DEFAULT_DIR = Path(__file__).resolve().parent.parent / "data" / "suite"

Category = Literal["simple", "multiple", "parallel", "parallel_multiple", "irrelevance", "enum",
                   "nested"]
Language = Literal["en", "zh"]
CATEGORIES: tuple[str, ...] = get_args(Category)
LANGUAGES: tuple[str, ...] = get_args(Language)


class SuiteError(ValueError):
    """A suite that cannot be used; ``problems`` holds one line per problem."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        if len(self.problems) == 1:
            message = self.problems[0]
        else:
            message = f"{len(self.problems)} problems:\n" + "\n".join(self.problems)
        super().__init__(message)


class Tool(BaseModel):
    """A tool of the suite: two descriptions of the same behaviour and one parameters schema."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str | None = Field(default=None, min_length=1)  # function name; defaults to the key
    clear: str = Field(min_length=1)
    vague: str = Field(min_length=1)
    parameters: dict[str, Any]


class Message(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None


class ExpectedCall(BaseModel):
    """One call of the answer key: for each parameter, the list of accepted values."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    arguments: dict[str, list[Any]] = Field(default_factory=dict)


class Case(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    category: Category
    language: Language
    messages: list[Message] = Field(min_length=1)
    tools: list[str] = Field(min_length=1)
    expected: list[ExpectedCall] = Field(default_factory=list)
    note: str | None = None
    _schemas: dict[str, dict] = PrivateAttr(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _question_is_a_user_message(cls, data: Any) -> Any:
        if isinstance(data, dict) and "question" in data:
            if "messages" in data:
                raise ValueError("give either 'messages' or 'question', not both")
            question = data["question"]
            if not isinstance(question, str) or not question.strip():
                raise ValueError("question: must be a non-empty string")
            data = {k: v for k, v in data.items() if k != "question"}
            data["messages"] = [{"role": "user", "content": question}]
        return data

    @model_validator(mode="after")
    def _shape(self) -> Case:
        if not any(m.role == "user" for m in self.messages):
            raise ValueError("messages: at least one user message is needed")
        if len(set(self.tools)) != len(self.tools):
            raise ValueError("tools: a tool is listed twice")
        count = len(self.expected)
        rule = {"irrelevance": count == 0, "simple": count == 1, "multiple": count == 1,
                "parallel": count >= 2, "parallel_multiple": count >= 2}.get(self.category,
                                                                            count >= 1)
        if not rule:
            raise ValueError(f"expected: a '{self.category}' case cannot expect {count} call(s)")
        return self

    @property
    def schemas(self) -> dict[str, dict]:
        """Parameters schema of each offered tool, by function name (set by the suite)."""
        return self._schemas

    @property
    def question(self) -> str:
        """The last user message."""
        return next(m.content for m in reversed(self.messages) if m.role == "user") or ""

    def reference_calls(self) -> list[dict]:
        """Calls that pass: the first accepted value of each parameter (omitted if that is "")."""
        return [{"name": call.name, "arguments": _first_choice(call.arguments)}
                for call in self.expected]


def _first_choice(spec: dict) -> dict:
    chosen = {}
    for name, options in spec.items():
        if options[0] != OMIT:
            chosen[name] = _build(options[0])
    return chosen


def _build(value: Any) -> Any:
    if isinstance(value, dict):
        return _first_choice(value)
    if isinstance(value, list):
        return [_build(item) for item in value]
    return value


# ---------------------------------------------------------------- the suite

@dataclass(frozen=True)
class Suite:
    tools: Mapping[str, Tool]
    cases: tuple[Case, ...]
    source: str = ""

    def __len__(self) -> int:
        return len(self.cases)

    def __iter__(self):
        return iter(self.cases)

    def case(self, case_id: str) -> Case:
        for case in self.cases:
            if case.id == case_id:
                return case
        raise KeyError(f"no case {case_id!r} in the suite")

    def tool_spec(self, name: str, description: str = "clear", enums: bool = True) -> dict:
        """The OpenAI ``tools`` entry for a tool: ``description`` is "clear", "vague" or a text of
        your own; ``enums=False`` turns every enum into a free string (descriptions kept)."""
        if name not in self.tools:
            raise KeyError(f"no tool {name!r} in the suite")
        tool = self.tools[name]
        text = {"clear": tool.clear, "vague": tool.vague}.get(description, description)
        if not isinstance(text, str) or not text.strip():
            raise ValueError("description must be 'clear', 'vague' or a non-empty text")
        parameters = copy.deepcopy(tool.parameters)
        if not enums:
            _drop_enums(parameters)
        return {"type": "function",
                "function": {"name": tool.name or name, "description": text,
                             "parameters": parameters}}

    def filter(self, categories: Iterable[str] | str | None = None,
               languages: Iterable[str] | str | None = None, limit: int | None = None) -> Suite:
        """The cases of the given categories and languages, in file order, at most ``limit``."""
        def wanted(values, allowed, what):
            if values is None:
                return None
            chosen = {values} if isinstance(values, str) else set(values)
            unknown = chosen - set(allowed)
            if unknown:
                raise ValueError(f"unknown {what}: {', '.join(sorted(unknown))}")
            return chosen

        keep_categories = wanted(categories, CATEGORIES, "category")
        keep_languages = wanted(languages, LANGUAGES, "language")
        cases = [c for c in self.cases
                 if (keep_categories is None or c.category in keep_categories)
                 and (keep_languages is None or c.language in keep_languages)]
        if limit is not None:
            cases = cases[:limit]
        return Suite(self.tools, tuple(cases), self.source)

    def distractors(self, case: Case | str, k: int, seed: int = 0) -> list[str]:
        """``k`` suite tools that the case does not expect, the same for the same seed and case."""
        case = self.case(case) if isinstance(case, str) else case
        expected = {call.name for call in case.expected}
        candidates = sorted(key for key, tool in self.tools.items()
                            if (tool.name or key) not in expected)
        if not 0 <= k <= len(candidates):
            raise ValueError(f"k must be between 0 and {len(candidates)} for case {case.id!r}")
        return random.Random(f"{seed}:{case.id}").sample(candidates, k)


def _drop_enums(schema: Any) -> None:
    if not isinstance(schema, dict):
        return
    values = schema.pop("enum", None)
    if values is not None and all(isinstance(v, str) for v in values):
        schema["type"] = "string"
    for key in ("properties", "$defs", "definitions"):
        for sub in (schema.get(key) or {}).values():
            _drop_enums(sub)
    for key in ("items", "additionalProperties"):
        _drop_enums(schema.get(key))
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in schema.get(key) or []:
            _drop_enums(sub)


# ---------------------------------------------------------------- checking

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


def _tool_problems(key: str, tool: Tool) -> list[str]:
    # Imported here: with jupyter's format checkers installed, importing jsonschema takes seconds.
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    where = f"tool '{key}': parameters"
    schema = tool.parameters
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as error:
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


def _case_problems(case: Case, tools: Mapping[str, Tool]) -> list[str]:
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


def _build_suite(tool_entries: list[tuple[str, str, Any]],
                 case_entries: list[tuple[str, Any, str | None]], source: str) -> Suite:
    """Validate raw tools (where, key, data) and cases (where, data, where its answer key is)
    into a suite, or raise."""
    problems: list[str] = []
    tools: dict[str, Tool] = {}
    defined_in: dict[str, str] = {}
    for where, key, data in tool_entries:
        if key in tools:
            problems.append(f"{where}: tool '{key}' is already defined in {defined_in[key]}")
            continue
        try:
            tool = Tool.model_validate(data)
        except ValidationError as error:
            problems += [f"{where}: tool '{key}': {p}" for p in _pydantic_problems(error)]
            continue
        found = _tool_problems(key, tool)
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


# ---------------------------------------------------------------- files

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
    return _build_suite(tool_entries, case_entries, _display(root))


def import_bfcl(questions_path: str | Path, answers_path: str | Path | None = None) -> Suite:
    """A suite from BFCL's question and answer files: :func:`toolkit.bfcl.import_bfcl`."""
    # Imported here, not at the top: toolkit.bfcl imports this module.
    from .bfcl import import_bfcl

    return import_bfcl(questions_path, answers_path)
