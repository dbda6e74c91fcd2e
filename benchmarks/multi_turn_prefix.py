"""How much does keeping recent model states save on BFCL multi-turn conversations?

A multi-turn case sends its tool prompt (2,000-4,000 tokens of BFCL's function documents) again
at every step. The embedded engine answers from tool results with a prompt of its own (no
tools), so after each answer the state llama.cpp holds no longer starts with the tool prompt,
and the next step would evaluate it all again. With the state cache (``Engine(state_cache_mib=
...)``) the engine resumes from the saved state that shares the longest prefix instead.

The same cases run in process on two engines of the same model, one with the cache and one
without, alternating case by case so that the machine's load falls on both alike; every
request is the same (temperature 0, seed 0), so the replies, and the work, are too.

    python benchmarks/multi_turn_prefix.py [--cases 3] [--model SmolLM2-135M-Instruct]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from openai.types.chat import ChatCompletion  # noqa: E402

from toolkit.bench.multi_turn_apis import api_classes, cached_wheel  # noqa: E402
from toolkit.bench.multi_turn_data import import_multi_turn  # noqa: E402
from toolkit.bench.multi_turn_run import run_case  # noqa: E402
from toolkit.client import Backend  # noqa: E402
from toolkit.engine import BASE_MODEL, Engine  # noqa: E402


def in_process(engine: Engine, model: str) -> Backend:
    """The engine behind the client interface the loop uses, with no HTTP in between."""
    create = lambda **body: ChatCompletion.model_validate(engine.complete(body))  # noqa: E731
    client = SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace(create=create)))
    return Backend(client=client, model=model, base_url="in-process")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=3, help="single-API cases of multi_turn_base")
    parser.add_argument("--model", default=BASE_MODEL)
    args = parser.parse_args(argv)
    suite = import_multi_turn(cached_wheel(), "multi_turn_base")
    classes = api_classes(suite.apis, suite.docs)
    # One API only: its documents leave room in a 4,096-token context for a few turns.
    cases = [case for case in suite.cases if len(case.classes) == 1][:args.cases]
    engines = {"with the state cache": Engine(model=args.model),
               "without": Engine(model=args.model, state_cache_mib=0)}
    settings = {"temperature": 0, "seed": 0, "max_tokens": 128}
    seconds = {name: 0.0 for name in engines}
    replies = {name: [] for name in engines}
    for case in cases:
        for name, engine in engines.items():
            started = time.perf_counter()
            run = run_case(in_process(engine, args.model), case, classes, settings=settings)
            seconds[name] += time.perf_counter() - started
            replies[name].append([(turn.answer, turn.steps) for turn in run.turns])
            requests = sum(len(turn.steps) + 1 for turn in run.turns)
            print(f"{case.id} {name:22s} {time.perf_counter() - started:6.1f} s, {len(run.turns)} turns, "
                  f"about {requests} requests{'; skipped: ' + run.skipped[:60] if run.skipped else ''}")
    with_cache, without = seconds["with the state cache"], seconds["without"]
    print(f"\n{len(cases)} cases of multi_turn_base on {args.model}: {with_cache:.0f} s with the state "
          f"cache, {without:.0f} s without: {without / with_cache:.2f}x faster with it")
    calls = [[steps for _, steps in case] for case in replies["with the state cache"]]
    same_calls = calls == [[steps for _, steps in case] for case in replies["without"]]
    print(("the same calls both ways" if same_calls else "the calls differ between the two") + "; "
          + ("the same answers" if replies["with the state cache"] == replies["without"] else
             "some answer text differs (a prompt evaluated in other batches changes the logits' last "
             "bits, as it does between two runs without the cache)"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
