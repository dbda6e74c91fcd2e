"""How often the bench's retrieval setting keeps the right tool on offer: no model involved.

With ``retrieval`` on, a trial offers only the ``top_k`` tools the retriever ranks closest to
its question, out of the case's tools plus the distractors. The model can pick the right tool
only if it survived that cut, so this share is a ceiling on the right-tool rate, and it is where
descriptions matter: the retriever reads the names and descriptions that are sent.

    python benchmarks/retrieval_reach.py [--distractors 16] [--categories simple multiple]

Prints one row per (retriever, names, description, top_k): the share of cases whose expected
tool(s) are all among those offered, with its 95% Wilson interval.
"""
from __future__ import annotations

import argparse
import sys
import time
from itertools import product
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from the repository root

from toolkit.bench.rates import wilson_interval  # noqa: E402
from toolkit.bench.suite import lesson_suite  # noqa: E402
from toolkit.bench.trials import Settings, hidden_names, tool_specs  # noqa: E402
from toolkit.retrieval import embeddings_available  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--distractors", type=int, default=16)
    parser.add_argument("--categories", nargs="+", default=["simple", "multiple"])
    parser.add_argument("--top-k", type=int, nargs="+", default=[1, 3])
    args = parser.parse_args(argv)
    suite = lesson_suite()
    cases = [case for case in suite.cases if case.category in args.categories and case.expected]
    kinds = ["tfidf"] + (["embeddings"] if embeddings_available() else [])
    print(f"{len(cases)} cases ({', '.join(args.categories)}), {args.distractors} distractors, seed 0")
    print("| retriever | names | description | top_k | expected tool offered | 95% interval |")
    print("|---|---|---|---|---|---|")
    started = time.perf_counter()
    for kind, names, description, k in product(kinds, ["real", "hidden"], ["clear", "vague"], args.top_k):
        settings = Settings(retrieval=kind, names=names, description=description, top_k=k)
        kept = 0
        for case in cases:
            most = len(suite.tools) - len(set(case.tools))
            offered = tool_specs(case, suite, settings.model_copy(update={"distractors": min(args.distractors, most)}))
            sent = {tool["function"]["name"] for tool in offered}
            rename = hidden_names(suite, settings.seed) if names == "hidden" else {}
            kept += all(rename.get(call.name, call.name) in sent for call in case.expected)
        low, high = wilson_interval(kept, len(cases))
        print(f"| {kind} | {names} | {description} | {k} | {kept}/{len(cases)} ({kept / len(cases):.0%}) "
              f"| {low:.0%} to {high:.0%} |")
    print(f"({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
