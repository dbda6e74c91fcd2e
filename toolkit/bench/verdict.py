"""What checking one reply against one case says: two booleans and, on failure, one reason.

Selection (the right tools, the right number of calls) and arguments (everything right) are
kept apart because they fail for different reasons: a vague description makes a model pick the
wrong tool, a missing enum makes it write a wrong value. ``toolkit.bench.scoring.check`` gives the
verdicts; ``toolkit.bench.rates.summarise`` adds them up.
"""
from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, model_validator

__all__ = ["Reason", "REASONS", "Verdict"]

Reason = Literal[
    "no_call",
    "spurious_call",
    "wrong_tool",
    "unparsable",
    "cut_off",
    "missing_required",
    "unexpected_parameter",
    "wrong_type",
    "value_not_accepted",
    "wrong_call_count",
]
REASONS: tuple[str, ...] = get_args(Reason)


class Verdict(BaseModel):
    """The outcome of checking one reply against one case."""

    model_config = ConfigDict(frozen=True)

    case_id: str | None = None
    category: str | None = None
    language: str | None = None
    selection_ok: bool
    arguments_ok: bool
    reason: Reason | None = None
    detail: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Verdict:
        if self.arguments_ok and not self.selection_ok:
            raise ValueError("arguments cannot be right when the selection is wrong")
        if self.arguments_ok != (self.reason is None):
            raise ValueError("a reason is given exactly when the arguments are wrong")
        return self

    @property
    def passed(self) -> bool:
        return self.arguments_ok
