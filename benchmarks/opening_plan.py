"""Which experiment the app should open on: the four knobs the lab is about, each as a plan that
runs in about a minute on two cores, measured on the embedded default model.

    python benchmarks/opening_plan.py                         # every candidate, on the model
    python benchmarks/opening_plan.py --db runs/effects.sqlite  # trials the effects table ran are read back

Each candidate is planned as the page plans it (``pick_cases`` over the categories and
languages, seed 0, temperature 0 unless it is the factor, everything else at OpenAI's defaults)
and judged pair by pair (``toolkit.bench.paired``). It prints, per candidate, its trials, the
seconds the model took for them (the stored latency of each trial, so a trial read back from the
database counts what it cost when it ran) and the paired verdict on the right tool and on the
right arguments. The page opens on the candidate with the smallest paired p among those that fit
in ``--seconds``; if none is real there, the page keeps ``protocol`` (``toolkit.app.factors``).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from the repository root

from toolkit.bench.experiment import run_experiment
from toolkit.bench.paired import paired_differences  # noqa: E402
from toolkit.bench.store import Store  # noqa: E402
from toolkit.bench.suite import load_suite  # noqa: E402
from toolkit.bench.trials import Settings, pick_cases, plan  # noqa: E402
from toolkit.client import connect_embedded  # noqa: E402
from toolkit.engine import BASE_MODEL  # noqa: E402

CANDIDATES = {
    # knob: (values, categories, languages)
    "description": (["clear", "vague"], ["simple", "multiple", "irrelevance"], ["en", "zh"]),
    "enums": ([True, False], ["enum"], ["en", "zh"]),
    "temperature": ([0.0, 1.0], ["simple", "multiple"], ["en", "zh"]),
    "tool_choice": (["auto", "required"], ["simple", "multiple", "irrelevance"], ["en", "zh"]),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, nargs="+", default=[12, 16, 20, 24],
                        help="plan sizes to try, in cases (each runs twice: one trial per value)")
    parser.add_argument("--seconds", type=float, default=60, help="the most a plan may take")
    parser.add_argument("--db", help="SQLite file to read trials back from and keep new ones in")
    args = parser.parse_args(argv)
    suite, backend = load_suite(), connect_embedded(BASE_MODEL)
    started = time.perf_counter()
    best = None
    print(f"{BASE_MODEL}, seed 0; candidates that fit in {args.seconds:.0f} s are marked *")
    print("| knob | values | cases | trials | model seconds | right tool: paired | right arguments: paired |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        store = Store(Path(args.db) if args.db else Path(folder) / "opening.sqlite")
        for knob, (values, categories, languages) in CANDIDATES.items():
            chosen = suite.filter(categories, languages)
            for size in args.cases:
                cases = pick_cases(chosen, min(size, len(chosen)))
                trials = plan(suite, Settings(), knob, values, cases=cases)
                run_id = run_experiment(trials, backend, store, name=f"opening {knob} {size}", suite=suite)
                done = store.trials(run_id)
                seconds = float(done["latency_s"].sum())
                cells = []
                for d in paired_differences(done, knob):
                    cells.append(f"{d.points:+d} [{100 * d.low:+.0f}, {100 * d.high:+.0f}], p {d.p:.3f} "
                                 f"({d.only_first} / {d.only_second})")
                    if seconds <= args.seconds and (best is None or d.p < best[0]):
                        best = (d.p, knob, size, d.aspect)
                mark = "*" if seconds <= args.seconds else ""
                print(f"| {knob}{mark} | {' vs '.join(map(str, values))} | {len(cases)} | {len(done)} | "
                      f"{seconds:.0f} | {cells[0]} | {cells[1]} |", flush=True)
        store.close()
    if best:
        p, knob, size, aspect = best
        print(f"\nclearest within {args.seconds:.0f} s: {knob} on {size} cases ({aspect}), p {p:.3f}"
              + ("" if p < 0.05 else ": not real, so the page keeps protocol"))
    print(f"({(time.perf_counter() - started) / 60:.1f} min)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
