"""A stored run as the page shows it: its rates and trials as tables, a CSV, a label.

The page draws these with ``st.dataframe`` and the charts in ``toolkit.bench.charts``; keeping the
shaping here lets the tests check what a learner reads without starting Streamlit.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from toolkit.bench.store import Store
from toolkit.bench.trials import show_value

TRIAL_COLUMNS = ["case_id", "category", "language", "expected_tools", "chosen_tools",
                 "selection_ok", "arguments_ok", "reason", "detail", "latency_s"]


def run_tables(store: Store, run_id: int):
    """(run record, its factors, trials table, rates table) for one stored run. A run that
    varied nothing is shown by case category."""
    from toolkit.bench.rates import rate_table

    run = store.run(run_id)
    factors = list(run["plan"].get("factors") or []) or ["category"]
    trials = store.trials(run_id)
    for factor in factors:  # chart categories as the widgets named them
        trials[factor] = trials[factor].map(show_value)
    table = rate_table(trials, factors)
    return run, factors, trials, table


def rates_view(table):
    """The rates table as people read it: each rate with its 95% interval in one cell."""
    view = table.copy()
    for aspect in ("selection", "arguments"):
        view[f"{aspect} (95% interval)"] = [
            f"{rate:.0%} ({low:.0%}–{high:.0%})" if rate == rate else "–"  # NaN: no trials
            for rate, low, high in zip(view[f"{aspect}_rate"], view[f"{aspect}_low"],
                                       view[f"{aspect}_high"])]
    return view[[c for c in view.columns if not c.startswith(("selection_", "arguments_"))]]


def reading(trials, factor: str, second: str | None = None, paired: str | None = None) -> str:
    """What a run shows about ``factor``, in words: each value against the first on the same
    cases, judged by the paired test (``toolkit.app.pairs.paired_reading``, or its text in
    ``paired`` where the caller already has it), what the paired interval rules out, and how many
    trials were read back from earlier runs rather than sent."""
    from toolkit.app.pairs import paired_reading

    text = paired if paired is not None else paired_reading(trials, factor, second)[1]
    cached = int(trials["cached"].astype(bool).sum()) if "cached" in trials else 0
    if cached:
        text += (f"\n\n{cached} of {len(trials)} trials were read back from earlier runs (the same "
                 "request and seed), not sent again.")
    return text


def trial_table(trials, factors: list[str]):
    """The per-trial table: the varied settings first, then the case and the verdict."""
    columns = ["id", *factors, *(c for c in TRIAL_COLUMNS if c not in factors)]
    return trials[[c for c in columns if c in trials.columns]]


def run_csv(store: Store, run_id: int) -> bytes:
    """A run as the CSV that ``Store.export_csv`` writes, for a download button."""
    # export_csv writes a file; a download button wants bytes, so go through a scratch folder.
    with tempfile.TemporaryDirectory() as folder:
        return store.export_csv(run_id, Path(folder) / "run.csv").read_bytes()


RECORDED = "recorded by the instructor"


def run_by(row: dict) -> str:
    """Whose a run is, in a room: the browser's own, or one with no owner, which every browser
    sees and which was made or imported on the serving machine (``Store.runs``)."""
    return "you" if isinstance(row.get("owner"), str) else RECORDED


def run_label(row: dict, room: bool = False) -> str:
    """How a run is named in pickers: id, name or factors, backend, size; in a ``room``, a run
    recorded by the instructor says so.

    Nothing that changes while the run goes on (its progress, its status): a picker drawn
    while a run was going keeps showing the label it had then. The table above shows both."""
    what = row.get("name") or row.get("factors") or "single setting"
    label = f"#{row['id']} · {what} · {row['backend']} · {row['n_trials']} trials"
    return f"{label} · {RECORDED}" if room and run_by(row) == RECORDED else label
