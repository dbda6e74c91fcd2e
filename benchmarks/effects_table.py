"""What each bench setting does on a model: one experiment per setting, two values each.

    python benchmarks/effects_table.py                          # the embedded default model
    python benchmarks/effects_table.py --model SmolLM2-135M-Instruct+tools --only names enums
    python benchmarks/effects_table.py --write                  # also store the table for the app

For every setting the bench offers, runs every suite case where the setting applies under each
of two values, everything else at its default, temperature 0 and seed 0, and prints the
right-tool and right-arguments rates with their 95% Wilson intervals and the difference in
points. ``--write`` merges the rows into ``toolkit/bench/effects.json``, which the app reads to
say beside the factor chooser what a setting did on the model it is asking.

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

from toolkit.bench.effects import EFFECTS_FILE, SETTINGS_MEASURED, effect_row, merge_effects  # noqa: E402
from toolkit.bench.experiment import Settings, Store, plan, run_experiment  # noqa: E402
from toolkit.bench.parameters import parameter_table  # noqa: E402
from toolkit.bench.suite import load_suite  # noqa: E402
from toolkit.client import connect_embedded  # noqa: E402
from toolkit.engine import BASE_MODEL  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=BASE_MODEL, help="an embedded model's name")
    parser.add_argument("--only", nargs="+", choices=list(SETTINGS_MEASURED), help="only these settings")
    parser.add_argument("--write", action="store_true", help=f"merge the rows into {EFFECTS_FILE.name}")
    args = parser.parse_args(argv)
    suite, backend = load_suite(), connect_embedded(args.model)
    rows, kinds, started = [], [], time.perf_counter()
    print(f"{args.model}, temperature 0, seed 0, every case where the setting applies")
    print("| setting | values | cases | right tool | right arguments | difference (points) |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        store = Store(Path(folder) / "effects.sqlite")
        for name in args.only or SETTINGS_MEASURED:
            values, categories, fixed = SETTINGS_MEASURED[name]
            cases = [case.id for case in suite.cases if case.category in categories]
            trials = plan(suite, Settings(temperature=0, **fixed), name, list(values), cases=cases)
            run_id = run_experiment(trials, backend, store, name=name, suite=suite)
            done = store.trials(run_id, full=True)  # with the calls, which the per-parameter view reads
            row = effect_row(name, values, done, args.model, categories, fixed, parameter_table(done, suite, [name]))
            rows.append(row)
            print(row["markdown"], flush=True)
            kinds.append(f"{name}: " + "; ".join(
                f"{value}: " + ", ".join(f"{kind} {c['right']}/{c['values']}" for kind, c in by_kind.items())
                for value, by_kind in row["parameters"].items()))
    print("\nright values per parameter kind, in calls to the right tool:")
    print("\n".join(kinds))
    seconds = time.perf_counter() - started
    print(f"({seconds / 60:.0f} min)")
    if args.write:
        merge_effects(rows)
        print(f"wrote {len(rows)} rows to {EFFECTS_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
