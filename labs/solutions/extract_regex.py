"""Reference solution for labs/02_extract_regex.py."""

import json
import re

# <tool>, optional ```json fence, the object, optional closing fence, then the end of the call:
# a closing tag, or (when the model forgot it) the next <tool> or the end of the text.
CALL = re.compile(
    r"<tool>\s*(?:```(?:json)?)?\s*(\{.*?\})\s*(?:```)?\s*(?:</tool>|(?=<tool>)|\Z)",
    re.DOTALL,
)


def extract_calls(text: str) -> list[dict]:
    calls = []
    for json_text in CALL.findall(text):
        call = json.loads(json_text)
        calls.append({"name": call["name"], "arguments": call.get("arguments", {})})
    return calls
