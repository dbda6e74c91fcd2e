"""The History tab: every stored run in a table, two runs side by side with a trial-by-trial
comparison, any run as a CSV or as a run file, and a run file imported back.

It reads the same database as ``python -m toolkit.bench.experiment``, so runs from the command line
show up here too. A run file (``toolkit.bench.run_file``) carries a run to another machine: an
instructor records one where a strong model answers and imports it in a room with no network,
where its charts and trials are drawn from the file, with nothing sent to a model.

In shared mode a browser lists its own runs (started or uploaded here) and the runs recorded
by the instructor (made or imported on the serving machine), never another attendee's.
"""

from __future__ import annotations

import streamlit as st

from app_pages.run_view import show_run
from toolkit.app.conversations import conversation_run_rows
from toolkit.app.jobs import open_store, store_path
from toolkit.app.pairs import runs_paired
from toolkit.app.tables import rates_view, run_by, run_csv, run_label, run_tables
from toolkit.bench.charts import accuracy_chart, paired_chart
from toolkit.bench.run_file import import_run, run_file_text
from toolkit.lab_error import LabError


def history_tab(owner: str | None = None) -> None:
    """``owner``: in shared mode this browser's id, whose runs are listed with the recorded
    ones; None lists every run."""
    store = open_store()
    imported = import_section(store, owner)  # first, so that the table below already lists the run
    runs = store.runs(visible_to=owner)
    room = owner is not None
    conversation_runs(owner)
    if runs.empty:
        st.info(f"No runs yet in {store.path}. Run an experiment first, or import a recorded run above."
                if not room else "No runs yet: run an experiment first, or import a recorded run above.")
        return
    columns = ["id", "name", "created", "backend", "status", "n_done", "n_trials", "n_selection_ok",
               "n_arguments_ok", "error"]
    if room:
        runs["by"] = [run_by(row) for row in runs.to_dict("records")]
        columns.insert(2, "by")
    st.dataframe(runs[columns], hide_index=True, key="history_runs")
    labels = {int(row["id"]): run_label(row, room) for row in runs.to_dict("records")}
    ids = list(labels)  # newest first
    if len(ids) == 1:
        st.caption("Run a second experiment to compare two runs side by side.")
        pairs = [(st.container(), ids[0], "a")]
    else:
        left, right = st.columns(2)
        # Keyed by the newest run, so a new run resets the pickers to the newest two (a widget
        # keeps its choice across reruns only while its key stays the same).
        pairs = [(left, left.selectbox("Run A", ids, 0, format_func=labels.get,
                                       key=f"history_a_{ids[0]}"), "a"),
                 (right, right.selectbox("Run B", ids, 1, format_func=labels.get,
                                         key=f"history_b_{ids[0]}"), "b")]
    for where, run_id, name in pairs:
        with where:
            _, factors, trials, table = run_tables(store, run_id)
            if trials.empty:
                st.info(f"Run {run_id} has no finished trial.")
                continue
            st.plotly_chart(accuracy_chart(table, factors[0],
                                           factors[1] if len(factors) > 1 else None),
                            key=f"history_{name}_accuracy")
            st.dataframe(rates_view(table), hide_index=True,
                         key=f"history_{name}_rates")
    if len(pairs) == 2 and pairs[0][1] != pairs[1][1]:
        st.markdown("**Trial by trial** (matched by case and repeat; *changed* marks a "
                    "different verdict)")
        matched = store.compare(pairs[0][1], pairs[1][1])
        paired = runs_paired(matched, f"run {pairs[0][1]}", f"run {pairs[1][1]}")
        if paired:
            st.plotly_chart(paired_chart(paired), key="history_paired")
            st.markdown("\n".join(f"- {d.sentence()}" for d in paired))
        else:
            st.caption("The two runs share no case, so they cannot be compared pair by pair.")
        st.dataframe(matched, hide_index=True, key="history_compare")
    if imported is not None:
        with st.expander(f"Run {imported} as recorded: every chart and trial", expanded=True):
            show_run(imported, "history_imported")
    st.divider()
    export = st.selectbox("Export a run", ids, format_func=labels.get,
                          key=f"history_export_{ids[0]}")
    csv, run_file = st.columns(2)
    # Callables, so a file is built only when its button is pressed, not on every rerun.
    csv.download_button("Download CSV", lambda: run_csv(store, export),
                        file_name=f"run-{export}.csv", mime="text/csv", key="history_download")
    run_file.download_button("Download run file", lambda: run_file_text(store, export).encode("utf-8"),
                             file_name=f"run-{export}.jsonl", mime="application/jsonl",
                             key="history_download_run",
                             help="Every trial with its request, reply and verdict, to import "
                                  "on another machine: its charts come back with no model asked.")


def import_section(store, owner: str | None = None) -> int | None:
    """The uploader of run files; the id of the run the current upload added, if it did."""
    uploaded = st.file_uploader(
        "Import a recorded run", type=["jsonl"], key="history_import",
        help="A run file from 'Download run file' below or from "
             "`python -m toolkit.bench.experiment export RUN_ID FILE`. Nothing is sent to a model.")
    if owner is not None:  # shared mode
        st.caption("A run you import is yours: only this browser's History lists it. Runs the "
                   "instructor imports on the serving machine show in every browser.")
    if uploaded is None:
        return None
    # The uploader hands the same file to every rerun: each upload is imported once, and what
    # came of it is remembered (a second upload of the same file is refused as already stored).
    outcomes = st.session_state.setdefault("history_imports", {})
    if uploaded.file_id not in outcomes:
        try:
            run_id = import_run(store, uploaded.getvalue(), uploaded.name, owner)
            outcomes[uploaded.file_id] = {"run_id": run_id}
        except LabError as problem:
            outcomes[uploaded.file_id] = {"error": str(problem)}
    outcome = outcomes[uploaded.file_id]
    if "error" in outcome:
        st.error(f"Not imported: {outcome['error'].rstrip('.')}.")
        return None
    run = store.run(outcome["run_id"])
    st.success(f"Imported {uploaded.name} as run {outcome['run_id']}: {run['backend']}, recorded "
               f"{run['created']}, {len(store.trials(outcome['run_id']))} trials. Its figures are "
               "the recorded ones; nothing was sent to a model.")
    return outcome["run_id"]


def conversation_runs(owner: str | None = None) -> None:
    """BFCL's multi-turn runs are run files, one conversation a line (not rows of the run
    database): listed here, opened and compared in the Experiment tab."""
    rows = conversation_run_rows(store_path().parent / "multi_turn" / (owner or ""))
    if rows:
        with st.expander(f"BFCL multi-turn runs ({len(rows)})"):
            st.caption("Open one in the Experiment tab: choose “BFCL multi-turn conversations” as the suite "
                       "and the same settings, or open its file there.")
            st.dataframe(rows, hide_index=True, key="history_conversations")
