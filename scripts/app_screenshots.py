"""Screenshots of the app after a real run on the embedded model, for the README.

    python -m scripts.app_screenshots     # from the top of the repository; writes docs/screenshots/*.png
    python -m scripts.app_screenshots --playground   # only the Playground turn (playground.png)

Starts ``streamlit run app.py`` with an empty run database, opens it in headless Chromium,
presses "Run experiment" on the page as it opens (the quick experiment: clear vs vague
descriptions), waits for the charts, then asks the playground a question as OpenAI's API is
usually called (``tool_choice`` "auto"): the model calls the weather tool, reads its result
and answers from it. Each step leaves a full-page screenshot. Takes a minute or two on two cores.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

from scripts.browser import CLICK_RUN, PAGE_TEXT, ROOT, RUN_ENDED, DevTools, app_in_browser

OUT = ROOT / "docs" / "screenshots"
QUESTION = "What's the weather in Shanghai?"
WIDTH, HEIGHT = 1400, 4000

CLICK_TAB = """(name => {
  const tabs = [...document.querySelectorAll('[role="tab"], [data-baseweb="tab"]')];
  const tab = tabs.find(t => (t.innerText || t.textContent || '').trim() === name);
  if (tab) { tab.click(); return true; }
  return false;
})"""
FOCUS_CHAT = """(() => {
  const box = document.querySelector('[data-testid="stChatInputTextArea"]');
  if (!box) return false;
  box.focus();
  return document.activeElement === box;
})()"""


TOOL_CHOICE_BOX = """[...document.querySelectorAll('[data-testid="stSelectbox"]')]
  .filter(b => b.offsetParent !== null && b.innerText.trim().startsWith('tool_choice'))
  .map(b => b.querySelector('input') || b).pop()"""
REQUIRED_OPTION = """[...document.querySelectorAll('[role="option"]')].find(o => o.innerText.trim() === 'required')"""
ANSWERED = """(() => document.querySelectorAll('[data-testid="stChatMessage"]').length >= 2
  && !document.body.innerText.includes('The model is working'))()"""
FULL_HEIGHT = """(() => {
  const content = document.querySelector('[data-testid="stMainBlockContainer"]');
  return content ? Math.ceil(content.getBoundingClientRect().bottom) : 0;
})()"""
FIRST_ROUND = """[...document.querySelectorAll('summary')].find(s => s.innerText.includes('Round 1'))"""


async def full_page(browser: DevTools, path: Path) -> Path:
    """The page down to the end of its content. The window is made tall from the start
    (Streamlit scrolls inside its own container, and resizing it later folds the sidebar away);
    the picture is cut where the content ends."""
    height = min(int(await browser.evaluate(FULL_HEIGHT) or HEIGHT) + 40, HEIGHT)
    path.write_bytes(await browser.screenshot(height=height, width=WIDTH))
    return path


async def open_app(debug_port: int, url: str) -> DevTools:
    """A Chromium tab at screenshot size showing the app, once its sidebar has drawn."""
    browser = await DevTools.open(debug_port)
    await browser.send("Emulation.setDeviceMetricsOverride", width=WIDTH, height=HEIGHT,
                       deviceScaleFactor=1, mobile=False)
    await browser.send("Page.enable")
    await browser.send("Page.navigate", url=url)
    await browser.wait_for(f"{PAGE_TEXT}.includes('descriptions score the same')", 240, "the embedded-model note")
    return browser


async def shoot(debug_port: int, url: str) -> list[Path]:
    browser = await open_app(debug_port, url)
    await browser.wait_for(CLICK_RUN, 120, "the Run experiment button")
    outcome = await browser.wait_for(RUN_ENDED, 20 * 60, "the end of the run")
    if outcome != "finished":
        raise SystemExit(f"the run ended as {outcome!r}: {(await browser.evaluate(PAGE_TEXT))[:2000]}")
    await asyncio.sleep(3)  # plotly draws after the page settles
    written = [await full_page(browser, OUT / "experiment.png")]

    await browser.wait_for(f"{CLICK_TAB}('History')", 30, "the History tab")
    await asyncio.sleep(3)
    written.append(await full_page(browser, OUT / "history.png"))

    written.append(await playground_turn(browser))
    browser.connection.close()
    return written


async def playground_turn(browser: DevTools) -> Path:
    """One question in the Playground, under "auto", with its first round opened."""
    await browser.wait_for(f"{CLICK_TAB}('Playground')", 30, "the Playground tab")
    await asyncio.sleep(1)
    await browser.wait_for(FOCUS_CHAT, 60, "the chat box")
    await browser.type_and_enter(QUESTION)
    await browser.wait_for(ANSWERED, 300, "the playground's answer")
    await browser.click_at(FIRST_ROUND, "the first round of the loop")  # open it: request, reply, results
    await asyncio.sleep(2)
    return await full_page(browser, OUT / "playground.png")


async def shoot_playground(debug_port: int, url: str) -> list[Path]:
    browser = await open_app(debug_port, url)
    written = [await playground_turn(browser)]
    browser.connection.close()
    return written


def take(shooter) -> int:
    """Start the app on the embedded model with an empty run store, open it in headless Chromium,
    let ``shooter(debug_port, url)`` take its pictures, and say what was written."""
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        env = {"LAB_RUNS_DB": str(Path(folder) / "runs.sqlite"), "LAB_APP_BACKEND": "", "LAB_BASE_URL": ""}
        with app_in_browser(Path(folder), env) as (url, debug_port, _log):
            written = asyncio.run(shooter(debug_port, url))
    for path in written:
        print(f"wrote {path.relative_to(ROOT)} ({path.stat().st_size // 1024} KB)")
    return 0


def main() -> int:
    return take(shoot_playground if "--playground" in sys.argv[1:] else shoot)


if __name__ == "__main__":
    sys.exit(main())
