"""How long from ``streamlit run app.py`` to the first page?

Starts the app headless on a free port, polls the health endpoint until the server answers,
then fetches the page and the first script run's ingredients, and prints the seconds for each
step. Repeats a few times (a fresh process each time) and prints the median.

    python benchmarks/bench_app.py [--repeats 3]

The page itself is static HTML; the app's script runs when a browser opens its websocket.
``--import`` also times importing what app.py imports, in a fresh interpreter, which is most of
what a first script run costs before any model is touched. How long the quick experiment
the page opens with takes to run is part (a) of ``benchmarks/bench_experiment.py``.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def fetch(url: str) -> bytes | None:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.read() if response.status == 200 else None
    except OSError:
        return None


def one_start(timeout: float = 120.0) -> tuple[float, float]:
    """(seconds until /_stcore/health answers, seconds until the page is fetched)."""
    port = free_port()
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "LAB_RUNS_DB": str(Path(folder) / "runs.sqlite")}
        started = time.perf_counter()
        app = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"),
             "--server.headless", "true", "--server.port", str(port),
             "--server.fileWatcherType", "none", "--browser.gatherUsageStats", "false"],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            while fetch(f"http://127.0.0.1:{port}/_stcore/health") is None:
                if app.poll() is not None:
                    raise SystemExit(f"streamlit exited with code {app.returncode}")
                if time.perf_counter() - started > timeout:
                    raise SystemExit(f"no health answer within {timeout} s")
                time.sleep(0.05)
            healthy = time.perf_counter() - started
            page = fetch(f"http://127.0.0.1:{port}/")
            if not page or b"<div id=\"root\"" not in page:
                raise SystemExit("the page did not come back as Streamlit's HTML")
            return healthy, time.perf_counter() - started
        finally:
            app.terminate()
            try:
                app.wait(10)
            except subprocess.TimeoutExpired:
                app.kill()


def import_seconds() -> float:
    code = ("import time; t = time.perf_counter(); import streamlit, app_pages.experiment, app_pages.history, app_pages.playground, "
            "toolkit.bench.experiment, toolkit.bench.charts, toolkit.loop, toolkit.demo_tools; "
            "print(time.perf_counter() - t)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         check=True)
    return float(out.stdout.strip())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--import", dest="imports", action="store_true",
                        help="also time the imports of the first script run")
    args = parser.parse_args(argv)
    health, page = [], []
    for attempt in range(1, args.repeats + 1):
        healthy, fetched = one_start()
        health.append(healthy)
        page.append(fetched)
        print(f"start {attempt}: health after {healthy:.2f} s, page after {fetched:.2f} s",
              flush=True)
    print(f"median: health {statistics.median(health):.2f} s, "
          f"first page {statistics.median(page):.2f} s  (load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")
    if args.imports:
        print(f"imports of the first script run: {import_seconds():.2f} s")


if __name__ == "__main__":
    main()
