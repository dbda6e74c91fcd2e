"""Drive the app in headless Chromium: start ``streamlit run app.py``, open it in the system's
Chromium through Playwright, and wait for what a person would look for on the page.

Used by the browser test and by the screenshot scripts (``scripts/app_screenshots.py``,
``scripts/mcp_screenshot.py``). Needs Chromium (Debian: ``apt-get install -y chromium``) and
the playwright package (``pip install playwright``, in the lab's test extra); Playwright's own
browser download (``playwright install``) is not needed.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",  # Chromium refuses to start as root with its sandbox on (CI runs as root)
    "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
    # No calls home: on a closed network they are refused, and Chromium's own connections
    # (updates, sync, QUIC probes) only slow the page down or fail it.
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-quic",
]


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


@contextmanager
def app_server(workdir: Path, env: dict | None = None, script: Path = ROOT / "app.py"):
    """Yield ``(url, log_path)`` with ``streamlit run app.py`` (or another ``script``)
    answering; stop it after."""
    port = free_port()
    log_path = workdir / "streamlit.log"
    app = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(script),
         "--server.headless", "true", "--server.port", str(port),
         "--server.fileWatcherType", "none", "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env={**os.environ, **(env or {})}, stdout=log_path.open("wb"), stderr=subprocess.STDOUT)
    try:
        wait_for_http(f"http://127.0.0.1:{port}/_stcore/health", 90, app)
        yield f"http://127.0.0.1:{port}/", log_path
    finally:
        stop(app)


@contextmanager
def app_in_browser(workdir: Path, env: dict | None = None, width: int = 1400, height: int = 2600):
    """Yield ``(page, log_path)``: a Playwright page showing the app, in a window of
    ``width`` x ``height``; stop the browser and the app after."""
    from playwright.sync_api import sync_playwright  # the caller says what to do without it

    with app_server(workdir, env) as (url, log_path), sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            page.goto(url)
            yield page, log_path
        finally:
            browser.close()


def page_text(page) -> str:
    """What a person can read on the page (hidden tabs left out)."""
    return page.inner_text("body")


def stuck(page, what: str, seconds: float) -> AssertionError:
    """The error for a wait that ran out, with what the page said instead."""
    return AssertionError(f"no {what} after {seconds} s; the page says:\n{page_text(page)[:3000]}")


def wait_until(page, check: Callable[[], object], seconds: float, what: str):
    """Ask ``check()`` once a second until it answers something true; return that answer."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if answer := check():
            return answer
        page.wait_for_timeout(1000)  # not time.sleep: Playwright keeps handling the page meanwhile
    raise stuck(page, what, seconds)


@contextmanager
def explained(page, what: str, seconds: float):
    """Turn Playwright's timeout into an error that says what was awaited and what the page said."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        yield
    except PlaywrightTimeout:
        raise stuck(page, what, seconds) from None


def wait_for(locator, seconds: float, what: str):
    """Wait until ``locator`` shows on the page; return it."""
    with explained(locator.page, what, seconds):
        locator.wait_for(timeout=seconds * 1000)
    return locator


def wait_for_text(page, text: str, seconds: float, what: str):
    """Wait until ``text`` shows on the page (in a tab that is open: hidden tabs hold text too)."""
    return wait_for(page.get_by_text(text).filter(visible=True).first, seconds, what)


def click(locator, what: str, seconds: float = 30) -> None:
    """A real mouse click on ``locator`` once it shows and is enabled (some widgets only
    listen to the mouse, not to a script's ``click()``)."""
    with explained(locator.page, what, seconds):
        locator.click(timeout=seconds * 1000)


def visible(locator):
    """The last of ``locator``'s elements that shows: Streamlit draws every tab's widgets,
    and widgets with the same label can sit in tabs that are closed."""
    return locator.filter(visible=True).last


def run_button(page):
    return page.get_by_role("button", name="Run experiment", exact=True)


def script_state(page) -> str:
    """What Streamlit's page says its script is doing: 'running', 'notRunning',
    'rerunRequested', ... (the frontend writes it on the app's root element)."""
    return page.get_by_test_id("stApp").get_attribute("data-test-script-state") or ""


def wait_idle(page, seconds: float) -> None:
    """Wait until the script has finished its latest run and the page is connected."""
    wait_until(page, lambda: script_state(page) == "notRunning"
               and page.get_by_test_id("stApp").get_attribute("data-test-connection-state") == "CONNECTED",
               seconds, "idle page")


def run_started(page) -> bool:
    return bool(page.get_by_test_id("stProgress").count() or run_outcome(page)
                or "Reaching the model" in page_text(page))


def start_experiment(page, seconds: float = 120) -> None:
    """Click "Run experiment" on an idle page and wait until the run shows (its progress bar, its
    spinner or its end). One click was once lost on a loaded machine: the page stayed idle with no
    run. So an idle page that shows no run 10 s after the click gets one more click; a button
    that never starts a run still fails, and so does one whose run never shows."""
    wait_idle(page, seconds)
    for attempt in range(2):
        click(run_button(page), "Run experiment button", seconds)
        deadline = time.monotonic() + (10 if attempt == 0 else seconds)
        while time.monotonic() < deadline:
            if run_started(page):
                return
            page.wait_for_timeout(500)
        if script_state(page) != "notRunning":  # still busy: no reason to think the click was lost
            wait_until(page, lambda: run_started(page), seconds, "run after the click")
            return
    raise stuck(page, "run after two clicks on Run experiment", seconds)


def run_outcome(page) -> str:
    """How the experiment the page started has ended: 'finished' (with its charts drawn),
    'failed', 'exception', or '' while it is still going."""
    if page.get_by_test_id("stException").count():
        return "exception"
    text = page_text(page)
    if "The run failed" in text:
        return "failed"
    if re.search(r"Run \d+ finished", text) and page.locator(".js-plotly-plot").count():
        return "finished"
    return ""
