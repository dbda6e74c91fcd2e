"""What each bench setting does on a model: one experiment per setting, two values each.

    python benchmarks/effects_table.py                          # the embedded default model
    python benchmarks/effects_table.py --model SmolLM2-135M-Instruct+tools --only names enums
    python benchmarks/effects_table.py --write                  # also store the table for the app
    python benchmarks/effects_table.py --db runs/effects.sqlite  # keep the trials: a rerun reads them back
    python benchmarks/effects_table.py --stored                 # print the stored table (README), no model

For every setting the bench offers, runs every suite case where the setting applies under each
of two values, everything else at its default, temperature 0 and seed 0, and prints the
right-tool and right-arguments rates with their 95% Wilson intervals and, since both values ran
on the same cases, the paired difference: its 95% interval, the exact McNemar p and how many
cases only the first or only the second value got right. A setting is called real where the
paired p is below 0.05. ``--write`` merges the rows into ``toolkit/bench/effects.json``, which
the app reads to say beside the factor chooser what a setting did on the model it is asking.

These are measurements on the lab's own scenario suite, so nothing in the lab is tuned on them:
they describe the model, they are not a score to raise.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from the repository root

from toolkit.bench.effects import (  # noqa: E402
    EFFECTS_FILE,
    MARKDOWN_HEADER,
    SETTINGS_MEASURED,
    effect_row,
    load_effects,
    merge_effects,
)
from toolkit.bench.experiment import run_experiment
from toolkit.bench.parameters import parameter_table  # noqa: E402
from toolkit.bench.store import Store
from toolkit.bench.suite import load_suite  # noqa: E402
from toolkit.bench.trials import Settings, plan  # noqa: E402
from toolkit.client import connect_embedded  # noqa: E402
from toolkit.engine import BASE_MODEL  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=BASE_MODEL, help="an embedded model's name")
    parser.add_argument("--only", nargs="+", choices=list(SETTINGS_MEASURED), help="only these settings")
    parser.add_argument("--write", action="store_true", help=f"merge the rows into {EFFECTS_FILE.name}")
    parser.add_argument("--db", help="keep the trials in this SQLite file (default: a temporary one); "
                                     "a rerun on the same file reads every trial back instead of asking the model")
    parser.add_argument("--stored", action="store_true",
                        help=f"print the rows stored in {EFFECTS_FILE.name} for --model, as the README shows them")
    args = parser.parse_args(argv)
    if args.stored:
        rows = [row for row in load_effects() if row["model"] == args.model and "selection_paired" in row]
        order = list(SETTINGS_MEASURED)
        print(MARKDOWN_HEADER)
        print("\n".join(row["markdown"] for row in sorted(rows, key=lambda row: order.index(row["setting"]))))
        return 0
    suite, backend = load_suite(), connect_embedded(args.model)
    rows, kinds, started = [], [], time.perf_counter()
    print(f"{args.model}, temperature 0, seed 0, every case where the setting applies")
    print(MARKDOWN_HEADER)
    with tempfile.TemporaryDirectory() as folder:
        store = Store(Path(args.db) if args.db else Path(folder) / "effects.sqlite")
        for name in args.only or SETTINGS_MEASURED:
            values, categories, fixed = SETTINGS_MEASURED[name]
            cases = [case.id for case in suite.cases if case.category in categories]
            trials = plan(suite, Settings(temperature=0, **fixed), name, list(values), cases=cases)
            setting_started = time.perf_counter()
            run_id = run_experiment(trials, backend, store, name=name, suite=suite)
            done = store.trials(run_id, full=True)  # with the calls, which the per-parameter view reads
            row = effect_row(name, values, done, args.model, categories, fixed, parameter_table(done, suite, [name]))
            rows.append(row)
            print(row["markdown"], f"({time.perf_counter() - setting_started:.0f} s)", flush=True)
            if args.write:  # row by row, so a measurement stopped half way keeps what it finished
                merge_effects([row])
            kinds.append(f"{name}: " + "; ".join(
                f"{value}: " + ", ".join(f"{kind} {c['right']}/{c['values']}" for kind, c in by_kind.items())
                for value, by_kind in row["parameters"].items()))
        store.close()
    print("\nright values per parameter kind, in calls to the right tool:")
    print("\n".join(kinds))
    seconds = time.perf_counter() - started
    print(f"({seconds / 60:.0f} min)")
    if args.write:
        print(f"wrote {len(rows)} rows to {EFFECTS_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
