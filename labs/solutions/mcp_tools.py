"""Reference solution for labs/14_mcp_tools.py."""

import json


def to_openai_tool(mcp_tool: dict) -> dict:
    """One tool from an MCP server's tools/list -> an OpenAI (Chat Completions) tool spec."""
    function = {"name": mcp_tool["name"]}
    if mcp_tool.get("description"):
        function["description"] = mcp_tool["description"]
    function["parameters"] = mcp_tool["inputSchema"]
    return {"type": "function", "function": function}


def _part_text(part: dict) -> str:
    if part.get("type") == "text":
        return part["text"]
    if part.get("type") in ("image", "audio"):
        return f"[{part['type']}: {part.get('mimeType', 'unknown type')}]"
    return f"[{part.get('type', 'unknown')} content]"


def result_text(result: dict) -> str:
    """An MCP tools/call result -> the text the model reads as the tool's result."""
    parts = [_part_text(part) for part in result.get("content") or []]
    if parts:
        text = "\n".join(parts)
    elif result.get("structuredContent") is not None:
        text = json.dumps(result["structuredContent"], ensure_ascii=False)
    else:
        text = "(no output)"
    if result.get("isError") and not text.startswith("Error:"):
        text = "Error: " + text
    return text
