"""Grader for labs/10_bfcl_scoring.py: check one call against an answer key, BFCL style.

Besides the public cases, the grader makes up tools, answer keys and calls while grading: other
names, parameters, types and accepted values, one call for each reason and passing calls written
another way, so that a table of the public cases does not pass; ``grade(score, seed=N)`` repeats
a run.
"""

from __future__ import annotations

import json
import random

from labs.grading import Hints, Report, attempt, case_seed

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


# --- Keys and calls made up while grading ------------------------------------------------------------

# parameter -> (JSON Schema, accepted values, a value of the right type the key does not accept,
# a value of the wrong type)
_PARAMETERS = {
    "city": ({"type": "string"}, [["Lisbon", "Lisboa"], ["São Paulo"], ["成都", "Chengdu"]], "Porto", 42),
    "country": ({"type": "string"}, [["Kenya"], ["New Zealand", "NZ"]], "Chile", ["Kenya"]),
    "unit": ({"type": "string", "enum": ["celsius", "fahrenheit"]}, [["celsius"], ["fahrenheit"]], "kelvin", True),
    "days": ({"type": "integer"}, [[3], [7, 14]], 5, "3"),
    "limit": ({"type": "integer"}, [[10], [25]], 11, 10.5),
    "amount": ({"type": "number"}, [[12.5], [100]], 12.25, "12.5"),
    "include_closed": ({"type": "boolean"}, [[True], [False]], None, "true"),
    "tags": ({"type": "array", "items": {"type": "string"}}, [[["red", "blue"]]], ["green"], "red"),
}
_TOOLS = ["get_forecast", "search_shops", "convert_currency", "list_invoices", "find_hotels", "parcel_status"]
_EXTRA = {"verbose": True, "lang": "en", "page": 2, "country_code": "PT"}


def _variant(rng: random.Random, value):
    """The same accepted value as a model might write it: other case, spaces, punctuation, or 100 as 100.0."""
    if isinstance(value, str) and value.isascii():
        value = rng.choice([value, value.upper(), value.lower(), f"  {value} ", value.replace(" ", "-") + "."])
    elif isinstance(value, int) and not isinstance(value, bool) and rng.random() < 0.5:
        return float(value) if rng.random() < 0.5 else value
    return value


def _made_up_key(rng: random.Random) -> tuple[dict, dict]:
    """An answer key, and a call that passes it."""
    names = rng.sample(sorted(_PARAMETERS), rng.randint(2, 4))
    required = set(rng.sample(names, rng.randint(1, len(names))))
    properties, accepted, arguments = {}, {}, {}
    for name in names:
        schema, choices, _, _ = _PARAMETERS[name]
        properties[name] = dict(schema)
        accepted[name] = list(rng.choice(choices))
        if name not in required and rng.random() < 0.6:
            accepted[name].append("")  # the key lets the call leave it out
        if "" in accepted[name] and rng.random() < 0.5:
            continue
        value = _variant(rng, rng.choice([v for v in accepted[name] if v != ""]))
        if schema["type"] == "integer" and isinstance(value, float):
            value = int(value)  # 10.0 is not an integer in Python's eyes, nor in the key's
        arguments[name] = value
    parameters = {"type": "object", "properties": properties, "required": sorted(required)}
    return key(rng.choice(_TOOLS), parameters, accepted), arguments


def _made_up_case(rng: random.Random, reason: str | None) -> tuple[dict, dict]:
    for _ in range(100):  # until the key has what this reason needs
        expected, arguments = _made_up_key(rng)
        names = list(expected["parameters"]["properties"])
        name = rng.choice(names)
        present = [each for each in names if each in arguments]
        if reason is None or reason == "wrong_tool":
            tool = expected["name"] if reason is None else rng.choice([t for t in _TOOLS if t != expected["name"]])
            return expected, {"name": tool, "arguments": arguments if rng.random() < 0.3 else json.dumps(arguments, ensure_ascii=False)}
        if reason == "unparsable":
            text = rng.choice([json.dumps(arguments, ensure_ascii=False)[:-1], json.dumps(list(arguments.values())),
                               json.dumps(rng.choice(names)), "None", "{city: Lisbon"])
            return expected, sent_call(expected["name"], text)
        if reason == "missing_required":
            needed = [each for each in present if "" not in expected["arguments"][each]]
            if needed:
                del arguments[rng.choice(needed)]
                return expected, sent_call(expected["name"], arguments)
        if reason == "unexpected_parameter":
            extra = rng.choice(sorted(_EXTRA))
            arguments[extra] = _EXTRA[extra]
            return expected, sent_call(expected["name"], dict(rng.sample(sorted(arguments.items()), len(arguments))))
        if reason == "wrong_type" and present:
            name = rng.choice(present)
            arguments[name] = _PARAMETERS[name][3]
            return expected, sent_call(expected["name"], arguments)
        if reason == "value_not_accepted" and present:
            name = rng.choice(present)
            wrong = _PARAMETERS[name][2]
            if wrong is None:  # a boolean: the other one
                wrong = not next(v for v in expected["arguments"][name] if v != "")
            if wrong not in expected["arguments"][name]:
                arguments[name] = wrong
                return expected, sent_call(expected["name"], arguments)
    raise AssertionError(f"no made-up key fits {reason}")  # the grader's own bug, never the learner's


def made_up_cases(seed: int) -> list[tuple[str, dict, dict, str | None]]:
    rng = random.Random(seed)
    reasons = [None, None, *REASONS]
    return [(f"made-up case {index + 1}: " + ("passes" if reason is None else reason), *_made_up_case(rng, reason), reason)
            for index, reason in enumerate(reasons)]


def grade(score, seed: int | None = None) -> Report:
    """Grade on the public cases and on keys and calls made up from ``seed`` (a fresh one when None)."""
    seed = case_seed(seed)
    report = Report(f"Lab 10a - score a call with BFCL's rules (made-up cases from seed {seed})")
    for case, expected, made, reason in CASES + made_up_cases(seed):
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
