"""Grader for labs/04_tool_schema_by_hand.py: OpenAI tool definitions written by hand."""

from __future__ import annotations

from dataclasses import dataclass, field

import jsonschema

from labs.grading import Hints, Report, attempt
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


def _check_tool(report: Report, tool, spec: Spec) -> None:
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
    for arguments in spec.accept:
        errors = [error.message for error in validator.iter_errors(arguments)]
        if errors:
            report.fail(f"{label}: accepts {arguments}", f"these arguments follow the spec but the schema rejects "
                                                         f"them: {'; '.join(errors)}")
        else:
            report.ok(f"{label}: accepts {arguments}")
    for arguments, why in spec.reject:
        if validator.is_valid(arguments):
            report.fail(f"{label}: rejects {arguments}", f"the schema accepts these arguments, but {why}")
        else:
            report.ok(f"{label}: rejects {arguments}")

    try:  # the embedded endpoint checks tools the way OpenAI's API does
        parse_request({"messages": [{"role": "user", "content": "hi"}], "tools": [tool]})
        report.ok(f"{label}: the endpoint accepts it")
    except RequestError as error:
        report.fail(f"{label}: the endpoint accepts it", f"a chat endpoint would answer HTTP 400: {error}")


def grade(order_status_tool, weather_tool) -> Report:
    report = Report("Lab 04 - tool schemas by hand")
    for make, spec in ((order_status_tool, ORDER), (weather_tool, WEATHER)):
        done, tool = attempt(report, spec.name, make)
        if not done:
            if report.failures[-1].note.startswith("not done yet"):
                return report
            continue
        _check_tool(report, tool, spec)
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
