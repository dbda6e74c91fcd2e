"""What happened in a turn: the records the loop keeps, a JSON-lines trace, a readable summary.

A turn is a list of rounds. Each round is one request to the model (kept exactly as sent), the
reply, the calls it asked for and one ``ToolExecution`` per call: the raw arguments, the
validated ones, what went back to the model, the Python value the tool returned, the error
kind if any, and how long it took. This is LangChain4j's ``Result.toolExecutions()`` with the
requests added, so that nothing about a turn has to be guessed afterwards.

``to_dict`` turns every record into plain JSON data; ``append_trace`` writes one line per
round; ``format_trace`` prints a turn for people (lessons, the app's playground).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic_core import to_jsonable_python

from toolkit.messages import ToolCall

StopReason = Literal["answered", "immediate", "max_rounds", "no_reply", "call_in_text"]

# How a turn that did not end in an answer ended, in a learner's words (the trace and the app).
STOPPED = {
    "max_rounds": "Stopped: the model was still asking for tools when the round limit was reached, "
                  "so it never answered.",
    "no_reply": "Stopped: the model sent no usable reply (no text and no call).",
    "call_in_text": "Stopped: the model wrote a tool call as text instead of in tool_calls, so it was "
                    "neither run nor taken as an answer.",
}
ErrorKind = Literal["unknown_tool", "invalid_arguments", "tool_error", "timeout", "not_offered"]


def jsonable(value: Any) -> Any:
    """Plain JSON data for any value a tool may return (models, dataclasses, dates, ...)."""
    try:
        return to_jsonable_python(value, fallback=repr)
    except Exception:  # e.g. a circular structure; a trace must never fail because of a value
        return repr(value)


@dataclass
class ToolExecution:
    """One call the model asked for, and what came of it."""

    call_id: str
    name: str
    arguments_raw: str  # the model's text, exactly as written
    arguments: dict | None = None  # after validation; None when the call never got that far
    result_text: str = ""  # what the model was sent, after truncation or sanitising
    value: Any = None  # the tool's raw Python return value
    error: ErrorKind | None = None
    error_detail: str | None = None  # the full story (traceback included): logs and trace only
    seconds: float = 0.0
    return_behavior: str | None = None  # of the tool that ran; None when no tool ran
    truncated_chars: int = 0  # how many characters of the result were cut off

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_dict(self) -> dict:
        return {
            "call_id": self.call_id, "name": self.name, "arguments_raw": self.arguments_raw,
            "arguments": jsonable(self.arguments), "result_text": self.result_text,
            "value": jsonable(self.value), "error": self.error, "error_detail": self.error_detail,
            "seconds": round(self.seconds, 4), "return_behavior": self.return_behavior,
            "truncated_chars": self.truncated_chars,
        }


@dataclass
class Round:
    """One request to the model, its reply, and the tools run for it."""

    index: int  # 1-based
    request: dict  # the exact request body sent (a copy)
    tools_offered: list[str] = field(default_factory=list)
    reply_text: str | None = None
    calls: list[ToolCall] = field(default_factory=list)
    executions: list[ToolExecution] = field(default_factory=list)
    corrections: list[str] = field(default_factory=list)  # string protocol: unreadable calls
    finish_reason: str | None = None
    usage: dict | None = None
    model_seconds: float = 0.0  # waiting for the model
    seconds: float = 0.0  # the whole round: the model and the tools
    note: str | None = None

    def to_dict(self) -> dict:
        return {
            "index": self.index, "request": jsonable(self.request),
            "tools_offered": list(self.tools_offered), "reply_text": self.reply_text,
            "calls": [call.to_dict() for call in self.calls],
            "executions": [execution.to_dict() for execution in self.executions],
            "corrections": list(self.corrections), "finish_reason": self.finish_reason,
            "usage": self.usage, "model_seconds": round(self.model_seconds, 4),
            "seconds": round(self.seconds, 4), "note": self.note,
        }


@dataclass
class TurnResult:
    """Everything a turn produced.

    ``stop_reason`` says how it ended: ``"answered"`` (the model wrote text), ``"immediate"`` (a
    tool's result went straight to the caller, in ``immediate_result``), ``"max_rounds"`` (the
    model kept asking for tools), ``"no_reply"`` (the model returned nothing usable) or
    ``"call_in_text"`` (the reply's text is a ``<tool_call>`` block: a call in disguise, which
    is not run and not an answer either).
    ``immediate_result`` is the raw value of the last call of the round that returned
    directly; the other calls of that round are in ``tool_executions``.
    """

    final_text: str | None
    stop_reason: StopReason
    immediate_result: Any = None
    rounds: list[Round] = field(default_factory=list)
    messages: list[dict] = field(default_factory=list)  # the history, ready for the next turn
    protocol: str = "native"

    @property
    def tool_executions(self) -> list[ToolExecution]:
        """Every tool execution of the turn, in order."""
        return [execution for each in self.rounds for execution in each.executions]

    @property
    def seconds(self) -> float:
        return sum(each.seconds for each in self.rounds)

    @property
    def usage(self) -> dict[str, int]:
        """Token counts summed over the rounds (whatever the endpoint reported)."""
        total: dict[str, int] = {}
        for each in self.rounds:
            for key, count in (each.usage or {}).items():
                if isinstance(count, int):
                    total[key] = total.get(key, 0) + count
        return total

    def to_dict(self) -> dict:
        return {
            "final_text": self.final_text, "stop_reason": self.stop_reason,
            "immediate_result": jsonable(self.immediate_result), "protocol": self.protocol,
            "rounds": [each.to_dict() for each in self.rounds],
            "tool_executions": [each.to_dict() for each in self.tool_executions],
            "messages": jsonable(self.messages), "seconds": round(self.seconds, 4),
            "usage": self.usage,
        }


# --- JSON lines: one line per round -------------------------------------------------------------


def append_trace(path: str | Path, round: Round, *, turn_id: str, protocol: str,
                 stop_reason: str | None = None, final_text: str | None = None) -> None:
    """Add one round as one JSON line. The last round of a turn carries its stop reason.

    The file is opened and closed for every round, so a turn that crashes half-way still
    leaves the rounds it finished.
    """
    line = {"turn_id": turn_id, "protocol": protocol, **round.to_dict(),
            "stop_reason": stop_reason, "final_text": final_text}
    with open(path, "a", encoding="utf-8") as file:
        file.write(json.dumps(line, ensure_ascii=False, default=repr) + "\n")


def read_trace(path: str | Path) -> list[dict]:
    """The rounds written by ``append_trace``, one dict each."""
    with open(path, encoding="utf-8") as file:
        return [json.loads(line) for line in file if line.strip()]


# --- For people ---------------------------------------------------------------------------------


def format_trace(result: TurnResult, width: int = 160) -> str:
    """A readable account of a turn: per round the tools sent, the calls and their arguments,
    the results and errors, the durations; then how the turn ended."""
    lines = [f"Turn ({result.protocol} protocol): {result.stop_reason} after "
             f"{len(result.rounds)} round(s), {result.seconds:.2f} s"]
    for each in result.rounds:
        offered = ", ".join(each.tools_offered) or "none"
        lines.append(f"Round {each.index}: model {each.model_seconds:.2f} s, "
                     f"finish_reason {each.finish_reason}, tools sent: {offered}")
        if each.reply_text:
            lines.append(f"  reply: {_short(each.reply_text, width)}")
        executions = {execution.call_id: execution for execution in each.executions}
        for call in each.calls:
            lines.append(f"  call {call.name}({_short(call.arguments, width)})  id={call.id}")
            execution = executions.get(call.id)
            if execution is None:
                continue
            if execution.error:
                lines.append(f"    ! {execution.error} ({execution.seconds:.2f} s): "
                             f"{_short(execution.result_text, width)}")
            else:
                cut = f", {execution.truncated_chars} characters cut" if execution.truncated_chars else ""
                lines.append(f"    -> {_short(execution.result_text, width)} "
                             f"({execution.seconds:.2f} s{cut})")
        for correction in each.corrections:
            lines.append(f"  ! correction sent: {_short(correction, width)}")
        if each.note:
            lines.append(f"  note: {each.note}")
    if result.stop_reason == "answered":
        lines.append(f"Final answer: {result.final_text}")
    elif result.stop_reason == "immediate":
        value = json.dumps(jsonable(result.immediate_result), ensure_ascii=False)
        lines.append(f"Returned directly: {_short(value, width)}")
    else:
        lines.append(STOPPED.get(result.stop_reason, STOPPED["no_reply"]))
    return "\n".join(lines)


def _short(text: str | None, width: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= width else text[: width - 1] + "…"
