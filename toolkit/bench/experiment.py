"""Run a grid of trials against a backend, score every reply, keep every trial.

    from toolkit.bench.experiment import Settings, plan, run_experiment, Store, rate_table
    from toolkit.bench.suite import load_suite
    from toolkit.client import connect

    suite = load_suite()
    trials = plan(suite, Settings(), "description", ["clear", "vague"], cases=10, repeats=2)
    store = Store()                                      # runs/lab.sqlite
    run_id = run_experiment(trials, connect(), store)
    print(rate_table(store.trials(run_id), ["description"]))

or from a shell: ``python -m toolkit.bench.experiment --factor description --values clear vague``.

A trial whose request was already sent to the same endpoint and model (same body, same seed,
same repeat) is read back from the store rather than sent again: a run that failed half way
resumes where it stopped, and an identical experiment costs nothing the second time. To draw
fresh samples, change the seed.
"""
from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import Counter
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, Callable, Iterable

import httpx
import openai

from toolkit.bench.scoring import CutOff, check
from toolkit.bench.store import Store, now
from toolkit.bench.suite import load_suite
from toolkit.bench.suite_model import Case, Suite
from toolkit.bench.trials import (
    FACTORS,
    Trial,
    build_request,
    prefix_key,
    real_names,
)
from toolkit.client import Backend, hide_key
from toolkit.lab_error import LabError
from toolkit.messages import ToolCall, usage_of
from toolkit.round_trip import read_reply

__all__ = ["run_experiment", "cache_key"]

# Failures of the endpoint: they end the run (marked "failed") but never lose finished trials.
ENDPOINT_ERRORS = (LabError, openai.OpenAIError, httpx.HTTPError, OSError)
EMBEDDED_PLACE = "embedded"  # where embedded trials are said to run, whatever port serves them
NO_CALL, UNPARSABLE, CUT_OFF = "(no call)", "(unparsable)", "(cut off)"

Progress = Callable[[int, int, dict], None]


def cache_key(base_url: str, model: str, request: dict, seed: int, repeat: int,
              api: str = "chat") -> str:
    """Trials with the same key would send the same thing to the same place: one is enough.

    The wire API is part of the identity (a remote model may answer the two APIs differently);
    it is left out for chat completions so that keys stored before it existed still match."""
    identity = {"base_url": base_url, "model": model, "request": request, "seed": seed,
                "repeat": repeat}
    if api != "chat":
        identity["api"] = api
    text = json.dumps(identity, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# ---------------------------------------------------------------- one trial

def tool_names(calls: Iterable[ToolCall]) -> str:
    """``"get_weather ×2, search"`` for a list of calls (or of expected calls), or "(no call)"."""
    counts = Counter(call.name for call in calls)
    if not counts:
        return NO_CALL
    return ", ".join(f"{name} ×{n}" if n > 1 else name for name, n in sorted(counts.items()))


def read_calls(completion: Any, protocol: str) -> tuple[list[ToolCall], str | None, str | None]:
    """The calls of a reply, its text, and why the calls could not be read (None: they could).

    The loop's reader (``toolkit.round_trip.read_reply``), with no JSON repair: native arguments
    stay the model's raw text for scoring to judge, and string-protocol calls are held to valid
    JSON too, so that both protocols are judged alike."""
    choices = getattr(completion, "choices", None) or []
    if not choices:
        return [], None, "the reply has no choices"
    message = choices[0].message
    reply = read_reply(protocol, message, repair="none")
    if getattr(choices[0], "finish_reason", None) == "length":
        # max_tokens ran out: a call left unreadable, or whose arguments do not parse, was stopped
        # mid-way, not written wrong; it gets a reason of its own (see scoring.CutOff).
        unfinished = reply.unreadable + [f"{call.name}'s arguments stop at {call.arguments[-24:]!r}"
                                         for call in reply.calls if not _parses(call.arguments)]
        if unfinished:
            return [], message.content, CutOff(f"max_tokens ran out mid-call ({unfinished[0]})")
    if reply.unreadable:
        return [], message.content, reply.unreadable[0]
    return reply.calls, message.content, None


def _parses(arguments: str) -> bool:
    try:
        json.loads(arguments)
    except json.JSONDecodeError:
        return False
    return True


def send(backend: Backend, body: dict) -> tuple[Any, float]:
    """Send one request through ``Backend.chat``; return the completion and the seconds it took.

    Retries are the client's alone (``connect(max_retries=...)``, ``LAB_MAX_RETRIES``): it
    retries 429, 5xx and time-outs with back-off and honours ``Retry-After``, so a refused
    request costs at most ``max_retries + 1`` sends. The seconds include any such waits. A
    failure that outlasts them becomes a ``LabError`` that says what to do.
    """
    started = time.perf_counter()
    return backend.chat(**body), time.perf_counter() - started


class _Prepared:
    """A planned trial with its case, request body and cache key worked out."""

    def __init__(self, position: int, trial: Trial, case: Case, body: dict, key: str,
                 factors: tuple[str, ...], suite: Suite):
        self.position, self.trial, self.case, self.body, self.key = position, trial, case, body, key
        self.suite = suite
        self.factor_values = {name: getattr(trial.settings, name) for name in factors}

    def row(self, run_id: int) -> dict:
        case = self.case
        return {"run_id": run_id, "position": self.position, "case_id": case.id,
                "category": case.category, "language": case.language,
                "factor_values": self.factor_values, "settings": self.trial.settings.model_dump(),
                "repeat": self.trial.repeat, "cache_key": self.key,
                "expected_tools": tool_names(case.expected)}


def run_trial(prepared: _Prepared, backend: Backend, run_id: int) -> dict:
    """Send, parse, score: the stored row of one trial (a parse failure is a verdict, not an error)."""
    completion, seconds = send(backend, prepared.body)
    calls, text, parse_error = read_calls(completion, prepared.trial.settings.protocol)
    calls = real_names(calls, prepared.suite, prepared.trial.settings)
    verdict = check(prepared.case, calls, parse_error=parse_error)
    usage = usage_of(completion) or {}
    row = {
        **prepared.row(run_id),
        "cached": False,
        "request": json.dumps(prepared.body, ensure_ascii=False),
        "reply": json.dumps(completion.model_dump(mode="json", exclude_unset=True), ensure_ascii=False),
        "calls": json.dumps([{"name": c.name, "arguments": c.arguments} for c in calls], ensure_ascii=False),
        "model_text": text,
        "selection_ok": verdict.selection_ok, "arguments_ok": verdict.arguments_ok,
        "reason": verdict.reason, "detail": verdict.detail, "latency_s": seconds,
        "prompt_tokens": usage.get("prompt_tokens"),
        "completion_tokens": usage.get("completion_tokens"),
        "chosen_tools": (CUT_OFF if isinstance(parse_error, CutOff) else UNPARSABLE) if parse_error else tool_names(calls),
        "finished": now(),
    }
    # Only bodies are kept, never headers; a key echoed back in a body is blanked all the same.
    for name in ("request", "reply", "calls", "model_text", "detail"):
        if isinstance(row[name], str):
            row[name] = hide_key(row[name], backend.api_key)
    return row


# ---------------------------------------------------------------- the run

def _plan_summary(trials: list[Trial], factors: tuple[str, ...], suite: Suite, order: str,
                  concurrency: int) -> dict:
    values: dict[str, list] = {name: [] for name in factors}
    for trial in trials:
        for name in factors:
            value = getattr(trial.settings, name)
            if value not in values[name]:
                values[name].append(value)
    return {"factors": list(factors), "values": values,
            "base": trials[0].settings.model_dump() if trials else None,
            "cases": list(dict.fromkeys(t.case_id for t in trials)),
            "repeats": 1 + max((t.repeat for t in trials), default=0),
            "suite": suite.source, "order": order, "concurrency": concurrency}


def _varied(trials: list[Trial]) -> tuple[str, ...]:
    if not trials:
        return ()
    first = trials[0].settings.model_dump()
    return tuple(name for name in FACTORS
                 if any(t.settings.model_dump()[name] != first[name] for t in trials))


def run_experiment(trials: list[Trial], backend: Backend, store: Store, *, name: str = "",
                   progress: Progress | None = None, stop_event: threading.Event | None = None,
                   concurrency: int = 1, order: str = "prefix", suite: Suite | None = None,
                   owner: str | None = None) -> int:
    """Run every trial (or read it back from the store), writing each as soon as it is done.

    Returns the run id. The run ends "finished", "stopped" (``stop_event`` was set; checked
    between trials) or "failed" (the endpoint failed; the error text is stored with the run).
    The embedded model answers one request at a time, so it gets one; a remote endpoint gets
    up to ``concurrency`` at once. ``progress(done, total, row)`` is called after each trial.
    A 429 or 5xx is retried by the backend's client (``connect(max_retries=...)``), not here.
    ``owner`` is the browser the run belongs to in a room (see ``Store.runs``); None: everyone's.
    """
    if order not in ("prefix", "as_planned"):
        raise ValueError("order must be 'prefix' or 'as_planned'")
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    if suite is None:
        suite = getattr(trials, "suite", None)
    if suite is None:
        suite = load_suite()
    factors = getattr(trials, "factors", None) or _varied(trials)
    # The embedded endpoint listens on a new port in every process; keyed by its URL, a re-run
    # in a new process (after a crash, or the next day) would find none of its finished trials.
    place = EMBEDDED_PLACE if backend.embedded else backend.base_url
    prepared = []
    for position, trial in enumerate(trials):
        model = trial.settings.model or backend.model
        body = {"model": model, **build_request(suite.case(trial.case_id), suite, trial.settings, trial.repeat)}
        key = cache_key(place, model, body, trial.settings.seed, trial.repeat, getattr(backend, "api", "chat"))
        prepared.append(_Prepared(position, trial, suite.case(trial.case_id), body, key, factors, suite))
    if order == "prefix":
        prepared.sort(key=lambda p: (prefix_key(p.body), p.position))
    workers = 1 if backend.embedded else concurrency
    run_id = store.create_run(name=name, backend=backend.label, model=backend.model,
                              base_url=backend.base_url, n_trials=len(prepared),
                              plan=_plan_summary(trials, factors, suite, order, workers), owner=owner)
    total, done = len(prepared), 0

    def record(row: dict) -> None:
        nonlocal done
        for flag in ("selection_ok", "arguments_ok", "cached"):
            row[flag] = bool(row[flag])  # a row read back from SQLite holds 0 and 1
        row["id"] = store.add_trial(row)
        done += 1
        if progress:
            progress(done, total, row)

    try:
        stored = store.cached(p.key for p in prepared)
        todo = []
        for item in prepared:
            if item.key in stored:
                old = stored[item.key]
                record({**old, **item.row(run_id), "cached": True})
            else:
                todo.append(item)
        failure = _run_all(todo, backend, run_id, record, workers, stop_event)
    except KeyboardInterrupt:
        store.finish_run(run_id, "stopped", "interrupted")
        raise
    except BaseException as error:
        store.finish_run(run_id, "failed", f"{type(error).__name__}: {error}")
        raise
    if failure is not None:
        store.finish_run(run_id, "failed", str(failure))
        if not isinstance(failure, ENDPOINT_ERRORS):
            raise failure
    elif done < total:
        store.finish_run(run_id, "stopped", f"stopped after {done} of {total} trials")
    else:
        store.finish_run(run_id, "finished")
    return run_id


def _run_all(todo: list[_Prepared], backend: Backend, run_id: int, record: Callable[[dict], None],
             workers: int, stop_event: threading.Event | None) -> BaseException | None:
    """Keep up to ``workers`` trials in flight; stop sending after a failure or a stop request,
    but store every trial that was already on its way."""
    queue = iter(todo)
    failure: BaseException | None = None
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="trial") as pool:
        pending: set[Future] = set()

        def fill() -> None:
            while failure is None and len(pending) < workers and not (stop_event and stop_event.is_set()):
                item = next(queue, None)
                if item is None:
                    return
                pending.add(pool.submit(run_trial, item, backend, run_id))

        fill()
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            rows = []
            for future in finished:
                try:
                    rows.append(future.result())
                except Exception as error:  # noqa: BLE001 - kept and reported with the run
                    failure = failure or error
            if workers > 1:
                fill()  # keep the endpoint busy while the database is written
            for row in rows:
                record(row)
            fill()
    return failure


if __name__ == "__main__":
    # The command line lives in toolkit.bench.experiment_cli, which imports this module: it is run
    # as the program rather than imported, so that the two never import each other.
    import runpy

    runpy.run_module("toolkit.bench.experiment_cli", run_name="__main__", alter_sys=True)
