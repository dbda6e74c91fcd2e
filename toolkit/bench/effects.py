"""What each setting did on a model, measured once and kept, so a learner knows what to expect.

``benchmarks/effects_table.py`` runs one experiment per setting (the two values in
``SETTINGS_MEASURED``, every suite case of the categories where the setting applies) and
stores one row per (model, setting) in ``effects.json`` beside this module. Each row holds the
two rates with their Wilson intervals and, since both values ran on the very same cases, the
paired difference (``toolkit.bench.paired``): its interval, the exact McNemar p and the
discordant counts, which decide whether the setting did anything. The app reads the table
with ``effect_note`` and shows it under the factor chooser, before the learner runs anything
and as something to check their own run against; ``discordance`` feeds the power estimate
the page shows before a run.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

from toolkit.bench.rates import p_text, rate_table
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


def _discordant(paired) -> list[int]:
    """[cases that changed, cases paired]: what power is computed from."""
    return [paired.only_first + paired.only_second, paired.pairs]


def paired_cell(paired: dict[str, Any]) -> str:
    """A paired difference as a table cell: "-30 points [-42, -17], p 0.004 (10 / 1)"."""
    return (f"{paired['points']:+d} [{100 * paired['low']:+.0f}, {100 * paired['high']:+.0f}], "
            f"p {p_text(paired['p'])} ({paired['only_first']} / {paired['only_second']})")


def effect_row(setting: str, values: tuple, trials: pd.DataFrame, model: str, categories: list[str],
               fixed: dict[str, Any], parameters: pd.DataFrame | None = None) -> dict[str, Any]:
    """One row of the effects table from a finished run's trials (one column per setting, and
    the case, repeat and seed that pair them), with the right values per parameter kind under
    each value when ``parameters`` (the run's ``parameters.parameter_table`` by the setting) is
    given."""
    # scipy and statsmodels load only when a row is measured: the page reads rows, fast.
    from toolkit.bench.paired import paired_differences

    table = rate_table(trials.assign(**{setting: trials[setting].map(show_value)}), setting).set_index(setting)
    first, second = (table.loc[show_value(v)] for v in values)
    row: dict[str, Any] = {"model": model, "setting": setting, "values": [show_value(v) for v in values],
                           "categories": categories, "fixed": fixed, "cases": int(first["n"])}
    shown = trials.assign(**{setting: trials[setting].map(show_value)})
    ordered = shown[shown[setting].isin(row["values"])].sort_values(  # the first value first
        setting, key=lambda column: column.map(row["values"].index), kind="stable")
    for aspect in ("selection", "arguments"):
        pair = [{"successes": int(r[f"{aspect}_successes"]), "n": int(r["n"]), "rate": float(r[f"{aspect}_rate"]),
                 "low": float(r[f"{aspect}_low"]), "high": float(r[f"{aspect}_high"])} for r in (first, second)]
        row[aspect] = pair
        row[f"{aspect}_points"] = round(100 * (pair[1]["rate"] - pair[0]["rate"]))
        row[f"{aspect}_separate"] = pair[0]["low"] > pair[1]["high"] or pair[1]["low"] > pair[0]["high"]
        paired = paired_differences(ordered, setting, aspects=(aspect,))[0]
        if "category" in ordered:  # how often each kind of question changed, for plans of another mix
            row[f"{aspect}_discordant_by_category"] = {
                category: _discordant(paired_differences(group, setting, aspects=(aspect,))[0])
                for category, group in ordered.groupby("category", sort=False)}
        row[f"{aspect}_paired"] = {
            "pairs": paired.pairs, "left_out": paired.left_out, "both": paired.both,
            "only_first": paired.only_first, "only_second": paired.only_second, "neither": paired.neither,
            "difference": paired.difference, "points": paired.points, "low": paired.low, "high": paired.high,
            "p": paired.p, "method": paired.method, "real": paired.real, "sentence": paired.sentence()}
    if "latency_s" in trials:
        row["seconds_per_trial"] = round(float(trials["latency_s"].mean()), 2)
    if parameters is not None:
        row["parameters"] = {label: {kind: {"right": int(r["right"]), "values": int(r["values"])}
                                     for kind, r in group.set_index("kind").iterrows()}
                             for label, group in parameters.assign(**{setting: parameters[setting].map(show_value)})
                             .groupby(setting, sort=False)}
    real = [what for aspect, what in (("selection", "tool"), ("arguments", "arguments"))
            if row[f"{aspect}_paired"]["real"]]
    row["markdown"] = (f"| {setting} | {' vs '.join(row['values'])} | {row['cases']} | {comparison(row['selection'])} | "
                       f"{comparison(row['arguments'])} | {paired_cell(row['selection_paired'])} | "
                       f"{paired_cell(row['arguments_paired'])} | {', '.join(real) or 'no'} |")
    return row


MARKDOWN_HEADER = ("| setting | values | cases | right tool | right arguments | right tool: paired difference "
                   "[95%], p (only first / only second) | right arguments: the same | real (p < 0.05) |\n"
                   "|---|---|---|---|---|---|---|---|")
"""The header of the rows' ``markdown``, as benchmarks/effects_table.py prints it."""


def merge_effects(rows: list[dict[str, Any]], path: Path = EFFECTS_FILE) -> None:
    """Store ``rows`` in the table, each replacing the stored row of its model and setting."""
    measured = {(row["model"], row["setting"]) for row in rows}
    kept = [row for row in load_effects(path) if (row["model"], row["setting"]) not in measured]
    path.write_text(json.dumps(kept + rows, indent=1, ensure_ascii=False) + "\n", "utf-8")


def load_effects(path: Path = EFFECTS_FILE) -> list[dict[str, Any]]:
    """The stored rows; none if the table was never written (a lab measured nowhere yet)."""
    return json.loads(path.read_text("utf-8")) if path.exists() else []


def effect_row_for(model: str, setting: str, rows: list[dict[str, Any]] | None = None) -> dict[str, Any] | None:
    """The stored row of ``setting`` on ``model``, if it was measured."""
    return next((r for r in (load_effects() if rows is None else rows)
                 if r["model"] == model and r["setting"] == setting), None)


def discordance(model: str, setting: str, rows: list[dict[str, Any]] | None = None,
                categories: list[str] | None = None) -> tuple[float, str] | None:
    """How often ``setting`` made its two values disagree on ``model``, for the aspect where it
    disagreed most, and that aspect; None where it was not measured pair by pair. With
    ``categories``, over the questions of those categories only, where the row keeps them."""
    row = effect_row_for(model, setting, rows)
    if row is None or "selection_paired" not in row:
        return None
    shares = {}
    for aspect in ("selection", "arguments"):
        by_category = row.get(f"{aspect}_discordant_by_category") or {}
        chosen = [by_category[c] for c in categories or [] if c in by_category]
        if chosen:
            shares[aspect] = sum(d for d, _ in chosen) / max(sum(n for _, n in chosen), 1)
        else:
            paired = row[f"{aspect}_paired"]
            shares[aspect] = (paired["only_first"] + paired["only_second"]) / max(paired["pairs"], 1)
    aspect = max(shares, key=shares.get)
    return shares[aspect], aspect


def plan_power(model: str, setting: str, cases: int, rows: list[dict[str, Any]] | None = None,
               categories: list[str] | None = None) -> str | None:
    """The page's and the CLI's sentence before a run: how large a difference ``cases`` paired
    cases can show, from how often ``setting`` changed answers on ``model`` in the table, on
    questions of the plan's ``categories`` where the table keeps them apart (the values it was
    measured with are named: another pair of values may change more or less)."""
    measured = discordance(model, setting, rows, categories)
    if measured is None or cases < 1:
        return None
    share, aspect = measured
    row = effect_row_for(model, setting, rows)
    what = "the right tool" if aspect == "selection" else "the arguments"
    from toolkit.bench.power import before_run  # scipy: loaded on first use, after the page is drawn

    return before_run(cases, share, f"on {model} ({' vs '.join(row['values'])}, {what}; the effects table)")


def effect_note(model: str, setting: str, rows: list[dict[str, Any]] | None = None) -> str | None:
    """One sentence on what ``setting`` did on ``model``, or None where it was not measured."""
    row = effect_row_for(model, setting, rows)
    if row is None:
        return None
    a, b = row["values"]
    (first, second) = row["selection"]
    arguments = row["arguments"]
    rates = (f"right tool {first['rate']:.0%} → {second['rate']:.0%}, right arguments "
             f"{arguments[0]['rate']:.0%} → {arguments[1]['rate']:.0%}")
    if "selection_paired" not in row:  # a row measured before the table was paired
        return (f"Measured on {model} over {row['cases']} cases: {a} → {b}: {rates} (not compared case by case; "
                "benchmarks/effects_table.py measures it again).")
    parts = []
    for aspect, what in (("selection", "the right tool"), ("arguments", "the right arguments")):
        paired = row[f"{aspect}_paired"]
        verdict = "a real change" if paired["real"] else "within chance"
        parts.append(f"{what} {paired['points']:+d} points [{100 * paired['low']:+.0f}, {100 * paired['high']:+.0f}], "
                     f"p {p_text(paired['p'])}: {verdict}")
    return (f"Measured on {model} over the same {row['cases']} cases: {a} → {b}: {rates}. Paired: "
            f"{'; '.join(parts)}.")
