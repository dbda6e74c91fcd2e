"""The History tab: every stored run in a table, two runs side by side with a trial-by-trial
comparison, and any run as a CSV download.

It reads the same database as ``python -m toolkit.bench.experiment``, so runs from the command line
show up here too.
"""

from __future__ import annotations

import streamlit as st

from toolkit.app.jobs import open_store
from toolkit.app.tables import rates_view, run_csv, run_label, run_tables
from toolkit.bench.charts import accuracy_chart


def history_tab() -> None:
    store = open_store()
    runs = store.runs()
    if runs.empty:
        st.info(f"No runs yet in {store.path}. Run an experiment first.")
        return
    st.dataframe(runs[["id", "name", "created", "backend", "status", "n_done", "n_trials",
                       "n_selection_ok", "n_arguments_ok", "error"]],
                 hide_index=True, key="history_runs")
    labels = {int(row["id"]): run_label(row) for row in runs.to_dict("records")}
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
        st.dataframe(store.compare(pairs[0][1], pairs[1][1]), hide_index=True,
                     key="history_compare")
    st.divider()
    export = st.selectbox("Export a run as CSV", ids, format_func=labels.get,
                          key=f"history_export_{ids[0]}")
    # A callable, so the CSV is built only when the button is pressed, not on every rerun.
    st.download_button("Download CSV", lambda: run_csv(store, export),
                       file_name=f"run-{export}.csv", mime="text/csv", key="history_download")
