"""The Experiment tab with BFCL's multi-turn conversations chosen as the suite.

Pick a category and how many conversations, the settings every request is sent with; run
them in the background; then read the rates (whole conversation by BFCL's verdict, each turn
on its own, the turns where the right move was no call) and open any conversation turn by
turn: what the user said, what the model called and got back, what the answer key calls, and
how the world the model left differs from the one it should have left.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from toolkit.app.backends import BackendChoice, open_backend
from toolkit.app.conversations import (RECORDED_RUNS, comparable_run_files, get_conversation_job, run_file_for,
                                       settings_in_words, start_conversations)
from toolkit.app.jobs import store_path
from toolkit.bench.multi_turn_apis import DESCRIPTIONS, api_classes, cached_wheel
from toolkit.bench.multi_turn_data import MULTI_TURN_CATEGORIES, MultiTurnSuite, import_multi_turn
from toolkit.bench.multi_turn_run import CaseRun, compare_runs, parse_runs, pass_hat_rows, rate_rows, read_runs
from toolkit.bench.suite_checks import SuiteError
from toolkit.lab_error import LabError

TOOL_CHOICES = ["auto", "required", "none"]


@st.cache_resource(show_spinner="Reading BFCL's conversations from the wheel…", max_entries=4)
def conversations(category: str, wheel: str) -> tuple[MultiTurnSuite, dict[str, type]]:
    """A category's cases and its API classes, read once per process."""
    suite = import_multi_turn(Path(wheel), category)
    return suite, api_classes(suite.apis, suite.docs)


def conversations_panel(choice: BackendChoice, owner: str | None = None) -> None:
    wheel = cached_wheel()
    if wheel is None:
        st.error("BFCL's conversations come in the bfcl-eval wheel, which is not in the cache. Fetch "
                 "it once (it needs the network): `python -m pip download bfcl-eval==2026.3.23 "
                 "--no-deps -d ~/.cache/tool-calling-lab/bfcl`")
        return
    left, middle, right = st.columns(3)
    category = left.selectbox("Category", MULTI_TURN_CATEGORIES, key="mt_category",
                              format_func=lambda name: name.removeprefix("multi_turn_"),
                              help="base: every turn can be done; miss_func: a function arrives only "
                                   "in a later turn; miss_param: the user leaves a value out; "
                                   "long_context: the same with long file and message contents.")
    try:
        suite, classes = conversations(category, str(wheel))
    except (SuiteError, LabError) as error:
        st.error(f"BFCL's {category} cannot be used: {error}")
        return
    one_api = middle.toggle("Only conversations with one API", value=choice.kind == "embedded",
                            key="mt_one_api",
                            help="Two APIs' function documents are more than the embedded model's "
                                 "4,096-token context holds; such conversations are skipped.")
    pool = [case for case in suite.cases if len(case.classes) == 1 or not one_api]
    count = int(right.number_input("Conversations", 1, len(pool), min(5, len(pool)), key="mt_cases",
                                   help="The first ones of the category. A conversation takes the "
                                        "embedded model about 10-40 s."))
    cases = pool[:count]

    st.subheader("2 · Sent with every request")
    columns = st.columns(6)
    temperature = columns[0].slider("Temperature", 0.0, 1.5, 0.0, 0.1, key="mt_temperature")
    tool_choice = columns[1].selectbox("tool_choice", TOOL_CHOICES, key="mt_tool_choice")
    repeats = int(columns[2].number_input("Repeats", 1, 8, 1, key="mt_repeats",
                                          help="Each repeat is a new draw (its own seed); with two or "
                                               "more, pass^k says how often all k tries pass."))
    seed = int(columns[3].number_input("Seed", 0, 10**6, 0, key="mt_seed"))
    max_tokens = int(columns[4].number_input("max_tokens", 16, 1024, 128, key="mt_max_tokens"))
    descriptions = columns[5].selectbox(
        "Descriptions", DESCRIPTIONS, key="mt_descriptions",
        format_func={"full": "as BFCL wrote them", "short": "without the API's preamble",
                     "none": "none (names only)"}.get,
        help="Every function of an API repeats one long sentence about the API before its own; "
             "leaving it out shortens the prompt by about a quarter, so more conversations fit a "
             "small model's context.")
    if repeats > 1 and temperature == 0:
        st.caption("At temperature 0 every repeat gives the same replies: raise it to see pass^k move.")
    settings = {"temperature": temperature, "seed": seed, "max_tokens": max_tokens,
                "tool_choice": None if tool_choice == "auto" else tool_choice}
    if descriptions != "full":  # the default is left out, so the run file of a plan keeps its name
        settings["descriptions"] = descriptions
    folder = store_path().parent / "multi_turn" / (owner or "")
    path = run_file_for(folder, category, choice.model or "model", {**settings, "repeats": repeats})
    st.caption(f"{len(cases)} conversation(s) × {repeats} repeat(s), {sum(len(c.turns) for c in cases) * repeats} "
               f"user turns; kept in `{path}` one conversation a line, so a stopped run resumes.")

    job = get_conversation_job(st.session_state.get("mt_job"))
    running = bool(job and job.running)
    if st.button("Run conversations", type="primary", key="mt_run", disabled=running) and not running:
        try:
            with st.spinner("Reaching the model…"):
                backend = open_backend(choice)
        except LabError as error:
            st.error(f"Nothing was run: {error}")
        else:
            st.session_state.mt_job = start_conversations(backend, cases, classes, path, settings, repeats).id
            st.rerun()
    if get_conversation_job(st.session_state.get("mt_job")) is not None:
        st.fragment(_progress, run_every=1.0)()
    uploaded = st.file_uploader("Or open a run file (JSON lines) to read it here", type=["jsonl"], key="mt_upload")
    try:
        runs = parse_runs(uploaded.getvalue().decode("utf-8")) if uploaded else read_runs(path)
    except (LabError, UnicodeDecodeError) as error:
        st.error(f"That file cannot be read: {error}")
        return
    if runs:
        st.divider()
        show_runs(runs, path if not uploaded else None)
        compare_panel(runs, folder, path if not uploaded else None)


def _progress() -> None:
    job = get_conversation_job(st.session_state.get("mt_job"))
    if job is None:
        return
    if job.running:
        st.progress(min(job.done / max(job.total, 1), 1.0), text=job.progress_text())
        if job.stop_event.is_set():
            st.caption("Stopping after the conversation in flight…")
        elif st.button("Stop", key="mt_stop"):
            job.stop()
        return
    kind, text = job.ended_text()
    getattr(st, kind)(text)
    if not st.session_state.get("mt_shown") == job.id:
        st.session_state.mt_shown = job.id
        st.rerun()  # the whole page, so the finished run's results appear


def show_runs(runs: list[CaseRun], path: Path | None) -> None:
    """The rates, then one conversation turn by turn."""
    st.subheader("3 · How the model did")
    rows = rate_rows(runs)
    skipped = [run for run in runs if run.skipped]
    if rows:
        table = pd.DataFrame(rows)
        table["95% interval"] = [f"{low:.0%} – {high:.0%}" for low, high in zip(table["low"], table["high"])]
        table["rate"] = table["rate"].map("{:.0%}".format)
        st.dataframe(table[["measure", "right", "of", "rate", "95% interval"]], hide_index=True)
    if hats := pass_hat_rows(runs):
        st.caption("pass^k (all k tries of a conversation pass): " +
                   ", ".join(f"k={row['k']}: {row['pass^k']:.0%}" for row in hats))
    if skipped:
        st.caption(f"{len(skipped)} conversation(s) skipped: the prompt does not fit the model's context.")
    if path is not None and path.exists():
        st.download_button("Download the run file", path.read_bytes(), path.name, "application/jsonl",
                           key="mt_download")
    labels = {index: f"{run.case_id} (repeat {run.settings.get('repeat', 0) + 1}): " + (
        "skipped" if run.skipped else "pass" if run.verdict["valid"] else
        f"fail at turn {(run.verdict['failed_turn'] or 0) + 1}") for index, run in enumerate(runs)}
    chosen = st.selectbox("Conversation", list(labels), format_func=labels.get, key="mt_case")
    show_conversation(runs[chosen])


def show_conversation(run: CaseRun) -> None:
    """Turn by turn: the user's words, the model's calls and results, the answer key, the verdict."""
    if run.skipped:
        st.warning(f"Skipped: {run.skipped}")
    verdict_turns = (run.verdict or {}).get("turns", [])
    if run.verdict and not run.verdict["valid"]:
        st.error(f"BFCL's verdict: fail. {run.verdict['reason']}")
    elif run.verdict:
        st.success("BFCL's verdict: pass: every turn left the world as the answer key does.")
    for turn in run.turns:
        judged = verdict_turns[turn.index] if turn.index < len(verdict_turns) else None
        mark = "" if judged is None else (" ✅" if judged["ok"] else " ❌")
        with st.container(border=True):
            what = " (the right move: no call)" if judged is not None and not judged["expected"] else ""
            st.markdown(f"**Turn {turn.index + 1}**{mark}{what}")
            for message in turn.user:
                st.markdown(f"> **User:** {message.get('content', '')}")
            model, key = st.columns(2)
            model.caption("The model")
            for number, step in enumerate(turn.steps, start=1):
                for call in step:
                    shown = f"{call['name']}({', '.join(f'{k}={v!r}' for k, v in (call['arguments'] or {}).items())})"
                    model.code(f"{shown}\n→ {call['result'][:400]}", language=None)
                    if call["error"]:
                        model.caption(f"step {number}: not run ({call['error']})")
            if turn.answer:
                model.markdown(f"**Answer:** {turn.answer}")
            if turn.stop_reason not in ("answered",):
                model.caption(f"turn ended: {turn.stop_reason}")
            key.caption("The answer key")
            expected = judged["expected"] if judged else ()
            key.code("\n".join(expected) or "(no call: a function or a value is missing)", language=None)
            if judged and not judged["ok"] and judged.get("state"):
                st.error(f"After turn {turn.index + 1} the world differs from the answer key's:\n"
                         + "\n".join(f"- {line}" for line in judged["state"]))
            elif judged and not judged["ok"]:
                st.error(judged["reason"])


def compare_panel(runs: list[CaseRun], folder: Path, path: Path | None) -> None:
    """This run against another of the same category, conversation by conversation and turn by
    turn on the conversations both ran: the paired test, as for two experiment settings."""
    others = comparable_run_files([folder, RECORDED_RUNS], runs[0].category, but=path)
    if not others:
        st.caption("Run the same conversations with another setting (a temperature, a tool_choice, "
                   "the descriptions) to compare the two runs pair by pair here.")
        return
    st.subheader("4 · Against another run of these conversations")
    other = st.selectbox("Compare with", others, key="mt_compare", format_func=lambda p: (
        f"recorded: {p.stem}" if p.parent == RECORDED_RUNS else p.stem),
        help="Your runs of this category, and the runs the lab recorded on the embedded models and "
             "on llama-cpp-python's own server.")
    try:
        second = read_runs(other)
    except LabError as error:
        st.error(f"That run file cannot be read: {error}")
        return
    first_label, second_label = settings_in_words(runs, second)
    paired = compare_runs(runs, second, first_label, second_label, "run")
    if not paired[0].pairs:
        st.caption("The two runs share no judged conversation, so they cannot be compared pair by pair.")
        return
    from toolkit.bench.charts import paired_chart  # plotly: loaded when a comparison is drawn

    st.plotly_chart(paired_chart(paired), key="mt_paired")
    st.markdown("\n".join(f"- {difference.sentence()}" for difference in paired))
