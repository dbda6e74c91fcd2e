"""Reference solution for labs/13_call_parser.py."""

import json

OPEN = "<tool_call>"
_decoder = json.JSONDecoder()


def parse_calls(text: str):
    """(content, calls): plain text gives (text, []); call blocks give (None, [{name, arguments}])."""
    if not text.lstrip().startswith(OPEN):
        return text, []
    calls, position = [], 0
    while (start := text.find(OPEN, position)) != -1:
        start += len(OPEN)
        while start < len(text) and text[start].isspace():
            start += 1
        try:
            value, end = _decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            break  # cut off by max_tokens: an incomplete call is not a call
        if not isinstance(value, dict) or "name" not in value or not isinstance(value.get("arguments"), dict):
            break
        calls.append({"name": value["name"], "arguments": json.dumps(value["arguments"], ensure_ascii=False)})
        position = end
    return (None, calls) if calls else (text, [])
