"""Tool-Calling Lab: the experiment bench.

    streamlit run app.py

Toggle tool descriptions, enum constraints, temperature, tool_choice, distractor tools and the
protocol; run part of the scenario suite; see how often the model picks the right tool and fills
the arguments correctly, with 95% intervals, reasons for each failure and every raw request and
reply.

This file only puts the page together: the sidebar (which model to ask) and three tabs. Each
tab is drawn by a module in ``app_pages/``; the work is done by ``toolkit`` (experiment, store,
charts, loop), and what the page must work out from widgets lives in ``toolkit.app``.

With no settings it runs the embedded SmolLM2-135M-Instruct model (no key, no network). Runs
are kept in ``runs/lab.sqlite`` (``LAB_RUNS_DB`` to change), shared with
``python -m toolkit.bench.experiment``.
"""

from __future__ import annotations

import os
from dataclasses import replace

import streamlit as st

from app_pages.experiment import experiment_tab
from toolkit.app.backends import (API_HELP, API_LABELS, EMBEDDED_DETAIL, EMBEDDED_NOTE, BackendChoice, check_connection,
                                  default_api, embedded_model_names)
from toolkit.app.scripted_model import SCRIPTED_NOTE, scripted_mode
from toolkit.app.shared_mode import BROWSER_PARAM, describe, is_browser_id, new_browser_id, shared_choice, shared_mode
from toolkit.lab_error import LabError

st.set_page_config(page_title="Tool-Calling Lab", page_icon="🧪", layout="wide")


def session_defaults() -> None:
    """What the page remembers between reruns; all plain data (ids, texts, messages)."""
    for key, value in {"job_id": None, "run_id": None, "ended": None, "connection": None,
                       "chat_messages": [], "chat_turns": [], "chat_error": None}.items():
        st.session_state.setdefault(key, value)


def room_browser() -> str | None:
    """In shared mode, this browser's id in the room, which its runs are kept under; None when
    the lab is used alone (every run is the user's). The id lives in the page's address, so a
    reload or a bookmark keeps it, and in the session, so nothing on the page can lose it."""
    if not shared_mode():
        return None
    if "room_browser" not in st.session_state:
        given = st.query_params.get(BROWSER_PARAM)
        st.session_state.room_browser = given if is_browser_id(given) else new_browser_id()
        st.session_state.room_browser_replaced = given is not None and not is_browser_id(given)
    if st.query_params.get(BROWSER_PARAM) != st.session_state.room_browser:
        st.query_params[BROWSER_PARAM] = st.session_state.room_browser
    return st.session_state.room_browser


def sidebar() -> tuple[BackendChoice, int]:
    """Which model to ask, and how many requests to send it at once."""
    bar = st.sidebar
    bar.title("Tool-Calling Lab")
    if scripted_mode():
        bar.warning(SCRIPTED_NOTE)
    if shared_mode():  # served to a room: the instructor's endpoint, nothing to type
        choice = shared_choice()
        bar.info(describe(choice))
        if st.session_state.pop("room_browser_replaced", False):
            bar.warning("The browser id in this page's address is not one the lab made, so the page "
                        "has a new one, with no runs of its own yet.")
        bar.caption("Your runs are kept under this page's address: bookmark it to find them again. "
                    "History shows them and the runs the instructor recorded, no one else's.")
        return choice, 1 if choice.kind == "embedded" else 4
    kind = bar.radio("Model", ["embedded", "remote"], key="backend_kind",
                     index=1 if os.environ.get("LAB_BASE_URL") else 0,
                     format_func={"embedded": "Embedded SmolLM2-135M (offline, no key)",
                                  "remote": "OpenAI-compatible endpoint"}.get)
    concurrency = 1  # the embedded model answers one request at a time anyway
    if kind == "embedded":
        names = embedded_model_names()
        model = bar.selectbox("Embedded model", names, key="embedded_model",
                              help="The same SmolLM2 weights as shipped, or with the lab's "
                                   "tool-calling adapter on top (see the note below).")
        bar.info(EMBEDDED_NOTE)
        choice = BackendChoice("embedded", model=model)
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
        choice = BackendChoice("remote", base_url, model, api_key)
    api = bar.radio("API", list(API_LABELS), key="api", index=list(API_LABELS).index(default_api()),
                    format_func=API_LABELS.get, help=API_HELP)
    choice = replace(choice, api=api)
    # Which model the last check was for, so its answer is hidden once another is chosen.
    target = (choice.kind, choice.base_url, choice.model, choice.api)
    if bar.button("Test connection", key="test_connection"):
        with bar, st.spinner("Asking the model for one word…"):
            try:
                st.session_state.connection = (target, "success", check_connection(choice))
            except LabError as error:
                st.session_state.connection = (target, "error", str(error))
    if st.session_state.connection and st.session_state.connection[0] == target:
        _, kind_of_message, text = st.session_state.connection
        getattr(bar, kind_of_message)(text)
    if kind == "embedded":
        bar.expander("About the embedded models").markdown(EMBEDDED_DETAIL)
    return choice, concurrency


# ---------------------------------------------------------------- the page

session_defaults()
browser = room_browser()
backend_choice, requests_at_once = sidebar()
# Only the open tab's content runs (``on_change="rerun"``): the page is ready as soon as the
# Experiment tab is, and History and Playground (and what they import) cost nothing until
# opened. The Experiment tab is drawn whichever tab is open, so its widgets keep what the
# learner set while they look at another tab, and a running experiment keeps reporting.
experiment, history, playground = st.tabs(["Experiment", "History", "Playground"], key="tab", on_change="rerun")
with experiment:
    experiment_tab(backend_choice, requests_at_once, browser)
if history.open:
    from app_pages.history import history_tab

    with history:
        history_tab(browser)
if playground.open:
    from app_pages.playground import playground_tab

    with playground:
        playground_tab(backend_choice)
