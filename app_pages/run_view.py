"""One stored run, as the Experiment tab shows it when the run ends: its rates with their
intervals, the paired difference of each value against the first (and which cases changed),
three charts, and every trial with the exact request sent and reply received.

Everything is read back from the run database, not from the job that ran it, so a run looks
the same whether it just finished, was stopped or failed halfway.
"""

from __future__ import annotations

import streamlit as st

from toolkit.app.jobs import open_store
from toolkit.app.pairs import changed_cases, marked_difference, paired_reading
from toolkit.app.tables import rates_view, reading, run_tables, trial_table
from toolkit.bench.charts import accuracy_chart, confusion_chart, failure_chart, paired_chart
from toolkit.bench.parameters import parameter_table
from toolkit.bench.suite import load_suite
from toolkit.bench.suite_checks import SuiteError
from toolkit.bench.trials import factor_label

# Narrow columns, so the table fits the page and the reason and its detail need no scrolling:
# the case's id already says its category and language, and the row id only finds the trial.
TRIAL_COLUMN_CONFIG = {
    "id": None, "category": None, "language": None,
    "case_id": st.column_config.TextColumn("case", width="medium"),
    "expected_tools": st.column_config.TextColumn("expected", width="small"),
    "chosen_tools": st.column_config.TextColumn("chosen", width="small"),
    "selection_ok": st.column_config.CheckboxColumn("tool ✓", width="small"),
    "arguments_ok": st.column_config.CheckboxColumn("args ✓", width="small"),
    "reason": st.column_config.TextColumn("reason", width="small"),
    "detail": st.column_config.TextColumn("detail", width="large"),
    "latency_s": st.column_config.NumberColumn("s", format="%.1f", width="small"),
}


@st.cache_resource(show_spinner=False, max_entries=4)
def suite_of(source: str):
    """The suite a run was planned on: the shipped one, or the file it was read from."""
    shipped = load_suite()
    return shipped if source in ("", shipped.source) else load_suite(source)


def show_parameters(store, run: dict, run_id: int, factor: str, prefix: str) -> None:
    """Right values per kind of parameter, so an effect on one kind (an enum) shows even where
    another argument of the same call fails."""
    st.markdown("**Arguments, one parameter at a time** (in calls to the right tool)")
    try:
        table = parameter_table(store.trials(run_id, full=True), suite_of(run["plan"].get("suite") or ""), [factor])
    except (KeyError, SuiteError, OSError, ValueError) as problem:
        st.info(f"No per-parameter view for this run: the cases it ran cannot be read back ({problem}).")
        return
    if table.empty:
        st.caption("No call reached the right tool, so no parameter could be judged.")
        return
    table["right values (95% interval)"] = [f"{right}/{n} · {rate:.0%} ({low:.0%}–{high:.0%})" for right, n, rate, low, high
                                            in zip(table["right"], table["values"], table["rate"], table["low"], table["high"])]
    st.dataframe(table[[factor, "kind", "right values (95% interval)"]], hide_index=True, key=f"{prefix}_parameters")


def what_changed(store, trials, factor: str, differences, prefix: str) -> None:
    """The discordant cases of one comparison, and for a chosen one the two trials side by side
    with what differs between their requests and replies marked."""
    st.markdown(f"**What changed** — the cases one value of {factor_label(factor)} got right and the other "
                "got wrong. Select one to see both trials.")
    options = {f"{d.second} against {d.first} · {'right tool' if d.aspect == 'selection' else 'right arguments'}": d
               for d in differences if d.within is None}
    if not options:  # a grid: each comparison is within a value of the second factor; keep the page short
        st.caption("In a grid, open a trial from the table below to compare two values.")
        return
    chosen = options[st.selectbox("Comparison", list(options), key=f"{prefix}_changed_pick")]
    changed = changed_cases(trials, factor, chosen.first, chosen.second, chosen.aspect)
    if changed.empty:
        st.caption("No case changed between these two values: both got the same cases right.")
        return
    event = st.dataframe(changed.drop(columns=["id_first", "id_second"]), hide_index=True,
                         key=f"{prefix}_changed_{chosen.first}_{chosen.second}_{chosen.aspect}",
                         on_select="rerun", selection_mode="single-row")
    rows = [row for row in event.selection.rows if row < len(changed)] or [0]
    pick = changed.iloc[rows[0]]
    first, second = store.trial(int(pick["id_first"])), store.trial(int(pick["id_second"]))
    st.caption(f"Case {pick['case_id']}, repeat {pick['repeat']}: {pick['changed']}.")
    for what, key in (("Request", "request"), ("Reply", "reply"), ("Model text", "model_text")):
        marked = marked_difference(first[key], second[key], chosen.first, chosen.second)
        st.markdown(f"{what}: " + ("the same under both values." if not marked else "what differs (- "
                                   f"{chosen.first}, + {chosen.second})"))
        if marked:
            st.code(marked, language="diff")
    left, right = st.columns(2)
    for column, trial, value in ((left, first, chosen.first), (right, second, chosen.second)):
        with column:
            st.markdown(f"**{value}** · {'right' if trial['arguments_ok'] else trial['reason']}")
            st.json(trial["request"], expanded=1)
            st.json(trial["reply"] or {}, expanded=2)


def show_run(run_id: int, prefix: str) -> None:
    """Rates, charts and every trial of one stored run. ``prefix`` keeps widget keys apart
    if the same run is shown in two places."""
    store = open_store()
    try:
        run, factors, trials, table = run_tables(store, run_id)
    except KeyError:
        st.info(f"Run {run_id} is not in {store.path}.")
        return
    st.markdown(f"**Run {run_id}** · {run['name'] or 'unnamed'} · {run['backend']} · "
                f"{run['status']} · {len(trials)} of {run['n_trials']} trials")
    if trials.empty:
        st.info("No trial of this run finished, so there is nothing to show yet.")
        return
    factor, second = factors[0], (factors[1] if len(factors) > 1 else None)
    st.plotly_chart(accuracy_chart(table, factor, second), key=f"{prefix}_accuracy")
    differences, paired_text = paired_reading(trials, factor, second)
    if differences:
        st.plotly_chart(paired_chart(differences), key=f"{prefix}_paired")
    st.markdown(reading(trials, factor, second, paired_text))
    if differences:
        what_changed(store, trials, factor, differences, prefix)
    st.dataframe(rates_view(table), hide_index=True, key=f"{prefix}_rates")
    show_parameters(store, run, run_id, factor, prefix)
    left, right = st.columns(2)
    left.plotly_chart(failure_chart(trials, factor), key=f"{prefix}_failures")
    right.plotly_chart(confusion_chart(trials), key=f"{prefix}_confusion")
    st.markdown("**Every trial** — select a row to see what was sent and received.")
    shown = trial_table(trials, factors)
    event = st.dataframe(shown, hide_index=True, key=f"{prefix}_trials_{run_id}",
                         on_select="rerun", selection_mode="single-row", column_config=TRIAL_COLUMN_CONFIG)
    # The first trial until one is picked; a selection left over from a longer table is ignored.
    rows = [row for row in event.selection.rows if row < len(shown)] or [0]
    trial = store.trial(int(shown.iloc[rows[0]]["id"]))
    st.caption(f"Trial {trial['id']}: case {trial['case_id']} · "
               f"{'right' if trial['arguments_ok'] else trial['reason']}"
               + (f" — {trial['detail']}" if trial["detail"] else "")
               + (" · read back from an earlier run" if trial["cached"] else ""))
    left, right = st.columns(2)
    with left:
        st.markdown("Request body sent")
        st.json(trial["request"], expanded=2)
    with right:
        st.markdown("Reply received")
        st.json(trial["reply"] or {}, expanded=3)
        st.markdown("Model text")
        st.code(trial["model_text"] or "(no text)", language=None)
