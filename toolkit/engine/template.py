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


# --- The answer after tool results, for a model never trained on a tool role ----------------------


def _as_note(content: str) -> str:
    """A JSON object result as "key: value; ..." (true/false as yes/no); anything else as is."""
    if not content.strip():
        return "(nothing)"  # an empty result, said as such: lesson 9 shows what it does to a model
    try:
        value = json.loads(content)
    except (json.JSONDecodeError, TypeError):
        return content.strip()
    if not isinstance(value, dict):
        return content.strip()

    def word(item):
        if isinstance(item, bool):
            return "yes" if item else "no"
        return json.dumps(item, ensure_ascii=False) if isinstance(item, (list, dict)) else str(item)

    return "; ".join(f"{key.replace('_', ' ')}: {word(item)}" for key, item in value.items())


ANSWER_INSTRUCTION = "Reply to the user with what the tool said."


def render_answer_prompt(messages: list[dict]) -> str:
    """The prompt for answering from tool results, written for a model that has no tool role.

    SmolLM2-135M-Instruct was trained on system, user and assistant turns only. Shown its own
    call and a ``tool`` turn holding ``<tool_response>`` JSON, it echoes the block back or
    writes markup instead of an answer. Shown the same results as a short note inside the
    user's question, with one line of system prompt asking it to pass them on, it answers. So
    the results of this turn's calls are folded into the last user message, as "(The get
    weather tool says: city: Shanghai; ...)", and the calls themselves, like the tools, are
    left out: the reply is text, whatever comes next.

    The form was chosen on the lab's synthetic after-result turns (``training.synthetic``),
    never on the sets the lab measures itself with. On 100 of them, the base model's answer
    states a fact from the result 52 times with this prompt (55 on another 100), 41 when the
    system line asks for "one short sentence", 35 with no system line; from the template's
    own tool turns (tools left out) 5 of 24 did and 15 of 24 echoed JSON or markup. The tuned
    model, though trained on those tool turns, also does better from the note (17 against
    10 of 40, and no echo against 16).
    """
    last_user = max((i for i, m in enumerate(messages) if m["role"] == "user"), default=-1)
    names = {call["id"]: call["function"]["name"] for m in messages[last_user + 1:] for call in m.get("tool_calls") or []}
    notes = [f"The {names.get(m.get('tool_call_id'), 'tool').replace('_', ' ')} tool says: "
             f"{_as_note(content_text(m.get('content'))).rstrip('.')}."
             for m in messages[last_user + 1:] if m["role"] == "tool"]
    earlier = messages[:last_user + 1] if last_user >= 0 else list(messages)
    if last_user >= 0 and notes:
        question = content_text(earlier[-1].get("content"))
        earlier = [*earlier[:-1], {"role": "user", "content": f"{question}\n\n({' '.join(notes)})"}]
    return render_prompt([*earlier, {"role": "system", "content": ANSWER_INSTRUCTION}], None)  # after the caller's own
