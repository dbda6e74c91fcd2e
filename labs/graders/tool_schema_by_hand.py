"""Grader for labs/04_tool_schema_by_hand.py: OpenAI tool definitions written by hand.

Besides the public argument sets of each spec, the grader makes up arguments while grading
(other order ids and cities, other wrong units, types and extra keys), so that a schema which
lists the public values instead of describing the spec does not pass; ``grade(f, g, seed=N)``
repeats a run.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import jsonschema

from labs.grading import Hints, Report, attempt, case_seed
from toolkit.engine.request import RequestError, parse_request


@dataclass
class Spec:
    """What the prose spec asks for, in a form the grader can check."""

    name: str
    properties: dict[str, tuple[str, list | None]]  # parameter -> (JSON type, enum or None)
    required: set[str]
    accept: list[dict]  # argument sets the schema must accept
    reject: list[tuple[dict, str]]  # argument sets it must reject, and why
    forbid_extra: bool = False
    notes: dict[str, str] = field(default_factory=dict)


ORDER = Spec(
    name="get_order_status",
    properties={"order_id": ("string", None)},
    required={"order_id"},
    accept=[{"order_id": "A1024"}],
    reject=[
        ({}, "order_id is required"),
        ({"order_id": 1024}, "order_id is a string"),
        ({"order_id": "A1024", "priority": "high"}, "no other arguments may be passed"),
    ],
    forbid_extra=True,
)
WEATHER = Spec(
    name="get_weather",
    properties={"city": ("string", None), "unit": ("string", ["celsius", "fahrenheit"])},
    required={"city"},
    accept=[{"city": "Beijing"}, {"city": "Shanghai", "unit": "fahrenheit"}],
    reject=[
        ({"unit": "celsius"}, "city is required"),
        ({"city": "Beijing", "unit": "kelvin"}, "unit must be celsius or fahrenheit"),
        ({"city": "Beijing", "unit": "Celsius"}, "unit must be exactly one of the two lower-case values"),
        ({"city": ["Beijing", "Shanghai"]}, "city is one string"),
    ],
)


# --- Arguments made up while grading -------------------------------------------------------------

_ORDER_IDS = [lambda rng: f"{rng.choice('ABCXZ')}{rng.randint(1, 99999)}", lambda rng: f"ORD-{rng.randint(2020, 2026)}-{rng.randint(1, 9999):04d}",
              lambda rng: f"#{rng.randint(100, 999999)}", lambda rng: f"{rng.choice(['cn', 'eu', 'us'])}-{rng.randint(1, 999)}"]
_CITIES = ["Lisbon", "New York", "São Paulo", "广州", "Chengdu", "Reykjavík", "Cape Town", "东京", "Ho Chi Minh City"]
_WRONG_UNITS = ["kelvin", "Celsius", "FAHRENHEIT", "C", "°F", "", "metric", "celsius "]
_EXTRA_KEYS = ["priority", "customer", "note", "lang", "verbose", "country", "days"]
_NOT_STRINGS = [lambda rng: rng.randint(1, 99999), lambda rng: rng.random() * 100, lambda rng: None,
                lambda rng: rng.random() < 0.5, lambda rng: [rng.choice(_CITIES)], lambda rng: {"value": "x"}]


def made_up_arguments(rng: random.Random, spec: Spec) -> tuple[list[dict], list[tuple[dict, str]]]:
    """Arguments the spec allows or forbids, drawn afresh: the schema must follow the spec, not the examples."""
    if spec.name == ORDER.name:
        order_id = lambda: rng.choice(_ORDER_IDS)(rng)  # noqa: E731 - a fresh id each time
        accept = [{"order_id": order_id()} for _ in range(3)]
        reject = [({"order_id": rng.choice(_NOT_STRINGS)(rng)}, "order_id is a string"),
                  ({"order_id": order_id(), rng.choice(_EXTRA_KEYS): "yes"}, "no other arguments may be passed"),
                  ({rng.choice(_EXTRA_KEYS): order_id()}, "order_id is required")]
        return accept, reject
    cities = rng.sample(_CITIES, 3)
    accept = [{"city": cities[0]}, {"city": cities[1], "unit": rng.choice(["celsius", "fahrenheit"])},
              {"unit": rng.choice(["celsius", "fahrenheit"]), "city": cities[2]}]
    reject = [({"city": cities[0], "unit": rng.choice(_WRONG_UNITS)}, "unit must be exactly celsius or fahrenheit"),
              ({"unit": rng.choice(["celsius", "fahrenheit"])}, "city is required"),
              ({"city": rng.choice(_NOT_STRINGS)(rng)}, "city is one string")]
    return accept, reject


def _check_tool(report: Report, tool, spec: Spec, made_up: tuple[list, list] = ([], [])) -> None:
    label = spec.name
    if not isinstance(tool, dict):
        report.fail(f"{label}: shape", f"should return a dict, got {type(tool).__name__}")
        return
    if tool.get("type") != "function" or not isinstance(tool.get("function"), dict):
        report.fail(f"{label}: shape",
                    'the outer dict must be {"type": "function", "function": {...}}; name, description and '
                    "parameters go inside \"function\"", "keys ['function', 'type']", sorted(tool))
        return
    report.ok(f"{label}: shape")
    function = tool["function"]
    report.check(f"{label}: name", spec.name, function.get("name"), "the name must be exactly as in the spec")

    description = function.get("description")
    if not isinstance(description, str) or len(description.strip()) < 20:
        report.fail(f"{label}: description",
                    "write a description of at least a sentence: what the tool does and when the model should "
                    "use it (it is the model's only clue)", "a sentence or two", description)
    else:
        report.ok(f"{label}: description")

    parameters = function.get("parameters")
    if not isinstance(parameters, dict):
        report.fail(f"{label}: parameters", '"parameters" must be a JSON Schema dict', "a dict", parameters)
        return
    try:
        jsonschema.Draft202012Validator.check_schema(parameters)
    except jsonschema.SchemaError as error:
        report.fail(f"{label}: parameters is valid JSON Schema",
                    f"jsonschema says: {error.message} (at {'/'.join(map(str, error.path)) or 'the top'})")
        return
    report.ok(f"{label}: parameters is valid JSON Schema")
    report.check(f"{label}: parameters type", "object", parameters.get("type"),
                 'the parameters schema must have "type": "object"')

    properties = parameters.get("properties")
    if not isinstance(properties, dict):
        report.fail(f"{label}: properties", '"properties" must map each parameter name to its schema')
        return
    missing = sorted(set(spec.properties) - set(properties))
    extra = sorted(set(properties) - set(spec.properties))
    if missing or extra:
        report.fail(f"{label}: properties",
                    "; ".join(filter(None, [missing and f"missing {missing}", extra and f"not in the spec: {extra}"])),
                    sorted(spec.properties), sorted(properties))
        return
    report.ok(f"{label}: properties")

    for parameter, (kind, enum) in spec.properties.items():
        schema = properties[parameter] if isinstance(properties[parameter], dict) else {}
        report.check(f"{label}: type of {parameter}", kind, schema.get("type"), f'{parameter} needs "type": "{kind}"')
        if enum is not None:
            got = schema.get("enum")
            if got is None:
                report.fail(f"{label}: enum of {parameter}",
                            f'{parameter} has a fixed set of values: list them in "enum"', enum, None)
            elif not isinstance(got, list) or sorted(map(str, got)) != sorted(enum):
                wrong = sorted(set(map(str, got or [])) - set(enum)) if isinstance(got, list) else got
                report.fail(f"{label}: enum of {parameter}",
                            f"the enum must hold exactly the values in the spec, spelled the same way "
                            f"(not in the spec: {wrong})", enum, got)
            else:
                report.ok(f"{label}: enum of {parameter}")
        text = schema.get("description")
        if not isinstance(text, str) or not text.strip():
            report.fail(f"{label}: description of {parameter}",
                        f"give {parameter} a description: the model reads it to know what to put there")
        else:
            report.ok(f"{label}: description of {parameter}")

    required = parameters.get("required", [])
    if not isinstance(required, list) or set(required) != spec.required:
        have = set(required) if isinstance(required, list) else set()
        problems = [f"{p} is required" for p in sorted(spec.required - have)]
        problems += [f"{p} is optional, so leave it out of required" for p in sorted(have - spec.required)]
        report.fail(f"{label}: required", "; ".join(problems) or '"required" must be a list of names',
                    sorted(spec.required), required)
    else:
        report.ok(f"{label}: required")

    if spec.forbid_extra:
        report.check(f"{label}: no other arguments", False, parameters.get("additionalProperties"),
                     'the spec allows no other arguments: set "additionalProperties": false')

    validator = jsonschema.Draft202012Validator(parameters)
    accept = [("", arguments) for arguments in spec.accept] + [("made-up case: ", arguments) for arguments in made_up[0]]
    reject = [("", *pair) for pair in spec.reject] + [("made-up case: ", *pair) for pair in made_up[1]]
    for made, arguments in accept:
        errors = [error.message for error in validator.iter_errors(arguments)]
        if errors:
            report.fail(f"{label}: {made}accepts {arguments}", f"these arguments follow the spec but the schema "
                                                                f"rejects them: {'; '.join(errors)}")
        else:
            report.ok(f"{label}: {made}accepts {arguments}")
    for made, arguments, why in reject:
        if validator.is_valid(arguments):
            report.fail(f"{label}: {made}rejects {arguments}", f"the schema accepts these arguments, but {why}")
        else:
            report.ok(f"{label}: {made}rejects {arguments}")

    try:  # the embedded endpoint checks tools the way OpenAI's API does
        parse_request({"messages": [{"role": "user", "content": "hi"}], "tools": [tool]})
        report.ok(f"{label}: the endpoint accepts it")
    except RequestError as error:
        report.fail(f"{label}: the endpoint accepts it", f"a chat endpoint would answer HTTP 400: {error}")


def grade(order_status_tool, weather_tool, seed: int | None = None) -> Report:
    """Grade each tool on its spec's public arguments and on arguments made up from ``seed``."""
    seed = case_seed(seed)
    rng = random.Random(seed)
    report = Report(f"Lab 04 - tool schemas by hand (made-up cases from seed {seed})")
    for make, spec in ((order_status_tool, ORDER), (weather_tool, WEATHER)):
        made_up = made_up_arguments(rng, spec)
        done, tool = attempt(report, spec.name, make)
        if not done:
            if report.failures[-1].note.startswith("not done yet"):
                return report
            continue
        _check_tool(report, tool, spec, made_up)
    return report


hints = Hints([
    "Start from the shape every tool has: `{\"type\": \"function\", \"function\": {\"name\": ..., "
    "\"description\": ..., \"parameters\": {...}}}`. `parameters` is a JSON Schema of an object: "
    "`{\"type\": \"object\", \"properties\": {...}, \"required\": [...]}`. Lesson 4 section 1 has a "
    "complete example.",
    "Each property is itself a small schema: `\"order_id\": {\"type\": \"string\", \"description\": \"...\"}`. "
    "A fixed set of values goes in `\"enum\": [\"celsius\", \"fahrenheit\"]`, spelled exactly as in "
    "the spec. Optional parameters stay out of `required`.",
    "\"No other arguments may be passed\" is `\"additionalProperties\": false` next to `properties`. The "
    "weather tool: properties `city` (string) and `unit` (string, enum celsius/fahrenheit), "
    "`\"required\": [\"city\"]`. Write both descriptions as a sentence saying when to use the tool.",
])
