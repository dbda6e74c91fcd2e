"""With the tool names hidden, do clear descriptions beat vague ones?

    python benchmarks/descriptions_names_hidden.py                    # the three embedded models
    python benchmarks/descriptions_names_hidden.py --models SmolLM2-135M-Instruct --out -

With real names, the embedded models choose a tool by its name, so the effects table's
``description`` row (names real) says little about whether they read descriptions at all. This
hides the names (``tool_a``, ``tool_b``, ...), so that only the descriptions and the parameters
tell the tools apart, and asks every ``simple`` and ``multiple`` question of the suite with the
clear descriptions and with the vague ones, temperature 0, seed 0, everything else at its
default. Both values run on the very same cases, so each model gets one paired row, the same
shape as an effects-table row (``toolkit.bench.effects.effect_row``): both rates with their 95%
Wilson intervals, the paired difference with its interval, the exact McNemar p and how many
cases only one description got right.

``data/descriptions_names_hidden.json`` keeps the rows and the command; ``docs/bench.md`` quotes
them. The trials, requests and replies are kept in ``runs/descriptions_names_hidden.sqlite``, so a
run cut short resumes where it stopped, and a rerun reads every trial back. Each model takes
5-10 minutes on two cores.

These are the lab's own scenarios, held out: nothing was trained or tuned on them.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from the repository root, like the others here

from toolkit.bench.effects import effect_row  # noqa: E402
from toolkit.bench.experiment import run_experiment  # noqa: E402
from toolkit.bench.parameters import parameter_table  # noqa: E402
from toolkit.bench.store import Store  # noqa: E402
from toolkit.bench.suite import load_suite  # noqa: E402
from toolkit.bench.trials import Settings, plan  # noqa: E402
from toolkit.client import connect_embedded  # noqa: E402
from toolkit.engine import EMBEDDED_MODELS  # noqa: E402

CATEGORIES = ["simple", "multiple"]  # questions that need a tool: where choosing one can go wrong
VALUES = ("clear", "vague")
FIXED = {"names": "hidden"}
DEFAULT_OUT = Path("data") / "descriptions_names_hidden.json"
DEFAULT_DB = Path("runs") / "descriptions_names_hidden.sqlite"


def measure(model: str, store: Store) -> dict:
    """One paired row: clear against vague descriptions, names hidden, on ``model``."""
    suite, backend = load_suite(), connect_embedded(model)
    cases = [case.id for case in suite.cases if case.category in CATEGORIES]
    trials = plan(suite, Settings(temperature=0, seed=0, **FIXED), "description", list(VALUES), cases=cases)
    run_id = run_experiment(trials, backend, store, name=f"descriptions, names hidden ({model})", suite=suite)
    done = store.trials(run_id, full=True)  # with the calls, which the per-parameter view reads
    return effect_row("description", VALUES, done, model, CATEGORIES, FIXED,
                      parameter_table(done, suite, ["description"]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(EMBEDDED_MODELS), choices=list(EMBEDDED_MODELS))
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="where to write the record ('-': print it only)")
    parser.add_argument("--db", default=str(DEFAULT_DB), help="SQLite file that keeps the trials")
    args = parser.parse_args(argv)
    Path(args.db).parent.mkdir(parents=True, exist_ok=True)
    store = Store(Path(args.db))
    rows = []
    try:
        for model in args.models:
            started = time.perf_counter()
            rows.append(measure(model, store))
            print(f"{model}: {rows[-1]['markdown']} ({time.perf_counter() - started:.0f} s)", flush=True)
    finally:
        store.close()
    record = {
        "what": "clear against vague tool descriptions with the tool names hidden, paired on the same cases",
        "command": "python benchmarks/descriptions_names_hidden.py"
                   + ("" if args.models == list(EMBEDDED_MODELS) else " --models " + " ".join(args.models)),
        "recorded": datetime.now(timezone.utc).date().isoformat(),
        "rows": rows,
    }
    if args.out != "-":
        Path(args.out).write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", "utf-8")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
