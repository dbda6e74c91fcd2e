"""A workshop room on one embedded endpoint: N browsers run the opening experiment at once.

    python benchmarks/room_load.py                 # N = 1, 4, 8, 16; several minutes on 2 cores
    python benchmarks/room_load.py --rooms 16      # one room size only
    python benchmarks/room_load.py --rooms 16 --own-seeds   # every browser its own seed
    python benchmarks/room_load.py --rooms 1 16 --own-seeds --cases-from-page --temperature 1
    python benchmarks/room_load.py ... --without-flash-attention   # what flash attention gains here

Each "browser" does what the Experiment tab's Run button does on an untouched page: it plans the
opening experiment (``toolkit.app.factors.QUICK``, here with ``--cases`` cases, so 2 x cases
trials), opens the embedded backend as the app does (``open_backend``) and starts the app's own
runner (``toolkit.app.jobs.start_job``) with a run database of its own. All N start together
against the one endpoint this process serves, as in the app. Every request is timed on the way
out and back, so the table can say whether the model answered them in the order they were sent.

Per room size it prints: requests completed and lost or failed, throughput as a multiple of one
browser's, the first and the slowest browser's time to a finished run, how many requests the
model computed (the rest were answered from another request's computation), how many tokens the
model wrote per computed request (work no line can share: at temperature 1 each seed writes
replies of its own length, so a room of other seeds may do more work per request than one
browser alone), and whether the computed requests were answered in arrival order (a later
request answered before an earlier one still waiting counts as an overtake; the line lets a
request be overtaken at most ``RequestQueue.OVERTAKE_BOUND`` times, so the table prints the most
any request was). Each room starts with the endpoint's shared replies forgotten, so no room
profits from the one before. With ``--own-seeds`` every browser runs the experiment with a seed
of its own (0, 1, 2, ...), so no two send the same request: the line alone, without shared
replies at any temperature above 0 (``--temperature 1``); at the page's temperature 0 the seed
changes no reply, and the endpoint computes such requests once.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from toolkit.app.backends import BackendChoice, open_backend  # noqa: E402
from toolkit.app.factors import QUICK  # noqa: E402
from toolkit.app.jobs import start_job  # noqa: E402
from toolkit.bench.store import Store  # noqa: E402
from toolkit.bench.suite import load_suite  # noqa: E402
from toolkit.bench.trials import Settings, pick_cases, plan  # noqa: E402
from toolkit.engine import serve  # noqa: E402
from toolkit.engine.request_queue import RequestQueue  # noqa: E402

SUITE = load_suite()


@dataclass
class Sent:
    """One request as its browser saw it."""

    sent: float
    answered: float | None = None
    shared: bool = False  # answered from another request's computation (the endpoint says so)
    written: int = 0  # tokens the model wrote for it (the reply's usage): at temperature 1, seeds differ here


class _Timed(httpx.BaseTransport):
    """Notes when each request leaves and when its reply is back."""

    def __init__(self, log: list[Sent], lock: threading.Lock):
        self.inner, self.log, self.lock = httpx.HTTPTransport(), log, lock

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        entry = Sent(time.perf_counter())
        response = self.inner.handle_request(request)
        response.read()
        entry.answered = time.perf_counter()
        entry.shared = response.headers.get("X-Lab-Reply", "computed") != "computed"
        with contextlib.suppress(ValueError, AttributeError, TypeError):
            entry.written = int(response.json()["usage"]["completion_tokens"])
        if request.url.path.endswith("/chat/completions"):
            with self.lock:
                self.log.append(entry)
        return response


def opening_trials(cases: int, seed: int = 0, temperature: float | None = None):
    """The opening experiment's trials, with ``cases`` cases instead of QUICK's own number (and
    ``temperature`` instead of the page's, where given)."""
    chosen = SUITE.filter(QUICK["categories"], QUICK["languages"])
    fixed = {**QUICK["fixed"], "seed": seed, **({"temperature": temperature} if temperature is not None else {})}
    return plan(SUITE, Settings(**fixed), QUICK["factor"], QUICK["values"],
                cases=pick_cases(chosen, min(cases, len(chosen))))


def overtakes(log: list[Sent]) -> tuple[int, int]:
    """(pairs of computed requests where the later-sent one was answered first, the most times
    one request was overtaken so): the line may overtake a request at most its bound times."""
    computed = sorted((e for e in log if not e.shared and e.answered is not None), key=lambda e: e.sent)
    counts = [sum(1 for later in computed[i + 1:] if later.answered < first.answered)
              for i, first in enumerate(computed)]
    return sum(counts), max(counts, default=0)


def room(n: int, cases: int, workdir: Path, own_seeds: bool = False, temperature: float | None = None) -> dict:
    if forget := getattr(serve, "forget_shared_replies", None):
        forget()
    log, lock = [], threading.Lock()
    jobs = []
    started = time.perf_counter()
    for browser in range(n):
        backend = open_backend(BackendChoice("embedded"))
        backend.client = backend.client.with_options(http_client=httpx.Client(transport=_Timed(log, lock)))
        store = Store(workdir / f"room{n}-browser{browser}.sqlite")
        trials = opening_trials(cases, seed=browser if own_seeds else 0, temperature=temperature)
        jobs.append((start_job(trials, backend, store, name=f"browser {browser}", suite=SUITE), store))
    for job, _ in jobs:
        job.thread.join()
    wall = time.perf_counter() - started
    planned = sum(job.total for job, _ in jobs)
    completed = sum(len(store.trials(job.run_id)) for job, store in jobs if job.run_id is not None)
    errors = sorted({job.error for job, _ in jobs if job.status != "finished"} - {None})
    return {"n": n, "planned": planned, "completed": completed, "wall": wall,
            "first": min(job.seconds for job, _ in jobs), "slowest": max(job.seconds for job, _ in jobs),
            "finished_runs": sum(job.status == "finished" for job, _ in jobs),
            "computed": sum(not e.shared for e in log), "sent": len(log),
            "written": sum(e.written for e in log if not e.shared) / max(sum(not e.shared for e in log), 1),
            "overtakes": overtakes(log), "bound": RequestQueue.OVERTAKE_BOUND, "errors": errors}


def without_flash_attention() -> None:
    """Make the engine load its model without flash attention, as it did before it used it.
    Called before anything loads the model; the engine itself offers no such switch, since
    flash attention costs nothing it needs."""
    import toolkit.engine.llama as engine_llama

    class WithoutFlashAttention(engine_llama.Llama):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **{**kwargs, "flash_attn": False})

    engine_llama.Llama = WithoutFlashAttention


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, nargs="+", default=[1, 4, 8, 16], help="browsers at once, one room each")
    parser.add_argument("--cases", type=int, default=6, help="cases per run (2 trials each: native and string)")
    parser.add_argument("--own-seeds", action="store_true", help="a seed of its own for every browser")
    parser.add_argument("--temperature", type=float, default=None,
                        help="instead of the page's temperature (0): above 0 with own seeds, nothing can be shared")
    parser.add_argument("--cases-from-page", action="store_true",
                        help="the page's own number of cases (QUICK), instead of --cases")
    parser.add_argument("--without-flash-attention", action="store_true",
                        help="load the model without flash attention, to weigh what it gains in a room")
    args = parser.parse_args(argv)
    if args.cases_from_page:
        args.cases = QUICK["cases"]
    if args.without_flash_attention:
        without_flash_attention()
    warm = open_backend(BackendChoice("embedded"))
    warm.chat(messages=[{"role": "user", "content": "Hi"}], max_tokens=2, temperature=0)  # loads the model
    seeds = "its own seed" if args.own_seeds else "the page's seed, 0"
    heat = f"temperature {args.temperature:g}" if args.temperature is not None else "the page's temperature"
    attention = "without flash attention" if args.without_flash_attention else "with flash attention"
    print(f"Opening experiment with {args.cases} cases ({2 * args.cases} trials) per browser, {seeds}, {heat}, "
          f"one embedded endpoint, {attention}", flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        # One untimed run first: the first run of a process builds the grammars and fills the
        # model's caches, which would make one browser look slower than it is in a warm app.
        (Path(folder) / "warm").mkdir()
        room(1, args.cases, Path(folder) / "warm", args.own_seeds, args.temperature)
        for n in args.rooms:
            rows.append(row := room(n, args.cases, Path(folder), args.own_seeds, args.temperature))
            print(f"  N={n}: {row['finished_runs']}/{n} runs finished in {row['wall']:.0f} s", flush=True)
    one = next((r for r in rows if r["n"] == 1), None)
    print(f"\n{'N':>3} {'completed':>11} {'lost/failed':>11} {'throughput':>10} {'first run':>9} {'slowest run':>11} "
          f"{'computed':>9} {'tokens written':>14} {'overtaken':>24}")
    for r in rows:
        ratio = f"{(r['completed'] / r['wall']) / (one['completed'] / one['wall']):.2f}x" if one else "-"
        pairs, most = r["overtakes"]
        order = "none" if pairs == 0 else f"{most} at most" + (" (bound kept)" if most <= r["bound"] else " (over the bound!)")
        print(f"{r['n']:>3} {r['completed']:>5}/{r['planned']:<5} {r['planned'] - r['completed']:>11} {ratio:>10} "
              f"{r['first']:>8.0f}s {r['slowest']:>10.0f}s {r['computed']:>4}/{r['sent']:<4} "
              f"{r['written']:>14.1f} {order:>24}")
        for error in r["errors"]:
            print(f"      a run failed: {error}")


if __name__ == "__main__":
    main()
