"""A room served from an existing engine: llama-cpp-python's own server, the lab in shared mode
in front of it, and N browsers running the opening experiment at once.

    pip install -r benchmarks/requirements.txt      # llama-cpp-python's server extras
    python benchmarks/room_on_llama_server.py --browsers 4

What an instructor does when the room outgrows the embedded endpoint: start an
OpenAI-compatible server (here ``python -m llama_cpp.server`` on the lab's own GGUF, with its
``chatml-function-calling`` handler), then ``LAB_SHARED=1 LAB_BASE_URL=... LAB_MODEL=...
LAB_API_KEY=... streamlit run app.py``. This script does exactly that, opens N pages in
headless Chromium (each page gets a browser id of its own, as each attendee's would), presses
Run experiment on each, and waits for every run to end.

It prints, per browser: how the run ended and when, and what the sidebar offered (in shared
mode: the endpoint named, nothing to type, the key nowhere on the page). A stronger server
(vLLM, llama.cpp's ``llama-server``, Ollama) is used the same way; only the base URL and the
model name change.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.two_servers import server  # noqa: E402
from scripts.browser import (CHROMIUM, CHROMIUM_ARGS, app_server, page_text, run_outcome,  # noqa: E402
                             start_experiment, wait_for_text, wait_until)

KEY = "room-key-kept-on-the-server"  # llama-cpp-python's server checks no key; the lab must still hide it


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--browsers", type=int, default=4, help="pages running the opening experiment at once")
    parser.add_argument("--timeout", type=float, default=900, help="seconds to wait for every run to end")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    with server("llama-cpp-python") as (base_url, model), tempfile.TemporaryDirectory() as folder:
        env = {"LAB_SHARED": "1", "LAB_BASE_URL": base_url, "LAB_MODEL": model, "LAB_API_KEY": KEY,
               "LAB_RUNS_DB": str(Path(folder) / "runs.sqlite")}
        print(f"llama-cpp-python's server at {base_url}, model {model}; the lab in shared mode in front of it")
        with app_server(Path(folder), env) as (url, log_path), sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            try:
                host = urlsplit(base_url).netloc  # the sidebar names the host, never the URL's path
                pages = []
                for _ in range(args.browsers):
                    page = browser.new_context(viewport={"width": 1400, "height": 2000}).new_page()
                    page.goto(url)
                    wait_for_text(page, f"at {host}", 120, "the endpoint named in the sidebar")
                    pages.append(page)
                offered = {
                    "endpoint named": all(f"{model} at {host}" in page_text(page) for page in pages),
                    "key field": sum(page.get_by_label("API key").count() for page in pages),
                    "key on a page": sum(KEY in page.content() for page in pages),
                    "browser ids": len({page.url for page in pages}),
                }
                started, ended = time.perf_counter(), {}
                for page in pages:
                    start_experiment(page)
                deadline = started + args.timeout
                while len(ended) < len(pages) and time.perf_counter() < deadline:
                    for number, page in enumerate(pages):
                        if number not in ended and (outcome := run_outcome(page)):
                            ended[number] = (outcome, time.perf_counter() - started)
                    time.sleep(1)
                texts = [page_text(page) for page in pages]
            finally:
                browser.close()
        log = log_path.read_text("utf-8", "replace")
    print(f"sidebar: endpoint named on every page: {offered['endpoint named']}; API key fields: "
          f"{offered['key field']}; pages carrying the key: {offered['key on a page']}; "
          f"distinct browser ids: {offered['browser ids']} of {len(pages)}")
    for number in range(len(pages)):
        outcome, seconds = ended.get(number, ("still running", None))
        when = f"after {seconds:.0f} s" if seconds is not None else f"at the {args.timeout:.0f}-s limit"
        print(f"browser {number + 1}: {outcome} {when}")
        if outcome != "finished":
            print("  the page says: " + texts[number][-600:].replace("\n", " "))
    finished = sum(outcome == "finished" for outcome, _ in ended.values())
    print(f"{finished}/{len(pages)} runs finished" + (f", the last after {max(s for _, s in ended.values()):.0f} s"
                                                     if ended else ""))
    if "Traceback" in log:
        print("the app's log has a traceback:\n" + log[-2000:])
    return 0 if finished == len(pages) and not offered["key field"] and not offered["key on a page"] else 1


if __name__ == "__main__":
    sys.exit(main())
