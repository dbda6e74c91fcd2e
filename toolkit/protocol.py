"""The string protocol: tool calls written as ``<tool>{json}</tool>`` inside ordinary text.

Before chat APIs had a ``tools`` field, the only way to let a model call a function was to
agree on a text format in the prompt and parse the reply yourself. This module is that whole
mechanism, in three parts:

1. ``render_system_prompt`` / ``render_tool_result``: describe the tools and the format to the
   model, and feed results back as plain text (the protocol has no ``tool`` role).
2. ``extract_calls``: find the calls in a reply with a regular expression and a brace scanner,
   tolerating the ways real models drift from the format.
3. ``repair_json`` (hand-written, small enough to read) and ``repair_json_with_library`` (the
   maintained ``json_repair`` package, which handles far more): fixes for almost-JSON. They
   live in their own module, ``toolkit.repair``, and are imported from there.

Nothing here guarantees that a call is *right*; it only turns text into ``(name, arguments)``
or into a failure whose ``detail`` says why.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from toolkit.repair import JSONRepairError, RepairStrategy, check_strategy, json_type, parse_json_object

FailureReason = Literal["no_call_found", "json_unrepairable", "unknown_tool", "arguments_invalid", "cut_off"]
FAILURE_REASONS: tuple[FailureReason, ...] = (
    "no_call_found", "json_unrepairable", "unknown_tool", "arguments_invalid", "cut_off")

# Models trained on different formats name the arguments field differently; all mean the same.
ARGUMENT_KEYS = ("arguments", "args", "parameters")

DEFAULT_PREAMBLE = (
    "You are a helpful assistant with access to tools. When a question needs fresh or exact "
    "information (weather, calculations, records), call a tool instead of answering from memory."
)


@dataclass(frozen=True)
class ParsedCall:
    name: str
    arguments: dict[str, Any]
    raw: str  # exactly what the model wrote for this call, tags included
    repaired_by: Literal["hand", "library"] | None = None


@dataclass(frozen=True)
class ExtractionFailure:
    reason: FailureReason
    raw: str
    detail: str  # one sentence a learner can act on


@dataclass(frozen=True)
class ExtractionResult:
    calls: list[ParsedCall] = field(default_factory=list)
    text: str = ""  # the prose outside the calls
    failures: list[ExtractionFailure] = field(default_factory=list)

    @property
    def is_plain_answer(self) -> bool:
        """True when the model wrote no call at all, which is how it answers in text."""
        return not self.calls and [f.reason for f in self.failures] == ["no_call_found"]


# --------------------------------------------------------------------------- rendering

def render_system_prompt(tools: list[dict], preamble: str | None = None) -> str:
    """Describe ``tools`` (OpenAI-style dicts) and the ``<tool>`` calling convention."""
    lines = [preamble if preamble is not None else DEFAULT_PREAMBLE, ""]
    if not tools:
        lines.append("No tools are available right now. Answer in plain text.")
        return "\n".join(lines)
    lines.append("## Tools")
    for tool in tools:
        function = tool.get("function", tool)  # accept the bare function dict too
        lines += ["", f"### {function['name']}", function.get("description", "").strip()]
        schema = function.get("parameters") or {}
        if schema.get("properties"):
            lines.append("Parameters:")
            lines += _describe_properties(schema, indent="")
        else:
            lines.append("Parameters: none.")
    lines += [
        "",
        "## How to call a tool",
        "To call a tool, write a <tool> tag holding one JSON object with the tool name and its arguments:",
        '<tool>{"name": "TOOL_NAME", "arguments": {"PARAMETER": "VALUE"}}</tool>',
        "Write one tag per call; to call several tools, write several tags. Use valid JSON with "
        "double quotes. Each result comes back to you in a <tool_result> tag.",
        "If no tool is needed, answer in plain text without any <tool> tag.",
    ]
    return "\n".join(lines)


def _describe_properties(schema: dict, indent: str) -> list[str]:
    required = set(schema.get("required", []))
    lines = []
    for name, prop in schema.get("properties", {}).items():
        need = "required" if name in required else "optional"
        description = prop.get("description", "")
        lines.append(f"{indent}- {name} ({_type_label(prop)}, {need})"
                     + (f": {description}" if description else ""))
        if prop.get("properties"):  # nested objects list their own fields one level deeper
            lines += _describe_properties(prop, indent + "  ")
    return lines


def _type_label(prop: dict) -> str:
    if "enum" in prop:
        return "one of " + ", ".join(json.dumps(value, ensure_ascii=False) for value in prop["enum"])
    for key in ("anyOf", "oneOf"):
        if key in prop:
            return " or ".join(_type_label(option) for option in prop[key])
    kind = prop.get("type", "any")
    if isinstance(kind, list):
        return " or ".join(kind)
    if kind == "array" and isinstance(prop.get("items"), dict):
        return f"array of {_type_label(prop['items'])}"
    return kind


def render_tool_result(name: str, result: str) -> str:
    """The user-turn text that hands a tool's result back to the model."""
    return f'<tool_result name="{name}">\n{result}\n</tool_result>'


# --------------------------------------------------------------------------- extraction

# Tolerant spellings of the tags: <tool>, <TOOL>, < tool >, </ tool>.
_OPEN_TAG = re.compile(r"<\s*tool\s*>", re.IGNORECASE)
_ANY_TAG = re.compile(r"<\s*/?\s*tool\s*>", re.IGNORECASE)
_CLOSE_TAG = re.compile(r"<\s*/\s*tool\s*>", re.IGNORECASE)
_CLOSE_AFTER_OBJECT = re.compile(r"\s*(?:```\s*)?<\s*/\s*tool\s*>", re.IGNORECASE)
_FENCED_BLOCK = re.compile(r"```[\w-]*[ \t]*\n?(.*?)(?:```|\Z)", re.DOTALL)
_TRAILING_FENCE = re.compile(r"\s*```\s*\Z")
_FENCE_OPENER_AT_END = re.compile(r"```[\w-]*\s*\Z")
_FENCE_CLOSER_AT_START = re.compile(r"\A\s*```")
_LOOKS_LIKE_CALL = re.compile(r"""["']?name["']?\s*:""")


@dataclass(frozen=True)
class _Span:
    start: int
    end: int
    json_text: str


def extract_calls(text: str, known_tools: set[str] | None = None,
                  repair: RepairStrategy = "hand") -> ExtractionResult:
    """Find every ``<tool>{json}</tool>`` call in a model reply.

    Calls are looked for in order of how closely they follow the protocol: ``<tool>`` tags;
    if there are none, fenced code blocks that hold a call; if none, a reply that is nothing
    but a call object. Each one becomes a ``ParsedCall`` or an ``ExtractionFailure``.
    """
    check_strategy(repair)
    spans = _tagged_spans(text) or _fenced_spans(text) or _bare_spans(text)
    if not spans:
        detail = "The reply has no <tool> tag or call object, so it reads as a plain-text answer."
        return ExtractionResult(text=text.strip(),
                                failures=[ExtractionFailure("no_call_found", "", detail)])
    calls, failures = [], []
    for span in spans:
        outcome = _read_call(text[span.start:span.end], span.json_text, known_tools, repair)
        (calls if isinstance(outcome, ParsedCall) else failures).append(outcome)
    return ExtractionResult(calls=calls, text=_prose_around(text, spans), failures=failures)


def _tagged_spans(text: str) -> list[_Span]:
    spans, position = [], 0
    while tag := _OPEN_TAG.search(text, position):
        brace = text.find("{", tag.end())
        next_tag = _ANY_TAG.search(text, tag.end())
        if brace == -1 or (next_tag and next_tag.start() < brace):
            # No JSON object before the tag ends: keep the span so it is reported, not lost.
            if next_tag and _CLOSE_TAG.fullmatch(next_tag.group()):
                end, payload_end = next_tag.end(), next_tag.start()
            else:
                end = payload_end = next_tag.start() if next_tag else len(text)
            spans.append(_Span(tag.start(), end, text[tag.end():payload_end].strip()))
        else:
            # The object ends where its braces balance, not at the first "</tool>", because a
            # closing tag may sit inside a string argument, or be missing altogether.
            object_end = _scan_object(text, brace)
            end = object_end
            if closing := _CLOSE_AFTER_OBJECT.match(text, object_end):
                end = closing.end()
            json_text = _TRAILING_FENCE.sub("", text[brace:object_end])
            spans.append(_Span(tag.start(), end, json_text))
        position = max(end, tag.end())
    return spans


def _fenced_spans(text: str) -> list[_Span]:
    # Some models drop the tags and put the call in a ```json block instead.
    return [_Span(block.start(), block.end(), block.group(1).strip())
            for block in _FENCED_BLOCK.finditer(text) if _LOOKS_LIKE_CALL.search(block.group(1))]


def _bare_spans(text: str) -> list[_Span]:
    # ...and some reply with nothing but the call object.
    start = len(text) - len(text.lstrip())
    if not text[start:].startswith("{") or not _LOOKS_LIKE_CALL.search(text):
        return []
    end = _scan_object(text, start)
    return [_Span(start, end, text[start:end])]


def _scan_object(text: str, start: int) -> int:
    """Index just after the object opened at ``start``.

    If the braces never balance, stops at the next ``<tool>``/``</tool>`` outside a string,
    or at the end of the text: that is where a truncated call ends.
    """
    return _scan(text, start).end


def _closes(text: str, start: int) -> bool:
    """Does the JSON value opened at ``start`` (an object, array or string) end in ``text``?"""
    return _scan(text, start).closed


class _Scanned(NamedTuple):
    end: int  # where the value ends: just after it closed, or at a tag or the text's end
    closed: bool
    inside_string: bool  # it stopped inside an open string
    last: str  # the last character outside strings that is not a space (a closing quote counts)


def _scan(text: str, start: int) -> _Scanned:
    """Where the JSON value opened at ``start`` (an object, array or string) ends, whether it
    closed there, and, if it did not, how it stopped: one brace and quote scanner for every
    question about a call's JSON. An unclosed value ends at a tag or the text's end."""
    depth, quote, last, i = 0, None, "", start
    while i < len(text):
        char = text[i]
        if quote:
            if char == "\\":
                i += 1  # skip the escaped character, which may be a quote
            elif char == quote:
                quote, last = None, char
                if depth == 0:  # the value was a string, and it has closed
                    return _Scanned(i + 1, True, False, last)
        elif char in "\"'":
            quote = char
        elif char == "<" and _ANY_TAG.match(text, i):
            return _Scanned(i, False, False, last)
        elif not char.isspace():
            last = char
            if char in "{[":
                depth += 1
            elif char in "}]":
                depth -= 1
                if depth == 0:
                    return _Scanned(i + 1, True, False, last)
        i += 1
    return _Scanned(len(text), False, quote is not None, last)


_ARGUMENTS_KEY = re.compile(r"""["']?(?:%s)["']?\s*:\s*""" % "|".join(ARGUMENT_KEYS))


def _arguments_cut_off(raw: str, json_text: str) -> bool:
    """True when the call's JSON stops before its arguments are complete.

    Repair would close such a call with whatever happened to be written (half a city name, an
    empty value for a key whose value never came, ``{}`` for arguments never reached) and hand
    over a call the model never finished, so it is refused instead. Two ways to stop short:

    - the JSON ends inside a string, or right after a ``:``, ``,``, ``{`` or ``[`` (a value or a
      key still to come), or before any arguments field, whether or not a ``</tool>`` follows:
      a tag cannot finish what was never written;
    - no closing tag follows and the arguments' value never closes.

    A call that lacks only its final braces (every value written, then ``</tool>`` or the end)
    is finished, and repair may close it.
    """
    scanned = _scan(json_text, 0)
    if scanned.closed:
        return False
    key = _ARGUMENTS_KEY.search(json_text)
    if scanned.inside_string or scanned.last in {":", ",", "{", "["} or key is None or key.end() >= len(json_text):
        return True
    if _CLOSE_TAG.search(raw):
        return False
    return json_text[key.end()] in "{[\"'" and not _closes(json_text, key.end())


def _read_call(raw: str, json_text: str, known_tools: set[str] | None,
               repair: RepairStrategy) -> ParsedCall | ExtractionFailure:
    if not json_text.startswith("{"):
        return ExtractionFailure("json_unrepairable", raw,
                                 "The <tool> tag holds no JSON object, so there is nothing to parse.")
    if _arguments_cut_off(raw, json_text):
        return ExtractionFailure("cut_off", raw,
                                 "The reply stops before the call's arguments are complete (cut off, as by "
                                 "max_tokens), so there is no finished call to run; none is made up from the part written.")
    try:
        call, repaired_by = parse_json_object(json_text, repair)
    except JSONRepairError as error:
        return ExtractionFailure("json_unrepairable", raw,
                                 f"The call is not a readable JSON object: {error}.")
    if "name" not in call and isinstance(call.get("function"), dict):
        call = call["function"]  # an OpenAI-shaped {"function": {...}} written inside the tag

    name = call.get("name")
    if not isinstance(name, str) or not name.strip():
        return ExtractionFailure("unknown_tool", raw,
                                 'The call has no "name" string, so there is no tool to run.')
    name = name.strip()
    if known_tools is not None and name not in known_tools:
        offered = ", ".join(sorted(known_tools)) or "none"
        return ExtractionFailure("unknown_tool", raw,
                                 f"The model called {name!r}, which is not an offered tool ({offered}).")

    key = next((key for key in ARGUMENT_KEYS if key in call), None)
    arguments = call[key] if key else {}  # a tool without parameters may be called bare
    if isinstance(arguments, str):
        # Native APIs send arguments as a JSON string, and models copy that habit.
        try:
            arguments, string_repair = parse_json_object(arguments, repair)
        except JSONRepairError as error:
            return ExtractionFailure("arguments_invalid", raw,
                                     f'The "{key}" of {name} is a string that is not a JSON object: {error}.')
        repaired_by = repaired_by or string_repair
    if not isinstance(arguments, dict):
        return ExtractionFailure(
            "arguments_invalid", raw,
            f'The "{key}" of {name} is a JSON {json_type(arguments)}, but arguments must be an '
            "object mapping parameter names to values.")
    return ParsedCall(name, arguments, raw, repaired_by)


def _prose_around(text: str, spans: list[_Span]) -> str:
    pieces, position = [], 0
    for span in spans:
        pieces.append(text[position:span.start])
        position = span.end
    pieces.append(text[position:])
    kept = []
    for index, piece in enumerate(pieces):
        # A fence that wrapped a call leaves an unpaired ```json before it and ``` after it.
        if index < len(pieces) - 1 and piece.count("```") % 2:
            piece = _FENCE_OPENER_AT_END.sub("", piece)
        if index > 0 and piece.count("```") % 2:
            piece = _FENCE_CLOSER_AT_START.sub("", piece)
        piece = _CLOSE_TAG.sub("", piece).strip()  # a stray </tool> is not prose either
        if piece:
            kept.append(piece)
    return "\n".join(kept)
