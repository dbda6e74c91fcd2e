"""Does a model pick the right tool less often when more tools are on offer?

    nice -n 19 python benchmarks/distractor_sweep.py --categories simple --cases 6   # recorded
    nice -n 19 python benchmarks/distractor_sweep.py                 # all 39 cases that fit
    python benchmarks/distractor_sweep.py --cases 2 --levels 0 16 --out -   # a quick look

The articles this lab follows say that beyond about ten tools a model starts to choose
badly. This runs that experiment with the lab's experiment bench (``toolkit.bench.experiment``):
the suite's cases that expect exactly one call and offer only the tool they need, each asked
with 0, 4, 8 and 16 extra tools from the suite (the ``distractors`` setting: picked at random
per case, the same for the same seed), so the model chooses among 1, 5, 9 and 17 tools. It is
forced to make one call (``tool_choice="required"``, ``parallel_tool_calls=false``), at
temperature 0 with seed 0, so that selection is the only thing that can go wrong first.

It prints the selection and argument rates per number of extra tools, with 95% Wilson
intervals, and writes them with the settings, the cases and the failure reasons to
``data/distractor_sweep.json`` with every trial's verdict (``--out -`` writes nothing). The trials,
requests and replies are kept in ``runs/distractor_sweep.sqlite``, so a run cut short resumes
where it stopped: finished trials are read back, not asked again.
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from the repository root, like the others here

from toolkit.bench.experiment import run_experiment
from toolkit.bench.rates import rate_table
from toolkit.bench.store import Store  # noqa: E402
from toolkit.bench.suite import lesson_suite  # noqa: E402
from toolkit.bench.suite_model import CATEGORIES, Suite  # noqa: E402
from toolkit.bench.trials import Settings, offered_tools, plan  # noqa: E402
from toolkit.client import connect  # noqa: E402

LEVELS = (0, 4, 8, 16)
BASE = Settings(tool_choice="required", parallel_tool_calls=False, temperature=0.0, seed=0)
DEFAULT_OUT = Path("data") / "distractor_sweep.json"
DEFAULT_DB = Path("runs") / "distractor_sweep.sqlite"


def eligible_cases(suite: Suite, most: int, seed: int = 0) -> Suite:
    """The cases that expect one call and can take ``most`` extra tools (those that offer only
    the tool they need: the suite has 17 tools), in file order."""
    keep = []
    for case in suite.cases:
        if len(case.expected) != 1:
            continue
        try:
            offered_tools(case, suite, BASE.model_copy(update={"distractors": most, "seed": seed}))
        except ValueError:
            continue
        keep.append(case)
    return Suite(suite.tools, tuple(keep), suite.source)


def spread(suite: Suite, n: int) -> list[str]:
    """``n`` case ids taken in turn from each category and language, in file order."""
    groups: dict[tuple[str, str], list[str]] = {}
    for case in suite.cases:
        groups.setdefault((case.category, case.language), []).append(case.id)
    picked = []
    for row in range(max(map(len, groups.values()), default=0)):
        picked += [ids[row] for ids in groups.values() if row < len(ids)]
    return picked[:n]


def sweep_plan(suite: Suite, levels=LEVELS, cases: int | None = None, seed: int = 0,
               model: str | None = None, categories: list[str] | None = None):
    """The trials of the sweep: every chosen case at every level of extra tools."""
    chosen = eligible_cases(suite if not categories else suite.filter(categories=categories), max(levels), seed)
    if not len(chosen):
        raise SystemExit("no case of the suite can take that many extra tools")
    ids = spread(chosen, cases or len(chosen))
    base = BASE.model_copy(update={"seed": seed, "model": model})
    return plan(suite, base, "distractors", list(levels), cases=ids)


def summary(frame) -> list[dict]:
    """One row per level: n, both rates with their intervals, mean prompt tokens, reasons."""
    table = rate_table(frame, ["distractors"])
    rows = []
    for record in table.to_dict("records"):
        level = int(record["distractors"])
        trials = frame[frame["distractors"] == level]
        rows.append({
            "distractors": level, "tools_offered": level + 1, "n": int(record["n"]),
            **{f"{aspect}_{part}": (int(record[f"{aspect}_{part}"]) if part == "successes"
                                    else round(float(record[f"{aspect}_{part}"]), 4))
               for aspect in ("selection", "arguments")
               for part in ("successes", "rate", "low", "high")},
            "mean_prompt_tokens": round(float(trials["prompt_tokens"].mean()), 1),
            "reasons": dict(Counter(r for r in trials["reason"] if isinstance(r, str))),  # a pass has none
        })
    return rows


def print_table(rows: list[dict]) -> None:
    print(f"{'extra tools':>11} {'offered':>7} {'n':>3}  {'selection':<28} {'arguments':<28} prompt tokens")
    for row in rows:
        cells = []
        for aspect in ("selection", "arguments"):
            cells.append(f"{row[f'{aspect}_successes']:>2}/{row['n']:<2} {row[f'{aspect}_rate']:6.1%} "
                         f"[{row[f'{aspect}_low']:5.1%}, {row[f'{aspect}_high']:5.1%}]")
        print(f"{row['distractors']:>11} {row['tools_offered']:>7} {row['n']:>3}  {cells[0]:<28} "
              f"{cells[1]:<28} {row['mean_prompt_tokens']:>7.0f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", type=int, nargs="+", default=list(LEVELS),
                        help="numbers of extra tools (default: 0 4 8 16)")
    parser.add_argument("--cases", type=int, default=None,
                        help="how many cases, spread over categories and languages (default: all that fit)")
    parser.add_argument("--categories", nargs="+", choices=CATEGORIES,
                        help="only cases of these categories (default: every one with cases that fit)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model", default=None, help="a model the endpoint serves (default: its own)")
    parser.add_argument("--db", default=str(DEFAULT_DB), help=f"SQLite file (default {DEFAULT_DB})")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help=f"JSON result (default {DEFAULT_OUT}; - for none)")
    args = parser.parse_args(argv)

    suite = lesson_suite()
    trials = sweep_plan(suite, args.levels, args.cases, args.seed, args.model, args.categories)
    backend = connect()
    case_ids = list(dict.fromkeys(t.case_id for t in trials))
    print(f"{len(trials)} trials ({len(case_ids)} cases x {len(args.levels)} levels) on {backend.label}",
          file=sys.stderr, flush=True)
    started = time.perf_counter()

    def progress(done: int, total: int, row: dict) -> None:
        mark = "ok" if row["selection_ok"] else row["reason"]
        print(f"{done}/{total} after {time.perf_counter() - started:.0f} s: {row['case_id']} "
              f"+{row['factor_values']['distractors']} {mark}",
              file=sys.stderr, flush=True)

    Path(args.db).parent.mkdir(parents=True, exist_ok=True)
    with Store(args.db) as store:
        run_id = run_experiment(trials, backend, store, name="distractor sweep", progress=progress)
        run = store.run(run_id)
        frame = store.trials(run_id)
    seconds = time.perf_counter() - started
    rows = summary(frame)
    print(f"\nrun {run_id}: {run['status']}, {len(frame)} trials, {int(frame['cached'].sum())} read back, "
          f"{seconds:.0f} s\n")
    print_table(rows)
    if run["status"] != "finished":
        print(f"error: {run['error']}", file=sys.stderr)
        return 1
    if args.out != "-":
        command = "python benchmarks/distractor_sweep.py" + "".join(
            f" {flag} {' '.join(map(str, value)) if isinstance(value, list) else value}"
            for flag, value in (("--categories", args.categories), ("--cases", args.cases),
                                ("--levels", args.levels), ("--seed", args.seed), ("--model", args.model))
            if value is not None and value != parser.get_default(flag.strip("-")))
        record = {
            "what": "selection among 1 + k tools: suite cases with one expected call, k extra tools",
            "command": command,
            "recorded": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
            "backend": backend.label, "model": args.model or backend.model,
            "settings": BASE.model_copy(update={"seed": args.seed}).model_dump(exclude={"distractors", "model"}),
            "cases": case_ids,
            # the model's own time per trial, summed: a run read back from the store keeps it
            "model_seconds": round(float(frame["latency_s"].sum())),
            "machine": f"{platform.machine()}, 2 CPU cores shared with other work",
            "levels": rows,
            "trials": [{"case_id": t.case_id, "distractors": int(t.distractors), "chosen": t.chosen_tools,
                        "selection_ok": bool(t.selection_ok), "arguments_ok": bool(t.arguments_ok),
                        "reason": t.reason if isinstance(t.reason, str) else None}
                       for t in frame.itertuples()],
        }
        Path(args.out).write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"\nwritten to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
