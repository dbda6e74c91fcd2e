"""What the app needs besides widgets: reading what the learner typed, reaching the chosen
backend, and running an experiment in the background so the page stays usable.

Everything here works without Streamlit, so the tests reach it directly. The app keeps only
plain data in its session (ids, texts, numbers); the objects behind them (a running job, the
run database) live in this module, one per process.

``LAB_APP_BACKEND=scripted`` swaps every backend for a scripted model (``toolkit.fake``) that
calls the first tool it is offered with made-up arguments. It exists so the app can be tested
without any model; its figures mean nothing. ``scripted:fail-after=N`` makes it fail like an
unreachable endpoint from the (N+1)-th request on.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import httpx
import openai
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from toolkit.client import EMBEDDED_MODEL, Backend, LabError, connect
from toolkit.store import DEFAULT_PATH, Store
from toolkit.suite import Suite

EMBEDDED_NOTE = (
    "The embedded model is **SmolLM2-135M-Instruct**: 135 million parameters, never trained "
    "for tool calling. It runs here with no key and no network, and the lab's grammar makes "
    "its calls always parse, but it picks tools **near chance**, whatever the descriptions "
    "say. Differences between settings mostly drown in that noise. Point the lab at a "
    "stronger OpenAI-compatible endpoint (OpenAI, DeepSeek, Qwen, a local Ollama or vLLM) to "
    "see the effects clearly."
)
SCRIPTED_NOTE = ("A scripted model answers (LAB_APP_BACKEND=scripted): it calls the first tool "
                 "it is offered with made-up arguments. Its figures mean nothing.")


class InputProblem(ValueError):
    """Something the learner typed that cannot be used; the message says what and where."""


# ---------------------------------------------------------------- backends

@dataclass(frozen=True)
class BackendChoice:
    """Which model to ask. The key stays in memory only: it is never shown or stored."""

    kind: Literal["embedded", "remote"] = "embedded"
    base_url: str = ""
    model: str = ""
    api_key: str = field(default="", repr=False)


def scripted_mode() -> str | None:
    """The ``LAB_APP_BACKEND`` value when it asks for the scripted model, else None."""
    value = os.environ.get("LAB_APP_BACKEND", "").strip()
    return value if value.startswith("scripted") else None


def open_backend(choice: BackendChoice, *, timeout: float | None = None,
                 max_retries: int | None = None) -> Backend:
    """A backend for the choice; ``LabError`` says what is missing or wrong."""
    if (mode := scripted_mode()) is not None:
        return scripted_backend(mode)
    if choice.kind == "embedded":
        # The embedded model answers one request at a time on a shared CPU: a slow answer is
        # not a lost one, and a resent request would only queue behind the one still running.
        timeout = timeout if timeout is not None else float(os.environ.get("LAB_TIMEOUT", 600))
        max_retries = 0 if max_retries is None else max_retries
        if os.environ.get("LAB_BASE_URL"):
            # connect() would follow the variable, but the learner picked the embedded model.
            from toolkit.serve import ensure_server

            backend = connect(ensure_server(), EMBEDDED_MODEL, "no-key-needed", timeout=timeout,
                              max_retries=max_retries)
            return replace(backend, embedded=True)
        return connect(timeout=timeout, max_retries=max_retries)
    base_url = choice.base_url.strip()
    if not base_url:
        raise LabError("Enter the endpoint's base URL, e.g. https://api.deepseek.com/v1.")
    if not base_url.startswith(("http://", "https://")):
        raise LabError(f"The base URL {base_url!r} must start with http:// or https://, "
                       "e.g. https://api.deepseek.com/v1.")
    if not choice.model.strip():
        raise LabError(f"Enter the name of a model served at {base_url}, e.g. deepseek-chat.")
    return connect(base_url, choice.model.strip(), choice.api_key.strip() or None,
                   timeout=timeout, max_retries=max_retries)


def check_connection(choice: BackendChoice, timeout: float = 20.0) -> str:
    """Send one tiny request; return a sentence saying who answered and how fast.

    Raises ``LabError`` with a sentence a learner can act on (never a traceback).
    """
    try:
        local = choice.kind == "embedded"  # it may be busy, but it will answer
        backend = open_backend(choice, timeout=None if local else timeout, max_retries=0)
        started = time.perf_counter()
        backend.chat(messages=[{"role": "user", "content": "Reply with the word OK."}],
                     max_tokens=5, temperature=0)
    except LabError:
        raise
    except Exception as error:  # a malformed URL and the like: still a sentence, not a trace
        raise LabError(f"Could not reach the endpoint: {type(error).__name__}: {error}") from None
    return f"{backend.label} answered in {time.perf_counter() - started:.1f} s."


def example_arguments(schema: dict) -> dict:
    """Arguments that fit a parameters schema: the required properties, each with a plain
    value of its type (the first enum value where there is one)."""
    arguments = {}
    properties = schema.get("properties") or {}
    for name in schema.get("required") or list(properties)[:1]:
        arguments[name] = _example_value(properties.get(name) or {})
    return arguments


def _example_value(schema: dict) -> Any:
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) and kind else kind
    if kind == "object":
        return example_arguments(schema)
    plain = {"integer": 1, "number": 1.0, "boolean": True, "array": [], "null": None}
    return plain.get(kind, "Paris")


def _scripted_reply(request: dict):
    from toolkit import fake

    messages = request.get("messages") or []
    last = messages[-1] if messages else {}
    if last.get("role") == "tool":
        results = [m.get("content") or "" for m in messages if m.get("role") == "tool"]
        return fake.text("Here is what the tools said: " + " | ".join(results[-3:]))
    tools = request.get("tools") or []
    choice = request.get("tool_choice", "auto")
    if not tools or choice == "none":
        return fake.text("I can answer that without a tool.")
    spec = tools[0]["function"]
    if isinstance(choice, dict):
        spec = next((t["function"] for t in tools
                     if t["function"]["name"] == choice["function"]["name"]), spec)
    return fake.calls(fake.call(spec["name"], example_arguments(spec.get("parameters") or {})))


def scripted_backend(mode: str = "scripted") -> Backend:
    """The scripted model as a backend (see the module docstring)."""
    from toolkit import fake

    fail_after = int(mode.split("fail-after=", 1)[1]) if "fail-after=" in mode else None
    model = fake.ScriptedModel()

    def reply(request: dict):
        model.add(reply)  # always one reply queued: the script never runs out
        if fail_after is not None and len(model.requests) > fail_after:
            raise openai.APIConnectionError(
                request=httpx.Request("POST", "http://scripted.invalid/v1/chat/completions"))
        return _scripted_reply(request)

    return model.add(reply).backend()


# ---------------------------------------------------------------- what the learner types

def parse_schema(text: str, tool: str) -> dict:
    """A tool's parameters schema typed as JSON, checked; ``InputProblem`` names the problem."""
    where = f"The custom schema for {tool}"
    try:
        schema = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputProblem(f"{where} is not valid JSON: {error.msg} at line {error.lineno}, "
                           f"column {error.colno}.") from None
    if not isinstance(schema, dict):
        raise InputProblem(f"{where} must be a JSON object, not {type(schema).__name__}.")
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as error:
        at = "/".join(str(part) for part in error.absolute_path)
        raise InputProblem(f"{where} is not a valid JSON Schema: {error.message}"
                           + (f" (at {at})." if at else ".")) from None
    if schema.get("type") != "object" or not isinstance(schema.get("properties"), dict):
        raise InputProblem(f'{where} must describe an object: {{"type": "object", '
                           f'"properties": {{...}}}}.')
    missing = [name for name in schema.get("required", []) if name not in schema["properties"]]
    if missing:
        raise InputProblem(f"{where} lists {', '.join(map(repr, missing))} as required, "
                           "but not among its properties.")
    return schema


def parse_numbers(text: str, what: str, *, low: float, high: float,
                  whole: bool = False) -> list[float] | list[int]:
    """Comma-separated numbers such as ``"0, 0.7"``, each within [low, high], no repeats."""
    values: list = []
    for part in text.replace(";", ",").replace("，", ",").split(","):
        part = part.strip()
        if not part:
            continue
        try:
            value = int(part) if whole else float(part)
        except ValueError:
            kind = "whole numbers" if whole else "numbers"
            raise InputProblem(f"{what}: {part!r} is not a number; write {kind} separated by "
                               "commas.") from None
        if not low <= value <= high:
            raise InputProblem(f"{what}: {part} is outside {low:g} to {high:g}.")
        if value not in values:
            values.append(value)
    if not values:
        raise InputProblem(f"{what}: give at least one value.")
    return values


def with_parameters(suite: Suite, tool: str, schema: dict) -> Suite:
    """The suite with one tool's parameters schema replaced by the learner's own.

    Only what the model sees changes: every case keeps its answer key and is scored against
    the suite's schema, so a schema that renames or drops a parameter shows up as failures.
    """
    if tool not in suite.tools:
        raise InputProblem(f"There is no tool {tool!r} in the suite.")
    tools = dict(suite.tools)
    tools[tool] = tools[tool].model_copy(update={"parameters": schema})
    return Suite(tools, suite.cases, f"{suite.source} (custom schema for {tool})")


def tools_of(suite: Suite) -> list[str]:
    """The suite tools the cases offer, in suite order."""
    used = {name for case in suite.cases for name in case.tools}
    return [name for name in suite.tools if name in used]


# ---------------------------------------------------------------- factors, as the app shows them

COMPARABLE = ("description", "enums", "temperature", "tool_choice", "distractors", "protocol",
              "parallel_tool_calls", "system_prompt")
CHOICES: dict[str, tuple] = {
    "description": ("clear", "vague", "custom"),
    "enums": (True, False),
    "tool_choice": ("auto", "none", "required", "expected"),
    "protocol": ("native", "string"),
    "parallel_tool_calls": (None, True, False),
    "system_prompt": (False, True),
}
NUMERIC = {"temperature": dict(low=0.0, high=2.0, whole=False),
           "distractors": dict(low=0, high=16, whole=True)}
QUICK = {"categories": ["simple", "multiple"], "languages": ["en"], "cases": 6,
         "factor": "description", "values": ["clear", "vague"],
         "fixed": {"tool_choice": "required"}}
"""The experiment the page is set up for when it opens: 12 trials, a couple of minutes on the
embedded model. Every one of these cases needs a call, and with ``tool_choice`` "auto" the
embedded model mostly answers in prose, so "required" is what shows which tool it picks."""

DEFAULT_COMPARE = {"description": QUICK["values"], "enums": [True, False],
                   "temperature": "0, 1.0", "tool_choice": ["auto", "required"],
                   "distractors": "0, 4", "protocol": ["native", "string"],
                   "parallel_tool_calls": [None, False], "system_prompt": [False, True]}


def show_value(value: Any) -> str:
    """A setting's value as a widget shows it."""
    if value is True:
        return "on"
    if value is False:
        return "off"
    if value is None:
        return "endpoint default"
    return str(value)


# ---------------------------------------------------------------- the run database

_stores: dict[Path, Store] = {}
_stores_lock = threading.Lock()


def store_path() -> Path:
    """Where runs are kept: ``LAB_RUNS_DB``, else ``runs/lab.sqlite`` like the command line."""
    return Path(os.environ.get("LAB_RUNS_DB") or DEFAULT_PATH)


def open_store(path: Path | None = None) -> Store:
    """One ``Store`` per file per process, shared by every page and job."""
    path = (path or store_path()).resolve()
    with _stores_lock:
        if path not in _stores:
            _stores[path] = Store(path)
        return _stores[path]


# ---------------------------------------------------------------- experiments in the background

@dataclass
class Job:
    """A run going on in a background thread. The page polls it; ``stop`` asks it to end
    after the trial in flight."""

    id: str
    total: int
    done: int = 0
    selection_ok: int = 0
    arguments_ok: int = 0
    run_id: int | None = None
    status: str = "running"  # running | finished | stopped | failed
    error: str | None = None
    started: float = field(default_factory=time.monotonic)
    ended: float | None = None
    stop_event: threading.Event = field(default_factory=threading.Event, repr=False)
    thread: threading.Thread | None = field(default=None, repr=False)

    @property
    def running(self) -> bool:
        return self.ended is None

    @property
    def seconds(self) -> float:
        return (self.ended or time.monotonic()) - self.started

    def stop(self) -> None:
        self.stop_event.set()

    def progress_text(self) -> str:
        text = f"{self.done} of {self.total} trials"
        if self.done:
            text += (f" · right tool {self.selection_ok}/{self.done}"
                     f" · right arguments {self.arguments_ok}/{self.done}")
        return text + f" · {self.seconds:.0f} s"


_jobs: dict[str, Job] = {}


def get_job(job_id: str | None) -> Job | None:
    return _jobs.get(job_id) if job_id else None


def start_job(trials: list, backend: Backend, store: Store, *, name: str = "",
              suite: Suite | None = None, concurrency: int = 1) -> Job:
    """Start ``run_experiment`` in a daemon thread and return its job at once."""
    from toolkit.experiment import run_experiment

    job = Job(id=uuid.uuid4().hex[:12], total=len(trials))

    def progress(done: int, total: int, row: dict) -> None:
        job.done, job.total = done, total
        job.run_id = row.get("run_id", job.run_id)
        job.selection_ok += bool(row.get("selection_ok"))
        job.arguments_ok += bool(row.get("arguments_ok"))

    def work() -> None:
        try:
            job.run_id = run_experiment(trials, backend, store, name=name, progress=progress,
                                        stop_event=job.stop_event, concurrency=concurrency,
                                        suite=suite)
            run = store.run(job.run_id)
            job.status, job.error = run["status"], run.get("error")
        except Exception as error:  # shown on the page as one sentence; the run is kept
            job.status = "failed"
            job.error = str(error) if isinstance(error, LabError) else \
                f"{type(error).__name__}: {error}"
            job.run_id = job.run_id or _newest_run(store)
        finally:
            job.ended = time.monotonic()

    job.thread = threading.Thread(target=work, name=f"experiment-{job.id}", daemon=True)
    _jobs[job.id] = job
    job.thread.start()
    return job


def _newest_run(store: Store) -> int | None:
    runs = store.runs()
    return int(runs["id"].iloc[0]) if len(runs) else None


def ended_text(job: Job) -> tuple[str, str]:
    """("success" | "warning" | "error", a sentence) about how a job ended."""
    if job.status == "finished":
        return "success", f"Run {job.run_id} finished: {job.total} trials in {job.seconds:.0f} s."
    if job.status == "stopped":
        return "warning", (f"Run {job.run_id} stopped after {job.done} of {job.total} trials; "
                           "the trials done are kept and shown below.")
    kept = f"the {job.done} trial(s) already done are kept" if job.done else "no trial was done"
    return "error", f"The run failed: {job.error or 'unknown error'} ({kept})."


# ---------------------------------------------------------------- showing a stored run

TRIAL_COLUMNS = ["case_id", "category", "language", "expected_tools", "chosen_tools",
                 "selection_ok", "arguments_ok", "reason", "detail", "latency_s"]


def run_tables(store: Store, run_id: int):
    """(run record, its factors, trials table, rates table) for one stored run. A run that
    varied nothing is shown by case category."""
    from toolkit.experiment import rates

    run = store.run(run_id)
    factors = list(run["plan"].get("factors") or []) or ["category"]
    trials = store.trials(run_id)
    for factor in factors:  # chart categories as the widgets named them
        trials[factor] = trials[factor].map(show_value)
    table = rates(trials, factors)
    return run, factors, trials, table


def rates_view(table):
    """The rates table as people read it: each rate with its 95% interval in one cell."""
    view = table.copy()
    for aspect in ("selection", "arguments"):
        view[f"{aspect} (95% interval)"] = [
            f"{rate:.0%} ({low:.0%}–{high:.0%})" if rate == rate else "–"  # NaN: no trials
            for rate, low, high in zip(view[f"{aspect}_rate"], view[f"{aspect}_low"],
                                       view[f"{aspect}_high"])]
    return view[[c for c in view.columns if not c.startswith(("selection_", "arguments_"))]]


def trial_table(trials, factors: list[str]):
    """The per-trial table: the varied settings first, then the case and the verdict."""
    columns = ["id", *factors, *(c for c in TRIAL_COLUMNS if c not in factors)]
    return trials[[c for c in columns if c in trials.columns]]


def run_csv(store: Store, run_id: int) -> bytes:
    """A run as the CSV that ``Store.export_csv`` writes, for a download button."""
    with tempfile.TemporaryDirectory() as folder:
        return store.export_csv(run_id, Path(folder) / "run.csv").read_bytes()


def run_label(row: dict) -> str:
    """How a run is named in pickers: id, name or factors, backend, status."""
    what = row.get("name") or row.get("factors") or "single setting"
    return (f"#{row['id']} · {what} · {row['backend']} · {row['n_done']}/{row['n_trials']} "
            f"· {row['status']}")
