"""Arguments scored one parameter at a time, by the kind of value each parameter takes.

A trial's verdict counts the arguments right only when every one of them is right, so the
effect of a setting on one parameter drowns when another parameter fails first: turning
enums off may make the model invent a unit ("centigrade") while the city it writes is wrong
either way. Here each parameter the answer key expects a value for is judged on its own, with
the same rules as the verdict (the schema's type first, then the answer key's accepted
values, BFCL's way), and grouped by kind:

- ``enum``: the schema lists the allowed values;
- ``free text``: a string without a list;
- ``number``, ``boolean``;
- ``nested``: an object or an array.

Only calls to the right tool are judged: a parameter of a tool that was never called had no
chance to be right or wrong, and the right-tool rate already counts that miss.
"""
from __future__ import annotations

import json
from typing import Any, Mapping

import pandas as pd

from toolkit.bench.argument_checks import OMIT, value_failure
from toolkit.bench.rates import wilson_interval

KINDS = ("enum", "free text", "number", "boolean", "nested", "other")


def kind_of(schema: Mapping) -> str:
    """The kind of value a parameter's schema asks for (see the module's list)."""
    if "enum" in schema:
        return "enum"
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) and kind else kind
    return {"string": "free text", "number": "number", "integer": "number", "boolean": "boolean",
            "object": "nested", "array": "nested"}.get(kind, "other")


def _arguments(call: Any) -> tuple[str | None, dict | None]:
    """(name, arguments) of a stored call (arguments as a JSON string or an object)."""
    if not isinstance(call, Mapping):
        return None, None
    arguments = call.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return call.get("name"), None
    return call.get("name"), arguments if isinstance(arguments, dict) else None


def parameter_outcomes(case: Any, calls: list, schemas: Mapping[str, Mapping] | None = None) -> list[dict]:
    """One row per parameter the answer key expects a value for, in calls to the right tool:
    ``{"tool", "parameter", "kind", "right"}``. Each expected call is judged against the call of
    the same tool that gets most of its parameters right (calls are not reused)."""
    schemas = case.schemas if schemas is None else schemas
    left = [_arguments(call) for call in calls or []]
    rows = []
    for expected in case.expected:
        properties = (schemas.get(expected.name) or {}).get("properties") or {}
        wanted = {name: options for name, options in dict(expected.arguments).items() if OMIT not in options}
        best, best_rows = None, None
        for index, (name, arguments) in enumerate(left):
            if name != expected.name or arguments is None:
                continue
            judged = []
            for parameter, options in wanted.items():
                schema = properties.get(parameter) or {}
                right = parameter in arguments and value_failure(arguments[parameter], options, schema,
                                                                 parameter, name) is None
                judged.append({"tool": name, "parameter": parameter, "kind": kind_of(schema), "right": right})
            if best_rows is None or sum(r["right"] for r in judged) > sum(r["right"] for r in best_rows):
                best, best_rows = index, judged
        if best is not None:
            left[best] = (None, None)
            rows.extend(best_rows)
    return rows


def parameter_table(trials: pd.DataFrame, suite: Any, by: list[str] | None = None) -> pd.DataFrame:
    """Right values per parameter kind (and per ``by`` column) over a run's trials, with 95%
    Wilson intervals. ``trials`` needs ``case_id`` and ``calls`` (``Store.trials(run, full=True)``)."""
    if "calls" not in trials.columns:
        raise KeyError("these trials have no 'calls' column: read them with Store.trials(run_id, full=True)")
    by = list(by or [])
    rows = []
    for trial in trials.to_dict("records"):
        calls = json.loads(trial["calls"]) if isinstance(trial["calls"], str) else (trial["calls"] or [])
        for outcome in parameter_outcomes(suite.case(trial["case_id"]), calls):
            rows.append({**{name: trial[name] for name in by}, **outcome})
    columns = [*by, "kind", "values", "right", "rate", "low", "high"]
    if not rows:
        return pd.DataFrame(columns=columns)
    judged = pd.DataFrame(rows)
    table = []
    for key, group in judged.groupby([*by, "kind"], sort=False):
        key = key if isinstance(key, tuple) else (key,)
        right, n = int(group["right"].sum()), len(group)
        low, high = wilson_interval(right, n)
        table.append({**dict(zip([*by, "kind"], key)), "values": n, "right": right, "rate": right / n,
                      "low": low, "high": high})
    order = {kind: index for index, kind in enumerate(KINDS)}
    return pd.DataFrame(table, columns=columns).sort_values(
        [*by, "kind"], key=lambda column: column.map(order) if column.name == "kind" else column,
        kind="stable", ignore_index=True)


def format_parameter_table(table: pd.DataFrame) -> str:
    """The table as the command line prints it: right values as "right/values rate [low, high]"."""
    if table.empty:
        return "(no call to the right tool, so no parameter to judge)"
    shown = table.copy()
    shown["right values"] = [f"{right}/{n} {rate:6.1%} [{low:5.1%}, {high:5.1%}]" for right, n, rate, low, high
                             in zip(table["right"], table["values"], table["rate"], table["low"], table["high"])]
    return shown.drop(columns=["values", "right", "rate", "low", "high"]).to_string(index=False)
