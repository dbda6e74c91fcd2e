"""How fast does the experiment bench go, and what do its scheduling choices buy?

    python benchmarks/bench_experiment.py            # all three parts, a few minutes on 2 cores
    python benchmarks/bench_experiment.py --only b c # skip the embedded model

(a) Trials per minute on the embedded model, run in the planned order and in prefix order,
    where trials sharing a system prompt and tool list run back to back so llama.cpp reuses
    the evaluated prefix: for the quick experiment the app opens with
    (``toolkit.app.factors.QUICK``: 6 cases, clear vs vague descriptions), and for a smaller
    one with repeats, where prompts do repeat. The orders alternate, ``--rounds`` times each,
    and the median counts. Each order gets an empty database, so nothing is read back.
(b) Seconds to re-open a finished 1,000-trial run from SQLite and compute its rates. The
    trials are synthetic rows of realistic size: this measures the storage, not a model.
(c) Throughput against a local fake endpoint that answers after 200 ms, with 8 requests at
    once, as a share of the ideal 8 / 0.2 s = 40 trials per second.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from toolkit.app.factors import quick_plan
from toolkit.bench.experiment import run_experiment
from toolkit.bench.rates import rate_table
from toolkit.bench.store import Store
from toolkit.bench.suite import load_suite
from toolkit.bench.trials import Settings, build_request, order_for_prefix_reuse, plan
from toolkit.client import connect

SUITE = load_suite()


EXPERIMENTS = {
    # The experiment the app's page opens with: every trial's prompt differs (its own case, its
    # own description), so only the opening of the system prompt can be shared.
    "the app's quick experiment": lambda: quick_plan(SUITE),
    # Repeats: the same prompt comes back once per repeat, which prefix order puts side by side.
    "3 cases x clear/vague x 2 repeats": lambda: plan(SUITE, Settings(tool_choice="required", parallel_tool_calls=False),
                                                      "description", ["clear", "vague"], cases=3, repeats=2),
}


def tokens_to_evaluate(trials) -> int:
    """Prompt tokens the model must evaluate when the trials run in this order and each reuses
    what it shares with the previous prompt: the work prefix order saves, free of CPU load."""
    from toolkit.engine.request import parse_request
    from toolkit.engine.serve import embedded_engine

    engine = embedded_engine()  # the model the timed runs use; only its tokenizer is needed here
    total, previous = 0, []
    for trial in trials:
        request = parse_request(build_request(SUITE.case(trial.case_id), SUITE, trial.settings, trial.repeat))
        tokens = engine.prompt_tokens(request)
        shared = next((i for i, (a, b) in enumerate(zip(previous, tokens)) if a != b),
                      min(len(previous), len(tokens)))
        total, previous = total + len(tokens) - shared, tokens
    return total


def part_a(workdir: Path, rounds: int = 3) -> None:
    print("(a) embedded model: planned order vs prefix order")
    backend = connect(timeout=600)  # a busy machine can make one trial slow; it is still measured
    warm = plan(SUITE, Settings(max_tokens=4), cases=1)
    with Store(workdir / "warm.sqlite") as store:
        run_experiment(warm, backend, store)  # loads the model once
    for name, make in EXPERIMENTS.items():
        planned = make()
        print(f"  {name}, {len(planned)} trials; prompt tokens to evaluate: planned order "
              f"{tokens_to_evaluate(planned)}, prefix order {tokens_to_evaluate(order_for_prefix_reuse(planned, SUITE))}")
        print(f"    load average before timing: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        seconds = {"as_planned": [], "prefix": []}
        for round_ in range(rounds):  # the two orders alternate, so background load hits both alike
            for order in (("as_planned", "prefix") if round_ % 2 == 0 else ("prefix", "as_planned")):
                with Store(workdir / f"a-{len(planned)}-{order}-{round_}.sqlite") as store:
                    trials = make()
                    started = time.perf_counter()
                    run_id = run_experiment(trials, backend, store, order=order)
                    seconds[order].append(time.perf_counter() - started)
                    run = store.run(run_id)
                    if run["status"] != "finished":
                        print(f"    {order}: the run {run['status']} after {len(store.trials(run_id))} trials: {run['error']}")
                        return
        per_minute = {}
        for order, times in seconds.items():
            per_minute[order] = len(planned) / statistics.median(times) * 60
            print(f"    {order:<10} median of {rounds} runs {statistics.median(times):6.1f} s "
                  f"= {per_minute[order]:5.1f} trials/min  (runs: {', '.join(f'{t:.1f}' for t in times)} s)")
        print(f"    prefix order is {per_minute['prefix'] / per_minute['as_planned']:.2f}x the planned order")


def part_b(workdir: Path, n: int = 1000) -> None:
    print(f"(b) re-opening a finished {n}-trial run (synthetic stored trials: storage only)")
    path = workdir / "b.sqlite"
    trials = plan(SUITE, Settings(), "description", ["clear", "vague"], repeats=6)[:n]
    rng = random.Random(0)
    with Store(path) as store:
        run_id = store.create_run(name="synthetic", backend="none", model="none", base_url="none",
                                  plan={"factors": ["description"]}, n_trials=n)
        started = time.perf_counter()
        for position, trial in enumerate(trials):
            case = SUITE.case(trial.case_id)
            request = {"model": "none", **build_request(case, SUITE, trial.settings, trial.repeat)}
            ok = rng.random() < 0.6
            store.add_trial({
                "run_id": run_id, "position": position, "case_id": case.id, "category": case.category,
                "language": case.language, "factor_values": {"description": trial.settings.description},
                "settings": trial.settings.model_dump(), "repeat": trial.repeat,
                "cache_key": f"synthetic-{position}", "cached": False, "request": request,
                "reply": {"choices": [{"message": {"role": "assistant", "content": "x" * 200}}]},
                "calls": [], "model_text": "x" * 200, "selection_ok": ok, "arguments_ok": ok,
                "reason": None if ok else "wrong_tool", "detail": None if ok else "Expected a, got b.",
                "latency_s": 1.0, "prompt_tokens": 300, "completion_tokens": 20,
                "expected_tools": "a", "chosen_tools": "a" if ok else "b", "finished": "now"})
        written = time.perf_counter() - started
        store.finish_run(run_id, "finished")
    size = path.stat().st_size / 1e6
    started = time.perf_counter()
    with Store(path) as store:
        frame = store.trials(run_id)
        table = rate_table(frame, ["description", "category"])
    seconds = time.perf_counter() - started
    assert len(frame) == n and table["n"].sum() == n
    print(f"    written one by one in {written:.2f} s; database {size:.1f} MB")
    print(f"    open + trials table + rates: {seconds * 1000:.0f} ms")


class SlowEndpoint:
    """A fake ``/v1/chat/completions`` on 127.0.0.1 that answers every request after ``delay``."""

    def __init__(self, delay: float):
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                time.sleep(delay)
                data = json.dumps({"id": "c", "object": "chat.completion", "created": 0, "model": body["model"],
                                   "choices": [{"index": 0, "finish_reason": "stop",
                                                "message": {"role": "assistant", "content": "ok"}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.request_queue_size = 64
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def part_c(workdir: Path, delay: float = 0.2, concurrency: int = 8, n: int = 96) -> None:
    ideal = concurrency / delay
    print(f"(c) fake endpoint, {delay * 1000:.0f} ms per request, {concurrency} at once, {n} trials "
          f"(ideal {ideal:.0f} trials/s)")
    endpoint = SlowEndpoint(delay)
    try:
        backend = connect(endpoint.url, "fake", "no-key", max_retries=0)
        trials = plan(SUITE, Settings(), "seed", list(range(n // 8)), cases=8)
        with Store(workdir / "c.sqlite") as store:
            started = time.perf_counter()
            run_id = run_experiment(trials, backend, store, concurrency=concurrency)
            seconds = time.perf_counter() - started
            assert store.run(run_id)["status"] == "finished" and len(store.trials(run_id)) == n
    finally:
        endpoint.stop()
    achieved = n / seconds
    print(f"    {n} trials in {seconds:.2f} s = {achieved:.1f} trials/s, {achieved / ideal:.0%} of ideal")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=["a", "b", "c"], default=["a", "b", "c"])
    parser.add_argument("--rounds", type=int, default=3, help="runs of each order in part (a)")
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # each line shows as soon as its part is done
    with tempfile.TemporaryDirectory() as folder:
        for part, run in (("b", part_b), ("c", part_c), ("a", lambda f: part_a(f, args.rounds))):
            if part in args.only:
                run(Path(folder))


if __name__ == "__main__":
    main()
