"""Driving the app's Experiment tab under Streamlit's AppTest, for the tests that run it."""

from __future__ import annotations

import time

from streamlit.testing.v1 import AppTest

TIMEOUT = 120  # seconds a scripted experiment may take on a busy machine


def open_tab(at: AppTest, label: str) -> AppTest:
    """Click a tab: only the open tab's content runs (the Experiment tab's always does)."""
    at.session_state["tab"] = label
    return at.run()


def run_until_done(at: AppTest, seconds: float = TIMEOUT) -> AppTest:
    """Press Run, then rerun the page (as its progress fragment would) until the run ends."""
    at.button(key="run").click().run()
    assert not at.exception
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if at.session_state["job_id"] is None and at.session_state["ended"]:
            return at
        time.sleep(0.2)
        at.run()
        assert not at.exception
    raise AssertionError("the experiment did not end in time")
