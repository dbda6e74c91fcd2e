"""Chat messages and tool calls, spelled the way OpenAI's API spells them.

Messages stay plain dicts because that is exactly what goes over the wire (and what the
``openai`` client accepts). The helpers below only save typing and keep the spelling right:
``tool_calls``, ``tool_call_id``, ``arguments`` as a raw JSON *string*.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


def system(content: str) -> dict:
    return {"role": "system", "content": content}


def user(content: str) -> dict:
    return {"role": "user", "content": content}


def assistant(content: str | None = None, tool_calls: list["ToolCall"] | None = None) -> dict:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [call.to_dict() for call in tool_calls]
    return message


def tool_result(tool_call_id: str, content: str) -> dict:
    """The message that carries a tool's result back; the id ties it to the call it answers."""
    return {"role": "tool", "tool_call_id": tool_call_id, "content": content}


@dataclass(frozen=True)
class ToolCall:
    """One call the model asked for. ``arguments`` is the model's raw JSON text: it is only
    text until someone parses and validates it, and it may well be invalid."""

    id: str
    name: str
    arguments: str

    def parsed_arguments(self) -> dict:
        """Parse the raw text; raise ``ValueError`` saying why when it is not a JSON object."""
        try:
            value = json.loads(self.arguments or "{}")
        except json.JSONDecodeError as error:
            raise ValueError(f"arguments of {self.name!r} are not valid JSON: {error.msg} at column {error.colno}") from None
        if not isinstance(value, dict):
            raise ValueError(f"arguments of {self.name!r} must be a JSON object, got {type(value).__name__}")
        return value

    def to_dict(self) -> dict:
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}

    @classmethod
    def from_openai(cls, call: Any) -> "ToolCall":
        """Accept an ``openai`` tool-call object or the equivalent dict."""
        if isinstance(call, dict):
            return cls(id=call["id"], name=call["function"]["name"], arguments=call["function"].get("arguments") or "")
        return cls(id=call.id, name=call.function.name, arguments=call.function.arguments or "")


def field_of(item: Any, name: str) -> Any:
    """A field of a reply's part, whether it came as an ``openai`` object or as a dict."""
    return item.get(name) if isinstance(item, dict) else getattr(item, name, None)


def calls_of(message: Any) -> list[ToolCall]:
    """The tool calls of an assistant message (an ``openai`` object or a dict), possibly none."""
    return [ToolCall.from_openai(call) for call in field_of(message, "tool_calls") or []]


def assistant_from_reply(message: Any) -> dict:
    """Turn the assistant message of a reply into the dict to append to the history."""
    return assistant(field_of(message, "content"), calls_of(message))


def with_system_text(messages: list[dict], text: str) -> list[dict]:
    """``text`` as the system message, first; a system message the messages already open with
    keeps its own text, after ``text``, in the same message (chat templates take one)."""
    if messages and messages[0].get("role") == "system":
        own = messages[0].get("content") or ""
        return [{"role": "system", "content": f"{text}\n\n{own}" if own else text}, *messages[1:]]
    return [{"role": "system", "content": text}, *messages]


def usage_of(reply: Any) -> dict | None:
    """A reply's (or a stream chunk's) token counts as a plain dict (``prompt_tokens``,
    ``completion_tokens``, ...), or None where the endpoint sent none: the one place they are read."""
    usage = getattr(reply, "usage", None)
    return usage.model_dump(exclude_none=True) if usage is not None else None
