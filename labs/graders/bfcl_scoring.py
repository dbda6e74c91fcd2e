"""Grader for labs/10_bfcl_scoring.py: check one call against an answer key, BFCL style."""

from __future__ import annotations

import json

from labs.grading import Hints, Report, attempt

WEATHER = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "City name"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
    },
    "required": ["city"],
}
SQUARE_ROOT = {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}
ORDERS = {
    "type": "object",
    "properties": {
        "status": {"type": "string", "enum": ["pending", "shipped", "delivered"]},
        "limit": {"type": "integer"},
    },
    "required": ["status"],
}


def key(name: str, parameters: dict, arguments: dict) -> dict:
    return {"name": name, "parameters": parameters, "arguments": arguments}


BEIJING = key("get_weather", WEATHER, {"city": ["Beijing", "北京"], "unit": ["celsius", ""]})
NEW_YORK_F = key("get_weather", WEATHER, {"city": ["New York", "NYC"], "unit": ["fahrenheit"]})
ROOT_144 = key("square_root", SQUARE_ROOT, {"x": [144]})
SHIPPED = key("list_orders", ORDERS, {"status": ["shipped"], "limit": [10, ""]})


def sent_call(name: str, arguments) -> dict:
    """A call as the model sent it: arguments are usually raw JSON text."""
    return {"name": name, "arguments": arguments if isinstance(arguments, str)
            else json.dumps(arguments, ensure_ascii=False)}


# (case, answer key, the model's call, the reason expected; None = the call passes)
CASES: list[tuple[str, dict, dict, str | None]] = [
    ("exact match", BEIJING, sent_call("get_weather", {"city": "Beijing", "unit": "celsius"}), None),
    ("case and spaces do not matter", BEIJING, sent_call("get_weather", {"city": "  beijing "}), None),
    ("punctuation does not matter", NEW_YORK_F, sent_call("get_weather", {"city": "New-York.", "unit": "Fahrenheit"}), None),
    ("a Chinese value from the key", BEIJING, sent_call("get_weather", {"city": "北京"}), None),
    ("arguments given as a dict", BEIJING, {"name": "get_weather", "arguments": {"city": "Beijing"}}, None),
    ("an int where a number is expected", ROOT_144, sent_call("square_root", {"x": 144}), None),
    ("a float equal to the accepted int", ROOT_144, sent_call("square_root", {"x": 144.0}), None),
    ("optional parameter left out, key allows it", SHIPPED, sent_call("list_orders", {"status": "shipped"}), None),
    ("wrong tool", BEIJING, sent_call("square_root", {"x": 2}), "wrong_tool"),
    ("arguments are not valid JSON", BEIJING, sent_call("get_weather", '{"city": "Beijing"'), "unparsable"),
    ("arguments are a JSON list", BEIJING, sent_call("get_weather", '["Beijing"]'), "unparsable"),
    ("required parameter missing", BEIJING, sent_call("get_weather", {"unit": "celsius"}), "missing_required"),
    ("optional parameter left out, key needs it", NEW_YORK_F, sent_call("get_weather", {"city": "NYC"}), "missing_required"),
    ("parameter not in the schema", BEIJING, sent_call("get_weather", {"city": "Beijing", "country": "China"}),
     "unexpected_parameter"),
    ("a number sent as a string", ROOT_144, sent_call("square_root", {"x": "144"}), "wrong_type"),
    ("a bool where an integer is expected", SHIPPED, sent_call("list_orders", {"status": "shipped", "limit": True}),
     "wrong_type"),
    ("a value the key does not accept", BEIJING, sent_call("get_weather", {"city": "Shanghai"}), "value_not_accepted"),
    ("the Chinese word instead of the enum value", SHIPPED, sent_call("list_orders", {"status": "已发货"}),
     "value_not_accepted"),
    ("an integer with a different value", ROOT_144, sent_call("square_root", {"x": 12}), "value_not_accepted"),
]

REASONS = ("wrong_tool", "unparsable", "missing_required", "unexpected_parameter", "wrong_type",
           "value_not_accepted")


def grade(score) -> Report:
    report = Report("Lab 10a - score a call with BFCL's rules")
    for case, expected, made, reason in CASES:
        done, got = attempt(report, case, score, expected, made)
        if not done:
            if report.failures[-1].note.startswith("not done yet"):
                return report
            report.failures[-1].note += f"\n      call:     {made}"
            continue
        if got is not None and got not in REASONS:
            report.fail(case, f"return None or one of {', '.join(REASONS)}", reason, got)
        elif got != reason:
            verdict = "should pass" if reason is None else f"should fail with {reason!r}"
            report.fail(case, f"this call {verdict}\n      key:      {expected['arguments']}"
                              f"\n      call:     {made}", reason, got)
        else:
            report.ok(case)
    return report


hints = Hints([
    "Check in this order and return at the first problem: the name; the arguments (json.loads "
    "when they are a str; they must give a dict); parameters that are missing; parameters that "
    "should not be there; each value's type; each value against the key. Everything passed: None.",
    "Missing: a parameter is missing if the call lacks it and either the schema's \"required\" "
    "lists it or the key's accepted values do not contain \"\". Unexpected: the call has it but "
    "the schema's \"properties\" or the key's \"arguments\" lacks it. Types: \"number\" accepts "
    "int and float, \"integer\" only int, and isinstance(True, int) is True in Python, so test "
    "bool first.",
    "Compare strings after normalising both sides: "
    "''.join(ch for ch in s.casefold() if ch.isalnum()) turns \"  New-York. \" into \"newyork\". "
    "Numbers compare with == (144 == 144.0). A value passes if it matches any accepted value "
    "other than \"\".",
])
