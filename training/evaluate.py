"""Measure the tool-tuned model against the base model, on material it never trained on.

    python -m training.evaluate table --bfcl ~/.cache/tool-calling-lab/bfcl/bfcl_eval-2026.3.23-py3-none-any.whl
    python -m training.evaluate descriptions      # clear vs vague, real vs hidden names
    python -m training.evaluate enums             # enum constraints on and off
    python -m training.evaluate speed             # tokens per second, with and without the adapter
    python -m training.evaluate curve --run training/runs/tools   # each checkpoint of a run
    python -m training.evaluate rule --adapter runs/scale/scale.lora.gguf   # the shipping rule's table

Everything goes through the lab's own endpoint and experiment runner (``toolkit.bench.experiment``),
at temperature 0, so a figure here is what a learner gets in the app. The adapter was trained
only on ``training.synthetic`` conversations: the scenario suite and BFCL are held out, which
is what makes these figures mean anything.

``--model`` picks which tuned model is measured against the base (default: the first), and
``--adapter`` serves another adapter file under its name (default: the one the lab ships),
with ``--thresholds`` to give it its own decision thresholds. Each command prints a
Markdown table: rate [95% Wilson interval] for selection (the right tools) and arguments
(right tools with right arguments), as the lab scores everywhere else.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

import pandas as pd

from toolkit.bench.experiment import run_experiment
from toolkit.bench.rates import rate_table
from toolkit.bench.store import Store
from toolkit.bench.suite import load_suite
from toolkit.bench.trials import Settings, plan
from toolkit.client import connect
from toolkit.engine import BASE_MODEL, TUNED_MODEL, Engine
from toolkit.engine.decide import Thresholds
from toolkit.engine.model import TUNED_MODELS, with_adapter
from toolkit.engine.serve import base_url_of, make_server

BFCL_CATEGORIES = ["simple_python", "multiple", "irrelevance"]
NEW_MODEL = "SmolLM2-135M-Instruct+scale"
"""The name ``rule`` serves a new adapter under, beside the shipped models."""


def served(args, adapter: Path | None = None) -> tuple:
    """The tuned models to serve: the shipped ones, with --model's from --adapter (or the
    ``adapter`` given) and --thresholds where they are given."""
    thresholds = Thresholds(*args.thresholds) if args.thresholds else None
    return with_adapter(args.model, adapter or args.adapter, thresholds)


def models(args) -> list[str]:
    return [BASE_MODEL, args.model]


def engine_for(args, adapter: Path | None = None) -> Engine:
    return Engine(tuned=served(args, adapter))


def backend_for(engine: Engine):
    """The lab's endpoint in front of this engine, in this process."""
    server = make_server(engine=engine)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return connect(base_url_of(server), BASE_MODEL, "no-key-needed", timeout=600, max_retries=0)


def run(backend, suite, base: Settings, factor: str, values: list, cases=None, second=None, second_values=None,
        label: str = "") -> pd.DataFrame:
    """The trials of one experiment as a frame, with a progress line on stderr."""
    trials = plan(suite, base, factor, values, second, second_values, cases=cases)
    started = time.perf_counter()

    def progress(done, total, row):
        print(f"\r{label} {done}/{total} ({time.perf_counter() - started:.0f} s)", end="", flush=True,
              file=sys.stderr)

    with tempfile.TemporaryDirectory() as folder, Store(Path(folder) / "runs.db") as store:
        run_id = run_experiment(trials, backend, store, suite=suite, progress=progress)
        frame, outcome = store.trials(run_id), store.run(run_id)
    if outcome["status"] != "finished":  # a figure from part of the trials would mislead
        raise SystemExit(f"{label}: the run {outcome['status']} after {len(frame)} trials: {outcome.get('error')}")
    print(file=sys.stderr)
    return frame


def cell(row) -> tuple[str, str]:
    def one(aspect):
        return (f"{row[f'{aspect}_successes']}/{row['n']} = {row[f'{aspect}_rate']:.0%} "
                f"[{row[f'{aspect}_low']:.0%}, {row[f'{aspect}_high']:.0%}]")
    return one("selection"), one("arguments")


def markdown(frame: pd.DataFrame, by: list[str]) -> str:
    table = rate_table(frame, by)
    lines = ["| " + " | ".join([*by, "selection", "arguments"]) + " |", "|" + "---|" * (len(by) + 2)]
    for _, row in table.iterrows():
        lines.append("| " + " | ".join([*(str(row[b]) for b in by), *cell(row)]) + " |")
    return "\n".join(lines)


# ---------------------------------------------------------------- commands

def table(args) -> None:
    """Base vs tuned, OpenAI's defaults (the engine decides between a call and text)."""
    backend = backend_for(engine_for(args))
    suite = load_suite()
    # At temperature 0 the base model's rows do not change between adapters: --tuned-only skips them.
    measured = [args.model] if args.tuned_only else models(args)
    frame = run(backend, suite, Settings(max_tokens=128), "model", measured, label="suite")
    print("## The lab's scenario suite, every case, tool_choice auto\n")
    print(markdown(frame, ["category", "model"]))
    print()
    print(markdown(frame, ["model"]))
    if args.bfcl:
        from toolkit.bench.bfcl import import_bfcl_category

        frames = []
        for category in BFCL_CATEGORIES:
            imported = import_bfcl_category(args.bfcl, category)
            ids = [case.id for case in imported.cases][: args.cases]
            one = run(backend, imported, Settings(max_tokens=128), "model", measured, cases=ids, label=category)
            frames.append(one.assign(category=category))
        print(f"\n## BFCL v4, the first {args.cases} cases of each category, tool_choice auto\n")
        print(markdown(pd.concat(frames), ["category", "model"]))


def descriptions(args) -> None:
    """Clear vs vague descriptions, with real and with hidden names: does the model read them?"""
    backend = backend_for(engine_for(args))
    suite = load_suite().filter(["simple", "multiple"])
    measured = [args.model] if args.tuned_only else models(args)
    frames = [run(backend, suite, Settings(names=names, tool_choice="required", parallel_tool_calls=False,
                                           distractors=3, seed=seed), "model", measured,
                  second="description", second_values=["clear", "vague"], label=f"names {names}, seed {seed}"
                  ).assign(names=names)
              for names in args.names for seed in range(args.seeds)]
    frame = pd.concat(frames)
    print(f"## Suite simple + multiple, 3 distractors, required, one call, seeds 0-{args.seeds - 1}\n")
    print(markdown(frame, ["model", "names", "description"]))


def enums(args) -> None:
    backend = backend_for(engine_for(args))
    suite = load_suite().filter(["enum"])
    frame = run(backend, suite, Settings(tool_choice="required", parallel_tool_calls=False), "enums",
                [True, False], second="model", second_values=models(args), label="enums")
    print("## Suite enum cases, required, one call\n")
    print(markdown(frame, ["model", "enums"]))


def speed(args) -> None:
    """Generation speed with and without the adapter, measured in one run, alternating."""
    names = models(args)
    rate = speeds(engine_for(args), names, args.rounds)
    for name in names:
        print(f"{name:32s} {rate[name]:6.1f} tokens/s")
    print(f"tuned / base: {rate[args.model] / rate[BASE_MODEL]:.2f}")


def speeds(engine: Engine, names: list[str], rounds: int) -> dict[str, float]:
    """Tokens per second of each model, measured in one run, alternating."""
    body = {"messages": [{"role": "user", "content": "Write a short paragraph about rivers."}],
            "max_tokens": 96, "temperature": 0, "seed": 0}
    totals = {name: [0, 0.0] for name in names}
    for name in names:
        engine.complete({**body, "model": name, "max_tokens": 4})  # load and warm each first
    for _ in range(rounds):
        for name in names:
            started = time.perf_counter()
            reply = engine.complete({**body, "model": name})
            totals[name][0] += reply["usage"]["completion_tokens"]
            totals[name][1] += time.perf_counter() - started
    return {name: tokens / seconds for name, (tokens, seconds) in totals.items()}


def rule(args) -> None:
    """Every measurement the shipping rule reads (``training/ship_rule.py``), for the base, each
    shipped adapter and, with --adapter, a new one served as ``NEW_MODEL``; then the rule's verdict
    for the new adapter against the shipped ones (without --adapter: for each shipped adapter
    against the others, to show where they stand)."""
    from benchmarks.after_results import ONE_STEP, run as after_results
    from toolkit.bench.paired import compare_outcomes, paired_frame
    from toolkit.bench.rates import wilson_interval
    from toolkit.engine.model import SECOND_TUNED_THRESHOLDS, EmbeddedModel, embedded_models
    from training.ship_rule import Measured, decide

    tuned = TUNED_MODELS
    if args.adapter:
        thresholds = Thresholds(*args.thresholds) if args.thresholds else SECOND_TUNED_THRESHOLDS
        tuned += (EmbeddedModel(NEW_MODEL, str(args.adapter), thresholds),)
    engine = Engine(tuned=tuned)
    names = list(embedded_models(tuned))
    backend = backend_for(engine)
    suite = load_suite()

    def first_cases(part):
        """--per-category: the first N cases of each category, for a quick look."""
        if not args.per_category:
            return None
        kept, counts = [], {}
        for case in part.cases:
            counts[case.category] = counts.get(case.category, 0) + 1
            if counts[case.category] <= args.per_category:
                kept.append(case.id)
        return kept

    def paired(frame, factor, first, second, aspect):
        pairs, left_out = paired_frame(frame, factor, first, second)
        return compare_outcomes(pairs[f"{aspect}_ok_first"], pairs[f"{aspect}_ok_second"], pairs["case_id"],
                                factor=factor, first=first, second=second, aspect=aspect, left_out=left_out,
                                repeats=False)  # several seeds are several distractor draws, not repeats

    described = pd.concat([
        run(backend, suite.filter(["simple", "multiple"]),
            Settings(names=naming, tool_choice="required", parallel_tool_calls=False, distractors=3, seed=seed),
            "model", names, cases=first_cases(suite.filter(["simple", "multiple"])), second="description",
            second_values=["clear", "vague"], label=f"names {naming}, seed {seed}").assign(names=naming)
        for naming in ("hidden", "real") for seed in range(args.seeds)])
    irrelevant = run(backend, suite.filter(["irrelevance"]), Settings(max_tokens=128), "model", names,
                     cases=first_cases(suite.filter(["irrelevance"])), label="irrelevance")
    enum_cases = run(backend, suite.filter(["enum"]), Settings(tool_choice="required", parallel_tool_calls=False),
                     "model", names, cases=first_cases(suite.filter(["enum"])), label="enums")
    facts = {}
    for name in names:
        rows = [row for row in after_results(engine, name, show=False) if row["kind"] in ONE_STEP]
        facts[name] = (sum(row["fact"] for row in rows), len(rows))
    rates = speeds(engine, names, args.rounds)

    measured, table = {}, []
    for name in names:
        hidden = described[(described.names == "hidden") & (described.model == name)]
        real = described[(described.names == "real") & (described.model == name) & (described.description == "clear")]
        mine = irrelevant[irrelevant.model == name]
        measured[name] = Measured(name, paired(hidden, "description", "vague", "clear", "selection"),
                                  real_names=float(real.selection_ok.mean()), irrelevance=float(mine.selection_ok.mean()),
                                  facts_stated=facts[name][0] / facts[name][1], tokens_per_second=rates[name])

        def share(k, n):
            low, high = wilson_interval(k, n)
            return f"{k}/{n} = {k / n:.0%} [{low:.0%}, {high:.0%}]"

        d = measured[name].descriptions
        enum_mine = enum_cases[enum_cases.model == name]
        table.append([name, f"{d.second_rate:.0%} vs {d.first_rate:.0%}: {d.points:+d} [{100 * d.low:+.0f}, "
                            f"{100 * d.high:+.0f}], p {d.p:.2g}",
                      share(int(real.selection_ok.sum()), len(real)), share(int(mine.selection_ok.sum()), len(mine)),
                      share(*facts[name]), share(int(enum_mine.arguments_ok.sum()), len(enum_mine)),
                      f"{rates[name] / rates[BASE_MODEL]:.2f}"])
    print(f"## What the shipping rule reads (held out, temperature 0, {args.seeds} distractor draw(s))\n")
    print("| model | names hidden: clear vs vague, right tool (paired) | real names, clear: right tool "
          "| irrelevance: no call | after results: a fact stated | enum cases: every argument right | speed |")
    print("|---|---|---|---|---|---|---|")
    for row in table:
        print("| " + " | ".join(row) + " |")
    base, adapters = measured[BASE_MODEL], [measured[name] for name in names if name != BASE_MODEL]
    candidates = [measured[NEW_MODEL]] if args.adapter else adapters
    for new in candidates:
        enums_paired = paired(enum_cases, "model", BASE_MODEL, new.name, "arguments")
        verdict = decide(base, [other for other in adapters if other.name != new.name], new, enums_paired)
        print(f"\n## The rule for {new.name}\n")
        print(verdict.table())


def curve(args) -> None:
    """Held-out accuracy after each checkpoint: suite simple + multiple, hidden names, 3 distractors."""
    from training.convert_adapter import convert

    checkpoints = sorted(args.run.glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[1]))
    losses = [json.loads(line) for line in (args.run / "loss.jsonl").read_text().splitlines()]
    suite = load_suite().filter(["simple", "multiple"])
    settings = Settings(tool_choice="required", parallel_tool_calls=False, distractors=3, names="hidden")
    print("| conversations | training loss (last step) | selection, names hidden | arguments, names hidden |")
    print("|---|---|---|---|")
    base = run(backend_for(Engine(tuned=())), suite, settings, "model", [BASE_MODEL], label="base")
    print("| 0 (base) | – | " + " | ".join(cell(rate_table(base).iloc[0])) + " |", flush=True)
    for checkpoint in checkpoints:
        seen = int(checkpoint.name.split("-")[1])
        gguf = checkpoint / "adapter.gguf"
        if not gguf.is_file():
            convert(checkpoint, gguf)
        frame = run(backend_for(engine_for(args, gguf)), suite, settings, "model", [args.model], label=checkpoint.name)
        loss = next((entry["loss"] for entry in reversed(losses) if entry["conversations"] <= seen), float("nan"))
        print(f"| {seen} | {loss:.3f} | " + " | ".join(cell(rate_table(frame).iloc[0])) + " |", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=["table", "descriptions", "enums", "speed", "curve", "rule"])
    parser.add_argument("--model", default=TUNED_MODEL, choices=[model.name for model in TUNED_MODELS],
                        help="the tuned model measured against the base")
    parser.add_argument("--adapter", type=Path,
                        help="serve this GGUF adapter as --model (default: the file the lab ships)")
    parser.add_argument("--thresholds", type=float, nargs=3, metavar=("CALL", "ANOTHER_CALL", "AFTER_RESULTS"),
                        help="--model's decision thresholds (default: its shipped ones; scripts/calibrate_decisions.py fits them)")
    parser.add_argument("--bfcl", help="bfcl-eval wheel or data folder, for the BFCL rows of 'table'")
    parser.add_argument("--cases", type=int, default=40, help="BFCL cases per category")
    parser.add_argument("--seeds", type=int, default=3, help="seeds (distractor draws) for 'descriptions'")
    parser.add_argument("--names", nargs="+", default=["real", "hidden"], choices=["real", "hidden"],
                        help="which namings 'descriptions' runs (hidden alone: the row the decision rule reads)")
    parser.add_argument("--tuned-only", action="store_true",
                        help="'table' and 'descriptions' for the tuned model alone (the base's rows are the same for every adapter)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of 'speed' (and of 'rule''s speed row)")
    parser.add_argument("--per-category", type=int,
                        help="'rule' on the first N suite cases of each category only (a quick look, not a verdict)")
    parser.add_argument("--run", type=Path, default=Path("training/runs/tools"), help="run folder for 'curve'")
    args = parser.parse_args(argv)
    if args.adapter and not args.adapter.is_file():  # fail now, not after minutes of the other models
        raise SystemExit(f"no adapter file at {args.adapter}")
    {"table": table, "descriptions": descriptions, "enums": enums, "speed": speed, "curve": curve,
     "rule": rule}[args.command](args)


if __name__ == "__main__":
    main()
