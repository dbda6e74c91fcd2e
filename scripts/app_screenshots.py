"""Screenshots of the app after a real run on the embedded model, for the README.

    python -m scripts.app_screenshots     # from the top of the repository; writes docs/screenshots/*.png
    python -m scripts.app_screenshots --playground   # only the Playground turn (playground.png)
    python -m scripts.app_screenshots --conversation RUN.jsonl CASE_ID   # conversation.png

The last one shows a multi-turn run measured beforehand (``python -m toolkit.bench.multi_turn_run
multi_turn_base``, on the embedded default model at the page's default settings): the page finds
the file where it keeps that plan's conversations, and the shot opens ``CASE_ID`` turn by turn.

Starts ``streamlit run app.py`` with an empty run database, opens it in headless Chromium,
presses "Run experiment" on the page as it opens (the quick experiment: native tools
against the string protocol), waits for the charts, then asks the playground the question its
input box offers, as OpenAI's API is usually called (``tool_choice`` "auto"): the model calls the
weather tool, reads its result and answers from it. Each step leaves a full-page screenshot.
Takes a minute or two on two cores.
"""

from __future__ import annotations

import math
import sys
import tempfile
from pathlib import Path

from app_pages.playground import EXAMPLE_QUESTION
from scripts.browser import (ROOT, app_in_browser, click, page_text, run_outcome, start_experiment, wait_for,
                             wait_for_text, wait_until)

OUT = ROOT / "docs" / "screenshots"
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
    start_experiment(page)
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
    ask(page, EXAMPLE_QUESTION)
    wait_until(page, lambda: answered(page), 300, "the playground's answer")
    click(first_round(page), "the first round of the loop")  # open it: request, reply, results
    page.wait_for_timeout(2000)
    return full_page(page, OUT / "playground.png")


def shoot_playground(page) -> list[Path]:
    return [playground_turn(page)]


def conversation(run_file: Path, case_id: str):
    """A shooter for one conversation of a measured run, opened turn by turn."""

    def shooter(page) -> list[Path]:
        click(page.get_by_text("BFCL multi-turn conversations", exact=True), "the conversations suite")
        wait_for_text(page, "How the model did", 120, "the run's rates")
        choose = page.get_by_test_id("stSelectbox").filter(has_text="Conversation").locator("input")
        click(choose, "the conversation picker")
        page.keyboard.type(f"{case_id} ")  # the picker filters its options as one types
        page.keyboard.press("Enter")
        wait_for_text(page, "world differs from the answer key", 60, "the state difference")
        page.wait_for_timeout(2000)
        return [full_page(page, OUT / "conversation.png")]

    shooter.prepare = lambda runs_db: _place(run_file, runs_db)
    return shooter


def _place(run_file: Path, runs_db: Path) -> None:
    """Put the measured run where the page keeps the conversations of its default plan."""
    from toolkit.app.conversations import run_file_for
    from toolkit.engine import BASE_MODEL

    settings = {"temperature": 0.0, "seed": 0, "max_tokens": 128, "tool_choice": None, "repeats": 1}
    target = run_file_for(runs_db.parent / "multi_turn", "multi_turn_base", BASE_MODEL, settings)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(run_file.read_bytes())


def take(shooter) -> int:
    """Start the app on the embedded model with an empty run store, open it in headless Chromium,
    let ``shooter(page)`` take its pictures, and say what was written."""
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        env = {"LAB_RUNS_DB": str(Path(folder) / "runs.sqlite"), "LAB_APP_BACKEND": "", "LAB_BASE_URL": ""}
        if hasattr(shooter, "prepare"):
            shooter.prepare(Path(env["LAB_RUNS_DB"]))
        with app_in_browser(Path(folder), env, width=WIDTH, height=HEIGHT) as (page, _log):
            # The app is drawn once its sidebar's note on the embedded model is.
            wait_for_text(page, "reads tool names more than descriptions", 240, "the embedded-model note")
            written = shooter(page)
    for path in written:
        print(f"wrote {path.relative_to(ROOT)} ({path.stat().st_size // 1024} KB)")
    return 0


def main() -> int:
    arguments = sys.argv[1:]
    if arguments[:1] == ["--conversation"] and len(arguments) == 3:
        return take(conversation(Path(arguments[1]), arguments[2]))
    return take(shoot_playground if "--playground" in arguments else shoot)


if __name__ == "__main__":
    sys.exit(main())
