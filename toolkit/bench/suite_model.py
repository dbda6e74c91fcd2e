"""What a suite file holds: tools with two descriptions each, and cases with their answer keys.

``Suite`` holds them all once loaded, and hands out the variants an experiment asks for.
These pydantic models check each tool and each case on its own: required fields, types, no
unknown fields, and how many calls a category may expect. What needs more than one entry at a
time (does the case's tool exist? does the answer key fit the tool's schema?) is checked in
``toolkit.bench.suite_checks``. The format is documented in ``data/README.md``.
"""
from __future__ import annotations

import copy
import random
from dataclasses import dataclass
from typing import Any, Iterable, Literal, Mapping, get_args

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from toolkit.bench.argument_checks import OMIT

__all__ = ["Category", "Language", "CATEGORIES", "LANGUAGES", "SuiteTool", "Message", "ExpectedCall",
           "Case", "Suite"]

Category = Literal["simple", "multiple", "parallel", "parallel_multiple", "irrelevance", "enum",
                   "nested"]
Language = Literal["en", "zh"]
CATEGORIES: tuple[str, ...] = get_args(Category)
LANGUAGES: tuple[str, ...] = get_args(Language)


class SuiteTool(BaseModel):
    """A tool of the suite: two descriptions of the same behaviour and one parameters schema."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str | None = Field(default=None, min_length=1)  # function name; defaults to the key
    clear: str = Field(min_length=1)
    vague: str = Field(min_length=1)
    parameters: dict[str, Any]


class Message(BaseModel):
    """A message of a case. Fields beyond role and content (``tool_calls``, ``tool_call_id``)
    are kept as written, so a case can start in the middle of a conversation."""

    model_config = ConfigDict(extra="allow", frozen=True)

    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None


class ExpectedCall(BaseModel):
    """One call of the answer key: for each parameter, the list of accepted values."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    arguments: dict[str, list[Any]] = Field(default_factory=dict)


class Case(BaseModel):
    """One question (or conversation), the suite's tools it offers, and its answer key."""

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


# ---------------------------------------------------------------- the suite as a whole
# A loaded suite, and the variants of it an experiment asks for. An experiment runs the same
# cases under different settings, so the suite hands out the pieces a trial needs rather than
# fixed requests: a subset of the cases (by category, language, count), each tool's spec with
# the clear or the vague description and with or without its enums, and distractors (tools the
# case does not need), picked the same way for the same seed.


@dataclass(frozen=True)
class Suite:
    """The suite's tools by key, its cases in file order, and where it was loaded from."""

    tools: Mapping[str, SuiteTool]
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

    def with_tools_only(self, names: Iterable[str]) -> Suite:
        """The suite narrowed to the tools ``names``: only those tools, and only the cases that
        offer nothing else. Distractors, the seeded tool order and hidden names are then drawn
        from those tools alone, exactly as in a suite that never had the others."""
        keep = set(names)
        unknown = keep - set(self.tools)
        if unknown:
            raise KeyError(f"no tool {', '.join(sorted(unknown))} in the suite")
        tools = {key: tool for key, tool in self.tools.items() if key in keep}
        cases = tuple(case for case in self.cases if set(case.tools) <= keep)
        return Suite(tools, cases, self.source)

    def distractors(self, case: Case | str, k: int, seed: int = 0) -> list[str]:
        """``k`` suite tools that the case does not expect, the same for the same seed and case."""
        case = self.case(case) if isinstance(case, str) else case
        expected = {call.name for call in case.expected}
        candidates = sorted(key for key, tool in self.tools.items()
                            if (tool.name or key) not in expected)
        if not 0 <= k <= len(candidates):
            raise ValueError(f"k must be between 0 and {len(candidates)} for case {case.id!r}")
        # Seeded per case: a case keeps its distractors when other cases are added or filtered
        # out, so runs on different subsets of the suite stay comparable.
        return random.Random(f"{seed}:{case.id}").sample(candidates, k)


def _drop_enums(schema: Any) -> None:
    """Remove every enum, at any depth, and keep the descriptions: "enums off" measures what
    the list of allowed values is worth on its own."""
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
