"""OpenAI's Responses API (``POST /v1/responses``) in front of the chat engine.

The Responses API says what chat completions says, in other words. This module only
translates; the prompt, the grammar, the decisions and the parser are the chat engine's, so a
request gets the same reply through either door:

    Responses request                         chat request
    instructions                              a system message, first
    input: "text"                             one user message
    {"role": ..., "content": ...} items       messages (input_text / output_text parts)
    {"type": "function_call", call_id, ...}   an assistant message's tool_calls
    {"type": "function_call_output", ...}     a "tool" message, matched by call_id
    tools: {"type": "function", "name", ...}  tools: {"type": "function", "function": {...}}
    tool_choice {"type": "function", "name"}  tool_choice {"type": "function", "function": {...}}
    max_output_tokens, text.format            max_tokens, response_format

and back: the text becomes a ``message`` item with one ``output_text`` part; each tool call a
``function_call`` item whose ``call_id`` is the chat reply's call id and whose own ``id`` is
``fc_...``; ``finish_reason: "length"`` becomes ``status: "incomplete"``.

The request side, and what it refuses with HTTP 400 (built-in tools, ``previous_response_id``:
nothing is stored, so ``store`` is ignored and every response says ``"store": false``; an
orphan ``function_call_output``, ...), is ``responses_request``; this module writes the
response object and, for ``stream: true``, its events. ``seed`` is not in OpenAI's Responses
API; it is accepted here as in chat completions, so runs on the embedded model repeat.
"""

from __future__ import annotations

import copy
import itertools
import time
import uuid
from typing import Callable, Iterator

from toolkit.engine.responses_request import chat_request, responses_terms

__all__ = ["create", "stream"]

StopCheck = Callable[[], bool] | None


def _new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:24]}"


def _tools_echo(raw: dict) -> list[dict]:
    return [{"type": "function", "name": tool.get("name"), "description": tool.get("description"),
             "parameters": tool.get("parameters"), "strict": tool.get("strict")} for tool in raw.get("tools") or []]


def _text_echo(raw: dict) -> dict:
    return {"format": ((raw.get("text") or {}).get("format") or {"type": "text"})}


def _shell(raw: dict, model: str) -> dict:
    """The response object before any output, as a stream's first events show it."""
    return {
        "id": _new_id("resp"), "object": "response", "created_at": int(time.time()), "status": "in_progress",
        "error": None, "incomplete_details": None, "instructions": raw.get("instructions"),
        "max_output_tokens": raw.get("max_output_tokens"), "model": model, "output": [],
        "parallel_tool_calls": raw.get("parallel_tool_calls", True) is not False,
        "previous_response_id": None, "store": False, "temperature": raw.get("temperature", 1.0),
        "text": _text_echo(raw), "tool_choice": raw.get("tool_choice") or "auto", "tools": _tools_echo(raw),
        "top_p": raw.get("top_p", 1.0), "truncation": "disabled", "usage": None, "metadata": raw.get("metadata") or {},
    }


def _usage(chat_usage: dict) -> dict:
    return {"input_tokens": chat_usage["prompt_tokens"],
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": chat_usage["completion_tokens"], "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": chat_usage["total_tokens"]}


def _text_part(text: str) -> dict:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def _message_item(text: str | None, status: str) -> dict:
    content = [] if text is None else [_text_part(text)]
    return {"type": "message", "id": _new_id("msg"), "role": "assistant", "status": status, "content": content}


def _call_item(call_id: str, name: str, arguments: str, status: str) -> dict:
    return {"type": "function_call", "id": _new_id("fc"), "call_id": call_id, "name": name,
            "arguments": arguments, "status": status}


def _finished(response: dict, finish: str | None, usage: dict | None) -> dict:
    cut = finish == "length"
    response.update(status="incomplete" if cut else "completed",
                    incomplete_details={"reason": "max_output_tokens"} if cut else None,
                    usage=_usage(usage) if usage else None)
    return response


def create(engine, raw: dict, should_stop: StopCheck = None) -> dict:
    """The response to one Responses request, answered by ``engine`` (a ``toolkit.engine.Engine``)."""
    with responses_terms():
        completion = engine.complete(chat_request(raw), should_stop)
    choice = completion["choices"][0]
    message, cut = choice["message"], choice["finish_reason"] == "length"
    items = [] if message["content"] is None else [_message_item(message["content"], "completed")]
    items += [_call_item(call["id"], call["function"]["name"], call["function"]["arguments"], "completed")
              for call in message.get("tool_calls") or []]
    if cut and items:
        items[-1]["status"] = "incomplete"
    response = _shell(raw, completion["model"])
    response["output"] = items
    return _finished(response, choice["finish_reason"], completion["usage"])


def stream(engine, raw: dict, should_stop: StopCheck = None) -> Iterator[dict]:
    """The events of one streamed response. The request is checked before the first event."""
    with responses_terms():
        chat = {**chat_request(raw), "stream": True, "stream_options": {"include_usage": True}}
        chunks = engine.stream(chat, should_stop)
    return _events(chunks, raw)


def _events(chunks: Iterator[dict], raw: dict) -> Iterator[dict]:
    """Chat chunks in, Responses events out, each item added, filled in and done in turn."""
    numbers = itertools.count()
    response, items = None, []
    open_item: dict | None = None  # the item being written: the text message or the latest call

    def event(kind: str, **fields) -> dict:
        return {"type": kind, "sequence_number": next(numbers), **copy.deepcopy(fields)}

    def add(item: dict) -> Iterator[dict]:
        nonlocal open_item
        items.append(item)
        open_item = item
        yield event("response.output_item.added", output_index=len(items) - 1, item=item)
        if item["type"] == "message":
            item["content"].append(_text_part(""))
            yield event("response.content_part.added", item_id=item["id"], output_index=len(items) - 1,
                        content_index=0, part=item["content"][0])

    def close(status: str) -> Iterator[dict]:
        nonlocal open_item
        if open_item is None:
            return
        item, index, open_item = open_item, items.index(open_item), None
        item["status"] = status
        if item["type"] == "message":
            part = item["content"][0]
            yield event("response.output_text.done", item_id=item["id"], output_index=index, content_index=0,
                        text=part["text"], logprobs=[])
            yield event("response.content_part.done", item_id=item["id"], output_index=index, content_index=0, part=part)
        else:
            yield event("response.function_call_arguments.done", item_id=item["id"], output_index=index,
                        arguments=item["arguments"])
        yield event("response.output_item.done", output_index=index, item=item)

    finish, usage = None, None
    for chunk in chunks:
        if response is None:
            response = _shell(raw, chunk["model"])
            yield event("response.created", response=response)
            yield event("response.in_progress", response=response)
        usage = chunk.get("usage") or usage
        for choice in chunk["choices"]:
            finish = choice.get("finish_reason") or finish
            delta = choice["delta"]
            if delta.get("content"):
                if open_item is None or open_item["type"] != "message":
                    yield from close("completed")
                    yield from add(_message_item(None, "in_progress"))
                open_item["content"][0]["text"] += delta["content"]
                yield event("response.output_text.delta", item_id=open_item["id"], output_index=len(items) - 1,
                            content_index=0, delta=delta["content"], logprobs=[])
            for call in delta.get("tool_calls") or []:
                if call.get("id"):  # a new call: the one before it is complete
                    yield from close("completed")
                    yield from add(_call_item(call["id"], call["function"]["name"], "", "in_progress"))
                if fragment := (call.get("function") or {}).get("arguments"):
                    open_item["arguments"] += fragment
                    yield event("response.function_call_arguments.delta", item_id=open_item["id"],
                                output_index=len(items) - 1, delta=fragment)
    if not items:  # the model wrote nothing: an empty message, as a whole response would have
        yield from add(_message_item(None, "in_progress"))
    yield from close("incomplete" if finish == "length" else "completed")
    response["output"] = items
    _finished(response, finish, usage)
    yield event("response.incomplete" if response["status"] == "incomplete" else "response.completed", response=response)
