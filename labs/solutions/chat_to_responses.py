"""Reference solution for labs/14_chat_to_responses.py."""


def to_response_tools(specs: list[dict]) -> list[dict]:
    """Chat Completions tool specs -> Responses function tools (the function's fields, one level up)."""
    tools = []
    for spec in specs:
        function = spec["function"]
        tool = {"type": "function", "name": function["name"],
                "parameters": function.get("parameters", {"type": "object", "properties": {}})}
        if "description" in function:
            tool["description"] = function["description"]
        # Unstated, strict is off in Chat Completions but on in the Responses API: say it.
        tool["strict"] = bool(function.get("strict", False))
        tools.append(tool)
    return tools


def to_input_items(messages: list[dict]) -> list[dict]:
    """A Chat Completions history -> the Responses API's list of input items."""
    items = []
    for message in messages:
        role = message["role"]
        if role == "tool":
            items.append({"type": "function_call_output", "call_id": message["tool_call_id"],
                          "output": message["content"]})
            continue
        if message.get("content"):
            items.append({"type": "message", "role": role, "content": message["content"]})
        for call in message.get("tool_calls") or []:
            items.append({"type": "function_call", "call_id": call["id"],
                          "name": call["function"]["name"], "arguments": call["function"]["arguments"]})
    return items
