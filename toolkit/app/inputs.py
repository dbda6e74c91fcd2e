"""Reading what the learner typed into the experiment form.

Each reader either returns something the experiment can use or raises ``InputProblem`` with
a sentence naming the field and the fix. The page shows that sentence next to the widget and
refuses to run, so a typo never turns into a run full of failures.
"""

from __future__ import annotations

import json

from toolkit.bench.suite_model import Suite
from toolkit.json_schema import schema_error


class InputProblem(ValueError):
    """Something the learner typed that cannot be used; the message says what and where."""


def parse_numbers(text: str, what: str, *, low: float | None = None, high: float | None = None,
                  whole: bool = False) -> list[float] | list[int]:
    """Comma-separated numbers such as ``"0, 0.7"``, each within [low, high] (None: no bound
    on that side), no repeats."""
    values: list = []
    # Semicolons and the full-width comma of Chinese keyboards count as commas too.
    for part in text.replace(";", ",").replace("，", ",").split(","):
        part = part.strip()
        if not part:
            continue
        try:
            value = int(part) if whole else float(part)
        except ValueError:
            kind = "whole numbers" if whole else "numbers"
            raise InputProblem(f"{what}: {part!r} is not a number; write {kind} separated by "
                               "commas.") from None
        if low is not None and value < low or high is not None and value > high:
            if high is None:
                raise InputProblem(f"{what}: {part} is below {low:g}.")
            if low is None:
                raise InputProblem(f"{what}: {part} is above {high:g}.")
            raise InputProblem(f"{what}: {part} is outside {low:g} to {high:g}.")
        if value not in values:
            values.append(value)
    if not values:
        raise InputProblem(f"{what}: give at least one value.")
    return values


def parse_schema(text: str, tool: str) -> dict:
    """A tool's parameters schema typed as JSON, checked; ``InputProblem`` names the problem."""
    where = f"The custom schema for {tool}"
    try:
        schema = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputProblem(f"{where} is not valid JSON: {error.msg} at line {error.lineno}, "
                           f"column {error.colno}.") from None
    if not isinstance(schema, dict):
        raise InputProblem(f"{where} must be a JSON object, not {type(schema).__name__}.")
    if (error := schema_error(schema)) is not None:
        at = "/".join(str(part) for part in error.absolute_path)
        raise InputProblem(f"{where} is not a valid JSON Schema: {error.message}"
                           + (f" (at {at})." if at else "."))
    # Tool parameters are always an object of named arguments, whatever JSON Schema allows.
    if schema.get("type") != "object" or not isinstance(schema.get("properties"), dict):
        raise InputProblem(f'{where} must describe an object: {{"type": "object", '
                           f'"properties": {{...}}}}.')
    missing = [name for name in schema.get("required", []) if name not in schema["properties"]]
    if missing:
        raise InputProblem(f"{where} lists {', '.join(map(repr, missing))} as required, "
                           "but not among its properties.")
    return schema


def with_parameters(suite: Suite, tool: str, schema: dict) -> Suite:
    """The suite with one tool's parameters schema replaced by the learner's own.

    Only what the model sees changes: every case keeps its answer key and is scored against
    the suite's schema, so a schema that renames or drops a parameter shows up as failures.
    """
    if tool not in suite.tools:
        raise InputProblem(f"There is no tool {tool!r} in the suite.")
    tools = dict(suite.tools)
    tools[tool] = tools[tool].model_copy(update={"parameters": schema})
    return Suite(tools, suite.cases, f"{suite.source} (custom schema for {tool})")


def tools_of(suite: Suite) -> list[str]:
    """The suite tools the cases offer, in suite order: the ones worth a custom text."""
    used = {name for case in suite.cases for name in case.tools}
    return [name for name in suite.tools if name in used]
