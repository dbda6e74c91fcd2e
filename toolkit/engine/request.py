"""Checking a chat request the way OpenAI's API does, before the model sees it.

A request the engine cannot honour is answered with HTTP 400 and a message that says which
field is wrong, exactly as a hosted API would; it never reaches the model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from toolkit.json_schema import schema_error


_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_ROLES = {"system", "developer", "user", "assistant", "tool"}
NO_PARAMETERS = {"type": "object", "properties": {}}


class RequestError(ValueError):
    """A bad request (HTTP 400). ``param`` names the field, as OpenAI's error bodies do."""

    def __init__(self, message: str, param: str | None = None):
        super().__init__(message)
        self.param = param


@dataclass
class ChatRequest:
    messages: list[dict]
    tools: list[dict] = field(default_factory=list)  # with parameters always filled in
    mode: str = "none"  # "none" | "auto" | "required"; a named function is "required" with one tool
    parallel: bool = True
    max_tokens: int | None = None
    temperature: float = 1.0
    top_p: float = 1.0
    seed: int | None = None
    stop: list[str] = field(default_factory=list)
    include_usage: bool = False
    response_format: dict | None = None  # the JSON Schema that text replies must match, if any
    grammar: str | None = None  # a GBNF grammar the text reply must match, as llama.cpp's server takes it


def _check_tools(raw: Any) -> list[dict]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise RequestError("'tools' must be a list", "tools")
    tools, seen = [], set()
    for index, tool in enumerate(raw):
        where = f"tools[{index}]"
        if not isinstance(tool, dict) or tool.get("type", "function") != "function" or not isinstance(tool.get("function"), dict):
            raise RequestError(f"{where} must be {{'type': 'function', 'function': {{...}}}}", where)
        function = tool["function"]
        name = function.get("name")
        if not isinstance(name, str) or not _NAME.match(name):
            raise RequestError(f"{where}.function.name must match ^[A-Za-z0-9_-]{{1,64}}$, got {name!r}", f"{where}.function.name")
        if name in seen:
            raise RequestError(f"{where}: duplicate tool name {name!r}", f"{where}.function.name")
        seen.add(name)
        parameters = function.get("parameters")
        if parameters is None:
            parameters = NO_PARAMETERS  # as in OpenAI's API: no parameters means none
        if not isinstance(parameters, dict) or parameters.get("type", "object") != "object":
            raise RequestError(f"{where}.function.parameters must be a JSON Schema of type 'object'", f"{where}.function.parameters")
        if (error := schema_error(parameters)) is not None:
            raise RequestError(f"{where}.function.parameters is not a valid JSON Schema: {error.message}", f"{where}.function.parameters")
        if function.get("strict") and (problem := strict_schema_problem(parameters, f"{where}.function.parameters")):
            raise RequestError(problem, f"{where}.function.parameters")
        description = function.get("description") or ""
        tools.append({"type": "function", "function": {"name": name, "description": description, "parameters": parameters}})
    return tools


def strict_schema_problem(schema: Any, where: str = "") -> str | None:
    """Why a schema breaks OpenAI's rules for ``strict: true``, or None if it keeps them.

    Strict mode promises that every reply matches the schema exactly, so OpenAI accepts only
    schemas where that is well defined: each object lists all its properties as required
    (an optional field is a union with null) and sets ``additionalProperties: false``.
    """
    if isinstance(schema, dict):
        if schema.get("type") == "object" or "properties" in schema:
            properties = schema.get("properties") or {}
            if schema.get("additionalProperties") is not False:
                return f"{where or 'the schema'}: strict mode needs 'additionalProperties': false"
            missing = sorted(set(properties) - set(schema.get("required") or []))
            if missing:
                return f"{where or 'the schema'}: strict mode needs every property in 'required'; missing {missing}"
        for key, value in schema.items():
            children = value.items() if key in ("properties", "$defs", "definitions") and isinstance(value, dict) else (
                [(str(i), v) for i, v in enumerate(value)] if isinstance(value, list) else
                [("", value)] if key in ("items", "additionalProperties") else [])
            for name, child in children:
                if (problem := strict_schema_problem(child, f"{where}.{key}{'.' + name if name else ''}".lstrip("."))):
                    return problem
    return None


def _check_response_format(raw: Any) -> dict | None:
    """The JSON Schema a text reply must match: None for plain text."""
    if raw is None:
        return None
    kind = raw.get("type") if isinstance(raw, dict) else None
    if kind == "text":
        return None
    if kind == "json_object":
        return {"type": "object"}
    if kind == "json_schema":
        spec = raw.get("json_schema")
        if not isinstance(spec, dict) or not isinstance(spec.get("name"), str) or not _NAME.match(spec["name"]):
            raise RequestError("response_format.json_schema needs a 'name' matching ^[A-Za-z0-9_-]{1,64}$", "response_format")
        schema = spec.get("schema", {"type": "object"})
        if not isinstance(schema, dict) or (error := schema_error(schema)) is not None:
            message = error.message if isinstance(schema, dict) else "it must be an object"
            raise RequestError(f"response_format.json_schema.schema is not a valid JSON Schema: {message}", "response_format")
        if spec.get("strict") and (problem := strict_schema_problem(schema)):
            raise RequestError(f"response_format.json_schema.schema: {problem}", "response_format")
        return schema
    raise RequestError("response_format.type must be 'text', 'json_object' or 'json_schema'; "
                       f"the embedded model cannot honour {kind!r}", "response_format")


def _check_messages(raw: Any) -> list[dict]:
    if not isinstance(raw, list) or not raw:
        raise RequestError("'messages' must be a non-empty list", "messages")
    call_ids: set[str] = set()
    for index, message in enumerate(raw):
        where = f"messages[{index}]"
        if not isinstance(message, dict) or message.get("role") not in _ROLES:
            raise RequestError(f"{where}.role must be one of {sorted(_ROLES)}", f"{where}.role")
        if message["role"] == "assistant":
            for call in message.get("tool_calls") or []:
                if not isinstance(call, dict) or not isinstance(call.get("function"), dict) or "id" not in call:
                    raise RequestError(f"{where}.tool_calls entries need 'id' and 'function'", f"{where}.tool_calls")
                call_ids.add(call["id"])
        if message["role"] == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in call_ids:
                raise RequestError(
                    f"{where}: a 'tool' message must answer a preceding assistant tool call; no call has id {call_id!r}",
                    f"{where}.tool_call_id",
                )
    return raw


def _check_grammar(raw: Any, mode: str, response_format: dict | None) -> str | None:
    """A GBNF grammar for the text reply (llama.cpp's ``grammar`` field; hosted APIs have none).

    Whether it parses is checked by the engine, which needs the model's vocabulary for that.
    """
    if raw is None:
        return None
    if not isinstance(raw, str) or not raw.strip():
        raise RequestError("'grammar' must be a GBNF grammar, as a non-empty string", "grammar")
    if mode != "none":
        raise RequestError("'grammar' shapes a text reply, so it cannot come with 'tools' that may be called: "
                           "send one or the other (or tool_choice 'none')", "grammar")
    if response_format is not None:
        raise RequestError("'grammar' and 'response_format' both shape the text reply: send one of them", "grammar")
    return raw


def _number(request: dict, key: str, default: float, low: float, high: float) -> float:
    value = request.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise RequestError(f"'{key}' must be a number between {low} and {high}", key)
    return float(value)


def parse_request(request: dict) -> ChatRequest:
    messages = _check_messages(request.get("messages"))
    tools = _check_tools(request.get("tools"))
    choice = request.get("tool_choice")
    mode = "auto" if tools else "none"
    if choice in ("auto", "none", "required"):
        if choice == "required" and not tools:
            raise RequestError("tool_choice 'required' needs at least one tool in 'tools'", "tool_choice")
        mode = choice if tools else "none"
    elif isinstance(choice, dict):
        name = (choice.get("function") or {}).get("name")
        chosen = [tool for tool in tools if tool["function"]["name"] == name]
        if not chosen:
            raise RequestError(f"tool_choice names function {name!r}, which is not in 'tools'", "tool_choice")
        tools, mode = chosen, "required"
    elif choice is not None:
        raise RequestError("tool_choice must be 'auto', 'none', 'required' or {'type': 'function', 'function': {'name': ...}}", "tool_choice")
    max_tokens = request.get("max_completion_tokens", request.get("max_tokens"))
    if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1):
        raise RequestError("'max_tokens' must be a positive integer", "max_tokens")
    if request.get("n", 1) != 1:
        raise RequestError("only n=1 is supported", "n")
    stop = request.get("stop") or []
    stop = [stop] if isinstance(stop, str) else stop
    if not isinstance(stop, list) or not all(isinstance(s, str) for s in stop):
        raise RequestError("'stop' must be a string or a list of strings", "stop")
    seed = request.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise RequestError("'seed' must be an integer", "seed")
    named = isinstance(choice, dict)
    response_format = _check_response_format(request.get("response_format"))
    return ChatRequest(
        messages=messages,
        tools=tools,
        mode=mode,
        parallel=bool(request.get("parallel_tool_calls", True)) and not named,
        max_tokens=max_tokens,
        temperature=_number(request, "temperature", 1.0, 0.0, 2.0),
        top_p=_number(request, "top_p", 1.0, 0.0, 1.0),
        seed=seed,
        stop=stop,
        include_usage=bool((request.get("stream_options") or {}).get("include_usage")),
        response_format=response_format,
        grammar=_check_grammar(request.get("grammar"), mode, response_format),
    )
