"""The app in a real browser, on the embedded model: ``streamlit run app.py`` as a subprocess,
headless Chromium driven over the DevTools protocol (tornado's websocket client, which comes
with Streamlit): type 2 in "Number of cases", click "Run experiment", wait for the run to end,
then look for the charts in the DOM.

Needs ``/usr/bin/chromium`` (Debian: ``apt-get install -y chromium``); skipped without it.
A screenshot of the finished page is left in ``/tmp/tool_calling_lab_app.png``.
"""

import asyncio
import tempfile
from pathlib import Path

import pytest

from scripts.browser import CHROMIUM, CLICK_RUN, PAGE_TEXT, RUN_ENDED, DevTools, app_in_browser

pytestmark = pytest.mark.embedded

SCREENSHOT = Path(tempfile.gettempdir()) / "tool_calling_lab_app.png"
CASES = 2
RUN_TIMEOUT = 10 * 60  # a minute on an idle 2-core machine; far more when it is shared


FOCUS_CASES = """(() => {
  const box = [...document.querySelectorAll('[data-testid="stNumberInput"]')]
      .find(b => b.innerText.includes('Number of cases'));
  const input = box && box.querySelector('input');
  if (!input) return false;
  input.focus(); input.select();
  return document.activeElement === input;
})()"""
async def drive(url: str, debug_port: int) -> dict:
    browser = await DevTools.open(debug_port)
    await browser.send("Emulation.setDeviceMetricsOverride", width=1400, height=2600,
                       deviceScaleFactor=1, mobile=False)
    await browser.send("Page.enable")
    await browser.send("Page.navigate", url=url)
    await browser.wait_for(f"{PAGE_TEXT}.includes('descriptions score the same')", 240, "embedded-model note")
    # Two cases instead of the page's six: the machine running the tests may be a shared one.
    await browser.wait_for(FOCUS_CASES, 240, "number-of-cases field")
    await browser.send("Input.insertText", text=str(CASES))
    for kind in ("keyDown", "keyUp"):
        await browser.send("Input.dispatchKeyEvent", type=kind, key="Enter", code="Enter",
                           windowsVirtualKeyCode=13, nativeVirtualKeyCode=13)
    await browser.wait_for(f"{PAGE_TEXT}.includes('{CASES} cases × 2 setting(s)')", 120,
                           "the new number of cases")
    await browser.wait_for(CLICK_RUN, 120, "Run experiment button")
    await browser.wait_for("document.querySelector('[data-testid=\"stProgress\"]') !== null || "
                           f"{PAGE_TEXT}.includes('finished')", 120, "progress bar")
    outcome = await browser.wait_for(RUN_ENDED, RUN_TIMEOUT, "end of the run")
    await asyncio.sleep(2)  # let plotly finish drawing before the picture
    SCREENSHOT.write_bytes(await browser.screenshot())
    charts = await browser.evaluate("document.querySelectorAll('.js-plotly-plot').length")
    text = await browser.evaluate(PAGE_TEXT)
    browser.connection.close()
    return {"outcome": outcome, "charts": charts, "text": text}


@pytest.mark.skipif(not Path(CHROMIUM).exists(),
                    reason="needs Chromium at /usr/bin/chromium (apt-get install -y chromium)")
def test_a_quick_experiment_on_the_embedded_model_in_a_browser(tmp_path):
    env = {"LAB_RUNS_DB": str(tmp_path / "runs.sqlite"), "LAB_APP_BACKEND": "", "LAB_BASE_URL": ""}
    with app_in_browser(tmp_path, env) as (url, debug_port, log_path):
        seen = asyncio.run(drive(url, debug_port))
    log = log_path.read_text("utf-8", "replace")
    assert seen["outcome"] == "finished", \
        f"{seen['text'][:2000]}\n--- server log ---\n{log[-3000:]}"
    assert seen["charts"] >= 3  # accuracy, failure reasons, confusion
    assert "Traceback" not in seen["text"]
    assert SCREENSHOT.stat().st_size > 10_000
