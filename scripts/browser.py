"""Drive the app in headless Chromium: start ``streamlit run app.py``, start the browser, and
talk to it over the Chrome DevTools protocol (with tornado's websocket client, which comes with
Streamlit, so nothing more is installed).

Used by the browser test and by ``scripts/app_screenshots.py``. Needs Chromium
(Debian: ``apt-get install -y chromium``).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or "/usr/bin/chromium"
PAGE_TEXT = "document.body ? document.body.innerText : ''"


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
def app_in_browser(workdir: Path, env: dict | None = None):
    """Yield ``(page_url, debug_port, log_path)`` with the app and Chromium running; stop both after."""
    port, debug_port = free_port(), free_port()
    log_path = workdir / "streamlit.log"
    app = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"),
         "--server.headless", "true", "--server.port", str(port),
         "--server.fileWatcherType", "none", "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env={**os.environ, **(env or {})}, stdout=log_path.open("wb"), stderr=subprocess.STDOUT)
    chromium = None
    try:
        wait_for_http(f"http://127.0.0.1:{port}/_stcore/health", 90, app)
        chromium = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--no-first-run", "--disable-dev-shm-usage", f"--user-data-dir={workdir / 'profile'}",
             f"--remote-debugging-port={debug_port}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for_http(f"http://127.0.0.1:{debug_port}/json/version", 60, chromium)
        yield f"http://127.0.0.1:{port}/", debug_port, log_path
    finally:
        if chromium is not None:
            stop(chromium)
        stop(app)


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
        text = await self.evaluate(PAGE_TEXT)
        raise AssertionError(f"no {what} after {seconds} s; the page says:\n{(text or '')[:3000]}")

    async def click_at(self, expression: str, what: str, seconds: float = 30) -> None:
        """A real mouse click in the middle of the element ``expression`` finds (some widgets
        only listen to the mouse, not to a script's ``click()``)."""
        box = await self.wait_for(f"""(() => {{ const e = {expression};
            if (!e) return null; const r = e.getBoundingClientRect();
            return {{x: r.x + r.width / 2, y: r.y + r.height / 2}}; }})()""", seconds, what)
        for kind in ("mousePressed", "mouseReleased"):
            await self.send("Input.dispatchMouseEvent", type=kind, x=box["x"], y=box["y"],
                            button="left", clickCount=1)

    async def type_and_enter(self, text: str) -> None:
        """Type ``text`` into the focused element and press Enter, as a person would."""
        await self.send("Input.insertText", text=text)
        for kind in ("keyDown", "keyUp"):
            await self.send("Input.dispatchKeyEvent", type=kind, key="Enter", code="Enter",
                            windowsVirtualKeyCode=13, nativeVirtualKeyCode=13)

    async def screenshot(self, height: int | None = None, width: int = 1400) -> bytes:
        """The window as a PNG; with ``height``, only its top ``height`` pixels."""
        import base64

        clip = {"clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}} if height else {}
        shot = await self.send("Page.captureScreenshot", format="png", **clip)
        return base64.b64decode(shot["data"])


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
