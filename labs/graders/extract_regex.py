"""Grader for labs/02_extract_regex.py: find every <tool>{json}</tool> call in a reply."""

from __future__ import annotations

from labs.grading import Hints, Report, attempt


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


def grade(extract_calls) -> Report:
    report = Report("Lab 02a - extract tool calls with a regex")
    for case, text, expected in CASES:
        done, got = attempt(report, case, extract_calls, text)
        if not done:
            if report.failures[-1].note.startswith("not done yet"):
                return report  # one "not done yet" says it all
            report.failures[-1].note += f"\n      input:    {text!r}"
            continue
        if not isinstance(got, list):
            report.fail(case, f"should return a list of dicts, got {type(got).__name__}", expected, got)
            continue
        if got != expected:
            report.fail(case, f"{_what_differs(expected, got)}\n      input:    {text!r}", expected, got)
        else:
            report.ok(case)
    return report


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
