"""The Experiment tab: pick cases, a factor to compare and everything held fixed; run the
trials in the background; follow their progress; then show the finished run.

The run itself happens in a ``toolkit.app.jobs.Job``, not in this script: Streamlit reruns the
script on every click, and a click must not wait for a model. The session keeps only the
job's id, the finished run's id and how it ended.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from app_pages.experiment_form import custom_texts, fixed_settings, value_picker
from toolkit.app.backends import BackendChoice, open_backend
from toolkit.app.factors import ALSO_TRY, ALSO_TRY_NOTE, COMPARABLE, LOOK_FOR, QUICK
from toolkit.app.jobs import ended_text, get_job, open_store, start_job
from toolkit.bench.bfcl import is_bfcl_file
from toolkit.bench.multi_turn_data import is_multi_turn_file
from toolkit.bench.effects import EFFECTS_FILE, effect_note, load_effects
from toolkit.bench.effects import plan_power as effects_plan_power
from toolkit.bench.suite import load_suite
from toolkit.bench.suite_checks import SuiteError
from toolkit.bench.suite_model import CATEGORIES, LANGUAGES, Suite
from toolkit.bench.trials import Settings, factor_label, pick_cases, plan
from toolkit.engine import BASE_MODEL
from toolkit.lab_error import LabError


@st.cache_resource(show_spinner=False)
def shipped_suite() -> Suite:
    """The scenario suite, read from disk once per process rather than on every rerun, every
    check made but one: that its tools' parameters are valid JSON Schemas. That check imports
    ``jsonschema`` (over a second where Jupyter is installed), so the form is drawn first and
    ``shipped_suite_problems`` makes it once the Run button is on the page."""
    return load_suite(check_schemas=False)


@st.cache_resource(show_spinner=False)
def _fully_checked_shipped_suite() -> Suite:
    return load_suite()


def shipped_suite_problems() -> list[str]:
    """What the full check of the shipped suite finds: nothing, unless its files were edited."""
    try:
        _fully_checked_shipped_suite()
    except SuiteError as error:
        return [f"The lab's suite cannot be used: {error}"]
    return []


@st.cache_resource(show_spinner=False, max_entries=4)
def bfcl_suite(questions: str, answers: str | None, stamp: tuple) -> Suite:
    """A BFCL question file as a suite, imported once per file version (``stamp``)."""
    return load_suite(questions, answers)


@st.cache_data(show_spinner=False, max_entries=2)
def _effects_rows(stamp: float | None) -> list[dict]:
    return load_effects()


def effects_version() -> float | None:
    """When the effects table was last written (None: never): what cached readings of it key on."""
    return EFFECTS_FILE.stat().st_mtime if EFFECTS_FILE.exists() else None


def effects_rows() -> list[dict]:
    """The effects table, read from its file once per version of it."""
    return _effects_rows(effects_version())


SHIPPED, BFCL, CONVERSATIONS = "The lab's suite", "A BFCL question file", "BFCL multi-turn conversations"


def suite_chooser(problems: list[str]) -> Suite | None:
    """The shipped suite, or a BFCL file whose path the learner types; None for BFCL's
    multi-turn conversations, which the tab hands to their own panel. A BFCL file that cannot
    be used is shown as an error and added to ``problems`` (so nothing runs); the page then
    goes on with the shipped suite."""
    source = st.radio("Suite", [SHIPPED, BFCL, CONVERSATIONS], horizontal=True, key="suite_source",
                      help="The multi-turn conversations are BFCL's: the user speaks several times and "
                           "the model acts on simulated APIs whose state carries over.")
    if source == CONVERSATIONS:
        return None
    if source == SHIPPED:
        return shipped_suite()
    left, right = st.columns(2)
    questions = left.text_input(
        "BFCL question file", key="bfcl_path", placeholder="data/BFCL_v4_simple_python.json",
        help="A BFCL_v4_<category>.json file from the bfcl-eval wheel (unpacked, or named inside "
             "it: bfcl_eval-2026.3.23-py3-none-any.whl/BFCL_v4_simple_python.json).").strip()
    answers = right.text_input(
        "Answers file (optional)", key="bfcl_answers",
        help="Default: possible_answer/<the same name> beside the question file, where BFCL "
             "keeps them.").strip() or None
    try:
        if not questions:
            raise SuiteError(["type the path of a BFCL question file"])
        path = Path(questions).expanduser()
        if is_multi_turn_file(path):
            raise SuiteError([f"{questions} is a multi-turn file: choose “{CONVERSATIONS}” above"])
        if not is_bfcl_file(path):
            raise SuiteError([f"{questions}: not a BFCL question file (BFCL_v4_<category>.json, "
                              f"one JSON object per line)" if path.exists() else
                              f"{questions}: no such file"])
        stamp = tuple(p.stat().st_mtime if p.exists() else None
                      for p in (path, path.parent, Path(answers or path)))
        suite = bfcl_suite(questions, answers, stamp)
    except SuiteError as error:
        problems.append(f"The BFCL file cannot be used: {error}")
        st.error(problems[-1])
        return shipped_suite()
    st.caption(suite.report().splitlines()[0] + (f"; {len(suite.skipped)} skipped (the lab "
                                                  f"cannot score them)" if suite.skipped else ""))
    return suite


def experiment_tab(choice: BackendChoice, concurrency: int, owner: str | None = None) -> None:
    """``owner``: the browser of a room that the runs started here belong to (None: alone)."""
    problems: list[str] = []  # every widget's complaint; a run starts only if it stays empty

    st.subheader("1 · Which cases")
    full = suite_chooser(problems)
    if full is None:  # BFCL's conversations: a panel of their own (charts, scipy: not needed)
        from app_pages.conversations import conversations_panel

        conversations_panel(choice, owner)
        return
    left, middle, right = st.columns(3)
    categories = left.multiselect("Categories", CATEGORIES, QUICK["categories"],
                                  key="categories")
    languages = middle.multiselect("Languages", LANGUAGES, QUICK["languages"],
                                   key="languages")
    subset = full.filter(categories or None, languages or None)
    wanted = int(right.number_input("Number of cases", 1, len(full),
                                    min(QUICK["cases"], len(full)),
                                    key="n_cases" if full is shipped_suite() else
                                    f"n_cases_{full.source}",
                                    help="Spread over the chosen categories."))
    case_ids = pick_cases(subset, min(wanted, len(subset))) if len(subset) else []
    if not case_ids:
        problems.append("No case matches these categories and languages.")
        st.warning(problems[-1])
    chosen = Suite(full.tools, tuple(full.case(c) for c in case_ids), full.source)

    st.subheader("2 · What to compare")
    left, right = st.columns(2)
    factor = left.selectbox("Factor", COMPARABLE, format_func=factor_label, key="factor",
                            index=COMPARABLE.index(QUICK["factor"]))
    values = value_picker(left, factor, "values", problems)
    if factor == QUICK["factor"] and sorted(values) == sorted(QUICK["values"]):
        left.caption(LOOK_FOR)
        for other, (label, _) in ALSO_TRY.items():  # the other comparisons the lab is known for
            left.button(label, key=f"also_try_{other}", on_click=_also_try, args=(other,),
                        help=effect_note(choice.model, other, effects_rows()) or ALSO_TRY_NOTE.get(other))
    if choice.kind == "embedded":  # measured on the embedded models only: what to expect here
        left.caption(effect_note(choice.model, factor, effects_rows()) or
                     f"Not measured on {choice.model} yet (benchmarks/effects_table.py measures it).")
    second, second_values = None, None
    if right.toggle("Add a second factor (a grid of both)", key="grid"):
        second = right.selectbox("Second factor", [f for f in COMPARABLE if f != factor],
                                 format_func=factor_label, key="second_factor")
        second_values = value_picker(right, second, "second_values", problems)

    st.subheader("3 · Everything else, held fixed")
    fixed, repeats, seed, max_tokens = fixed_settings({factor, second} - {None})

    descriptions, runnable = custom_texts(chosen, problems)

    def concrete(options: list, name: str | None) -> list:
        # The widget says "custom"; the experiment needs the texts the learner wrote.
        if name != "description":
            return options
        return [descriptions if value == "custom" else value for value in options]

    n_variants = max(len(values), 1) * max(len(second_values or [None]), 1)
    where = "the embedded model" if choice.kind == "embedded" else "the endpoint"
    st.caption(f"{len(case_ids)} cases × {n_variants} setting(s) × {repeats} repeat(s) = "
               f"**{len(case_ids) * n_variants * repeats} trials** on {where}.")
    power_slot = st.empty()  # filled after the Run button is drawn: the button need not wait for it
    if fixed.get("description") == "custom":
        fixed["description"] = descriptions
    base = {**fixed, "seed": seed, "max_tokens": max_tokens}

    job = get_job(st.session_state.job_id)
    running = bool(job and job.running)
    clicked = st.button("Run experiment", type="primary", key="run", disabled=running) and not running
    if full is shipped_suite() and (broken := shipped_suite_problems()):  # checked after the button is drawn
        problems += broken
        st.error(broken[0])
    if clicked:
        if problems:
            st.error("Nothing was run. Fix this first: " + " ".join(problems))
        elif start_run(choice, concurrency, runnable, case_ids, base, factor,
                       concrete(values, factor), second,
                       concrete(second_values, second) if second else None, repeats, owner):
            st.rerun()  # draw the page again with the run going on
    if power := plan_power(choice.model if choice.kind == "embedded" else None, factor, len(case_ids),
                           tuple(categories), effects_version()):
        power_slot.caption(power)
    job_panel()
    if st.session_state.ended:
        kind, text = st.session_state.ended
        getattr(st, kind)(text)
    if st.session_state.run_id is not None:
        # Charts, scipy and statsmodels: loaded the first time a run is shown, not with the page.
        from app_pages.run_view import show_run

        st.divider()
        show_run(st.session_state.run_id, "experiment")


@st.cache_data(show_spinner=False, max_entries=256)
def plan_power(model: str | None, factor: str, cases: int, categories: tuple[str, ...],
               version: float | None = None) -> str | None:
    """How large a difference this many paired cases can show, from the effects table: measured on
    the embedded ``model`` asked where it was, else on the embedded default model (a rough guide
    for an endpoint's). The same plan on the same table (``version``) gets the same sentence, so
    it is worked out once."""
    rows = effects_rows()
    return (effects_plan_power(model or BASE_MODEL, factor, cases, rows, list(categories))
            or effects_plan_power(BASE_MODEL, factor, cases, rows, list(categories)))


def _also_try(factor: str) -> None:
    """Set the factor and its values before the widgets are drawn again (a callback runs first)."""
    _, values = ALSO_TRY[factor]
    st.session_state["factor"] = factor
    st.session_state[f"values_{factor}"] = values


def start_run(choice, concurrency, suite, case_ids, base, factor, values, second,
              second_values, repeats, owner=None) -> bool:
    """Plan the trials and start them in the background; False (and an error shown) if not."""
    try:
        trials = plan(suite, Settings(**base), factor, values, second, second_values,
                      cases=case_ids, repeats=repeats)
    except ValueError as problem:
        st.error(f"Nothing was run: {problem}")
        return False
    try:
        with st.spinner("Reaching the model…"):
            backend = open_backend(choice)
    except LabError as error:
        st.error(f"Nothing was run: {error}")
        return False
    name = factor_label(factor) + (f" × {factor_label(second)}" if second else "")
    job = start_job(trials, backend, open_store(), name=name, suite=suite,
                    concurrency=concurrency, owner=owner)
    st.session_state.job_id, st.session_state.run_id, st.session_state.ended = job.id, None, None
    return True


def job_panel() -> None:
    """Progress of the running experiment, refreshed every second without rerunning the page."""
    if get_job(st.session_state.job_id) is not None:
        st.fragment(job_progress, run_every=1.0)()


def job_progress() -> None:
    job = get_job(st.session_state.job_id)
    if job is None:
        return
    if job.running:
        st.progress(min(job.done / max(job.total, 1), 1.0), text=job.progress_text())
        if waiting := job.waiting_text():  # a room shares the embedded model: say who comes first
            st.caption(waiting)
        if job.stop_event.is_set():
            st.caption("Stopping after the trial in flight…")
        elif st.button("Stop", key="stop"):
            job.stop()
            st.caption("Stopping after the trial in flight…")
        return
    # The job has ended: remember the run to show, and rerun the whole page so the run's
    # charts appear (a fragment redraws only itself).
    st.session_state.job_id = None
    st.session_state.run_id = job.run_id
    st.session_state.ended = ended_text(job)
    st.rerun()
