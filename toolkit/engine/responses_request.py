"""Checking a Responses API request and turning it into the chat request the engine answers.

A request the engine cannot honour is a 400 (``RequestError``) that names the Responses field,
never a chat one: ``responses_terms()`` re-words the chat checks' messages where they are reused
(tool schemas, ``tool_choice``, the context size).

Refused: built-in tools (web search, file search, code interpreter, computer use, MCP, ...: they
run on OpenAI's servers); ``previous_response_id`` and ``conversation`` (nothing is stored here:
``store`` is accepted and ignored); ``background``; stored prompts; reasoning settings; input
that is not text; a ``function_call_output`` whose ``call_id`` no earlier ``function_call`` item
in ``input`` carries; and, as OpenAI does, any parameter it does not know.

One deliberate difference: OpenAI refuses ``max_output_tokens`` below 16; the embedded endpoint
takes any positive number, so tests and lessons on a slow CPU can ask for a few tokens.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any

from toolkit.engine.request import RequestError

# Fields read here, fields that change nothing here, and fields that cannot be honoured.
_USED = {"model", "input", "instructions", "tools", "tool_choice", "parallel_tool_calls", "temperature",
         "top_p", "max_output_tokens", "seed", "stream", "text"}
_IGNORED = {"store", "metadata", "user", "safety_identifier", "prompt_cache_key", "prompt_cache_retention",
            "service_tier", "truncation", "include", "stream_options"}
_REFUSED = {
    "previous_response_id": "this endpoint stores no responses, so it cannot continue one: "
                            "send the whole conversation in 'input'",
    "conversation": "this endpoint stores no conversations: send the whole conversation in 'input'",
    "background": "this endpoint answers while you wait; it has no background mode",
    "prompt": "this endpoint has no stored prompts: put the text in 'instructions'",
    "reasoning": "the embedded models are not reasoning models",
    "max_tool_calls": "the embedded endpoint has no limit on built-in tool calls to set",
    "top_logprobs": "the embedded endpoint does not return log-probabilities",
}
_TEXT_PARTS = {"input_text", "output_text"}


def chat_request(raw: dict) -> dict:
    """The chat-completions request that asks the engine what ``raw`` asks; 400 if it cannot."""
    for key, value in raw.items():
        if key in _REFUSED and value not in (None, False):
            raise RequestError(f"'{key}' is not supported: {_REFUSED[key]}", key)
        if key not in _USED | _IGNORED | set(_REFUSED):
            raise RequestError(f"Unknown parameter: '{key}'.", key)
    chat: dict[str, Any] = {"messages": _messages(raw.get("input"), raw.get("instructions"))}
    for key in ("model", "temperature", "top_p", "seed", "parallel_tool_calls"):
        if raw.get(key) is not None:
            chat[key] = raw[key]
    if (tools := _tools(raw.get("tools"))) is not None:
        chat["tools"] = tools
    if raw.get("tool_choice") is not None:
        chat["tool_choice"] = _tool_choice(raw["tool_choice"])
    if (limit := raw.get("max_output_tokens")) is not None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise RequestError("'max_output_tokens' must be a positive integer", "max_output_tokens")
        chat["max_tokens"] = limit
    if (text := raw.get("text")) is not None:
        chat["response_format"] = _response_format(text)
    return chat


def _messages(raw_input: Any, instructions: Any) -> list[dict]:
    messages: list[dict] = []
    if instructions is not None:
        if not isinstance(instructions, str):
            raise RequestError("'instructions' must be a string", "instructions")
        if instructions:
            messages.append({"role": "system", "content": instructions})
    if isinstance(raw_input, str):
        return messages + [{"role": "user", "content": raw_input}]
    if not isinstance(raw_input, list) or not raw_input:
        raise RequestError("'input' must be a string or a non-empty list of items", "input")
    call_ids: set[str] = set()
    for index, item in enumerate(raw_input):
        where = f"input[{index}]"
        if not isinstance(item, dict):
            raise RequestError(f"{where} must be an object (a message, function_call or function_call_output item)", where)
        kind = item.get("type", "message" if "role" in item else None)
        if kind == "message":
            messages.append(_message(item, where))
        elif kind == "function_call":
            call = _function_call(item, where)
            if call["id"] in call_ids:
                raise RequestError(f"{where}: call_id {call['id']!r} is used by an earlier function_call", f"{where}.call_id")
            call_ids.add(call["id"])
            last = messages[-1] if messages else None
            if last is not None and last["role"] == "assistant":  # calls after text: one assistant turn
                last.setdefault("tool_calls", []).append(call)
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            call_id = item.get("call_id")
            if call_id not in call_ids:
                raise RequestError(f"{where}: no function_call item before it has call_id {call_id!r}; "
                                   "a function_call_output must answer a function_call earlier in 'input'",
                                   f"{where}.call_id")
            messages.append({"role": "tool", "tool_call_id": call_id, "content": _output_text(item.get("output"), where)})
        else:
            raise RequestError(f"{where}: items of type {kind!r} are not supported here; the embedded endpoint "
                               "takes message, function_call and function_call_output items", f"{where}.type")
    return messages


def _message(item: dict, where: str) -> dict:
    role = item.get("role")
    if role not in ("user", "system", "developer", "assistant"):
        raise RequestError(f"{where}.role must be 'user', 'system', 'developer' or 'assistant'", f"{where}.role")
    content = item.get("content")
    if isinstance(content, str):
        return {"role": role, "content": content}
    if not isinstance(content, list):
        raise RequestError(f"{where}.content must be a string or a list of content parts", f"{where}.content")
    parts = []
    for number, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind not in _TEXT_PARTS or not isinstance(part.get("text"), str):
            raise RequestError(f"{where}.content[{number}]: the embedded models read text only; each part must be "
                               f"{{'type': 'input_text' or 'output_text', 'text': ...}}, got type {kind!r}",
                               f"{where}.content[{number}]")
        parts.append({"type": "text", "text": part["text"]})
    return {"role": role, "content": parts}


def _function_call(item: dict, where: str) -> dict:
    for key in ("call_id", "name", "arguments"):
        if not isinstance(item.get(key), str) or (key != "arguments" and not item[key]):
            raise RequestError(f"{where}: a function_call item needs '{key}' as a string "
                               "(arguments is the JSON text of the arguments)", f"{where}.{key}")
    return {"id": item["call_id"], "type": "function", "function": {"name": item["name"], "arguments": item["arguments"]}}


def _output_text(output: Any, where: str) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, list) and all(isinstance(p, dict) and p.get("type") == "input_text"
                                        and isinstance(p.get("text"), str) for p in output):
        return "".join(part["text"] for part in output)
    raise RequestError(f"{where}.output must be a string or a list of input_text parts", f"{where}.output")


def _tools(raw: Any) -> list[dict] | None:
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise RequestError("'tools' must be a list", "tools")
    tools = []
    for index, tool in enumerate(raw):
        where = f"tools[{index}]"
        kind = tool.get("type") if isinstance(tool, dict) else None
        if kind != "function":
            raise RequestError(f"{where}: the embedded endpoint has no built-in tool {kind!r}; built-in tools "
                               "(web_search, file_search, code_interpreter, computer use, mcp, ...) run on "
                               "OpenAI's servers. Only {'type': 'function', 'name': ...} tools are supported",
                               f"{where}.type")
        if "function" in tool:
            raise RequestError(f"{where}: the Responses API takes a function tool flat, {{'type': 'function', "
                               "'name': ..., 'parameters': ...}, not nested under 'function' as in chat completions",
                               f"{where}.function")
        tools.append({"type": "function",
                      "function": {key: tool[key] for key in ("name", "description", "parameters", "strict") if key in tool}})
    return tools


def _tool_choice(choice: Any) -> Any:
    if choice in ("auto", "none", "required"):
        return choice
    if isinstance(choice, dict) and choice.get("type") == "function" and isinstance(choice.get("name"), str):
        return {"type": "function", "function": {"name": choice["name"]}}
    raise RequestError("tool_choice must be 'auto', 'none', 'required' or {'type': 'function', 'name': ...}; "
                       f"the embedded endpoint cannot honour {choice!r}", "tool_choice")


def _response_format(text: Any) -> dict:
    if not isinstance(text, dict):
        raise RequestError("'text' must be an object such as {'format': {'type': 'text'}}", "text")
    spec = text.get("format") or {"type": "text"}
    if isinstance(spec, dict) and spec.get("type") == "json_schema":  # flat here, nested in chat
        return {"type": "json_schema", "json_schema": {k: spec[k] for k in ("name", "schema", "strict", "description") if k in spec}}
    return {"type": spec.get("type") if isinstance(spec, dict) else spec}


@contextmanager
def responses_terms():
    """Re-word the chat engine's 400s in the Responses API's field names."""
    try:
        yield
    except RequestError as error:
        def reword(text: str) -> str:
            for chat_name, responses_name in ((".function.", "."), ("max_tokens", "max_output_tokens"),
                                              ("response_format", "text.format"), ("'messages'", "'input'")):
                text = text.replace(chat_name, responses_name)
            return "input" if text == "messages" else text

        error.args = (reword(str(error)),)
        error.param = reword(error.param) if error.param else error.param
        raise
