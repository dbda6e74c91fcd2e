"""Grader for labs/05_schema_from_function.py: a tool schema from a function's signature and docstring.

The learner's ``schema_from_function(fn)`` is compared with the toolkit's ``tool(fn).spec()`` on
the functions below. A failure names the first key where the two differ, with both values, so
the learner sees exactly which part of the schema to fix.
"""

from __future__ import annotations

from typing import Any, Literal, Optional

from labs.grading import Hints, Report, attempt
from toolkit.tools import tool

# --- The functions to describe (the learner may call these; they only return made-up data) ------


def get_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> dict:
    """Get the current weather in one city.

    Use it whenever the user asks about weather, temperature or rain.

    Args:
        city: City name in English, e.g. Beijing.
        unit: Temperature unit.
    """
    return {"city": city, "temperature": 24, "unit": unit}


def calculate(a: float, operator: Literal["+", "-", "*", "/"], b: float) -> float:
    """Add, subtract, multiply or divide two numbers.

    Args:
        a: The first number.
        operator: The operation.
        b: The second number.
    """
    return {"+": a + b, "-": a - b, "*": a * b, "/": a / b}[operator]


def search_flights(origin: str, destination: str, max_stops: Optional[int] = None,
                   direct_only: bool = False) -> list:
    """Search for flights between two cities.

    Args:
        origin: Departure city.
        destination: Arrival city.
        max_stops: Largest number of stops accepted; leave out for any.
        direct_only: Only non-stop flights.
    """
    return []


def tag_photo(photo_id: int, tags: list[str], caption: Optional[str] = None) -> str:
    """Attach tags to a photo.

    Args:
        photo_id: Number of the photo.
        tags: Tags to attach, each a single word.
        caption: New caption, if the user gave one.
    """
    return "tagged"


def list_orders(status: Optional[Literal["pending", "shipped", "delivered"]] = None,
                limit: int = 10, labels: Optional[list[str]] = None) -> list:
    """List the current user's orders.

    Args:
        status: Only orders with this status; leave out for all.
        limit: At most this many orders.
        labels: Only orders carrying all of these labels.
    """
    return []


def ping(host: str, timeout: float = 2.5):
    return None


CASES = [
    ("get_weather: a Literal with a default, and a long description", get_weather),
    ("calculate: numbers and a Literal of symbols", calculate),
    ("search_flights: Optional[int] = None and a bool default", search_flights),
    ("tag_photo: list[str] and Optional[str]", tag_photo),
    ("list_orders: Optional[Literal], Optional[list[str]]", list_orders),
    ("ping: no docstring at all", ping),
]


# --- Comparing two schemas ----------------------------------------------------------------------


def _normalised(schema: Any) -> Any:
    """``required`` is a set in meaning; compare it in sorted order so order does not matter."""
    if isinstance(schema, dict):
        return {key: (sorted(value) if key == "required" and isinstance(value, list)
                      and all(isinstance(item, str) for item in value) else _normalised(value))
                for key, value in schema.items()}
    if isinstance(schema, list):
        return [_normalised(item) for item in schema]
    return schema


def first_difference(expected: Any, got: Any, path: str = "") -> tuple[str, Any, Any] | None:
    """(path, expected value, got value) of the first place two JSON values differ, or None.

    Types count: ``True`` is not ``1`` and ``1`` is not ``1.0`` here, as in JSON Schema text.
    """
    if isinstance(expected, dict) and isinstance(got, dict):
        for key in list(expected) + [k for k in got if k not in expected]:
            where = f"{path}.{key}" if path else str(key)
            if key not in got:
                return where, expected[key], "(missing)"
            if key not in expected:
                return where, "(no such key)", got[key]
            found = first_difference(expected[key], got[key], where)
            if found:
                return found
        return None
    if isinstance(expected, list) and isinstance(got, list):
        if len(expected) != len(got):
            return path, expected, got
        for index, (left, right) in enumerate(zip(expected, got)):
            found = first_difference(left, right, f"{path}[{index}]")
            if found:
                return found
        return None
    if type(expected) is not type(got) or expected != got:
        return path, expected, got
    return None


def grade(schema_from_function) -> Report:
    report = Report("Lab 05 - a tool schema from a function")
    for case, function in CASES:
        done, got = attempt(report, case, schema_from_function, function)
        if not done:
            if report.failures[-1].note.startswith("not done yet"):
                return report
            continue
        expected = tool(function).spec()
        if not isinstance(got, dict):
            report.fail(case, f"returned a {type(got).__name__}, not a dict like "
                              "{'type': 'function', 'function': {...}}", "a dict", type(got).__name__)
            continue
        difference = first_difference(_normalised(expected), _normalised(got))
        if difference is None:
            report.ok(case)
        else:
            where, wanted, found = difference
            report.fail(case, f"differs at {where}", wanted, found)
    return report


hints = Hints([
    "Start from the shape: {'type': 'function', 'function': {'name': fn.__name__, 'description': ..., "
    "'parameters': {'type': 'object', 'properties': {...}, 'required': [...], "
    "'additionalProperties': False}}}. inspect.signature(fn).parameters gives each parameter and "
    "its default; typing.get_type_hints(fn) gives its type; docstring_parser.parse(fn.__doc__ or '') "
    "gives short_description, long_description and params (arg_name, description).",
    "Write one helper, type_schema(annotation), that calls itself: typing.get_origin(annotation) is "
    "Literal -> {'enum': list(get_args(...)), 'type': 'string'}; is list -> {'type': 'array', "
    "'items': type_schema(the item type)}; is Union (Optional[X] is Union[X, None]) -> {'anyOf': "
    "[type_schema(X), {'type': 'null'}]}; otherwise look the type up in {str: 'string', int: "
    "'integer', float: 'number', bool: 'boolean'}.",
    "For each parameter: prop = type_schema(hint); add prop['description'] only if the docstring "
    "documents it; if param.default is not param.empty: prop['default'] = param.default, else "
    "append the name to required. The description is the short and long descriptions joined by "
    "'\\n\\n', leaving out the ones that are None; no docstring gives ''.",
])
