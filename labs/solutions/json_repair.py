"""Reference solution for labs/02_json_repair.py.

The idea: split the text into strings and structure first, so that the fixes made to the
structure (keys, trailing commas, comments) can never damage the inside of a string value.
"""

import json
import re

SMART_QUOTES = {"“": '"', "”": '"', "‘": "'", "’": "'"}
UNQUOTED_KEY = re.compile(r"([{,]\s*)([A-Za-z_][\w-]*)(\s*:)")
TRAILING_COMMA = re.compile(r",(\s*[}\]])")


def repair(text: str) -> dict:
    try:
        return json.loads(text)  # valid JSON is never touched
    except json.JSONDecodeError:
        pass
    for smart, plain in SMART_QUOTES.items():
        text = text.replace(smart, plain)

    repaired, structure, i = "", "", 0
    while i < len(text):
        if text[i] in "\"'":
            end = string_end(text, i)
            repaired += fix_structure(structure) + double_quoted(text[i:end])
            structure, i = "", end
        elif text.startswith("//", i):
            newline = text.find("\n", i)
            i = len(text) if newline == -1 else newline
        elif text.startswith("/*", i):
            close = text.find("*/", i + 2)
            i = len(text) if close == -1 else close + 2
        else:
            structure += text[i]
            i += 1
    repaired += fix_structure(structure)
    return json.loads(repaired)


def string_end(text: str, start: int) -> int:
    """Index just after the string that opens at ``start`` (skipping escaped characters)."""
    quote, i = text[start], start + 1
    while i < len(text) and text[i] != quote:
        i += 2 if text[i] == "\\" else 1
    return i + 1


def double_quoted(string: str) -> str:
    """'it' -> "it"; a " inside a single-quoted string must then be escaped."""
    if string.startswith('"'):
        return string
    body = string[1:-1].replace("\\'", "'").replace('"', '\\"')
    return f'"{body}"'


def fix_structure(structure: str) -> str:
    structure = UNQUOTED_KEY.sub(r'\1"\2"\3', structure)
    return TRAILING_COMMA.sub(r"\1", structure)
