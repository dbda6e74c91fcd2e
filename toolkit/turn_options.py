"""Everything a turn can be told besides the backend, the messages and the tools, in one object.

``run_turn`` takes these options as keyword arguments (``run_turn(backend, messages, tools,
max_rounds=3)``) or as one ``TurnOptions`` built once and reused (``run_turn(backend, messages,
tools, options)``); either way the loop and the ``CallRunner`` that runs each reply's calls
receive the whole object. A new option is one field here, with its default and its check, and
no signature changes anywhere else.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Iterable, Literal

from toolkit.errors_for_model import ErrorPolicy
from toolkit.schema import InvocationContext
from toolkit.tools import Tool, ToolProvider, ToolSet

__all__ = ["TurnOptions", "Protocol"]

Protocol = Literal["native", "string"]
# Keys the loop writes into every request itself: set through the options, never request_options.
LOOP_KEYS = frozenset({"messages", "tools", "tool_choice", "parallel_tool_calls", "stream", "n"})


@dataclass(frozen=True, kw_only=True)
class TurnOptions:
    """How one turn runs. Every field has its default here and is checked when the object is made."""

    protocol: Protocol = "native"
    """"native" (``tool_calls``) or "string" (``<tool>{...}</tool>`` in text, lessons 2-3)."""
    tool_choice: str | dict | None = None
    """Sent on the first request; when it forces a call, later requests use "auto"."""
    parallel_tool_calls: bool | None = None
    """Sent (native protocol) when not None."""
    max_rounds: int = 5
    """Rounds of tool calls allowed; a reply asking for more is not run (``"max_rounds"``)."""
    concurrent: bool = False
    """Run a reply's calls in a thread pool of ``max_workers`` instead of one after another."""
    max_workers: int = 4
    result_limit: int | None = 2000
    """Characters of a tool's result the model sees; the rest is cut with a note (None: all)."""
    context: InvocationContext | None = None
    """Fills the tools' hidden parameters (``MemoryId``, ``InvocationContext``); never sent."""
    providers: tuple[ToolProvider, ...] = ()
    """Functions that choose more tools for this turn from its question (lesson 11)."""
    registry: frozenset[str] = frozenset()
    """Names of every tool that exists anywhere: a call to one not offered is labelled
    ``"not_offered"`` rather than ``"unknown_tool"``; nothing is ever run from it."""
    errors: ErrorPolicy = field(default_factory=ErrorPolicy)
    """How failures are worded for the model."""
    request_options: dict = field(default_factory=dict)
    """Anything else for every request (``temperature``, ``max_tokens``, ``seed``, ...)."""
    trace_path: str | Path | None = None
    """Append one JSON line per round to this file."""
    log: logging.Logger = field(default_factory=lambda: logging.getLogger("toolkit.loop"))
    """Receives every failure's full detail (tracebacks included), which the model never sees."""

    def __post_init__(self) -> None:
        # None means "the default" for the three options that callers often pass through as None.
        if self.errors is None:
            object.__setattr__(self, "errors", ErrorPolicy())
        if self.log is None:
            object.__setattr__(self, "log", logging.getLogger("toolkit.loop"))
        object.__setattr__(self, "request_options", dict(self.request_options or {}))
        object.__setattr__(self, "providers", tuple(self.providers or ()))
        object.__setattr__(self, "registry", _names(self.registry))
        if self.protocol not in ("native", "string"):
            raise ValueError(f"protocol must be 'native' or 'string', not {self.protocol!r}")
        if not isinstance(self.max_rounds, int) or self.max_rounds < 0:
            raise ValueError(f"max_rounds must be a whole number >= 0, not {self.max_rounds!r}")
        if not isinstance(self.max_workers, int) or self.max_workers < 1:
            raise ValueError(f"max_workers must be a whole number >= 1, not {self.max_workers!r}")
        if clash := LOOP_KEYS & set(self.request_options):
            raise ValueError(f"request_options may not set {sorted(clash)}: use run_turn's own arguments")

    @classmethod
    def of(cls, options: TurnOptions | None = None, **values: Any) -> TurnOptions:
        """``options`` (or the defaults) with ``values`` put in; an unknown name is an error that
        lists the known ones, rather than a silently ignored typo."""
        known = [each.name for each in fields(cls)]
        if unknown := sorted(set(values) - set(known)):
            raise TypeError(f"run_turn has no option {', '.join(map(repr, unknown))}; "
                            f"its options are {', '.join(known)}")
        return replace(options or cls(), **values)


def _names(registry: ToolSet | Iterable[Tool | str] | None) -> frozenset[str]:
    """The registry as names: a ``ToolSet``, tools or names may be given."""
    if isinstance(registry, ToolSet):
        return frozenset(registry.names)
    return frozenset(each if isinstance(each, str) else each.name for each in registry or ())
