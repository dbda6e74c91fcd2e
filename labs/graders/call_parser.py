"""Grader for labs/13_call_parser.py: cut <tool_call> blocks out of generated text.

The reference is the embedded engine's own parser, ``toolkit.engine.parser.parse_reply``: the
grader checks that the learner's function agrees with it on every case, except that the lab
drops a call cut off by ``max_tokens`` where the engine keeps it with its partial arguments.

Besides the public texts, texts are made up while grading: other tools, arguments nested to other
depths with braces, quotes and tags inside strings, other spacing, numbers of calls and places
where the text is cut off, so that a table of the public texts does not pass;
``grade(parse_calls, seed=N)`` repeats a run.
"""

from __future__ import annotations

import json
import random

from labs.grading import Hints, Report, attempt, case_seed
from toolkit.engine.parser import parse_reply


def block(name: str, arguments: str) -> str:
    return f'<tool_call>\n{{"name": "{name}", "arguments": {arguments}}}\n</tool_call>'


BEIJING = block("get_weather", '{"city": "Beijing"}')
SHANGHAI = block("get_weather", '{"city": "上海"}')

CASES: list[tuple[str, str]] = [
    ("one call", BEIJING),
    ("two calls", BEIJING + "\n" + SHANGHAI),
    ("plain text", "The weather in Beijing is sunny today."),
    ("Chinese text", "北京今天晴，25度。"),
    ("blank lines before the call", "\n\n" + BEIJING),
    ("nested arguments", block("book_flight", '{"origin": "Beijing", "passengers": [{"name": "Li Lei", "age": 30}]}')),
    ("braces inside a string", block("send_email", '{"subject": "Report {Q2}", "body": "see }{ here"}')),
    ("no arguments", block("list_orders", "{}")),
    ("cut off inside the arguments", '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Bei'),
    ("second call cut off", BEIJING + '\n<tool_call>\n{"name": "get_weather", "arguments": {"ci'),
    ("closing tag missing after a complete call", '<tool_call>\n{"name": "calculate", "arguments": {"expression": "sqrt(2)"}}'),
    ("text that mentions a tag later", "I will use <tool_call> blocks when needed."),
]


# --- Texts made up while grading -------------------------------------------------------------------

_NAMES = ["get_weather", "search_flights", "send_email", "create_event", "lookup_order", "translate", "list_orders"]
_STRINGS = ["Beijing", "上海", "Report {Q3}", "a } b { c", 'say "hi"', "C:\\temp\\x", "</tool_call>", "<tool_call>",
            "tab\tand newline\n", "emoji 🙂", ""]
_KEYS = ["city", "subject", "body", "when", "attendees", "filters", "note", "limit", "tags", "options"]
_TEXTS = ["The weather in Lisbon is mild.", "我不需要工具就能回答。", "Use {braces} like this: {\"a\": 1}.",
          "Later I may write <tool_call> blocks.", "  Sure, here you go.", "Answer: 42 }"]


def _value(rng: random.Random, depth: int):
    kind = rng.choice(["string", "string", "int", "float", "bool", "null"] + (["list", "object"] if depth < 3 else []))
    if kind == "string":
        return rng.choice(_STRINGS)
    if kind == "int":
        return rng.randint(-100, 100000)
    if kind == "float":
        return rng.choice([0.5, 3.25, -1.75])
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "null":
        return None
    if kind == "list":
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return _arguments(rng, depth + 1)


def _arguments(rng: random.Random, depth: int = 0) -> dict:
    return {key: _value(rng, depth) for key in rng.sample(_KEYS, rng.randint(0 if depth else 0, 3))}


def _block(rng: random.Random) -> str:
    body = {"name": rng.choice(_NAMES), "arguments": _arguments(rng)}
    json_text = json.dumps(body, ensure_ascii=rng.random() < 0.3, indent=rng.choice([None, None, 2]))
    return f"<tool_call>{rng.choice(['', chr(10), ' ', chr(10) + '  '])}{json_text}{rng.choice(['', chr(10)])}</tool_call>"


def made_up_cases(seed: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    cases = [("plain text", rng.choice(_TEXTS))]
    for kind in ["calls", "calls", "calls, the last one cut off", "a call whose closing tag is missing"]:
        blocks = [_block(rng) for _ in range(rng.randint(1, 3) if kind != "calls, the last one cut off" else rng.randint(2, 3))]
        text = rng.choice(["", "\n", "\n\n", "  "]) + rng.choice(["\n", "\n\n", ""]).join(blocks)
        if kind.endswith("cut off"):
            # cut inside the last call's arguments, before the brace that closes them (the
            # last but one of the text): what max_tokens does in the middle of a call
            arguments_start = text.rindex('"arguments":') + len('"arguments":')
            arguments_end = text.rindex("}", 0, text.rindex("}"))
            text = text[:rng.randint(arguments_start, arguments_end - 1)]
        elif kind.startswith("a call whose"):
            text = text[:-len("</tool_call>")]
        cases.append((kind, text))
    return [(f"made-up case {index + 1}: {kind}", text) for index, (kind, text) in enumerate(cases)]


def _complete(arguments: str) -> bool:
    try:
        json.loads(arguments)
        return True
    except json.JSONDecodeError:
        return False


def _expected(text: str) -> tuple[str | None, list[dict]]:
    content, calls = parse_reply(text)
    whole = [{"name": c.name, "arguments": json.loads(c.arguments)} for c in calls if _complete(c.arguments)]
    return (content, whole) if whole or not calls else (text, [])


def _comparable(got) -> tuple[str | None, list[dict]] | str:
    """The learner's result with arguments parsed (whitespace inside them does not matter)."""
    if not (isinstance(got, tuple) and len(got) == 2 and isinstance(got[1], list)):
        return "return a tuple (content, calls) where calls is a list"
    content, calls = got
    shown = []
    for call in calls:
        if not isinstance(call, dict) or set(call) != {"name", "arguments"}:
            return "each call should be a dict with the keys 'name' and 'arguments'"
        if not isinstance(call["arguments"], str):
            return "'arguments' should stay a JSON string (as in the API), not a parsed object"
        try:
            shown.append({"name": call["name"], "arguments": json.loads(call["arguments"])})
        except json.JSONDecodeError:
            return f"the arguments {call['arguments']!r} are not valid JSON"
    return content, shown


def grade(parse_calls, seed: int | None = None) -> Report:
    """Grade on the public texts and on texts made up from ``seed`` (a fresh one when None)."""
    seed = case_seed(seed)
    report = Report(f"Lab 13 - parse the model's call blocks (made-up cases from seed {seed})")
    for case, text in CASES + made_up_cases(seed):
        done, got = attempt(report, case, parse_calls, text)
        if not done:
            if report.failures[-1].note.startswith("not done yet"):
                return report
            continue
        expected, mine = _expected(text), _comparable(got)
        if isinstance(mine, str):
            report.fail(case, mine + f"\n      input:    {text!r}", None, got)
        elif mine != expected:
            part = "content" if mine[0] != expected[0] else "calls"
            report.fail(case, f"the {part} differ\n      input:    {text!r}", expected, mine)
        else:
            report.ok(case)
    return report


hints = Hints([
    "If the text (after leading whitespace) does not start with <tool_call>, it is plain text: "
    "return (text, []). Otherwise find each <tool_call>, read the JSON that follows it, and "
    "take its name and arguments. No calls found after all? Then it was text too.",
    "A regex cannot find where the arguments end (braces nest, and may sit inside strings). "
    "json.JSONDecoder().raw_decode(text, start) parses one JSON value starting at `start` and "
    "returns (value, end): use it on the object right after '<tool_call>' (skip whitespace "
    "first). It raises JSONDecodeError when the object is cut off: stop there.",
    "value, end = decoder.raw_decode(text, start); calls.append({'name': value['name'], "
    "'arguments': json.dumps(value['arguments'], ensure_ascii=False)}); then look for the next "
    "'<tool_call>' from `end`. Return (None, calls) when there are calls: a reply with calls has "
    "no content.",
])
