"""Does a system prompt that says how to use tools change what the embedded model does?

    python benchmarks/system_prompt_guidance.py                        # both embedded models
    python benchmarks/system_prompt_guidance.py --models SmolLM2-135M-Instruct --out -

The source article advises a system prompt that says when to use the tools ("call a tool for
fresh or exact information instead of answering from memory"), where a generic "you are a
friendly assistant" invites the model to answer from memory. The bench's ``system_prompt``
setting sends ``toolkit.bench.trials.GUIDANCE``, written once from that advice: when to call a
tool, which one, and what to do when none fits. This asks every ``simple``, ``multiple`` and
``irrelevance`` question of the suite with the guidance and without it, under
``tool_choice="auto"`` (the model decides whether to call at all), temperature 0, seed 0,
everything else at its default.

It prints, per model, the right-tool and right-arguments rates with 95% Wilson intervals, for
all questions and split into those that need a tool and those that need none (where the right
reply is no call), how the trials failed, and per question whether the guidance turned a
failure into a pass or the other way round. ``data/system_prompt_guidance.json`` keeps it all
with every trial's verdict; lesson 10 reads it. The trials, requests and replies are kept in
``runs/system_prompt_guidance.sqlite``, so a run cut short resumes where it stopped. It runs on
the lesson suite (``lesson_suite``: the 42 questions lesson 10 quotes); the effects table's
``system_prompt`` row is measured by ``benchmarks/effects_table.py`` on the whole suite.

These are the lab's own scenarios, held out: the guidance was not tuned on them.
"""
from __future__ import annotations

import argparse
import json
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
from toolkit.bench.trials import GUIDANCE, Settings, plan  # noqa: E402
from toolkit.client import connect_embedded  # noqa: E402
from toolkit.engine import EMBEDDED_MODELS  # noqa: E402

CATEGORIES = ["simple", "multiple", "irrelevance"]
BASE = Settings(temperature=0.0, seed=0)  # tool_choice "auto": calling at all is the model's choice
DEFAULT_OUT = Path("data") / "system_prompt_guidance.json"
DEFAULT_DB = Path("runs") / "system_prompt_guidance.sqlite"


def need(category: str) -> str:
    return "needs no tool" if category == "irrelevance" else "needs a tool"


def rates(frame, by: list[str]) -> list[dict]:
    """One row per group: n and both rates with their 95% Wilson intervals, as plain numbers."""
    rows = []
    for record in rate_table(frame, by).to_dict("records"):
        row = {name: record[name] for name in by}
        row["n"] = int(record["n"])
        for aspect in ("selection", "arguments"):
            row[aspect] = {"successes": int(record[f"{aspect}_successes"]),
                           "rate": round(float(record[f"{aspect}_rate"]), 4),
                           "low": round(float(record[f"{aspect}_low"]), 4),
                           "high": round(float(record[f"{aspect}_high"]), 4)}
        rows.append(row)
    return rows


def cell(rate: dict, n: int) -> str:
    return f"{rate['successes']:>2}/{n:<2} {rate['rate']:4.0%} [{rate['low']:4.0%}, {rate['high']:4.0%}]"


def paired(frame) -> dict[str, int]:
    """Per question, right arguments without and with the guidance: which way each one moved."""
    by_case = frame.pivot(index="case_id", columns="guidance", values="arguments_ok")
    off, on = by_case["off"], by_case["on"]
    return {"only_with": int((on & ~off).sum()), "only_without": int((off & ~on).sum()),
            "both": int((on & off).sum()), "neither": int((~on & ~off).sum())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(EMBEDDED_MODELS), choices=list(EMBEDDED_MODELS))
    parser.add_argument("--db", default=str(DEFAULT_DB), help=f"SQLite file (default {DEFAULT_DB})")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help=f"JSON result (default {DEFAULT_OUT}; - for none)")
    args = parser.parse_args(argv)

    suite = lesson_suite()
    cases = [case.id for case in suite.cases if case.category in CATEGORIES]
    trials = plan(suite, BASE, "system_prompt", [False, True], cases=cases)
    started = time.perf_counter()
    print(f"{len(cases)} cases ({', '.join(CATEGORIES)}) x guidance off/on, tool_choice auto, "
          f"temperature 0, seed 0\nguidance: {GUIDANCE}\n", flush=True)
    models, records = [], []
    Path(args.db).parent.mkdir(parents=True, exist_ok=True)
    with Store(args.db) as store:
        for model in args.models:
            backend = connect_embedded(model)
            run_id = run_experiment(trials, backend, store, name=f"system prompt guidance: {model}", suite=suite)
            run, frame = store.run(run_id), store.trials(run_id, full=True)
            if run["status"] != "finished":
                print(f"{model}: run {run['status']}: {run['error']}", file=sys.stderr)
                return 1
            frame["guidance"] = frame["system_prompt"].map({False: "off", True: "on"})
            frame["need"] = frame["category"].map(need)
            overall, split = rates(frame, ["guidance"]), rates(frame, ["need", "guidance"])
            reasons = {value: dict(Counter(r if isinstance(r, str) else "pass" for r in group["reason"]))
                       for value, group in frame.groupby("guidance")}
            print(f"{model}: {len(frame)} trials, {frame['latency_s'].sum():.0f} s of model time")
            print(f"  {'questions':<14} {'guidance':<8} {'right tool':<24} right arguments")
            for row in [{"need": "all", **r} for r in overall] + split:
                print(f"  {row['need']:<14} {row['guidance']:<8} {cell(row['selection'], row['n']):<24} "
                      f"{cell(row['arguments'], row['n'])}")
            print("  failures:", reasons)
            moved = paired(frame)
            print(f"  arguments right only with the guidance {moved['only_with']}, only without "
                  f"{moved['only_without']}, both {moved['both']}, neither {moved['neither']}\n", flush=True)
            models.append({"model": model, "overall": overall, "by_need": split, "reasons": reasons,
                           "paired": moved, "model_seconds": round(float(frame["latency_s"].sum()))})
            records += [{"model": model, "case_id": t.case_id, "need": t.need, "guidance": t.guidance,
                         "chosen": t.chosen_tools, "expected": t.expected_tools,
                         "selection_ok": bool(t.selection_ok), "arguments_ok": bool(t.arguments_ok),
                         "reason": t.reason if isinstance(t.reason, str) else None}
                        for t in frame.itertuples()]
    print(f"({(time.perf_counter() - started) / 60:.1f} min)")
    if args.out != "-":
        command = "python benchmarks/system_prompt_guidance.py" + (
            f" --models {' '.join(args.models)}" if args.models != list(EMBEDDED_MODELS) else "")
        record = {
            "what": "the same questions with and without the guidance system prompt, tool_choice auto",
            "command": command,
            "recorded": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
            "guidance": GUIDANCE,
            "settings": BASE.model_dump(exclude={"system_prompt", "model"}),
            "categories": CATEGORIES,
            "cases": cases,
            "models": models,
            "trials": records,
        }
        Path(args.out).write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
