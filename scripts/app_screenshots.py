"""Screenshots of the app after a real run on the embedded model, for the README.

    python -m scripts.app_screenshots     # from the top of the repository; writes docs/screenshots/*.png
    python -m scripts.app_screenshots --playground   # only the Playground turn (playground.png)

Starts ``streamlit run app.py`` with an empty run database, opens it in headless Chromium,
presses "Run experiment" on the page as it opens (the quick experiment: native tools
against the string protocol), waits for the charts, then asks the playground a question as OpenAI's API is
usually called (``tool_choice`` "auto"): the model calls the weather tool, reads its result
and answers from it. Each step leaves a full-page screenshot. Takes a minute or two on two cores.
"""

from __future__ import annotations

import math
import sys
import tempfile
from pathlib import Path

from scripts.browser import (ROOT, app_in_browser, click, page_text, run_button, run_outcome, wait_for,
                             wait_for_text, wait_until)

OUT = ROOT / "docs" / "screenshots"
QUESTION = "What's the weather in Shanghai?"
WIDTH, HEIGHT = 1400, 4000


def open_tab(page, name: str) -> None:
    click(page.get_by_role("tab", name=name, exact=True), f"the {name} tab")


def ask(page, question: str) -> None:
    """Type ``question`` into the chat box and send it, as a person would."""
    box = wait_for(page.get_by_test_id("stChatInputTextArea"), 60, "the chat box")
    box.fill(question)
    box.press("Enter")


def answered(page) -> bool:
    return (page.get_by_test_id("stChatMessage").count() >= 2
            and "The model is working" not in page_text(page))


def first_round(page):
    """The first round of the tool loop, folded: opening it shows its request, reply and results."""
    return page.locator("summary").filter(has_text="Round 1").first


def full_page(page, path: Path) -> Path:
    """The page down to the end of its content. The window is made tall from the start
    (Streamlit scrolls inside its own container, and resizing it later folds the sidebar away);
    the picture is cut where the content ends."""
    box = page.get_by_test_id("stMainBlockContainer").bounding_box()
    bottom = math.ceil(box["y"] + box["height"]) if box else HEIGHT
    height = min(bottom + 40, HEIGHT)
    page.screenshot(path=path, clip={"x": 0, "y": 0, "width": WIDTH, "height": height})
    return path


def shoot(page) -> list[Path]:
    click(run_button(page), "the Run experiment button", 120)
    outcome = wait_until(page, lambda: run_outcome(page), 20 * 60, "the end of the run")
    if outcome != "finished":
        raise SystemExit(f"the run ended as {outcome!r}: {page_text(page)[:2000]}")
    page.wait_for_timeout(3000)  # plotly draws after the page settles
    written = [full_page(page, OUT / "experiment.png")]

    open_tab(page, "History")
    page.wait_for_timeout(3000)
    written.append(full_page(page, OUT / "history.png"))

    written.append(playground_turn(page))
    return written


def playground_turn(page) -> Path:
    """One question in the Playground, under "auto", with its first round opened."""
    open_tab(page, "Playground")
    page.wait_for_timeout(1000)
    ask(page, QUESTION)
    wait_until(page, lambda: answered(page), 300, "the playground's answer")
    click(first_round(page), "the first round of the loop")  # open it: request, reply, results
    page.wait_for_timeout(2000)
    return full_page(page, OUT / "playground.png")


def shoot_playground(page) -> list[Path]:
    return [playground_turn(page)]


def take(shooter) -> int:
    """Start the app on the embedded model with an empty run store, open it in headless Chromium,
    let ``shooter(page)`` take its pictures, and say what was written."""
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        env = {"LAB_RUNS_DB": str(Path(folder) / "runs.sqlite"), "LAB_APP_BACKEND": "", "LAB_BASE_URL": ""}
        with app_in_browser(Path(folder), env, width=WIDTH, height=HEIGHT) as (page, _log):
            # The app is drawn once its sidebar's note on the embedded model is.
            wait_for_text(page, "reads tool names more than descriptions", 240, "the embedded-model note")
            written = shooter(page)
    for path in written:
        print(f"wrote {path.relative_to(ROOT)} ({path.stat().st_size // 1024} KB)")
    return 0


def main() -> int:
    return take(shoot_playground if "--playground" in sys.argv[1:] else shoot)


if __name__ == "__main__":
    sys.exit(main())
