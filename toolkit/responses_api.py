"""Chat-completions requests sent over OpenAI's Responses API, and the replies read back.

The lab's loop, trace, experiments and app are written against chat completions: a request
with ``messages`` and ``tools``, a reply with ``choices[0].message.tool_calls``. These
functions let the same code talk to ``POST /v1/responses`` (``connect(api="responses")``):

    chat request                          Responses request
    system / developer / user messages    message items of the same role (text as input_text)
    assistant content                     an assistant message item
    assistant tool_calls                  one function_call item each (call_id = the call's id)
    role "tool" + tool_call_id            a function_call_output item (call_id)
    tools {"function": {...}}             tools flat: {"type": "function", "name": ...}
    max_tokens / max_completion_tokens    max_output_tokens
    response_format                       text.format

and back: ``output_text`` parts become the message's content, ``function_call`` items its
``tool_calls`` (id = ``call_id``), ``status: "incomplete"`` becomes ``finish_reason: "length"``.

``seed`` is not part of OpenAI's Responses API. It is sent (as an extra field) only to the
embedded endpoint, which honours it; for other endpoints it is left out.

A chat parameter with no Responses counterpart (``stop``, ``logprobs``, ``n`` > 1, ...) raises
``ValueError`` naming it: silently dropping it would change what is being measured.
"""

from __future__ import annotations

from typing import Any, Iterator

from openai.types.chat import ChatCompletion, ChatCompletionChunk

_SAME = {"model", "temperature", "top_p", "parallel_tool_calls", "stream", "metadata", "user", "store",
         "service_tier", "extra_headers", "extra_query", "extra_body", "timeout"}
_DROPPED = {"stream_options"}  # a Responses stream always ends with its usage


def _plain(value: Any) -> Any:
    """A dict for an ``openai`` object (a reply's message appended to the history as is)."""
    return value.model_dump(exclude_none=True) if hasattr(value, "model_dump") else value


def _input_content(content: Any, role: str) -> str | list[dict]:
    if content is None or isinstance(content, str):
        return content or ""
    kind = "output_text" if role == "assistant" else "input_text"
    parts = []
    for part in content:
        part = _plain(part)
        if not isinstance(part, dict) or part.get("type") != "text":
            raise ValueError(f"only text content parts can be sent as Responses input, not {part!r}")
        parts.append({"type": kind, "text": part["text"]})
    return parts


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(_plain(part).get("text", "") for part in content)
    return content or ""


def input_items(messages: list[Any]) -> list[dict]:
    """Chat messages as Responses input items."""
    items: list[dict] = []
    for message in map(_plain, messages):
        role = message.get("role")
        if role == "tool":
            items.append({"type": "function_call_output", "call_id": message.get("tool_call_id"),
                          "output": _text(message.get("content"))})
        elif role == "assistant":
            if message.get("content"):
                items.append({"role": "assistant", "content": _input_content(message["content"], role)})
            for call in map(_plain, message.get("tool_calls") or []):
                items.append({"type": "function_call", "call_id": call["id"], "name": call["function"]["name"],
                              "arguments": call["function"].get("arguments") or "{}"})
        elif role in ("system", "developer", "user"):
            items.append({"role": role, "content": _input_content(message.get("content"), role)})
        else:
            raise ValueError(f"a message with role {role!r} cannot be sent as Responses input")
    return items


def _flat_tool(tool: dict) -> dict:
    function = tool.get("function") or {}
    flat = {"type": "function", "name": function.get("name")}
    for key in ("description", "parameters"):
        if function.get(key) is not None:
            flat[key] = function[key]
    # Left out, strict means "off" in chat completions but "on" in OpenAI's Responses API, which
    # then makes every optional field required. Saying it keeps the request's meaning.
    flat["strict"] = bool(function.get("strict"))
    return flat


def _flat_choice(choice: Any) -> Any:
    if isinstance(choice, dict) and isinstance(choice.get("function"), dict):
        return {"type": "function", "name": choice["function"].get("name")}
    return choice


def _text_format(response_format: dict) -> dict:
    if response_format.get("type") == "json_schema":
        return {"format": {"type": "json_schema", **(response_format.get("json_schema") or {})}}
    return {"format": {"type": response_format.get("type")}}


def responses_request(chat: dict, send_seed: bool = False) -> dict:
    """The ``client.responses.create(**...)`` arguments that ask what ``chat`` asks."""
    body: dict[str, Any] = {}
    for key, value in chat.items():
        if value is None or key in _DROPPED:
            continue
        if key == "messages":
            body["input"] = input_items(value)
        elif key == "tools":
            body["tools"] = [_flat_tool(_plain(tool)) for tool in value]
        elif key == "tool_choice":
            body["tool_choice"] = _flat_choice(value)
        elif key in ("max_tokens", "max_completion_tokens"):
            body["max_output_tokens"] = value
        elif key == "response_format":
            body["text"] = _text_format(_plain(value))
        elif key == "seed":
            if send_seed:
                body["extra_body"] = {**(body.get("extra_body") or {}), "seed": value}
        elif key == "n" and value == 1:
            continue
        elif key in _SAME:
            body[key] = {**value, **body["extra_body"]} if key == "extra_body" and "extra_body" in body else value
        else:
            raise ValueError(f"the chat-completions parameter {key!r} has no counterpart in the Responses API")
    return body


def _finish(status: str | None, reason: str | None, has_calls: bool) -> str:
    if status == "incomplete":
        return "content_filter" if reason == "content_filter" else "length"
    return "tool_calls" if has_calls else "stop"


def _chat_usage(usage: Any) -> dict | None:
    if usage is None:
        return None
    return {"prompt_tokens": usage.input_tokens, "completion_tokens": usage.output_tokens,
            "total_tokens": usage.total_tokens}


def completion_from_response(response: Any) -> ChatCompletion:
    """A Responses reply as the chat completion that says the same."""
    messages = [item for item in response.output if item.type == "message"]
    texts = [part.text for item in messages for part in item.content if part.type == "output_text"]
    refusals = [part.refusal for item in messages for part in item.content if part.type == "refusal"]
    calls = [{"id": item.call_id, "type": "function", "function": {"name": item.name, "arguments": item.arguments}}
             for item in response.output if item.type == "function_call"]
    message: dict[str, Any] = {"role": "assistant", "content": "".join(texts) if messages else None}
    if refusals:
        message["refusal"] = "".join(refusals)
    if calls:
        message["tool_calls"] = calls
    reason = response.incomplete_details.reason if response.incomplete_details else None
    return ChatCompletion.model_validate({
        "id": response.id, "object": "chat.completion", "created": int(response.created_at), "model": response.model,
        "choices": [{"index": 0, "message": message, "finish_reason": _finish(response.status, reason, bool(calls))}],
        "usage": _chat_usage(response.usage),
    })


def chunks_from_events(events: Any, include_usage: bool = False) -> Iterator[ChatCompletionChunk]:
    """A streamed Responses reply as the chat-completion chunks that say the same."""
    head: dict[str, Any] = {}
    call_index: dict[str, int] = {}  # item id -> index in tool_calls

    def chunk(delta: dict | None, finish: str | None = None, usage: dict | None = None) -> ChatCompletionChunk:
        choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
        return ChatCompletionChunk.model_validate({**head, "object": "chat.completion.chunk", "choices": choices,
                                                   "usage": usage})

    try:
        for event in events:
            if event.type == "response.created":
                head.update(id=event.response.id, created=int(event.response.created_at), model=event.response.model)
                yield chunk({"role": "assistant", "content": ""})
            elif event.type == "response.output_text.delta":
                yield chunk({"content": event.delta})
            elif event.type == "response.output_item.added" and event.item.type == "function_call":
                call_index[event.item.id] = len(call_index)
                yield chunk({"tool_calls": [{"index": call_index[event.item.id], "id": event.item.call_id,
                                             "type": "function",
                                             "function": {"name": event.item.name, "arguments": event.item.arguments}}]})
            elif event.type == "response.function_call_arguments.delta":
                yield chunk({"tool_calls": [{"index": call_index[event.item_id], "function": {"arguments": event.delta}}]})
            elif event.type in ("response.completed", "response.incomplete"):
                response = event.response
                reason = response.incomplete_details.reason if response.incomplete_details else None
                yield chunk({}, _finish(response.status, reason, bool(call_index)))
                if include_usage:
                    yield chunk(None, usage=_chat_usage(response.usage))
            elif event.type in ("response.failed", "error"):
                error = getattr(getattr(event, "response", None), "error", None) or event
                raise ValueError(f"the streamed response failed: {getattr(error, 'message', error)}")
    finally:
        if hasattr(events, "close"):
            events.close()
