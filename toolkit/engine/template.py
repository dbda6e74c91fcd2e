"""The chat template: how messages and tools become the one string the model reads.

SmolLM2 was trained on ChatML (``<|im_start|>role ... <|im_end|>``). Its own template knows
nothing of tools, so this module adds them the way tool-trained models (Hermes, Qwen) see them:

    <|im_start|>system
    {the caller's system prompt, if any}

    # Tools
    You can call these tools. Each is described as JSON:
    {"name": "get_weather", "description": "...", "parameters": {...}}

    To call a tool, reply with one block per call:
    <tool_call>
    {"name": "<tool name>", "arguments": {<arguments as JSON>}}
    </tool_call>
    Otherwise reply in plain text.<|im_end|>
    <|im_start|>user
    What is the weather in Beijing?<|im_end|>
    <|im_start|>assistant
    <tool_call>
    {"name": "get_weather", "arguments": {"city": "Beijing"}}
    </tool_call><|im_end|>
    <|im_start|>tool
    <tool_response id="call_1" name="get_weather">
    Sunny, 25 C
    </tool_response><|im_end|>
    <|im_start|>assistant

No default system prompt is injected over the caller's: with no system message and no
tools, the prompt starts with the first user turn.
"""

from __future__ import annotations

import json

CALL_OPEN, CALL_CLOSE = "<tool_call>", "</tool_call>"


def _turn(role: str, content: str) -> str:
    return f"<|im_start|>{role}\n{content}<|im_end|>\n"


def render_tools(tools: list[dict]) -> str:
    lines = ["# Tools", "You can call these tools. Each is described as JSON:"]
    for tool in tools:
        function = tool["function"]
        described = {"name": function["name"], "description": function.get("description", ""),
                     "parameters": function.get("parameters") or {"type": "object", "properties": {}}}
        lines.append(json.dumps(described, ensure_ascii=False))
    lines += [
        "",
        "To call a tool, reply with one block per call:",
        CALL_OPEN,
        '{"name": "<tool name>", "arguments": {<arguments as JSON>}}',
        CALL_CLOSE,
        "Otherwise reply in plain text.",
    ]
    return "\n".join(lines)


def render_call(name: str, arguments: str) -> str:
    """One call block, exactly as the grammar lets the model write it."""
    arguments = arguments.strip() or "{}"
    return f'{CALL_OPEN}\n{{"name": {json.dumps(name, ensure_ascii=False)}, "arguments": {arguments}}}\n{CALL_CLOSE}'


def content_text(content) -> str:
    """Content may be a string or a list of parts; only text parts mean anything here."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


def render_prompt(messages: list[dict], tools: list[dict] | None) -> str:
    """The full prompt, ending with the open assistant turn the model continues."""
    parts: list[str] = []
    system_texts = [content_text(m.get("content")) for m in messages if m["role"] in ("system", "developer")]
    system = "\n\n".join(text for text in system_texts if text)
    if tools:
        system = f"{system}\n\n{render_tools(tools)}" if system else render_tools(tools)
    if system:
        parts.append(_turn("system", system))
    names_by_id: dict[str, str] = {}
    for message in messages:
        role = message["role"]
        if role in ("system", "developer"):
            continue
        if role == "assistant":
            blocks = [content_text(message.get("content"))] if message.get("content") else []
            for call in message.get("tool_calls") or []:
                names_by_id[call["id"]] = call["function"]["name"]
                blocks.append(render_call(call["function"]["name"], call["function"].get("arguments") or "{}"))
            parts.append(_turn("assistant", "\n".join(blocks)))
        elif role == "tool":
            call_id = message.get("tool_call_id", "")
            name = names_by_id.get(call_id, "")
            body = content_text(message.get("content"))
            parts.append(_turn("tool", f'<tool_response id="{call_id}" name="{name}">\n{body}\n</tool_response>'))
        else:
            parts.append(_turn(role, content_text(message.get("content"))))
    parts.append("<|im_start|>assistant\n")
    return "".join(parts)
