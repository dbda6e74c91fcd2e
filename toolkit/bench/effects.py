"""What each setting did on a model, measured once and kept, so a learner knows what to expect.

``benchmarks/effects_table.py`` runs one experiment per setting (the two values in
``SETTINGS_MEASURED``, every suite case of the categories where the setting applies) and
stores one row per (model, setting) in ``effects.json`` beside this module. The app reads it
with ``effect_note`` and shows it under the factor chooser: "on this model, this knob moved the
right-tool rate by X points", with the intervals, before the learner runs anything and as
something to check their own run against.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from toolkit.bench.rates import rate_table
from toolkit.bench.trials import show_value

EFFECTS_FILE = Path(__file__).with_name("effects.json")

_ASKED = ["simple", "multiple"]  # questions that need a tool: where choosing one can go wrong
_ALL = ["simple", "multiple", "irrelevance"]  # ...and questions that need none

SETTINGS_MEASURED: dict[str, tuple[tuple, list[str], dict[str, Any]]] = {
    # setting: (the two values compared, the categories where it applies, other settings fixed)
    "description": (("clear", "vague"), _ALL, {}),
    "names": (("real", "hidden"), _ASKED, {}),
    "enums": ((True, False), ["enum"], {}),
    "temperature": ((0.0, 1.0), _ASKED, {}),
    "tool_choice": (("auto", "required"), _ALL, {}),
    "distractors": ((0, 8), _ASKED, {}),
    "protocol": (("native", "string"), _ALL, {}),
    "parallel_tool_calls": ((None, False), ["parallel", "parallel_multiple"], {}),
    "system_prompt": ((False, True), _ALL, {}),
    "retrieval": (("off", "embeddings"), _ASKED, {"distractors": 8, "top_k": 3}),
}


def comparison(pair: list[dict[str, Any]]) -> str:
    """Two rates of an effects row as a table cell: "26/30 [70%, 95%] vs 21/30 [52%, 83%]"."""
    return " vs ".join(f"{p['successes']}/{p['n']} [{p['low']:.0%}, {p['high']:.0%}]" for p in pair)


def effect_row(setting: str, values: tuple, trials: pd.DataFrame, model: str, categories: list[str],
               fixed: dict[str, Any], parameters: pd.DataFrame | None = None) -> dict[str, Any]:
    """One row of the effects table from a finished run's trials (one column per setting), with
    the right values per parameter kind under each value when ``parameters`` (the run's
    ``parameters.parameter_table`` by the setting) is given."""
    table = rate_table(trials.assign(**{setting: trials[setting].map(show_value)}), setting).set_index(setting)
    first, second = (table.loc[show_value(v)] for v in values)
    row: dict[str, Any] = {"model": model, "setting": setting, "values": [show_value(v) for v in values],
                           "categories": categories, "fixed": fixed, "cases": int(first["n"])}
    for aspect in ("selection", "arguments"):
        pair = [{"successes": int(r[f"{aspect}_successes"]), "n": int(r["n"]), "rate": float(r[f"{aspect}_rate"]),
                 "low": float(r[f"{aspect}_low"]), "high": float(r[f"{aspect}_high"])} for r in (first, second)]
        row[aspect] = pair
        row[f"{aspect}_points"] = round(100 * (pair[1]["rate"] - pair[0]["rate"]))
        row[f"{aspect}_separate"] = pair[0]["low"] > pair[1]["high"] or pair[1]["low"] > pair[0]["high"]
    if parameters is not None:
        row["parameters"] = {label: {kind: {"right": int(r["right"]), "values": int(r["values"])}
                                     for kind, r in group.set_index("kind").iterrows()}
                             for label, group in parameters.assign(**{setting: parameters[setting].map(show_value)})
                             .groupby(setting, sort=False)}
    row["markdown"] = (f"| {setting} | {' vs '.join(row['values'])} | {row['cases']} | {comparison(row['selection'])} | "
                       f"{comparison(row['arguments'])} | "
                       f"{row['selection_points']:+d} / {row['arguments_points']:+d} |")
    return row


def merge_effects(rows: list[dict[str, Any]], path: Path = EFFECTS_FILE) -> None:
    """Store ``rows`` in the table, each replacing the stored row of its model and setting."""
    measured = {(row["model"], row["setting"]) for row in rows}
    kept = [row for row in load_effects(path) if (row["model"], row["setting"]) not in measured]
    path.write_text(json.dumps(kept + rows, indent=1, ensure_ascii=False) + "\n", "utf-8")


def load_effects(path: Path = EFFECTS_FILE) -> list[dict[str, Any]]:
    """The stored rows; none if the table was never written (a lab measured nowhere yet)."""
    return json.loads(path.read_text("utf-8")) if path.exists() else []


def effect_note(model: str, setting: str, rows: list[dict[str, Any]] | None = None) -> str | None:
    """One sentence on what ``setting`` did on ``model``, or None where it was not measured."""
    row = next((r for r in (load_effects() if rows is None else rows)
                if r["model"] == model and r["setting"] == setting), None)
    if row is None:
        return None
    a, b = row["values"]
    (first, second), points = row["selection"], row["selection_points"]
    size = (f"moved the right-tool rate by {points:+d} points" if row["selection_separate"] else
            f"changed the right-tool rate by {points:+d} points, within what chance allows (the intervals overlap)")
    arguments = row["arguments"]
    return (f"Measured on {model} over {row['cases']} cases: {a} → {b} {size} "
            f"({first['rate']:.0%} [{first['low']:.0%}, {first['high']:.0%}] → "
            f"{second['rate']:.0%} [{second['low']:.0%}, {second['high']:.0%}]); right arguments "
            f"{arguments[0]['rate']:.0%} → {arguments[1]['rate']:.0%}.")
