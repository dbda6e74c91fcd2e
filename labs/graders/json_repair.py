"""Grader for labs/02_json_repair.py: turn a model's almost-JSON into a dict.

The public cases below show each drift once. Then come cases made up while grading: new keys
and values (apostrophes, URLs, commas and comment marks inside strings), written with the same
drifts, so that a table of the public answers does not pass.
"""

from __future__ import annotations

import json
import random

from labs.grading import Hints, Report, case_seed, grade_text_cases

# (case name, almost-JSON as a model might write it, the dict it means)
CASES: list[tuple[str, str, dict]] = [
    ("valid JSON is left alone", '{"city": "Beijing", "unit": "celsius"}',
     {"city": "Beijing", "unit": "celsius"}),
    ("trailing comma in an object", '{"city": "Beijing",}', {"city": "Beijing"}),
    ("trailing commas in a list and its object", '{"cities": ["Beijing", "Shanghai",],}',
     {"cities": ["Beijing", "Shanghai"]}),
    ("single quotes", "{'name': 'square_root', 'arguments': {'x': 16}}",
     {"name": "square_root", "arguments": {"x": 16}}),
    ("unquoted keys", '{city: "Beijing", unit: "celsius"}', {"city": "Beijing", "unit": "celsius"}),
    ("smart quotes", "{“city”: “Shanghai”}", {"city": "Shanghai"}),
    ("a // comment", '{"city": "Beijing" // the capital\n}', {"city": "Beijing"}),
    ("a /* */ comment", '{"x": /* the number */ 16}', {"x": 16}),
    ("inside strings: an apostrophe in a double-quoted value", "{'city': \"Xi'an\"}", {"city": "Xi'an"}),
    ("inside strings: a double quote in a single-quoted value", "{'reply': 'He said \"hi\"'}",
     {"reply": 'He said "hi"'}),
    ("inside strings: // in a URL is not a comment", '{"url": "https://example.com/weather",}',
     {"url": "https://example.com/weather"}),
    ("inside strings: ',}' in a value is not a trailing comma", '{"note": "done,}", }', {"note": "done,}"}),
    ("everything at once",
     "{name: 'get_weather', // which tool\n arguments: {city: “Beijing”, unit: 'celsius',},}",
     {"name": "get_weather", "arguments": {"city": "Beijing", "unit": "celsius"}}),
]


# --- Cases made up while grading ------------------------------------------------------------------

_KEYS = ["city", "unit", "name", "query", "limit", "page", "tags", "origin", "destination", "date",
         "currency", "amount", "user_id", "order_id", "lang", "options", "note", "url", "max_results",
         "include_closed", "priority", "reply"]
_PLAIN = ["Beijing", "Shanghai", "Chengdu", "Hangzhou", "Lisbon", "Nairobi", "Toronto", "celsius",
          "fahrenheit", "pending", "shipped", "EUR", "CNY", "low", "high", "北京", "上海", "weekly report"]
_TRICKY = [  # what must survive: the inside of a string is not structure
    lambda rng: rng.choice(["Xi'an", "O'Hare", "Côte d'Ivoire", "it's late", "l'Aquila"]),
    lambda rng: f"https://{rng.choice(['example.com', 'api.test', 'maps.local'])}/{rng.choice(_KEYS)}?id={rng.randint(1, 999)}",
    lambda rng: rng.choice(["done,}", "a, b,]", "x,} y"]) + str(rng.randint(0, 9)),
    lambda rng: f"{rng.choice(['He said', 'She wrote', 'They asked'])} \"{rng.choice(_PLAIN)}\"",
    lambda rng: f"see /* {rng.choice(_PLAIN)} */ and // {rng.choice(_KEYS)}",
    lambda rng: f"{rng.choice(_KEYS)}: {rng.choice(_PLAIN)}, {rng.choice(_KEYS)}: {rng.randint(1, 99)}",
]
_COMMENT_WORDS = ["the city", "which tool", "in celsius", "optional", "from the user", "default"]
DRIFTS = ("trailing commas", "single quotes", "unquoted keys", "smart quotes", "comments")


def _value(rng: random.Random, depth: int):
    kind = rng.choice(["plain", "plain", "tricky", "int", "float", "bool", "list"] + (["object"] if depth == 0 else []))
    if kind == "plain":
        return rng.choice(_PLAIN)
    if kind == "tricky":
        return rng.choice(_TRICKY)(rng)
    if kind == "int":
        return rng.randint(-50, 5000)
    if kind == "float":
        return rng.choice([0.5, 2.25, 16.0, 98.6, -3.5])
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "list":
        return [rng.choice(_PLAIN + [rng.choice(_TRICKY)(rng)]) for _ in range(rng.randint(1, 3))]
    return _object(rng, depth + 1)


def _object(rng: random.Random, depth: int = 0) -> dict:
    return {key: _value(rng, depth) for key in rng.sample(_KEYS, rng.randint(1, 4 if depth else 5))}


class _Writer:
    """Writes a value as a model with the given drifts might: each drift is used at random
    places, and at least once."""

    def __init__(self, rng: random.Random, drifts: set[str]):
        self.rng, self.drifts, self.used = rng, drifts, set()

    def maybe(self, drift: str) -> bool:
        if drift in self.drifts and self.rng.random() < 0.7:
            self.used.add(drift)
            return True
        return False

    def string(self, text: str, key: bool = False) -> str:
        if key and self.maybe("unquoted keys"):
            return text
        if set(text) & set(",:}]/"):  # looks like structure inside: kept in plain double quotes, as in the public cases
            return json.dumps(text, ensure_ascii=False)
        quotes = set("\"'“”‘’") & set(text)
        if not quotes and self.maybe("smart quotes"):
            return f"“{text}”"
        if self.maybe("single quotes"):
            return "'" + text.replace("'", "\\'") + "'"
        return json.dumps(text, ensure_ascii=False)

    def comment(self) -> str:
        if not self.maybe("comments"):
            return " "
        words = self.rng.choice(_COMMENT_WORDS)
        return f" /* {words} */ " if self.rng.random() < 0.5 else f" // {words}\n"

    def value(self, value) -> str:
        if isinstance(value, dict):
            items = [f"{self.string(key, key=True)}:{self.comment()}{self.value(item)}" for key, item in value.items()]
            return "{" + self.items(items) + "}"
        if isinstance(value, list):
            return "[" + self.items([self.value(item) for item in value]) + "]"
        if isinstance(value, str):
            return self.string(value)
        return json.dumps(value)

    def items(self, items: list[str]) -> str:
        text = ""
        for index, item in enumerate(items):
            text += item + ("," + self.comment() if index < len(items) - 1 else "")
        if self.maybe("trailing commas"):
            text += "," + self.comment()
        return text


def made_up_cases(seed: int) -> list[tuple[str, str, dict]]:
    """Valid JSON, each drift alone, and all of them at once, with new content every time; each
    case also holds strings whose inside looks like the drift (an apostrophe, a URL, ",}")."""
    rng = random.Random(seed)
    cases = []
    for drifts in [set()] + [{drift} for drift in DRIFTS] + [set(DRIFTS), set(DRIFTS)]:
        for _ in range(100):  # until every drift of the case shows at least once
            expected = _object(rng)
            while len(expected) < 3:
                expected.update(_object(rng))
            for make in rng.sample(_TRICKY, 2):
                expected[rng.choice([key for key in _KEYS if key not in expected])] = make(rng)
            writer = _Writer(rng, drifts)
            text = writer.value(expected)
            if writer.used == drifts:
                break
        what = ("valid JSON" if not drifts else "everything at once" if len(drifts) > 1 else next(iter(drifts)))
        cases.append((f"made-up case {len(cases) + 1}: {what}", text, expected))
    return cases


def grade(repair, seed: int | None = None) -> Report:
    """Grade on the public cases and on cases made up from ``seed`` (a fresh one when None)."""
    seed = case_seed(seed)
    report = Report(f"Lab 02b - repair almost-JSON (made-up cases from seed {seed})")

    def what_is_wrong(expected: dict, got) -> str | None:
        if not isinstance(got, dict):
            return f"should return a dict, got {type(got).__name__}"
        return "the dict is not what the text means" if got != expected else None

    return grade_text_cases(report, CASES + made_up_cases(seed), repair, what_is_wrong)


hints = Hints([
    "Always try `json.loads(text)` first and return at once if it works: valid JSON must never be "
    "changed. Then fix one problem at a time and run the grader after each: smart quotes -> plain "
    "quotes with `str.replace`; trailing commas with `re.sub(r\",(\\s*[}\\]])\", r\"\\1\", text)`; "
    "unquoted keys with `re.sub(r\"([{,]\\s*)([A-Za-z_]\\w*)(\\s*:)\", r'\\1\"\\2\"\\3', text)`.",
    "The 'inside strings' cases fail when a fix changes the *inside* of a string: replacing every ' "
    "breaks Xi'an, removing every // breaks a URL. Walk through the text one character at a time and "
    "keep two kinds of pieces: strings (from an opening quote to the same quote again, skipping a "
    "backslash and the character after it) and structure (everything else). Apply the regex fixes to "
    "structure only; outside strings, skip `//` up to the end of the line and `/*` up to `*/`.",
    "Rewrite each string in double quotes as you copy it: a double-quoted string stays as it is; for a "
    "single-quoted one take the body, turn \\' into ', turn \" into \\\", and wrap it in \"...\". Then "
    "`repaired = fixed_structure_1 + string_1 + fixed_structure_2 + ...` and `return json.loads(repaired)`.",
])
