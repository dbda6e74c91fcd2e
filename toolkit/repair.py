"""JSON repair: turning the almost-JSON that models write into JSON that parses.

Models drift from strict JSON in a handful of ways: single or smart quotes, unquoted keys,
trailing commas, comments, Python's ``True``/``None``, a reply cut off before its closing
braces. Two repairers handle that:

- ``repair_json``: hand-written, small enough to read in one sitting.
- ``repair_json_with_library``: the maintained ``json_repair`` package, which handles far more.

``parse_json_object`` tries ``json.loads`` first and repairs only when it fails, naming the
repair that worked. The string protocol (``toolkit.protocol``) uses it on every call it finds.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

import json_repair

RepairStrategy = Literal["none", "hand", "library", "both"]


class JSONRepairError(ValueError):
    """The text could not be turned into the JSON that was expected."""


def parse_json_object(text: str, repair: RepairStrategy = "hand") -> tuple[dict, str | None]:
    """Parse ``text`` as a JSON object, repairing it only if ``json.loads`` fails.

    Returns ``(object, None)`` for valid JSON, or ``(object, "hand" | "library")`` naming the
    repair that worked. ``"both"`` tries the small hand repair first, then the library.
    """
    check_strategy(repair)
    try:
        return _expect_object(json.loads(text)), None
    except json.JSONDecodeError as error:
        problem = f"{error.msg} at line {error.lineno} column {error.colno}"
    if repair == "none":
        raise JSONRepairError(f"{problem}, and repair is turned off")
    hand, library = ("hand", repair_json), ("library", repair_json_with_library)
    repairers = {"hand": [hand], "library": [library], "both": [hand, library]}[repair]
    for name, repairer in repairers:
        try:
            return _expect_object(json.loads(repairer(text))), name
        except JSONRepairError as error:
            problem = str(error)
    raise JSONRepairError(problem)


# One regular expression splits almost-JSON into strings (any quote style, possibly cut off
# at the end), comments, and everything else. Fixes then touch only the "everything else",
# so a "//" or "," inside a string value is never damaged.
_TOKEN = re.compile(
    r'"(?:\\.|[^"\\])*"?'           # "double-quoted" (the closing quote may be missing)
    r"|'(?:\\.|[^'\\])*'?"          # 'single-quoted'
    r"|“[^”]*”?|‘[^’]*’?"           # “smart-quoted”
    r"|//[^\n]*|/\*.*?(?:\*/|\Z)"   # // and /* */ comments
    r"|[^\"'“‘/]+|/",               # structure: braces, colons, numbers, bare words
    re.DOTALL)
_WHOLE_FENCE = re.compile(r"\A\s*```[\w-]*\s*(.*?)\s*(?:```)?\s*\Z", re.DOTALL)
_UNQUOTED_KEY = re.compile(r"([{,]\s*)([A-Za-z_$][\w$-]*)(\s*:)")
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_PYTHON_LITERAL = re.compile(r"\b(True|False|None)\b")
_ESCAPE_OR_QUOTE = re.compile(r'\\.|"', re.DOTALL)
_CLOSER = {"{": "}", "[": "]"}


def repair_json(text: str) -> str:
    """Fix the usual ways a model's JSON goes wrong; raise ``JSONRepairError`` if still broken."""
    if fence := _WHOLE_FENCE.match(text):
        text = fence.group(1)
    parts: list[list] = []  # [is_string, text] pairs; neighbouring structure is kept together
    for token in _TOKEN.findall(text):
        if token.startswith(("//", "/*")):
            continue  # comments are dropped, so the structure around them joins up
        is_string = token[0] in "\"'“‘"
        _append(parts, is_string, _double_quoted(token) if is_string else token)

    open_brackets = []  # a reply cut off mid-object needs its brackets closed, innermost first
    for is_string, part in parts:
        for char in "" if is_string else part:
            if char in _CLOSER:
                open_brackets.append(_CLOSER[char])
            elif open_brackets and char == open_brackets[-1]:
                open_brackets.pop()
    _append(parts, False, "".join(reversed(open_brackets)))

    repaired = "".join(part if is_string else _fix_structure(part) for is_string, part in parts)
    try:
        json.loads(repaired)
    except json.JSONDecodeError as error:
        raise JSONRepairError(f"the hand repair could not fix it ({error.msg} "
                              f"at column {error.colno} of {repaired!r})") from None
    return repaired


def _append(parts: list[list], is_string: bool, text: str) -> None:
    if parts and not is_string and not parts[-1][0]:
        parts[-1][1] += text
    else:
        parts.append([is_string, text])


def _fix_structure(part: str) -> str:
    part = _UNQUOTED_KEY.sub(r'\1"\2"\3', part)
    part = _PYTHON_LITERAL.sub(lambda m: {"True": "true", "False": "false", "None": "null"}[m[1]], part)
    return _TRAILING_COMMA.sub(r"\1", part)


def _double_quoted(token: str) -> str:
    opener = token[0]
    closer = {"“": "”", "‘": "’"}.get(opener, opener)
    closed = len(token) > 1 and token.endswith(closer)
    if opener == '"':
        return token if closed else token + '"'  # a string cut off at the end gets closed
    body = token[1:-1] if closed else token[1:]
    # Now inside double quotes: a bare " must be escaped, and \' (fine in Python and
    # JavaScript, not in JSON) becomes a plain '. Other escapes stay as they are.
    return '"' + _ESCAPE_OR_QUOTE.sub(
        lambda m: {'"': '\\"', "\\'": "'"}.get(m.group(), m.group()), body) + '"'


def repair_json_with_library(text: str, *, expect_object: bool = True) -> str:
    """Repair with the maintained ``json_repair`` package; the stronger option.

    It also handles what the hand repair does not: unquoted string values, missing commas,
    raw newlines in strings, prose around the JSON.
    """
    try:
        value = json_repair.repair_json(text, return_objects=True)
    except Exception as error:  # the library means never to raise; a bug there must not crash a loop
        raise JSONRepairError(f"the json_repair library failed ({error})") from None
    # json_repair signals "found nothing" with an empty string rather than an exception.
    if value == "":
        raise JSONRepairError("the json_repair library found no JSON in it")
    if expect_object and not isinstance(value, dict):
        raise JSONRepairError(f"the json_repair library made a JSON {json_type(value)} of it, "
                              "not an object")
    return json.dumps(value, ensure_ascii=False)


def _expect_object(value: Any) -> dict:
    if not isinstance(value, dict):
        raise JSONRepairError(f"it is a JSON {json_type(value)}, not an object")
    return value


def json_type(value: Any) -> str:
    for kind, name in ((bool, "boolean"), (dict, "object"), (list, "array"), (str, "string"),
                       ((int, float), "number")):
        if isinstance(value, kind):
            return name
    return "null"


def check_strategy(repair: str) -> None:
    if repair not in ("none", "hand", "library", "both"):
        raise ValueError(f"repair must be 'none', 'hand', 'library' or 'both', not {repair!r}")
