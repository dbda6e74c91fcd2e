"""What a suite file holds: tools with two descriptions each, and cases with their answer keys.

These pydantic models check each tool and each case on its own: required fields, types, no
unknown fields, and how many calls a category may expect. What needs more than one entry at a
time (does the case's tool exist? does the answer key fit the tool's schema?) is checked in
``toolkit.suite_checks``. The format is documented in ``data/README.md``.
"""
from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from .argument_checks import OMIT

__all__ = ["Category", "Language", "CATEGORIES", "LANGUAGES", "Tool", "Message", "ExpectedCall",
           "Case"]

Category = Literal["simple", "multiple", "parallel", "parallel_multiple", "irrelevance", "enum",
                   "nested"]
Language = Literal["en", "zh"]
CATEGORIES: tuple[str, ...] = get_args(Category)
LANGUAGES: tuple[str, ...] = get_args(Language)


class Tool(BaseModel):
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
