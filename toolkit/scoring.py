"""Checking tool calls against an answer key, following the Berkeley Function Calling Leaderboard.

The rules are BFCL's AST checker: the function name must match; every required parameter must
be present; no parameter that the schema or the answer key lacks; values must have the schema's
type (an int is fine where a number is expected, a bool is never an int); every value must be
one of the answer key's accepted values; an optional parameter may be left out only when the
key lists ``""`` among its accepted values; parallel calls match in any order; an
"irrelevance" case passes only when no call is made.

Selection (right tools, right number of calls) and arguments (everything right) are reported
separately, each failure with one reason from :data:`REASONS` and one human sentence.
Where this checker parts from BFCL, the data README says so. Scoring a file of recorded calls,
and the command line, are in ``toolkit.score_file``.
"""
from __future__ import annotations

import json
import math
import sys
import unicodedata
from collections import Counter
from typing import Any, Iterable, Literal, Mapping, NamedTuple, get_args

from pydantic import BaseModel, ConfigDict, model_validator

Reason = Literal[
    "no_call",
    "spurious_call",
    "wrong_tool",
    "unparsable",
    "missing_required",
    "unexpected_parameter",
    "wrong_type",
    "value_not_accepted",
    "wrong_call_count",
]
REASONS: tuple[str, ...] = get_args(Reason)

OMIT = ""  # among a parameter's accepted values: the parameter may be left out


class Verdict(BaseModel):
    """The outcome of checking one reply against one case."""

    model_config = ConfigDict(frozen=True)

    case_id: str | None = None
    category: str | None = None
    language: str | None = None
    selection_ok: bool
    arguments_ok: bool
    reason: Reason | None = None
    detail: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Verdict:
        if self.arguments_ok and not self.selection_ok:
            raise ValueError("arguments cannot be right when the selection is wrong")
        if self.arguments_ok != (self.reason is None):
            raise ValueError("a reason is given exactly when the arguments are wrong")
        return self

    @property
    def passed(self) -> bool:
        return self.arguments_ok


class _Failure(NamedTuple):
    reason: str
    detail: str


class _Call(NamedTuple):
    name: str | None
    arguments: dict | None
    error: str | None


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


def _types(schema: Mapping) -> list[str]:
    declared = schema.get("type")
    if declared is None:
        return []
    return [declared] if isinstance(declared, str) else list(declared)


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."


def _kind(value: Any) -> str:
    for name in ("boolean", "integer", "number", "string", "array", "object", "null"):
        if matches_type(value, name):
            return name
    return type(value).__name__


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _schema_failure(value: Any, schema: Mapping, path: str, tool: str) -> _Failure | None:
    """Type and structure of ``value`` against a JSON Schema: required, unknown keys, types."""
    types = _types(schema)
    if types and not any(matches_type(value, t) for t in types):
        return _Failure(
            "wrong_type",
            f"{tool}: parameter '{path}' should be {' or '.join(types)}, "
            f"got {_kind(value)} {_show(value)}.",
        )
    for keyword in ("anyOf", "oneOf"):
        if keyword in schema:
            failures = [_schema_failure(value, sub, path, tool) for sub in schema[keyword]]
            if all(failures):
                return failures[0]
    if isinstance(value, dict) and isinstance(schema.get("properties"), dict):
        properties = schema["properties"]
        for name in schema.get("required", []):
            if name not in value:
                where = "required parameter" if not path else "required field"
                return _Failure(
                    "missing_required", f"{tool}: {where} '{_join(path, name)}' is missing."
                )
        extra = schema.get("additionalProperties")
        for name in value:
            if name not in properties and not extra:
                return _Failure(
                    "unexpected_parameter",
                    f"{tool}: parameter '{_join(path, name)}' is not in the tool's schema.",
                )
        for name, item in value.items():
            sub = properties.get(name, extra if isinstance(extra, dict) else {})
            failure = _schema_failure(item, sub, _join(path, name), tool)
            if failure:
                return failure
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            failure = _schema_failure(item, schema["items"], f"{path}[{index}]", tool)
            if failure:
                return failure
    return None


def _value_failure(value: Any, accepted: Any, path: str, tool: str) -> _Failure | None:
    """``value`` against one accepted value. A dict in the key is a spec: key -> accepted list."""
    if isinstance(accepted, dict):
        if not isinstance(value, dict):
            return _Failure(
                "value_not_accepted",
                f"{tool}: parameter '{path}' expected an object, got {_show(value)}.",
            )
        for name, options in accepted.items():
            if name not in value and OMIT not in options:
                return _Failure(
                    "missing_required",
                    f"{tool}: parameter '{_join(path, name)}' was left out, but the answer key "
                    f"expects {_one_of(options)}.",
                )
        for name in value:
            if name not in accepted:
                return _Failure(
                    "unexpected_parameter",
                    f"{tool}: parameter '{_join(path, name)}' is not in the answer key.",
                )
        for name, item in value.items():
            failure = _any_failure(item, accepted[name], _join(path, name), tool)
            if failure:
                return failure
        return None
    if isinstance(accepted, list):
        if not isinstance(value, list) or len(value) != len(accepted):
            return _Failure(
                "value_not_accepted",
                f"{tool}: parameter '{path}' expected {_show(accepted)}, got {_show(value)}.",
            )
        for index, (item, wanted) in enumerate(zip(value, accepted)):
            failure = _value_failure(item, wanted, f"{path}[{index}]", tool)
            if failure:
                return failure
        return None
    if _scalar_equal(value, accepted):
        return None
    return _Failure(
        "value_not_accepted",
        f"{tool}: parameter '{path}' expected {_show(accepted)}, got {_show(value)}.",
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
    return _show(shown[0]) if len(shown) == 1 else f"one of {_show(shown)}"


def _any_failure(value: Any, options: list, path: str, tool: str) -> _Failure | None:
    candidates = [option for option in options if option != OMIT]
    if not candidates:
        return _Failure("unexpected_parameter",
                        f"{tool}: parameter '{path}' should be left out, got {_show(value)}.")
    failures = []
    for candidate in candidates:
        failure = _value_failure(value, candidate, path, tool)
        if failure is None:
            return None
        failures.append(failure)
    if len(failures) == 1 or all(isinstance(c, (dict, list)) for c in candidates):
        return failures[0]
    return _Failure(
        "value_not_accepted",
        f"{tool}: parameter '{path}' expected {_one_of(candidates)}, got {_show(value)}.",
    )


# ---------------------------------------------------------------- one call, many calls

def _parse_call(raw: Any, position: int) -> _Call | _Failure:
    if isinstance(raw, Mapping) and isinstance(raw.get("function"), Mapping):
        raw = raw["function"]  # OpenAI's {"id", "type", "function": {...}} shape
    if not isinstance(raw, Mapping):
        return _Failure("unparsable", f"Call {position} is not an object: {_show(repr(raw))}.")
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        return _Failure("unparsable", f"Call {position} has no tool name.")
    arguments = raw.get("arguments")
    if arguments is None:
        return _Call(name, {}, None)
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError as error:
            return _Call(name, None, f"not valid JSON ({error.msg})")
    if not isinstance(arguments, dict):
        return _Call(name, None, f"a JSON {_kind(arguments)}, not an object")
    return _Call(name, arguments, None)


def _call_failure(expected: Any, call: _Call, schema: Mapping) -> _Failure | None:
    if call.error:
        return _Failure("unparsable", f"{call.name}: the arguments are {call.error}.")
    return _schema_failure(call.arguments, schema, "", call.name) or _value_failure(
        call.arguments, dict(expected.arguments), "", call.name
    )


# How far a failing call got: used to pick the most telling failure to report.
_PROGRESS = {"unparsable": 0, "missing_required": 1, "unexpected_parameter": 2, "wrong_type": 3}


def _max_matching(n_left: int, n_right: int, fits) -> dict[int, int]:
    """Maximum bipartite matching (augmenting paths); returns right index -> left index."""
    owner: dict[int, int] = {}

    def assign(left: int, seen: set[int]) -> bool:
        for right in range(n_right):
            if right not in seen and fits(left, right):
                seen.add(right)
                if right not in owner or assign(owner[right], seen):
                    owner[right] = left
                    return True
        return False

    for left in range(n_left):
        assign(left, set())
    return owner


def _names(names: Iterable[str]) -> str:
    counts = Counter(names)
    return ", ".join(f"{n} ×{c}" if c > 1 else n for n, c in sorted(counts.items()))


def check(case: Any, calls: list | None = None, parse_error: str | bool | None = None,
          *, schemas: Mapping[str, Mapping] | None = None) -> Verdict:
    """Check one reply (its tool calls, or the fact that it could not be parsed) against a case.

    ``calls`` holds ``{"name": str, "arguments": dict | JSON str}`` (OpenAI's nested
    ``{"function": {...}}`` shape works too). ``schemas`` maps tool name -> parameters schema;
    by default the schemas that the suite attached to the case.
    """
    schemas = case.schemas if schemas is None else schemas
    labels = dict(case_id=case.id, category=case.category, language=case.language)

    def fail(selection_ok: bool, failure: _Failure) -> Verdict:
        return Verdict(**labels, selection_ok=selection_ok, arguments_ok=False,
                       reason=failure.reason, detail=failure.detail)

    if parse_error is not None and parse_error is not False:
        if calls:
            raise ValueError("give either calls or parse_error, not both")
        because = f": {parse_error}" if isinstance(parse_error, str) and parse_error else ""
        return fail(False, _Failure("unparsable", f"The reply could not be parsed{because}."))

    parsed = [_parse_call(raw, position) for position, raw in enumerate(calls or [], start=1)]
    for item in parsed:
        if isinstance(item, _Failure):
            return fail(False, item)
    expected = list(case.expected)
    wanted = [call.name for call in expected]
    got = [call.name for call in parsed]
    if not expected:
        if not parsed:
            return Verdict(**labels, selection_ok=True, arguments_ok=True)
        return fail(False, _Failure(
            "spurious_call", f"No tool was needed, but the model called {_names(got)}."))
    if not parsed:
        return fail(False, _Failure(
            "no_call", f"Expected a call to {_names(wanted)}, but the model made no call."))
    if len(parsed) != len(expected):
        return fail(False, _Failure(
            "wrong_call_count",
            f"Expected {len(expected)} call(s) ({_names(wanted)}), "
            f"got {len(parsed)} ({_names(got)})."))
    if Counter(wanted) != Counter(got):
        return fail(False, _Failure(
            "wrong_tool", f"Expected {_names(wanted)}, got {_names(got)}."))

    missing = sorted({name for name in wanted if name not in schemas})
    if missing:
        raise ValueError(f"no parameters schema for {', '.join(missing)} (case {case.id!r})")
    outcomes = {
        (i, j): _call_failure(expected[i], parsed[j], schemas[expected[i].name])
        for i in range(len(expected)) for j in range(len(parsed))
        if expected[i].name == parsed[j].name
    }
    owner = _max_matching(len(expected), len(parsed),
                          lambda i, j: (i, j) in outcomes and outcomes[i, j] is None)
    if len(owner) == len(expected):
        return Verdict(**labels, selection_ok=True, arguments_ok=True)
    # Report the closest miss of the first expected call left without a partner.
    free_calls = [j for j in range(len(parsed)) if j not in owner]
    first = next(i for i in range(len(expected)) if i not in owner.values())
    misses = [outcomes[first, j] for j in free_calls if (first, j) in outcomes]
    best = max(misses, key=lambda failure: _PROGRESS.get(failure.reason, 4))
    return fail(True, best)


# ---------------------------------------------------------------- rates

def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion; (0.0, 1.0) when there is no data."""
    if n == 0:
        return (0.0, 1.0)
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got {successes} of {n}")
    p = successes / n
    spread = z * z / n
    centre = (p + spread / 2) / (1 + spread)
    half = z * math.sqrt(p * (1 - p) / n + spread / (4 * n)) / (1 + spread)
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return (low, high)


def summarise(verdicts: Iterable[Verdict], z: float = 1.96) -> dict:
    """n, both rates (None when n is 0), their Wilson intervals, and a count per reason."""
    verdicts = list(verdicts)
    n = len(verdicts)
    summary: dict[str, Any] = {"n": n}
    for aspect in ("selection", "arguments"):
        successes = sum(getattr(v, f"{aspect}_ok") for v in verdicts)
        summary[f"{aspect}_successes"] = successes
        summary[f"{aspect}_rate"] = successes / n if n else None
        summary[f"{aspect}_interval"] = wilson_interval(successes, n, z)
    counts = Counter(v.reason for v in verdicts if v.reason)
    summary["reasons"] = {reason: counts.get(reason, 0) for reason in REASONS}
    return summary


# ---------------------------------------------------------------- recorded runs

# Scoring recorded files and the command line live in toolkit.score_file, and their names
# resolve here too. They are looked up on first use because toolkit.score_file imports this
# module: importing them at the top would be circular.
_IN_SCORE_FILE = ("CallsFileError", "score_file", "format_table", "main")


def __getattr__(name: str) -> Any:
    if name in _IN_SCORE_FILE:
        from . import score_file as module

        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ == "__main__":
    from .score_file import main

    sys.exit(main())
