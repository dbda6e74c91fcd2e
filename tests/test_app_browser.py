"""The app in a real browser, on the embedded model: ``streamlit run app.py`` as a subprocess,
headless Chromium driven over the DevTools protocol (tornado's websocket client, which comes
with Streamlit): type 2 in "Number of cases", click "Run experiment", wait for the run to end,
then look for the charts in the DOM.

Needs ``/usr/bin/chromium`` (Debian: ``apt-get install -y chromium``); skipped without it.
A screenshot of the finished page is left in ``/tmp/tool_calling_lab_app.png``.
"""

import asyncio
import base64
import itertools
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.embedded

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or "/usr/bin/chromium"
SCREENSHOT = Path(tempfile.gettempdir()) / "tool_calling_lab_app.png"
CASES = 2
RUN_TIMEOUT = 10 * 60  # a minute on an idle 2-core machine; far more when it is shared


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_http(url: str, seconds: float, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"{process.args[:3]} exited with {process.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"{url} did not answer within {seconds} s")


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


class DevTools:
    """Just enough of the Chrome DevTools protocol: send a command, wait for its answer."""

    def __init__(self, connection):
        self.connection, self.ids = connection, itertools.count(1)

    @classmethod
    async def open(cls, debug_port: int) -> "DevTools":
        from tornado.websocket import websocket_connect

        with urllib.request.urlopen(f"http://127.0.0.1:{debug_port}/json/list", timeout=10) as r:
            pages = [t for t in json.load(r) if t["type"] == "page"]
        connection = await websocket_connect(pages[0]["webSocketDebuggerUrl"],
                                             max_message_size=256 * 1024 * 1024)
        return cls(connection)

    async def send(self, method: str, **params):
        number = next(self.ids)
        await self.connection.write_message(json.dumps({"id": number, "method": method,
                                                        "params": params}))
        while True:
            message = await asyncio.wait_for(self.connection.read_message(), 120)
            if message is None:
                raise AssertionError("the browser closed the DevTools connection")
            answer = json.loads(message)
            if answer.get("id") == number:
                if "error" in answer:
                    raise AssertionError(f"{method}: {answer['error']}")
                return answer.get("result", {})

    async def evaluate(self, expression: str):
        result = await self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        return result.get("result", {}).get("value")

    async def wait_for(self, expression: str, seconds: float, what: str):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            value = await self.evaluate(expression)
            if value:
                return value
            await asyncio.sleep(1)
        text = await self.evaluate("document.body ? document.body.innerText : ''")
        raise AssertionError(f"no {what} after {seconds} s; the page says:\n{(text or '')[:3000]}")


PAGE_TEXT = "document.body ? document.body.innerText : ''"
FOCUS_CASES = """(() => {
  const box = [...document.querySelectorAll('[data-testid="stNumberInput"]')]
      .find(b => b.innerText.includes('Number of cases'));
  const input = box && box.querySelector('input');
  if (!input) return false;
  input.focus(); input.select();
  return document.activeElement === input;
})()"""
CLICK_RUN = """(() => {
  const button = [...document.querySelectorAll('button')]
      .find(b => b.innerText.trim() === 'Run experiment' && !b.disabled);
  if (button) { button.click(); return true; }
  return false;
})()"""
RUN_ENDED = """(() => {
  const text = document.body.innerText;
  if (document.querySelector('[data-testid="stException"]')) return 'exception';
  if (text.includes('The run failed')) return 'failed';
  const drawn = document.querySelector('.js-plotly-plot');
  if (/Run \\d+ finished/.test(text) && drawn) return 'finished';
  return '';
})()"""


async def drive(url: str, debug_port: int) -> dict:
    browser = await DevTools.open(debug_port)
    await browser.send("Emulation.setDeviceMetricsOverride", width=1400, height=2600,
                       deviceScaleFactor=1, mobile=False)
    await browser.send("Page.enable")
    await browser.send("Page.navigate", url=url)
    await browser.wait_for(f"{PAGE_TEXT}.includes('near chance')", 240, "embedded-model note")
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
    shot = await browser.send("Page.captureScreenshot", format="png")
    SCREENSHOT.write_bytes(base64.b64decode(shot["data"]))
    charts = await browser.evaluate("document.querySelectorAll('.js-plotly-plot').length")
    text = await browser.evaluate(PAGE_TEXT)
    browser.connection.close()
    return {"outcome": outcome, "charts": charts, "text": text}


@pytest.mark.skipif(not Path(CHROMIUM).exists(),
                    reason="needs Chromium at /usr/bin/chromium (apt-get install -y chromium)")
def test_a_quick_experiment_on_the_embedded_model_in_a_browser(tmp_path):
    port, debug_port = free_port(), free_port()
    env = {**os.environ, "LAB_RUNS_DB": str(tmp_path / "runs.sqlite")}
    for name in ("LAB_APP_BACKEND", "LAB_BASE_URL"):
        env.pop(name, None)
    log_path = tmp_path / "streamlit.log"
    app = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"),
         "--server.headless", "true", "--server.port", str(port),
         "--server.fileWatcherType", "none", "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env=env, stdout=log_path.open("wb"), stderr=subprocess.STDOUT)
    chromium = None
    try:
        wait_for_http(f"http://127.0.0.1:{port}/_stcore/health", 90, app)
        chromium = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--no-first-run", "--disable-dev-shm-usage", f"--user-data-dir={tmp_path / 'profile'}",
             f"--remote-debugging-port={debug_port}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for_http(f"http://127.0.0.1:{debug_port}/json/version", 60, chromium)
        seen = asyncio.run(drive(f"http://127.0.0.1:{port}/", debug_port))
    finally:
        if chromium is not None:
            stop(chromium)
        stop(app)
    log = log_path.read_text("utf-8", "replace")
    assert seen["outcome"] == "finished", \
        f"{seen['text'][:2000]}\n--- server log ---\n{log[-3000:]}"
    assert seen["charts"] >= 3  # accuracy, failure reasons, confusion
    assert "Traceback" not in seen["text"]
    assert SCREENSHOT.stat().st_size > 10_000
