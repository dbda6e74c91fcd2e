"""BFCL's rules for the arguments of one call: checked against the tool's parameters schema,
then against the answer key's accepted values.

The schema check finds what the model got structurally wrong (a required parameter missing, a
parameter the tool does not have, a value of the wrong type); the answer-key check finds what
it got wrong in substance (a value the key does not accept). Each failure is one reason and one
sentence that names the tool and the parameter's path (``filters.status``, ``items[2]``), so a
learner can see at once what to fix. ``toolkit.bench.scoring.check`` uses these for every call.

Types follow BFCL's leniency: an int is fine where a number is expected, a bool is never an
int. Strings are compared after :func:`normalise`, so "New York" matches "new york".
"""
from __future__ import annotations

import json
import unicodedata
from typing import Any, Mapping, NamedTuple

__all__ = ["OMIT", "Failure", "normalise", "matches_type", "schema_failure",
           "answer_key_failure", "arguments_failure", "short_json", "json_type"]

OMIT = ""  # among a parameter's accepted values: the parameter may be left out


class Failure(NamedTuple):
    """Why a call fails: one of ``toolkit.bench.verdict.REASONS``, and one sentence for people."""

    reason: str
    detail: str


def arguments_failure(arguments: dict, accepted: Mapping, schema: Mapping,
                      tool: str) -> Failure | None:
    """The first thing wrong with one call's arguments, or None when they pass.

    The schema goes first: a value of the wrong type is reported as such, not as a value the
    key does not accept, which would hide what the model misunderstood.
    """
    return (schema_failure(arguments, schema, "", tool)
            or answer_key_failure(arguments, dict(accepted), "", tool))


def value_failure(value: Any, options: list, schema: Mapping, name: str, tool: str) -> Failure | None:
    """The first thing wrong with one parameter's value, by the same rules: its schema, then
    the answer key's accepted values (any one of ``options`` will do)."""
    return schema_failure(value, schema, name, tool) or _options_failure(value, options, name, tool)


# ---------------------------------------------------------------- the schema

def schema_failure(value: Any, schema: Mapping, path: str, tool: str) -> Failure | None:
    """Type and structure of ``value`` against a JSON Schema: required, unknown keys, types."""
    types = _types(schema)
    if types and not any(matches_type(value, t) for t in types):
        return Failure(
            "wrong_type",
            f"{tool}: parameter '{path}' should be {' or '.join(types)}, "
            f"got {json_type(value)} {short_json(value)}.",
        )
    for keyword in ("anyOf", "oneOf"):
        if keyword in schema:
            failures = [schema_failure(value, sub, path, tool) for sub in schema[keyword]]
            if all(failures):
                return failures[0]
    if isinstance(value, dict) and isinstance(schema.get("properties"), dict):
        properties = schema["properties"]
        for name in schema.get("required", []):
            if name not in value:
                where = "required parameter" if not path else "required field"
                return Failure(
                    "missing_required", f"{tool}: {where} '{_join(path, name)}' is missing."
                )
        extra = schema.get("additionalProperties")
        for name in value:
            if name not in properties and not extra:
                return Failure(
                    "unexpected_parameter",
                    f"{tool}: parameter '{_join(path, name)}' is not in the tool's schema.",
                )
        for name, item in value.items():
            sub = properties.get(name, extra if isinstance(extra, dict) else {})
            failure = schema_failure(item, sub, _join(path, name), tool)
            if failure:
                return failure
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            failure = schema_failure(item, schema["items"], f"{path}[{index}]", tool)
            if failure:
                return failure
    return None


def _types(schema: Mapping) -> list[str]:
    declared = schema.get("type")
    if declared is None:
        return []
    return [declared] if isinstance(declared, str) else list(declared)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


# ---------------------------------------------------------------- the answer key

def answer_key_failure(value: Any, accepted: Any, path: str, tool: str) -> Failure | None:
    """``value`` against one accepted value. A dict in the key is a spec: key -> accepted list.

    A parameter missing from the call passes only when its accepted values include ``OMIT``.
    """
    if isinstance(accepted, dict):
        if not isinstance(value, dict):
            return Failure(
                "value_not_accepted",
                f"{tool}: parameter '{path}' expected an object, got {short_json(value)}.",
            )
        for name, options in accepted.items():
            if name not in value and OMIT not in options:
                return Failure(
                    "missing_required",
                    f"{tool}: parameter '{_join(path, name)}' was left out, but the answer key "
                    f"expects {_one_of(options)}.",
                )
        for name in value:
            if name not in accepted:
                return Failure(
                    "unexpected_parameter",
                    f"{tool}: parameter '{_join(path, name)}' is not in the answer key.",
                )
        for name, item in value.items():
            failure = _options_failure(item, accepted[name], _join(path, name), tool)
            if failure:
                return failure
        return None
    if isinstance(accepted, list):
        if not isinstance(value, list) or len(value) != len(accepted):
            return Failure(
                "value_not_accepted",
                f"{tool}: parameter '{path}' expected {short_json(accepted)}, "
                f"got {short_json(value)}.",
            )
        for index, (item, wanted) in enumerate(zip(value, accepted)):
            failure = answer_key_failure(item, wanted, f"{path}[{index}]", tool)
            if failure:
                return failure
        return None
    if _scalar_equal(value, accepted):
        return None
    return Failure(
        "value_not_accepted",
        f"{tool}: parameter '{path}' expected {short_json(accepted)}, got {short_json(value)}.",
    )


def _options_failure(value: Any, options: list, path: str, tool: str) -> Failure | None:
    """``value`` against a parameter's list of accepted values: any one of them will do."""
    candidates = [option for option in options if option != OMIT]
    if not candidates:
        return Failure("unexpected_parameter",
                       f"{tool}: parameter '{path}' should be left out, got {short_json(value)}.")
    failures = []
    for candidate in candidates:
        failure = answer_key_failure(value, candidate, path, tool)
        if failure is None:
            return None
        failures.append(failure)
    # One candidate, or only structured ones: its own failure says more precisely what is wrong
    # than a list of every accepted value would.
    if len(failures) == 1 or all(isinstance(c, (dict, list)) for c in candidates):
        return failures[0]
    return Failure(
        "value_not_accepted",
        f"{tool}: parameter '{path}' expected {_one_of(candidates)}, got {short_json(value)}.",
    )


def _scalar_equal(value: Any, accepted: Any) -> bool:
    if isinstance(accepted, bool) or isinstance(value, bool):
        return isinstance(accepted, bool) and isinstance(value, bool) and value == accepted
    if isinstance(accepted, str):
        return isinstance(value, str) and normalise(value) == normalise(accepted)
    if isinstance(accepted, (int, float)):
        return isinstance(value, (int, float)) and value == accepted
    return value is None and accepted is None


def _one_of(options: list) -> str:
    shown = [option for option in options if option != OMIT]
    return short_json(shown[0]) if len(shown) == 1 else f"one of {short_json(shown)}"


# ---------------------------------------------------------------- values and types

def normalise(text: str) -> str:
    """Case-folded, without whitespace or punctuation (full-width forms folded first).

    A string made only of punctuation (``"-"``, ``"/"``) would normalise to nothing and equal
    every other such string, so it keeps its stripped, case-folded form instead.
    """
    folded = unicodedata.normalize("NFKC", text).casefold()
    kept = "".join(
        ch for ch in folded if not ch.isspace() and not unicodedata.category(ch).startswith("P")
    )
    return kept or folded.strip()


def matches_type(value: Any, type_name: str) -> bool:
    """JSON Schema type test with BFCL's leniency: int is a number; bool is neither."""
    if type_name == "string":
        return isinstance(value, str)
    if type_name == "boolean":
        return isinstance(value, bool)
    if type_name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if type_name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if type_name == "array":
        return isinstance(value, list)
    if type_name == "object":
        return isinstance(value, dict)
    if type_name == "null":
        return value is None
    raise ValueError(f"unknown JSON Schema type {type_name!r}")


def short_json(value: Any) -> str:
    """A value as JSON, cut to 80 characters: failure sentences quote values, and must stay
    one readable line even when the model sent a whole document."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."


def json_type(value: Any) -> str:
    """The JSON name of a value's type ("integer", "object"), as a schema would spell it."""
    for name in ("boolean", "integer", "number", "string", "array", "object", "null"):
        if matches_type(value, name):
            return name
    return type(value).__name__
