"""What changed between two values of a factor, case by case, as the page shows it.

The paired test (``toolkit.bench.paired``) says whether a setting did anything; this module
shows *where*: the discordant cases (right under one value, wrong under the other), and for
one of them the two requests and replies with what differs between them marked. That is the
exact question where the vague description or the higher temperature made the model go wrong.
"""

from __future__ import annotations

import difflib
import json
from typing import Any

import pandas as pd

from toolkit.bench.paired import PairedDifference, compare_outcomes, paired_differences, paired_frame
from toolkit.bench.power import after_run
from toolkit.bench.trials import show_value

CHANGE_COLUMNS = ["case_id", "repeat", "changed", "chosen_tools_first", "chosen_tools_second", "reason_first",
                  "reason_second", "id_first", "id_second"]


def paired_reading(trials: pd.DataFrame, factor: str, second: str | None = None) -> tuple[list[PairedDifference], str]:
    """The paired differences of a run and what they say in words, with whether the plan was
    large enough for each difference seen; one value only: none, and a sentence saying so."""
    if factor not in trials.columns or trials[factor].map(show_value).nunique() < 2:
        shown = list(dict.fromkeys(trials[factor].map(show_value))) if factor in trials.columns else []
        if len(shown) == 1:
            return [], f"Only {shown[0]} has finished trials in this run: nothing to compare."
        return [], "One value only: nothing to compare in this run."
    differences = paired_differences(trials, factor, within=second)
    sentences = []
    for d in differences:
        sentences.append(f"- {d.sentence()}" + (f" {after_run(d.low, d.high, d.discordance(), d.real, d.method == 'clustered')}"
                                                if d.pairs else ""))
    return differences, "\n".join(sentences)


def runs_paired(matched: pd.DataFrame, run_a: str, run_b: str) -> list[PairedDifference]:
    """Two stored runs compared pair by pair on the trials they share (``Store.compare``'s
    table: matched by case, repeat and place in the plan); trials only one run has are left out
    and counted. Empty when the runs share no case."""
    both = matched["selection_ok_a"].notna() & matched["selection_ok_b"].notna()
    shared = matched[both]
    if shared.empty:
        return []
    return [compare_outcomes(shared[f"{aspect}_ok_a"].astype(bool), shared[f"{aspect}_ok_b"].astype(bool),
                             shared["case_id"], factor="run", first=run_a, second=run_b, aspect=aspect,
                             left_out=int((~both).sum()), repeats=False)
            for aspect in ("selection", "arguments")]


def changed_cases(trials: pd.DataFrame, factor: str, first: str, second: str, aspect: str) -> pd.DataFrame:
    """The discordant pairs of ``first`` and ``second`` for ``aspect``: one row per case (and
    repeat) that only one of the two values got right, with what each chose and why it failed."""
    frame, _ = paired_frame(trials, factor, first, second)
    if frame.empty:
        return pd.DataFrame(columns=CHANGE_COLUMNS)
    x, y = frame[f"{aspect}_ok_first"].astype(bool), frame[f"{aspect}_ok_second"].astype(bool)
    changed = frame[x != y].copy()
    changed["changed"] = [f"only {first} right" if ok else f"only {second} right"
                          for ok in changed[f"{aspect}_ok_first"].astype(bool)]
    for column in CHANGE_COLUMNS:
        if column not in changed.columns:
            changed[column] = None
    return changed[CHANGE_COLUMNS].reset_index(drop=True)


def _lines(value: Any) -> list[str]:
    if value is None:
        return ["(nothing)"]
    if isinstance(value, str):
        return value.splitlines() or [""]
    return json.dumps(value, indent=1, ensure_ascii=False, sort_keys=True).splitlines()


def marked_difference(first: Any, second: Any, first_name: str, second_name: str) -> str:
    """A unified diff of two requests, replies or texts: the lines that differ, marked - and +,
    with three lines of context (empty when the two are the same)."""
    return "\n".join(difflib.unified_diff(_lines(first), _lines(second), fromfile=first_name,
                                          tofile=second_name, lineterm="", n=3))


__all__ = ["paired_reading", "runs_paired", "changed_cases", "marked_difference", "CHANGE_COLUMNS"]
