"""Tool-Calling Lab: the experiment bench.

    streamlit run app.py

Toggle tool descriptions, enum constraints, temperature, tool_choice, distractor tools and the
protocol; run part of the scenario suite; see how often the model picks the right tool and fills
the arguments correctly, with 95% intervals, reasons for each failure and every raw request and
reply. The page is a thin view: the work is done by ``toolkit`` (experiment, store, charts, loop),
and what the page itself must work out from widgets lives in ``toolkit.app``.

With no settings it runs the embedded SmolLM2-135M-Instruct model (no key, no network). Runs
are kept in ``runs/lab.sqlite`` (``LAB_RUNS_DB`` to change), shared with
``python -m toolkit.experiment``.
"""

from __future__ import annotations

import json
import os

import streamlit as st

from toolkit.app import backends, factors, inputs, jobs, scripted_model, tables
from toolkit.charts import accuracy_chart, confusion_chart, factor_label, failure_chart
from toolkit.client import LabError
from toolkit.demo_tools import DEMO_TOOLS, demo_toolset
from toolkit.experiment import Settings, plan
from toolkit.loop import format_trace, run_turn
from toolkit.suite import CATEGORIES, LANGUAGES, Suite, load_suite
from toolkit.trials import pick_cases

st.set_page_config(page_title="Tool-Calling Lab", page_icon="🧪", layout="wide")


@st.cache_resource(show_spinner=False)
def shipped_suite():
    return load_suite()


def session_defaults() -> None:
    for key, value in {"job_id": None, "run_id": None, "ended": None, "connection": None,
                       "chat_messages": [], "chat_turns": [], "chat_error": None}.items():
        st.session_state.setdefault(key, value)


# ---------------------------------------------------------------- sidebar: which model

def sidebar() -> tuple[backends.BackendChoice, int]:
    bar = st.sidebar
    bar.title("Tool-Calling Lab")
    if scripted_model.scripted_mode():
        bar.warning(scripted_model.SCRIPTED_NOTE)
    kind = bar.radio("Model", ["embedded", "remote"], key="backend_kind",
                     index=1 if os.environ.get("LAB_BASE_URL") else 0,
                     format_func={"embedded": "Embedded SmolLM2-135M (offline, no key)",
                                  "remote": "OpenAI-compatible endpoint"}.get)
    concurrency = 1
    if kind == "embedded":
        bar.info(backends.EMBEDDED_NOTE)
        choice = backends.BackendChoice("embedded")
    else:
        base_url = bar.text_input("Base URL", value=os.environ.get("LAB_BASE_URL", ""),
                                  placeholder="https://api.deepseek.com/v1", key="base_url")
        model = bar.text_input("Model", value=os.environ.get("LAB_MODEL", ""),
                               placeholder="deepseek-chat", key="model_name")
        api_key = bar.text_input(
            "API key", type="password", key="api_key",
            help="Kept in this browser session's memory only: never written to disk or to the "
                 "run database. Leave it empty to use LAB_API_KEY.")
        concurrency = bar.slider("Requests at once", 1, 8, 4, key="concurrency",
                                 help="Trials sent in parallel during an experiment.")
        choice = backends.BackendChoice("remote", base_url, model, api_key)
    target = (choice.kind, choice.base_url, choice.model)
    if bar.button("Test connection", key="test_connection"):
        with bar, st.spinner("Asking the model for one word…"):
            try:
                answer = backends.check_connection(choice)
                st.session_state.connection = (target, "success", answer)
            except LabError as error:
                st.session_state.connection = (target, "error", str(error))
    if st.session_state.connection and st.session_state.connection[0] == target:
        _, kind_of_message, text = st.session_state.connection
        getattr(bar, kind_of_message)(text)
    return choice, concurrency


# ---------------------------------------------------------------- tab: experiment

def value_picker(where, factor: str, slot: str, problems: list[str]) -> list:
    """The values to compare for one factor."""
    label = f"Values of {factor_label(factor)}"
    if factor in factors.NUMERIC:
        text = where.text_input(label, factors.DEFAULT_COMPARE[factor], key=f"{slot}_{factor}",
                                help="Numbers separated by commas.")
        try:
            return inputs.parse_numbers(text, factor_label(factor), **factors.NUMERIC[factor])
        except inputs.InputProblem as problem:
            where.error(str(problem))
            problems.append(str(problem))
            return []
    chosen = where.multiselect(label, factors.CHOICES[factor], factors.DEFAULT_COMPARE[factor],
                               format_func=factors.show_value, key=f"{slot}_{factor}")
    if not chosen:
        problems.append(f"Pick at least one value of {factor_label(factor)}.")
        where.error(problems[-1])
    return chosen


def fixed_settings(varied: set[str]) -> dict:
    """A widget for every setting that is not compared; returns their values."""
    fixed: dict = {}
    columns = st.columns(4)
    widgets = [name for name in factors.COMPARABLE if name not in varied]
    for index, name in enumerate(widgets):
        where = columns[index % 4]
        label = factor_label(name)
        label = label if "_" in label else label.capitalize()  # API names keep their spelling
        if name == "description":
            fixed[name] = where.radio(label, factors.CHOICES[name], key="fixed_description",
                                      horizontal=True)
        elif name in ("enums", "system_prompt"):
            fixed[name] = where.toggle(label, value=name == "enums", key=f"fixed_{name}")
        elif name == "temperature":
            fixed[name] = where.slider(label, 0.0, 2.0, 0.0, 0.1, key="fixed_temperature")
        elif name == "distractors":
            fixed[name] = int(where.number_input(label, 0, 16, 0, key="fixed_distractors"))
        else:
            options = factors.CHOICES[name]
            first = options.index(factors.QUICK["fixed"].get(name, options[0]))
            fixed[name] = where.selectbox(label, options, first, key=f"fixed_{name}",
                                          format_func=factors.show_value)
    return fixed


def custom_texts(suite, problems: list[str]) -> tuple[dict[str, str], object]:
    """Custom descriptions (one text area per tool) and an optional custom schema.
    Returns the descriptions and the suite to run (with the custom schema, if any)."""
    tools = inputs.tools_of(suite)
    descriptions: dict[str, str] = {}
    with st.expander("Custom descriptions (used where the description is “custom”)"):
        st.caption("Write your own description for each tool the chosen cases offer. Tools "
                   "added as distractors keep their clear description.")
        for name in tools:
            text = st.text_area(name, suite.tools[name].clear, key=f"description_{name}",
                                height=80)
            if text.strip():
                descriptions[name] = text.strip()
    runnable = suite
    with st.expander("Custom JSON schema for one tool (optional)"):
        st.caption("Change what the model is shown for a tool's parameters. The answer key "
                   "stays the same, so renaming or dropping a parameter shows up as failures.")
        tool = st.selectbox("Tool", ["(none)", *tools], key="schema_tool")
        if tool != "(none)":
            text = st.text_area("Parameters schema (JSON)",
                                json.dumps(suite.tools[tool].parameters, indent=2,
                                           ensure_ascii=False),
                                key=f"schema_{tool}", height=260)
            try:
                runnable = inputs.with_parameters(suite, tool,
                                                  inputs.parse_schema(text, tool))
            except inputs.InputProblem as problem:
                st.error(str(problem))
                problems.append(str(problem))
    return descriptions, runnable


def experiment_tab(choice: backends.BackendChoice, concurrency: int) -> None:
    full = shipped_suite()
    problems: list[str] = []

    st.subheader("1 · Which cases")
    left, middle, right = st.columns(3)
    categories = left.multiselect("Categories", CATEGORIES, factors.QUICK["categories"],
                                  key="categories")
    languages = middle.multiselect("Languages", LANGUAGES, factors.QUICK["languages"],
                                   key="languages")
    subset = full.filter(categories or None, languages or None)
    wanted = int(right.number_input("Number of cases", 1, len(full), factors.QUICK["cases"],
                                    key="n_cases",
                                    help="Spread over the chosen categories."))
    case_ids = pick_cases(subset, min(wanted, len(subset))) if len(subset) else []
    if not case_ids:
        problems.append("No case matches these categories and languages.")
        st.warning(problems[-1])
    chosen = Suite(full.tools, tuple(full.case(c) for c in case_ids), full.source)

    st.subheader("2 · What to compare")
    left, right = st.columns(2)
    factor = left.selectbox("Factor", factors.COMPARABLE, format_func=factor_label, key="factor",
                            index=factors.COMPARABLE.index(factors.QUICK["factor"]))
    values = value_picker(left, factor, "values", problems)
    second, second_values = None, None
    if right.toggle("Add a second factor (a grid of both)", key="grid"):
        second = right.selectbox("Second factor", [f for f in factors.COMPARABLE if f != factor],
                                 format_func=factor_label, key="second_factor")
        second_values = value_picker(right, second, "second_values", problems)

    st.subheader("3 · Everything else, held fixed")
    fixed = fixed_settings({factor, second} - {None})
    left, middle, right = st.columns(3)
    repeats = int(left.number_input("Repeats", 1, 20, 1, key="repeats",
                                    help="Each case runs this many times per setting."))
    seed = int(middle.number_input("Seed", 0, 10**6, 0, key="seed",
                                   help="Seeds the sampling, the distractor choice and the "
                                        "order of tools. Change it to draw fresh samples."))
    max_tokens = int(right.number_input("max_tokens", 16, 1024, 96, key="max_tokens"))

    descriptions, runnable = custom_texts(chosen, problems)

    def concrete(options: list, name: str | None) -> list:
        if name != "description":
            return options
        return [descriptions if value == "custom" else value for value in options]

    n_variants = max(len(values), 1) * max(len(second_values or [None]), 1)
    where = "the embedded model" if choice.kind == "embedded" else "the endpoint"
    st.caption(f"{len(case_ids)} cases × {n_variants} setting(s) × {repeats} repeat(s) = "
               f"**{len(case_ids) * n_variants * repeats} trials** on {where}.")
    if fixed.get("description") == "custom":
        fixed["description"] = descriptions
    base = {**fixed, "seed": seed, "max_tokens": max_tokens}

    job = jobs.get_job(st.session_state.job_id)
    running = bool(job and job.running)
    if st.button("Run experiment", type="primary", key="run", disabled=running) and not running:
        if problems:
            st.error("Nothing was run. Fix this first: " + " ".join(problems))
        elif start_run(choice, concurrency, runnable, case_ids, base, factor,
                       concrete(values, factor), second,
                       concrete(second_values, second) if second else None, repeats):
            st.rerun()  # draw the page again with the run going on
    job_panel()
    if st.session_state.ended:
        kind, text = st.session_state.ended
        getattr(st, kind)(text)
    if st.session_state.run_id is not None:
        st.divider()
        show_run(st.session_state.run_id, "experiment")


def start_run(choice, concurrency, suite, case_ids, base, factor, values, second,
              second_values, repeats) -> bool:
    """Plan the trials and start them in the background; False (and an error shown) if not."""
    try:
        trials = plan(suite, Settings(**base), factor, values, second, second_values,
                      cases=case_ids, repeats=repeats)
    except ValueError as problem:
        st.error(f"Nothing was run: {problem}")
        return False
    try:
        with st.spinner("Reaching the model…"):
            backend = backends.open_backend(choice)
    except LabError as error:
        st.error(f"Nothing was run: {error}")
        return False
    name = factor_label(factor) + (f" × {factor_label(second)}" if second else "")
    job = jobs.start_job(trials, backend, jobs.open_store(), name=name, suite=suite,
                            concurrency=concurrency)
    st.session_state.job_id, st.session_state.run_id, st.session_state.ended = job.id, None, None
    return True


def job_panel() -> None:
    """Progress of the running experiment, refreshed every second without rerunning the page."""
    if jobs.get_job(st.session_state.job_id) is not None:
        st.fragment(job_progress, run_every=1.0)()


def job_progress() -> None:
    job = jobs.get_job(st.session_state.job_id)
    if job is None:
        return
    if job.running:
        st.progress(min(job.done / max(job.total, 1), 1.0), text=job.progress_text())
        if job.stop_event.is_set():
            st.caption("Stopping after the trial in flight…")
        elif st.button("Stop", key="stop"):
            job.stop()
            st.caption("Stopping after the trial in flight…")
        return
    st.session_state.job_id = None
    st.session_state.run_id = job.run_id
    st.session_state.ended = jobs.ended_text(job)
    st.rerun()


def show_run(run_id: int, prefix: str) -> None:
    """Rates, charts and every trial of one stored run."""
    store = jobs.open_store()
    try:
        run, factors, trials, table = tables.run_tables(store, run_id)
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
    st.dataframe(tables.rates_view(table), hide_index=True, key=f"{prefix}_rates")
    left, right = st.columns(2)
    left.plotly_chart(failure_chart(trials, factor), key=f"{prefix}_failures")
    right.plotly_chart(confusion_chart(trials), key=f"{prefix}_confusion")
    st.markdown("**Every trial** — select a row to see what was sent and received.")
    shown = tables.trial_table(trials, factors)
    event = st.dataframe(shown, hide_index=True, key=f"{prefix}_trials_{run_id}",
                         on_select="rerun", selection_mode="single-row")
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


# ---------------------------------------------------------------- tab: history

def history_tab() -> None:
    store = jobs.open_store()
    runs = store.runs()
    if runs.empty:
        st.info(f"No runs yet in {store.path}. Run an experiment first.")
        return
    st.dataframe(runs[["id", "name", "created", "backend", "status", "n_done", "n_trials",
                       "n_selection_ok", "n_arguments_ok", "error"]],
                 hide_index=True, key="history_runs")
    labels = {int(row["id"]): tables.run_label(row) for row in runs.to_dict("records")}
    ids = list(labels)  # newest first
    if len(ids) == 1:
        st.caption("Run a second experiment to compare two runs side by side.")
        pairs = [(st.container(), ids[0], "a")]
    else:
        left, right = st.columns(2)
        pairs = [(left, left.selectbox("Run A", ids, 0, format_func=labels.get,
                                       key="history_a"), "a"),
                 (right, right.selectbox("Run B", ids, 1, format_func=labels.get,
                                         key="history_b"), "b")]
    for where, run_id, name in pairs:
        with where:
            _, factors, trials, table = tables.run_tables(store, run_id)
            if trials.empty:
                st.info(f"Run {run_id} has no finished trial.")
                continue
            st.plotly_chart(accuracy_chart(table, factors[0],
                                           factors[1] if len(factors) > 1 else None),
                            key=f"history_{name}_accuracy")
            st.dataframe(tables.rates_view(table), hide_index=True,
                         key=f"history_{name}_rates")
    if len(pairs) == 2 and pairs[0][1] != pairs[1][1]:
        st.markdown("**Trial by trial** (matched by case and repeat; *changed* marks a "
                    "different verdict)")
        st.dataframe(store.compare(pairs[0][1], pairs[1][1]), hide_index=True,
                     key="history_compare")
    st.divider()
    export = st.selectbox("Export a run as CSV", ids, format_func=labels.get,
                          key="history_export")
    st.download_button("Download CSV", lambda: tables.run_csv(store, export),
                       file_name=f"run-{export}.csv", mime="text/csv", key="history_download")


# ---------------------------------------------------------------- tab: playground

def playground_tab(choice: backends.BackendChoice) -> None:
    st.caption("Chat with a few demo tools (made-up data, instant, offline) and watch every "
               "round of the loop: the request, the reply, the calls and their results.")
    left, middle, right, last = st.columns(4)
    protocol = left.radio("Protocol", ["native", "string"], key="play_protocol", horizontal=True)
    tool_choice = middle.selectbox("tool_choice", ["auto", "required", "none"],
                                   key="play_tool_choice")
    names = right.multiselect("Tools offered", [t.name for t in DEMO_TOOLS],
                              [t.name for t in DEMO_TOOLS], key="play_tools")
    max_rounds = int(last.number_input("Max tool rounds", 0, 10, 3, key="play_rounds"))
    if st.button("Clear the conversation", key="play_clear"):
        st.session_state.chat_messages, st.session_state.chat_turns = [], []
        st.session_state.chat_error = None

    conversation = st.container()  # above the input box, though filled after it
    question = st.chat_input("Ask something, e.g. What's the weather in Beijing?",
                             key="play_input")
    if question:
        messages = [*st.session_state.chat_messages, {"role": "user", "content": question}]
        try:
            with conversation, st.spinner("The model is working…"):
                result = run_turn(backends.open_backend(choice), messages, demo_toolset(names),
                                  protocol=protocol, tool_choice=tool_choice,
                                  max_rounds=max_rounds,
                                  request_options={"temperature": 0, "max_tokens": 200})
        except LabError as error:
            st.session_state.chat_error = str(error)
        else:
            st.session_state.chat_error = None
            st.session_state.chat_messages = result.messages
            turn = result.to_dict()
            turn["question"], turn["trace"] = question, format_trace(result)
            st.session_state.chat_turns.append(turn)
    with conversation:
        for turn in st.session_state.chat_turns:
            show_turn(turn)
        if st.session_state.chat_error:
            st.error(st.session_state.chat_error)


def show_turn(turn: dict) -> None:
    with st.chat_message("user"):
        st.write(turn["question"])
    with st.chat_message("assistant"):
        answer = turn["final_text"]
        if turn["stop_reason"] == "immediate":
            value = json.dumps(turn["immediate_result"], ensure_ascii=False)
            answer = f"(returned directly) {value}"
        st.write(answer or f"({turn['stop_reason'].replace('_', ' ')})")
        for each in turn["rounds"]:
            calls = ", ".join(c["function"]["name"] for c in each["calls"]) or "no call"
            with st.expander(f"Round {each['index']}: {calls} · {each['seconds']:.1f} s"):
                st.markdown("Request")
                st.json(each["request"], expanded=1)
                st.markdown("Reply")
                st.json({"finish_reason": each["finish_reason"], "content": each["reply_text"],
                         "tool_calls": each["calls"] or None, "usage": each["usage"]})
                if each["executions"]:
                    st.markdown("Tool results")
                    st.json([{"call_id": e["call_id"], "name": e["name"],
                              "arguments": e["arguments"], "result_text": e["result_text"],
                              "error": e["error"]} for e in each["executions"]])
                for correction in each["corrections"]:
                    st.warning(correction)
                if each["note"]:
                    st.caption(each["note"])
        with st.expander("Trace"):
            st.code(turn["trace"], language=None)


# ---------------------------------------------------------------- the page

session_defaults()
backend_choice, requests_at_once = sidebar()
experiment, history, playground = st.tabs(["Experiment", "History", "Playground"])
with experiment:
    experiment_tab(backend_choice, requests_at_once)
with history:
    history_tab()
with playground:
    playground_tab(backend_choice)
