"""Run every lesson top to bottom, as the test suite does, and print each one's wall time.

    python benchmarks/lesson_times.py            # all lessons
    python benchmarks/lesson_times.py 02 13      # only these

Target: each lesson under 60 seconds on 2 cores. The load average is printed too, because
other work on the machine slows every lesson that runs the model.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import jupytext
from nbclient import NotebookClient

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
TARGET = 60.0


def main(argv: list[str]) -> int:
    paths = sorted(LESSONS.glob("[0-9][0-9]_*.py"))
    if argv:
        paths = [p for p in paths if p.name[:2] in argv]
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    print(f"{'lesson':<36} {'seconds':>8}  under {TARGET:.0f} s")
    slow = 0
    for path in paths:
        notebook = jupytext.read(path)
        started = time.perf_counter()
        NotebookClient(notebook, timeout=900, kernel_name="python3",
                       resources={"metadata": {"path": str(path.parent)}}).execute()
        seconds = time.perf_counter() - started
        slow += seconds >= TARGET
        print(f"{path.stem:<36} {seconds:8.1f}  {'yes' if seconds < TARGET else 'NO'}", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}; {slow} lesson(s) over the target")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
