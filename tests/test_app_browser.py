"""The app in a real browser, on the embedded model: ``streamlit run app.py`` as a subprocess,
headless Chromium driven by Playwright: type 2 in "Number of cases", click "Run experiment",
wait for the run to end, then look for the charts on the page.

Needs Chromium (Debian: ``apt-get install -y chromium``) and the playwright package
(``pip install playwright``); skipped without either. A screenshot of the finished page is left
in ``/tmp/tool_calling_lab_app.png``.
"""

import importlib.util
import tempfile
from pathlib import Path

import pytest

from scripts.browser import (CHROMIUM, app_in_browser, page_text, run_outcome, start_experiment, wait_for,
                             wait_for_text, wait_until)

pytestmark = [
    pytest.mark.embedded,
    pytest.mark.skipif(not Path(CHROMIUM).exists(),
                       reason=f"needs Chromium at {CHROMIUM} (Debian: apt-get install -y chromium)"),
    pytest.mark.skipif(importlib.util.find_spec("playwright") is None,
                       reason="needs the playwright package (pip install playwright, or pip install -e .[test])"),
]

SCREENSHOT = Path(tempfile.gettempdir()) / "tool_calling_lab_app.png"
CASES = 2
RUN_TIMEOUT = 10 * 60  # a minute on an idle 2-core machine; far more when it is shared


def drive(page) -> dict:
    wait_for_text(page, "reads tool names more than descriptions", 240, "embedded-model note")
    # Two cases instead of the page's eight: the machine running the tests may be a shared one.
    cases = page.get_by_test_id("stNumberInput").filter(has_text="Number of cases").locator("input")
    wait_for(cases, 240, "number-of-cases field").fill(str(CASES))
    cases.press("Enter")  # Streamlit takes a number input's value on Enter
    wait_for_text(page, f"{CASES} cases × 2 setting(s)", 120, "the new number of cases")
    start_experiment(page)
    outcome = wait_until(page, lambda: run_outcome(page), RUN_TIMEOUT, "end of the run")
    page.wait_for_timeout(2000)  # let plotly finish drawing before the picture
    page.screenshot(path=SCREENSHOT)
    return {"outcome": outcome, "charts": page.locator(".js-plotly-plot").count(), "text": page_text(page)}


def test_a_quick_experiment_on_the_embedded_model_in_a_browser(tmp_path):
    env = {"LAB_RUNS_DB": str(tmp_path / "runs.sqlite"), "LAB_APP_BACKEND": "", "LAB_BASE_URL": ""}
    with app_in_browser(tmp_path, env, width=1400, height=2600) as (page, log_path):
        seen = drive(page)
    log = log_path.read_text("utf-8", "replace")
    assert seen["outcome"] == "finished", \
        f"{seen['text'][:2000]}\n--- server log ---\n{log[-3000:]}"
    assert seen["charts"] >= 3  # accuracy, failure reasons, confusion
    assert "Traceback" not in seen["text"]
    # The page reads its own result: the right tool's paired difference, judged by McNemar's test
    # on the two cases both settings ran.
    assert "Right tool" in seen["text"] and "exact McNemar" in seen["text"]
    assert SCREENSHOT.stat().st_size > 10_000
