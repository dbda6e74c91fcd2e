"""A loaded suite, and the variants of it an experiment asks for.

An experiment runs the same cases under different settings, so the suite hands out the pieces
a trial needs rather than fixed requests: a subset of the cases (by category, language, count),
each tool's spec with the clear or the vague description and with or without its enums, and
distractors (tools the case does not need), picked the same way for the same seed.
"""
from __future__ import annotations

import copy
import random
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from .suite_model import CATEGORIES, LANGUAGES, Case, Tool

__all__ = ["Suite"]


@dataclass(frozen=True)
class Suite:
    """The suite's tools by key, its cases in file order, and where it was loaded from."""

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
