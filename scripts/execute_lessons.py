"""Run every lesson top to bottom on the embedded model and save it with its outputs.

    python -m scripts.execute_lessons                 # all lessons
    python -m scripts.execute_lessons 04 13           # only these

The lessons are written as jupytext ``.py`` files; their paired ``.ipynb`` files are what a
learner opens, and they are committed *executed*, so that a reader can follow every result
without installing anything. Every model call in the lessons pins temperature 0 and a seed, so
running this again on the same versions gives the same outputs. Each lesson's run time is
printed (they are meant to stay under a minute each on two cores).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import jupytext
from nbclient import NotebookClient

LESSONS = Path(__file__).resolve().parents[1] / "lessons"


def execute(path: Path) -> float:
    """Run one lesson in its own folder and write its .ipynb with the outputs; seconds taken."""
    notebook = jupytext.read(path)
    started = time.perf_counter()
    NotebookClient(notebook, timeout=900, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    seconds = time.perf_counter() - started
    notebook.metadata.pop("widgets", None)
    jupytext.write(notebook, path.with_suffix(".ipynb"))
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("only", nargs="*", help="lesson numbers or name parts, e.g. 04 13")
    args = parser.parse_args(argv)
    paths = [p for p in sorted(LESSONS.glob("[0-9][0-9]_*.py"))
             if not args.only or any(p.stem.startswith(o) or o in p.stem for o in args.only)]
    if not paths:
        print(f"error: no lesson matches {' '.join(args.only)}", file=sys.stderr)
        return 2
    for path in paths:
        print(f"{path.stem:40s} {execute(path):6.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
