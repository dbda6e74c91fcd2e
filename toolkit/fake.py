"""A scripted model: it replies from a queue you write, and records every request.

It answers ``client.chat.completions.create(...)`` like the ``openai`` client does, so the
same loop code runs on it. Use it in unit tests and in lesson cells that must show an exact
edge case (malformed JSON, a hallucinated tool name, ids out of order). Its replies are
written by hand, so they are never a measurement of anything.
"""

from __future__ import annotations

import copy
import itertools
import json
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from openai.types.chat import ChatCompletion, ChatCompletionChunk


class ScriptExhausted(RuntimeError):
    """The code under test asked the scripted model for more replies than were queued."""


@dataclass
class ScriptedReply:
    content: str | None = None
    tool_calls: list[tuple[str, str, str]] = field(default_factory=list)  # (id, name, raw arguments)
    finish_reason: str | None = None
    usage: tuple[int, int] = (0, 0)  # (prompt, completion) tokens the reply reports


_ids = itertools.count(1)


def text(content: str) -> ScriptedReply:
    """A reply in plain text."""
    return ScriptedReply(content=content)


def call(name: str, arguments: dict | str = "{}", id: str | None = None) -> tuple[str, str, str]:
    """One tool call. A ``str`` is sent verbatim, so it can be broken JSON on purpose."""
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return (id or f"call_fake_{next(_ids)}", name, raw)


def calls(*tool_calls: tuple[str, str, str], content: str | None = None) -> ScriptedReply:
    """A reply that asks for one or more tool calls."""
    return ScriptedReply(content=content, tool_calls=list(tool_calls))


Script = ScriptedReply | str | Callable[[dict], "ScriptedReply | str"]


class ScriptedModel:
    """Quacks like ``openai.OpenAI`` for ``chat.completions.create``.

    >>> model = ScriptedModel([calls(call("get_weather", {"city": "Beijing"})), text("Sunny.")])
    """

    model_name = "scripted"

    def __init__(self, replies: list[Script] | None = None):
        self.queue: deque[Script] = deque(replies or [])
        self.requests: list[dict] = []  # every request body, as the code under test sent it
        self.chat = _Chat(self)

    def add(self, *replies: Script) -> "ScriptedModel":
        self.queue.extend(replies)
        return self

    def backend(self):
        """This scripted model as a ``Backend``, so code written for real endpoints runs on it."""
        from toolkit.client import Backend

        return Backend(client=self, model=self.model_name, base_url="scripted://fake")

    def _next_reply(self, request: dict) -> ScriptedReply:
        if not self.queue:
            raise ScriptExhausted(f"no scripted reply left for request #{len(self.requests)}")
        reply = self.queue.popleft()
        if callable(reply):
            reply = reply(request)
        return text(reply) if isinstance(reply, str) else reply

    def create(self, **request: Any) -> ChatCompletion | Iterator[ChatCompletionChunk]:
        self.requests.append(copy.deepcopy(request))
        reply = self._next_reply(request)
        completion = _completion(reply, request.get("model", self.model_name))
        if request.get("stream"):
            return _as_chunks(completion)
        return completion


class _Completions:
    def __init__(self, model: ScriptedModel):
        self.create = model.create


class _Chat:
    def __init__(self, model: ScriptedModel):
        self.completions = _Completions(model)


def _completion(reply: ScriptedReply, model: str) -> ChatCompletion:
    tool_calls = [
        {"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}
        for id, name, arguments in reply.tool_calls
    ]
    finish = reply.finish_reason or ("tool_calls" if tool_calls else "stop")
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return ChatCompletion.model_validate(
        {
            "id": f"chatcmpl-fake-{next(_ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": reply.usage[0], "completion_tokens": reply.usage[1],
                      "total_tokens": sum(reply.usage)},
        }
    )


def _as_chunks(completion: ChatCompletion) -> Iterator[ChatCompletionChunk]:
    """Split a completion into OpenAI-style stream deltas: text in pieces, each call's
    id and name first, then its arguments in fragments."""
    message = completion.choices[0].message

    def chunk(delta: dict, finish: str | None = None) -> ChatCompletionChunk:
        return ChatCompletionChunk.model_validate(
            {
                "id": completion.id,
                "object": "chat.completion.chunk",
                "created": completion.created,
                "model": completion.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
        )

    yield chunk({"role": "assistant", "content": ""})
    for start in range(0, len(message.content or ""), 8):
        yield chunk({"content": message.content[start : start + 8]})
    for index, tool_call in enumerate(message.tool_calls or []):
        head = {"index": index, "id": tool_call.id, "type": "function",
                "function": {"name": tool_call.function.name, "arguments": ""}}
        yield chunk({"tool_calls": [head]})
        arguments = tool_call.function.arguments
        for start in range(0, len(arguments), 8):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments[start : start + 8]}}]})
    yield chunk({}, completion.choices[0].finish_reason)
