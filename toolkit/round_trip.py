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
from typing import Any

from toolkit.client import Backend
from toolkit.errors_for_model import sanitize
from toolkit.messages import ToolCall, assistant_from_reply, calls_of, tool_result
from toolkit.protocol import extract_calls, render_system_prompt, render_tool_result
from toolkit.tools import ToolSet
from toolkit.trace import ToolExecution

__all__ = ["request_for_round", "choice_after_first_round", "read_reply", "call_in_text", "result_messages"]

# A complete call block as Hermes-style templates write it, inside a reply's text.
_CALL_BLOCK = re.compile(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", re.DOTALL)


# --- The request --------------------------------------------------------------------------------


def request_for_round(backend: Backend, history: list[dict], offered: ToolSet, protocol: str,
                      options: dict | None, tool_choice: Any,
                      parallel_tool_calls: bool | None) -> dict:
    """The request body of one round: the history so far and the tools offered this turn."""
    request: dict[str, Any] = {"model": backend.model, **(options or {})}
    if protocol == "string":
        # No tools field and no tool_choice here: the prompt is all there is.
        request["messages"] = _with_tool_prompt(history, offered, tool_choice)
        return request
    request["messages"] = history
    if len(offered):  # APIs reject tool_choice and parallel_tool_calls without tools
        request["tools"] = offered.specs()
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


def _with_tool_prompt(history: list[dict], offered: ToolSet, tool_choice: Any) -> list[dict]:
    """The caller's system message (if any) becomes the preamble of the tool prompt. The
    history itself keeps the caller's message, so the next turn does not render it twice."""
    preamble, rest = None, history
    if history and history[0].get("role") == "system":
        preamble, rest = str(history[0].get("content") or ""), history[1:]
    prompt = render_system_prompt(offered.specs(), preamble)
    if len(offered) and (hint := _choice_in_words(tool_choice)):
        prompt += "\n" + hint
    return [{"role": "system", "content": prompt}, *rest]


def _choice_in_words(tool_choice: Any) -> str | None:
    """tool_choice for the string protocol: a request in words, which nothing enforces. (The
    native protocol can enforce it: the embedded engine constrains decoding with a grammar.)"""
    if tool_choice == "required":
        return "In this reply you must call at least one tool."
    if tool_choice == "none":
        return "In this reply do not call any tool; answer in plain text."
    if isinstance(tool_choice, dict):
        name = (tool_choice.get("function") or {}).get("name")
        return f"In this reply you must call the tool {name}." if name else None
    return None


# --- The reply ----------------------------------------------------------------------------------


def read_reply(protocol: str, message: Any, round_index: int) -> tuple[list[ToolCall], list[str], dict | None]:
    """The calls a reply asks for, corrections for calls that could not be read (string
    protocol only), and the assistant message to keep in the history (None: nothing to keep)."""
    if protocol == "native":
        if message is None:
            return [], [], None
        return calls_of(message), [], assistant_from_reply(message)
    text = (message.content if message else None) or ""
    calls, corrections = _read_string_reply(text, round_index)
    return calls, corrections, {"role": "assistant", "content": text}


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


def _read_string_reply(text: str, round_index: int) -> tuple[list[ToolCall], list[str]]:
    """Calls found in the text (given ids, which the protocol lacks) and corrections for the
    calls that could not be read. Unknown names are left for the runner to refuse."""
    extraction = extract_calls(text)
    calls = [ToolCall(f"text_{round_index}_{n}", each.name, json.dumps(each.arguments, ensure_ascii=False))
             for n, each in enumerate(extraction.calls, 1)]
    corrections = [
        f"Your tool call could not be read: {sanitize(failure.detail, limit=200)} Write each call as "
        '<tool>{"name": "TOOL_NAME", "arguments": {...}}</tool>, or answer in plain text.'
        for failure in extraction.failures if failure.reason != "no_call_found"]
    return calls, corrections


# --- The results --------------------------------------------------------------------------------


def result_messages(protocol: str, executions: list[ToolExecution], corrections: list[str]) -> list[dict]:
    """The messages that carry a round's results (and corrections) back to the model."""
    if protocol == "native":
        return [tool_result(each.call_id, each.result_text) for each in executions]
    # One user message for the whole round: chat templates expect user and assistant to alternate.
    parts = [render_tool_result(each.name[:64], each.result_text) for each in executions] + corrections
    return [{"role": "user", "content": "\n\n".join(parts)}]
