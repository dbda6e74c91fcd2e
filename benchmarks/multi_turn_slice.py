"""BFCL's multi-turn slice on the embedded model, through the lab's endpoint and llama-cpp-python's own.

    pip install -r benchmarks/requirements.txt      # llama-cpp-python's server extras
    python benchmarks/multi_turn_slice.py                      # both servers, the base model
    python benchmarks/multi_turn_slice.py --servers lab --model SmolLM2-135M-Instruct+tools

The slice is what two cores run in about twenty minutes: the first 20 conversations of
``multi_turn_base`` and the first 10 of ``miss_func`` and ``miss_param``, at temperature 0, seed 0,
``max_tokens`` 128. Each server is started on its own (never both at once: they would share two
cores): the lab's endpoint (``toolkit.engine.serve``) and llama-cpp-python's server with its
``chatml-function-calling`` handler, the same GGUF, both with a 4,096-token context. A
conversation whose prompt does not fit is skipped and counted. Per server and category it prints
the whole-conversation rate (BFCL's verdict), the per-turn rate, both with 95% Wilson intervals,
and the time taken; the run files are kept in ``--out`` (a second run resumes them).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from two_servers import server  # noqa: E402

from toolkit.bench.multi_turn_apis import api_classes, cached_wheel  # noqa: E402
from toolkit.bench.multi_turn_data import import_multi_turn  # noqa: E402
from toolkit.bench.multi_turn_run import run_cases, summary  # noqa: E402
from toolkit.client import connect  # noqa: E402
from toolkit.engine import BASE_MODEL  # noqa: E402

SLICE = {"multi_turn_base": 20, "multi_turn_miss_func": 10, "multi_turn_miss_param": 10}
SETTINGS = {"temperature": 0, "seed": 0, "max_tokens": 128, "tool_choice": None}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", nargs="+", default=["lab", "peer"], choices=["lab", "peer"])
    parser.add_argument("--model", default=BASE_MODEL, help="the lab's model (the peer serves the base GGUF)")
    parser.add_argument("--out", type=Path, default=Path("runs") / "multi_turn_slice")
    args = parser.parse_args(argv)
    wheel = cached_wheel()
    if wheel is None:
        print("no bfcl-eval wheel in the cache: python -m pip download bfcl-eval==2026.3.23 --no-deps "
              "-d ~/.cache/tool-calling-lab/bfcl", file=sys.stderr)
        return 2
    suites = {category: import_multi_turn(wheel, category) for category in SLICE}
    classes = api_classes(wheel, {name for suite in suites.values() for name in suite.docs})
    for kind in args.servers:
        with server(kind) as (base_url, served):
            backend = connect(base_url, args.model if kind == "lab" else served, "no-key-needed", timeout=600)
            for category, count in SLICE.items():
                started = time.perf_counter()
                path = args.out / f"{kind}-{category}-{backend.model}.jsonl"
                runs = run_cases(backend, suites[category].cases[:count], classes, path, settings=SETTINGS)
                print(f"\n{kind} server, {backend.model}, {category} ({time.perf_counter() - started:.0f} s "
                      f"this time; run file {path})")
                print(summary(runs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
