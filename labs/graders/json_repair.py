"""Grader for labs/02_json_repair.py: turn a model's almost-JSON into a dict."""

from __future__ import annotations

from labs.grading import Hints, Report, attempt

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


def grade(repair) -> Report:
    report = Report("Lab 02b - repair almost-JSON")
    for case, text, expected in CASES:
        done, got = attempt(report, case, repair, text)
        if not done:
            if report.failures[-1].note.startswith("not done yet"):
                return report  # one "not done yet" says it all
            report.failures[-1].note += f"\n      input:    {text!r}"
            continue
        if not isinstance(got, dict):
            report.fail(case, f"should return a dict, got {type(got).__name__}\n      input:    {text!r}",
                        expected, got)
        elif got != expected:
            report.fail(case, f"the dict is not what the text means\n      input:    {text!r}", expected, got)
        else:
            report.ok(case)
    return report


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
