"""One round trip of the loop, in either protocol: the request sent, the calls read from the
reply, the results sent back.

This is where the two protocols differ; ``toolkit.loop`` does the same thing for both.

- ``"native"``: tools go in the request's ``tools`` field, calls come back as ``tool_calls``,
  results go back as ``role: tool`` messages matched by ``tool_call_id``;
- ``"string"``: tools are described in the system prompt, calls are found in the reply text
  by ``toolkit.protocol``, results go back as user text.
"""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

from toolkit.errors_for_model import sanitize
from toolkit.messages import (
    ToolCall,
    assistant_from_reply,
    calls_of,
    field_of,
    tool_result,
)
from toolkit.protocol import extract_calls, render_system_prompt, render_tool_result
from toolkit.repair import RepairStrategy
from toolkit.tools import ToolSet
from toolkit.trace import ToolExecution

__all__ = ["request_for_round", "choice_after_first_round", "choice_in_words", "read_reply", "Reply",
           "correction_for", "call_in_text", "result_messages"]

# A complete call block as Hermes-style templates write it, inside a reply's text.
_CALL_BLOCK = re.compile(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", re.DOTALL)


# --- The request --------------------------------------------------------------------------------


def request_for_round(model: str | None, history: list[dict], offered: ToolSet | list[dict], protocol: str,
                      options: dict | None, tool_choice: Any,
                      parallel_tool_calls: bool | None) -> dict:
    """The request body of one round: the history so far and the tools offered this turn.

    ``offered`` is a ``ToolSet`` or the tools' OpenAI specs. ``model`` None leaves the field out,
    for a caller whose backend adds it (the experiment bench sends one round per trial)."""
    specs = offered.specs() if isinstance(offered, ToolSet) else list(offered)
    request: dict[str, Any] = {"model": model} if model is not None else {}
    request.update(options or {})
    if protocol == "string":
        # No tools field and no tool_choice here: the prompt is all there is.
        request["messages"] = _with_tool_prompt(history, specs, tool_choice, parallel_tool_calls)
        return request
    request["messages"] = history
    if specs:  # APIs reject tool_choice and parallel_tool_calls without tools
        request["tools"] = specs
        if tool_choice is not None:
            request["tool_choice"] = tool_choice
        if parallel_tool_calls is not None:
            request["parallel_tool_calls"] = parallel_tool_calls
    return request


def choice_after_first_round(tool_choice: Any) -> Any:
    """A choice that forces a call holds for the first request only: forced every round, the
    model could never answer, and the turn would run into its round limit."""
    forced = tool_choice == "required" or isinstance(tool_choice, dict)
    return "auto" if forced else tool_choice


def _with_tool_prompt(history: list[dict], specs: list[dict], tool_choice: Any,
                      parallel_tool_calls: bool | None) -> list[dict]:
    """The caller's system message (if any) becomes the preamble of the tool prompt. The
    history itself keeps the caller's message, so the next turn does not render it twice."""
    preamble, rest = None, history
    if history and history[0].get("role") == "system":
        preamble, rest = str(history[0].get("content") or ""), history[1:]
    prompt = render_system_prompt(specs, preamble)
    if specs and (rules := choice_in_words(tool_choice, parallel_tool_calls)):
        prompt += "\n" + "\n".join(rules)
    return [{"role": "system", "content": prompt}, *rest]


def choice_in_words(tool_choice: Any, parallel_tool_calls: bool | None = None) -> list[str]:
    """tool_choice and parallel_tool_calls for the string protocol: requests in words, which
    nothing enforces. (The native protocol can enforce them: the embedded engine constrains
    decoding with a grammar.)"""
    rules = []
    if tool_choice == "required":
        rules.append("In this reply you must call at least one tool.")
    elif tool_choice == "none":
        rules.append("In this reply do not call any tool; answer in plain text.")
    elif isinstance(tool_choice, dict) and (name := (tool_choice.get("function") or {}).get("name")):
        rules.append(f"In this reply you must call the tool {name}.")
    if parallel_tool_calls is False and tool_choice != "none":
        rules.append("Call at most one tool in this reply.")
    return rules


# --- The reply ----------------------------------------------------------------------------------


class Reply(NamedTuple):
    """What one reply asks for: its calls, the calls that could not be read (why, in a few
    words each), and the assistant message to keep in the history (None: nothing to keep)."""

    calls: list[ToolCall]
    unreadable: list[str]
    keep: dict | None


def read_reply(protocol: str, message: Any, round_index: int = 1, repair: RepairStrategy = "hand") -> Reply:
    """Read a reply's message in either protocol.

    ``repair`` is how string-protocol calls with broken JSON are mended before they are read
    ("none" holds them to valid JSON, as the experiment bench does, so that both protocols are
    judged alike; native calls are never repaired here: their arguments stay the model's text)."""
    if message is None:
        return Reply([], [], None)
    if protocol == "native":
        broken = [f"a tool call of type {field_of(call, 'type') or '?'!r} has no function"
                  for call in field_of(message, "tool_calls") or [] if field_of(call, "function") is None]
        if broken:
            return Reply([], broken, None)
        return Reply(calls_of(message), [], assistant_from_reply(message))
    text = field_of(message, "content") or ""
    extraction = extract_calls(text, repair=repair)
    calls = [ToolCall(f"text_{round_index}_{n}", each.name, json.dumps(each.arguments, ensure_ascii=False))
             for n, each in enumerate(extraction.calls, 1)]
    unreadable = [failure.detail for failure in extraction.failures if failure.reason != "no_call_found"]
    return Reply(calls, unreadable, {"role": "assistant", "content": text})


def correction_for(detail: str) -> str:
    """What the model is told about a string-protocol call that could not be read. Unknown
    names are not corrected here: the runner refuses them as it runs the calls."""
    return (f"Your tool call could not be read: {sanitize(detail, limit=200)} Write each call as "
            '<tool>{"name": "TOOL_NAME", "arguments": {...}}</tool>, or answer in plain text.')


def call_in_text(text: str | None) -> bool:
    """Is a native reply's text a tool call in disguise? Some servers (and small models) write
    the template's ``<tool_call>{...}</tool_call>`` block as text instead of returning
    ``tool_calls``. Such a reply is not an answer, and nothing asked for it to be run."""
    for block in _CALL_BLOCK.findall(text or ""):
        try:
            call = json.loads(block)
        except json.JSONDecodeError:
            continue
        if isinstance(call, dict) and isinstance(call.get("name"), str):
            return True
    return False


# --- The results --------------------------------------------------------------------------------


def result_messages(protocol: str, executions: list[ToolExecution], corrections: list[str]) -> list[dict]:
    """The messages that carry a round's results (and corrections) back to the model."""
    if protocol == "native":
        return [tool_result(each.call_id, each.result_text) for each in executions]
    # One user message for the whole round: chat templates expect user and assistant to alternate.
    parts = [render_tool_result(each.name[:64], each.result_text) for each in executions] + corrections
    return [{"role": "user", "content": "\n\n".join(parts)}]
