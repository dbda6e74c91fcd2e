"""How soon is the Experiment tab usable, against a one-button Streamlit page served the same way?

    python benchmarks/page_ready.py [--repeats 3] [--reloads 3]

For each repeat, both pages are started afresh with ``streamlit run`` (headless, on a free
port, a run database of their own) and opened in headless Chromium: the time from asking for
the page to a visible, enabled "Run experiment" button is taken once on the first load (the
server's first script run: its imports and everything it caches) and then after each reload.
The minimal page is a title and that one button, so the ratio is the app's own cost with the
server, the browser and the machine's load the same. Medians are printed, with the ratios
the page is held to: a reload at most 1.5 times the minimal page's, a first load at most 3 times.

The time is taken inside the page: an observer installed before the page's own scripts notes
when the button is first there and enabled, counted from the navigation's start. Asking
Playwright when it sees the button would add its polling: it looks again after 0, 20, 50, 100
and 100 ms, then every 500 ms, so a button that appears at 0.5 s is reported at about 0.9 s,
and the ratio says more about that schedule than about the page.

Each line also says when the page had handled the last message from the server before the
button was there ("messages in"); what comes after is the browser drawing. On a reload the
app's script itself is quick (what does not change between runs is cached): most of the gap
between the two pages is the browser handling the app's forty-odd elements, a message each,
and drawing them. A sampling profile of one reload in Chromium puts that time in Streamlit's
own JavaScript: React's rendering, the markdown of every label and caption, and the styles each
element adds. Neither lighter widgets (pills in place of the three multiselects), nor a Run
button drawn first in the tab, nor a sidebar without its longest markdown (the "About the
embedded models" expander) made a reload measurably quicker: the button is usable once the
page has handled the whole run's elements, wherever it stands among them.

Needs Chromium and the playwright package, as the browser test does.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scripts.browser import CHROMIUM, CHROMIUM_ARGS, app_server, run_button  # noqa: E402

MINIMAL = '''import streamlit as st

st.set_page_config(page_title="Minimal", layout="wide")
st.title("A minimal page")
st.button("Run experiment", type="primary")
'''


# Run in every page before its own scripts: note (in ms since the navigation started) the first
# moment a visible, enabled "Run experiment" button is in the document, and when the page
# handled each message from the server (a listener added before the page's own).
NOTE_WHEN_USABLE = """
window.__usableAt = null;
window.__messages = [];
const NativeWebSocket = window.WebSocket;
window.WebSocket = class extends NativeWebSocket {
  constructor(...args) {
    super(...args);
    this.addEventListener("message", () => window.__messages.push(performance.now()));
  }
};
const watcher = new MutationObserver(() => {
  for (const button of document.querySelectorAll("button")) {
    if (button.innerText.trim() === "Run experiment" && !button.disabled && button.offsetParent !== null) {
      window.__usableAt = performance.now();
      watcher.disconnect();
      return;
    }
  }
});
document.addEventListener("DOMContentLoaded", () => watcher.observe(
  document.body, {subtree: true, childList: true, characterData: true, attributes: true}));
"""


@dataclass
class Load:
    """One navigation: seconds to a usable button, and to the last server message handled before."""

    usable: float
    messages_in: float


def until_usable(page, load, timeout_s: float = 180) -> Load:
    """From the start of ``load()`` (a navigation) to a visible, enabled Run experiment button, as
    the page itself noted it (``page`` must have ``NOTE_WHEN_USABLE`` installed)."""
    load()
    run_button(page).wait_for(state="visible", timeout=timeout_s * 1000)
    usable_at = page.wait_for_function("window.__usableAt", timeout=timeout_s * 1000).json_value()
    before = page.evaluate("(usable) => window.__messages.filter((t) => t <= usable)", usable_at)
    return Load(usable_at / 1000, max(before, default=0) / 1000)


def measure(script: Path, reloads: int, browser) -> tuple[Load, list[Load]]:
    """(first load, each reload) for one freshly started server of ``script``."""
    with tempfile.TemporaryDirectory() as folder:
        env = {"LAB_RUNS_DB": str(Path(folder) / "runs.sqlite")}
        with app_server(Path(folder), env, script=script) as (url, _):
            page = browser.new_page(viewport={"width": 1400, "height": 1600})
            page.add_init_script(NOTE_WHEN_USABLE)
            first = until_usable(page, lambda: page.goto(url))
            again = [until_usable(page, page.reload) for _ in range(reloads)]
            page.close()
    return first, again


def median_of(loads: list[Load], field: str) -> float:
    return statistics.median(getattr(load, field) for load in loads)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="fresh servers per page")
    parser.add_argument("--reloads", type=int, default=3, help="reloads per server")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as folder, sync_playwright() as playwright:
        minimal = Path(folder) / "minimal.py"
        minimal.write_text(MINIMAL, encoding="utf-8")
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        loads = {"app": ([], []), "minimal": ([], [])}
        try:
            for repeat in range(1, args.repeats + 1):
                for name, script in (("minimal", minimal), ("app", ROOT / "app.py")):
                    first, again = measure(script, args.reloads, browser)
                    loads[name][0].append(first)
                    loads[name][1].extend(again)
                    print(f"repeat {repeat} {name:8s} first load {first.usable:5.2f} s, reloads "
                          + ", ".join(f"{load.usable:.2f}" for load in again)
                          + " s (messages in by " + ", ".join(f"{load.messages_in:.2f}" for load in again)
                          + " s)", flush=True)
        finally:
            browser.close()
    print(f"\nmedian time to a usable Run experiment button (load average {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} CPUs):")
    for label, which, bar in (("first load", 0, 3), ("reload", 1, 1.5)):
        app, least = (median_of(loads[name][which], "usable") for name in ("app", "minimal"))
        app_in, least_in = (median_of(loads[name][which], "messages_in") for name in ("app", "minimal"))
        print(f"  {label + ':':11s} app {app:.2f} s, minimal page {least:.2f} s -> {app / least:.2f}x "
              f"(held to {bar}x); the server's messages handled by {app_in:.2f} s and {least_in:.2f} s")


if __name__ == "__main__":
    main()
