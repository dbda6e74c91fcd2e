"""Grader for labs/05_schema_from_function.py: a tool schema from a function's signature and docstring.

The learner's ``schema_from_function(fn)`` is compared with the toolkit's ``tool(fn).spec()`` on
the functions below, and on functions made up while grading (new names, parameters, types,
defaults and docstrings each time), so a table of the answers to the public functions does not
pass. A failure names the first key where the two differ, with both values, so the learner sees
exactly which part of the schema to fix.

The lab asks for the schema to be built by hand, so the learner's function is refused if it
refers to the toolkit's schema builder (``tool``, ``Tool``, ``function_schema``) or to pydantic,
and it runs while those builders are switched off: a call to one of them raises an error that
says so, however it was reached.
"""

from __future__ import annotations

import contextlib
import random
import types
from typing import Any, Callable, Literal, Optional

import pydantic
import pydantic.json_schema

import toolkit.schema
import toolkit.tools
from labs.grading import Hints, Report, attempt, case_seed
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


def apply_operator(a: float, operator: Literal["+", "-", "*", "/"], b: float, round_to: int = 2) -> float:
    """Add, subtract, multiply or divide two numbers.

    Args:
        a: The first number.
        operator: The operation.
        b: The second number.
        round_to: How many decimal places to keep in the result.
    """
    return round({"+": a + b, "-": a - b, "*": a * b, "/": a / b}[operator], round_to)


def search_flights_any_day(origin: str, destination: str, max_stops: Optional[int] = None,
                           direct_only: bool = False) -> list:
    """Search for flights between two cities, on any day.

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


def list_orders_with_filters(status: Optional[Literal["pending", "shipped", "delivered"]] = None,
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
    ("apply_operator: numbers, a Literal of symbols and an int default", apply_operator),
    ("search_flights_any_day: Optional[int] = None and a bool default", search_flights_any_day),
    ("tag_photo: list[str] and Optional[str]", tag_photo),
    ("list_orders_with_filters: Optional[Literal], Optional[list[str]]", list_orders_with_filters),
    ("ping: no docstring at all", ping),
]


# --- Functions made up while grading -------------------------------------------------------------

_VERBS = ["get", "find", "list", "book", "cancel", "send", "count", "rank", "check", "plan", "rate",
          "fetch", "track", "reserve", "translate", "summarise", "archive", "schedule"]
_NOUNS = ["ticket", "invoice", "parcel", "meeting", "recipe", "station", "playlist", "patient",
          "library_book", "sensor", "shipment", "hotel_room", "lecture", "refund", "forecast", "voucher"]
_PARAMETERS = ["query", "city", "country", "language", "count", "page", "room", "seats", "budget",
               "ratio", "priority", "verbose", "dry_run", "tags", "keywords", "owner", "colour",
               "sort_by", "region", "quantity", "threshold", "channel", "notes", "level", "size"]
_VALUES = ["low", "high", "urgent", "daily", "weekly", "red", "green", "blue", "north", "south",
           "small", "large", "draft", "final", "asc", "desc", "email", "sms"]
_PHRASES = ["for the current user", "in the given region", "as plain text", "one page at a time",
            "without side effects", "from the archive", "matching every filter"]


def _made_up_parameter(rng: random.Random, name: str, required: bool) -> str:
    """One parameter's source text: ``name: hint`` or ``name: hint = default``."""
    def literal() -> tuple[str, list[str]]:
        values = rng.sample(_VALUES, rng.randint(2, 4))
        return "Literal[" + ", ".join(repr(value) for value in values) + "]", values

    if required:
        kind = rng.choice(["str", "int", "float", "bool", "literal", "list"])
        hint = literal()[0] if kind == "literal" else "list[str]" if kind == "list" else kind
        return f"{name}: {hint}"
    kind = rng.choice(["str", "int", "float", "bool", "literal", "optional int", "optional str",
                       "optional literal", "optional list"])
    if kind == "literal":
        hint, values = literal()
        return f"{name}: {hint} = {rng.choice(values)!r}"
    if kind.startswith("optional"):
        inner = kind.split()[1]
        inner = literal()[0] if inner == "literal" else "list[str]" if inner == "list" else inner
        return f"{name}: Optional[{inner}] = None"
    default = {"str": lambda: repr(rng.choice(_VALUES)), "int": lambda: str(rng.randint(0, 500)),
               "float": lambda: repr(rng.choice([0.25, 0.5, 1.5, 2.75, 9.5])),
               "bool": lambda: repr(rng.random() < 0.5)}[kind]()
    return f"{name}: {kind} = {default}"


def made_up_functions(rng: random.Random, count: int = 4) -> list[tuple[str, Callable]]:
    """``count`` typed functions with Google-style docstrings, new for every ``rng``: the kinds
    of type hint the lab covers, in new combinations, with new names and texts."""
    made = []
    for number in range(count):
        name = f"{rng.choice(_VERBS)}_{rng.choice(_NOUNS)}_{rng.randint(2, 99)}"
        names = rng.sample(_PARAMETERS, rng.randint(1, 5))
        required = rng.randint(0, len(names))
        parameters = [_made_up_parameter(rng, each, index < required) for index, each in enumerate(names)]
        doc = ""
        if number == 0 or rng.random() < 0.85:  # now and then no docstring at all
            summary = f"{name.split('_')[0].title()} the {' '.join(name.split('_')[1:-1])} {rng.choice(_PHRASES)}."
            lines = [summary]
            if rng.random() < 0.5:
                lines += ["", f"Use it when the user asks about a {name.split('_')[1]} {rng.choice(_PHRASES)}."]
            documented = [each for each in names if rng.random() < 0.75]
            if documented:
                lines += ["", "Args:"] + [f"    {each}: The {each.replace('_', ' ')} {rng.choice(_PHRASES)}."
                                          for each in documented]
            doc = '    """' + "\n    ".join(lines) + '\n    """\n'
        source = f"def {name}({', '.join(parameters)}):\n{doc}    return None\n"
        namespace: dict = {"Literal": Literal, "Optional": Optional}
        exec(compile(source, f"<made-up function {name}>", "exec"), namespace)
        made.append((name, namespace[name]))
    return made


# --- Building it by hand: the toolkit's builders are refused ---------------------------------------


class BuildItYourself(RuntimeError):
    """Raised when the learner's function reaches for a schema builder the lab rules out."""


_REFUSAL = ("the lab asks you to build the schema yourself, with inspect, typing and docstring_parser; "
            "{what} builds it for you, so it is switched off while your function is graded")


def _ruled_out() -> dict[int, str]:
    """The objects the learner's code must not refer to, by id, with the words that name them."""
    named = {toolkit.tools.tool: "the toolkit's tool()", toolkit.tools.Tool: "the toolkit's Tool",
             toolkit.schema.function_schema: "the toolkit's function_schema",
             toolkit.tools: "the module toolkit.tools", toolkit.schema: "the module toolkit.schema",
             pydantic: "pydantic", pydantic.TypeAdapter: "pydantic's TypeAdapter",
             pydantic.BaseModel: "pydantic's BaseModel", pydantic.create_model: "pydantic's create_model",
             pydantic.json_schema: "pydantic's json_schema"}
    return {id(each): words for each, words in named.items()}


def _code_objects(code: types.CodeType):
    yield code
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            yield from _code_objects(constant)


def builders_referred_to(function: Callable) -> list[str]:
    """What, among the ruled-out builders, ``function`` (or a function of the same module that
    it calls) refers to by name: a global, an attribute of an imported module, a closure cell."""
    ruled_out, found, seen = _ruled_out(), [], set()
    pending = [function]
    while pending:
        current = pending.pop()
        code = getattr(current, "__code__", None)
        if code is None or id(current) in seen:
            continue
        seen.add(id(current))
        scope = getattr(current, "__globals__", {})
        names = {name for each in _code_objects(code) for name in each.co_names}
        values = [scope[name] for name in names if name in scope]
        values += [cell.cell_contents for cell in (current.__closure__ or ()) if _filled(cell)]
        modules = [value for value in values if isinstance(value, types.ModuleType)]
        values += [getattr(module, name) for module in modules for name in names if hasattr(module, name)]
        for value in values:
            if id(value) in ruled_out and ruled_out[id(value)] not in found:
                found.append(ruled_out[id(value)])
            elif isinstance(value, types.FunctionType) and getattr(value, "__globals__", None) is scope:
                pending.append(value)  # the learner's own helper: look inside it too
    return found


def _filled(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


@contextlib.contextmanager
def builders_switched_off():
    """While inside, the toolkit's schema builder and pydantic's JSON Schema generator raise
    ``BuildItYourself``, however they are reached."""
    def refusing(what: str):
        def refuse(*args, **kwargs):
            raise BuildItYourself(_REFUSAL.format(what=what))
        return refuse

    switched = [(toolkit.schema, "function_schema", refusing("the toolkit's function_schema")),
                (toolkit.tools, "function_schema", refusing("the toolkit's tool()")),
                (toolkit.tools.Tool, "from_function", classmethod(refusing("the toolkit's tool()"))),
                (pydantic.json_schema.GenerateJsonSchema, "generate", refusing("pydantic"))]
    saved = [(owner, name, vars(owner)[name]) for owner, name, _ in switched]
    try:
        for owner, name, replacement in switched:
            setattr(owner, name, replacement)
        yield
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)


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


def grade(schema_from_function, seed: int | None = None) -> Report:
    """Grade on the public functions and on four made up from ``seed`` (a fresh one when None)."""
    seed = case_seed(seed)
    report = Report(f"Lab 05 - a tool schema from a function (made-up functions from seed {seed})")
    used = builders_referred_to(schema_from_function)
    if used:
        report.fail("the schema is built by hand",
                    f"your code refers to {' and '.join(used)}: the lab asks you to build the schema "
                    "yourself with inspect, typing and docstring_parser, so the toolkit's tool(), Tool, "
                    "function_schema and pydantic are ruled out", "inspect, typing and docstring_parser only", used)
        return report
    made_up = [(f"made-up function {name}", function) for name, function in made_up_functions(random.Random(seed))]
    for case, function in CASES + made_up:
        expected = tool(function).spec()  # before the builders are switched off
        with builders_switched_off():
            done, got = attempt(report, case, schema_from_function, function)
        if not done:
            if report.failures[-1].note.startswith("not done yet"):
                return report
            continue
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
