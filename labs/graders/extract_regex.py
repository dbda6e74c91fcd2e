"""Grader for labs/02_extract_regex.py: find every <tool>{json}</tool> call in a reply.

Besides the public replies, replies are made up while grading: new tools, arguments, text and
numbers of calls, written with the same shapes (lines, fences, a forgotten closing tag), so
that a table of the public replies does not pass; ``grade(fn, seed=N)`` repeats a run.
"""

from __future__ import annotations

import json
import random

from labs.grading import Hints, Report, case_seed, grade_text_cases


def _call(name: str, **arguments) -> dict:
    return {"name": name, "arguments": arguments}


BEIJING = '{"name": "get_weather", "arguments": {"city": "Beijing"}}'
SHANGHAI = '{"name": "get_weather", "arguments": {"city": "Shanghai"}}'
SQUARE_ROOT = '{"name": "square_root", "arguments": {"x": 2}}'

# (case name, model reply, the calls expected in order)
CASES: list[tuple[str, str, list[dict]]] = [
    ("one call", f"<tool>{BEIJING}</tool>", [_call("get_weather", city="Beijing")]),
    ("text around the call",
     f"Let me check that for you. <tool>{BEIJING}</tool> One moment, please.",
     [_call("get_weather", city="Beijing")]),
    ("Chinese text around the call",
     '好的，我来查一下。<tool>{"name": "get_weather", "arguments": {"city": "上海"}}</tool>',
     [_call("get_weather", city="上海")]),
    ("JSON spread over several lines",
     '<tool>\n{\n  "name": "square_root",\n  "arguments": {\n    "x": 16\n  }\n}\n</tool>',
     [_call("square_root", x=16)]),
    ("several calls in one reply",
     f"Checking both cities.\n<tool>{BEIJING}</tool>\n<tool>{SHANGHAI}</tool>",
     [_call("get_weather", city="Beijing"), _call("get_weather", city="Shanghai")]),
    ("code fence inside the tags",
     f"<tool>\n```json\n{SQUARE_ROOT}\n```\n</tool>",
     [_call("square_root", x=2)]),
    ("code fence around the tags",
     f"```\n<tool>{SQUARE_ROOT}</tool>\n```",
     [_call("square_root", x=2)]),
    ("missing closing tag at the end", f"Sure. <tool>{SQUARE_ROOT}", [_call("square_root", x=2)]),
    ("missing closing tag between two calls",
     f"<tool>{BEIJING}\n<tool>{SHANGHAI}</tool>",
     [_call("get_weather", city="Beijing"), _call("get_weather", city="Shanghai")]),
    ("no call at all", "The square root of 49 is 7. I did not need a tool for that.", []),
]


# --- Replies made up while grading --------------------------------------------------------------

_TOOLS = {"get_weather": ["city", "unit"], "search_flights": ["origin", "destination", "date"],
          "convert_currency": ["amount", "currency"], "lookup_order": ["order_id"],
          "send_email": ["to", "subject"], "square_root": ["x"], "add": ["a", "b"], "translate": ["text", "lang"]}
_PLACES = ["Beijing", "上海", "Lisbon", "Nairobi", "São Paulo"]
_VALUES = {"city": _PLACES, "origin": _PLACES, "destination": _PLACES, "unit": ["celsius", "fahrenheit"],
           "date": ["2025-06-01", "tomorrow"], "amount": [12.5, 1000, 3], "currency": ["EUR", "CNY", "USD"],
           "order_id": ["A1001", "B2718"], "to": ["ana@example.com", "li@example.cn"],
           "subject": ["Hello", "周报", "Re: the plan"], "x": [2, 81, 0.25], "a": [-3, 7, 40], "b": [5, 1.5],
           "text": ["hello world", "你好", "good night"], "lang": ["fr", "zh", "pt"]}
_BEFORE = ["", "Let me check. ", "好的，我来查一下。", "Sure!\n", "I will call a tool for that: "]
_BETWEEN = ["\n", " ", "\nand also\n", " 然后 "]
_AFTER = ["", " One moment, please.", "\nDone.", "稍等。"]
_ANSWERS = ["The answer is 12. I did not need a tool.", "北京今天晴。", "I can't look that up, sorry.",
            "Use {braces} in JSON, and a tool tag when you call."]
KINDS = ("one call", "several calls", "several calls, a closing tag forgotten", "a closing tag forgotten at the end",
         "code fences", "no call")


def _made_up_call(rng: random.Random) -> dict:
    name = rng.choice(sorted(_TOOLS))
    keys = rng.sample(_TOOLS[name], rng.randint(1, len(_TOOLS[name])))
    return _call(name, **{key: rng.choice(_VALUES[key]) for key in keys})


def _reply(rng: random.Random, kind: str) -> tuple[str, list[dict]]:
    if kind == "no call":
        return rng.choice(_ANSWERS), []
    count = 1 if kind in ("one call", "a closing tag forgotten at the end", "code fences") else rng.randint(2, 4)
    calls = [_made_up_call(rng) for _ in range(count)]
    forgotten = rng.randrange(count - 1) if kind == "several calls, a closing tag forgotten" else None
    text = rng.choice(_BEFORE)
    for index, call in enumerate(calls):
        body = json.dumps(call, ensure_ascii=False, indent=rng.choice([None, 2]))
        if kind == "code fences" and rng.random() < 0.5:
            body = f"\n```{rng.choice(['json', ''])}\n{body}\n```\n"
        text += f"<tool>{body}"
        last = index == count - 1
        if index == forgotten:  # the next call begins right after, with only a line break between
            text += rng.choice(["\n", " ", ""])
        elif last and kind == "a closing tag forgotten at the end":
            return text, calls
        else:
            text += "</tool>" + ("" if last else rng.choice(_BETWEEN))
    if kind == "code fences" and "```" not in text:
        text = f"```\n{text}\n```"
    return text + rng.choice(_AFTER), calls


def made_up_cases(seed: int) -> list[tuple[str, str, list[dict]]]:
    rng = random.Random(seed)
    return [(f"made-up case {index + 1}: {kind}", *_reply(rng, kind)) for index, kind in enumerate(KINDS)]


def _what_differs(expected: list[dict], got: list) -> str:
    if len(got) != len(expected):
        return f"found {len(got)} call(s), expected {len(expected)}"
    for index, (want, have) in enumerate(zip(expected, got)):
        if not isinstance(have, dict):
            return f"call #{index + 1} should be a dict, got {type(have).__name__}"
        if set(have) != {"name", "arguments"}:
            return f"call #{index + 1} should have exactly the keys 'name' and 'arguments', has {sorted(have)}"
        if have != want:
            return f"call #{index + 1} differs"
    return "the calls differ"


def grade(extract_calls, seed: int | None = None) -> Report:
    """Grade on the public replies and on replies made up from ``seed`` (a fresh one when None)."""
    seed = case_seed(seed)
    report = Report(f"Lab 02a - extract tool calls with a regex (made-up cases from seed {seed})")

    def what_is_wrong(expected: list[dict], got) -> str | None:
        if not isinstance(got, list):
            return f"should return a list of dicts, got {type(got).__name__}"
        return _what_differs(expected, got) if got != expected else None

    return grade_text_cases(report, CASES + made_up_cases(seed), extract_calls, what_is_wrong)


hints = Hints([
    "Start from the naive version: `re.findall(r\"<tool>(.*?)</tool>\", text, re.DOTALL)`, then "
    "`json.loads` each match and keep its \"name\" and \"arguments\". `findall` gives every call, "
    "not just the first; `re.DOTALL` lets `.` cross line breaks. Run the grader to see which cases remain.",
    "Capture only the JSON object, from its first `{` to a `}`: `(\\{.*?\\})`. Around it allow optional "
    "whitespace and an optional fence that stays outside the group: `\\s*(?:```(?:json)?)?\\s*` before, "
    "`\\s*(?:```)?\\s*` after.",
    "A call ends at `</tool>`, or - when the model forgot the tag - just before the next `<tool>` or at "
    "the end of the text. In a regex: `(?:</tool>|(?=<tool>)|\\Z)`. Put together: "
    "`<tool>\\s*(?:```(?:json)?)?\\s*(\\{.*?\\})\\s*(?:```)?\\s*(?:</tool>|(?=<tool>)|\\Z)` with re.DOTALL.",
])
