"""Experiments running in the background, and the run database they share with the pages.

Streamlit reruns the whole page on every click, and a rerun must not wait for a model. So an
experiment runs in a thread of its own, as a ``Job``; the page keeps only the job's id in its
session and polls the job for progress. Jobs and stores are plain objects kept in this module,
one per process, because the session can hold only plain data.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.lab_error import LabError

# The run database (and pandas with it) and the client load when a run or History needs them,
# not with the page: the Experiment tab only asks whether a job is going.
if TYPE_CHECKING:
    from toolkit.bench.store import Store
    from toolkit.bench.suite_model import Suite
    from toolkit.client import Backend

# ---------------------------------------------------------------- the run database

_stores: dict[Path, Store] = {}
_stores_lock = threading.Lock()  # two pages opening at once must still share one Store


def store_path() -> Path:
    """Where runs are kept: ``LAB_RUNS_DB``, else ``runs/lab.sqlite`` like the command line."""
    from toolkit.bench.store import DEFAULT_PATH

    return Path(os.environ.get("LAB_RUNS_DB") or DEFAULT_PATH)


def open_store(path: Path | None = None) -> Store:
    """One ``Store`` per file per process, shared by every page and job."""
    from toolkit.bench.store import Store

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
    cached: int = 0  # trials read back from earlier runs instead of sent
    run_id: int | None = None
    status: str = "running"  # running | finished | stopped | failed
    error: str | None = None
    started: float = field(default_factory=time.monotonic)
    ended: float | None = None
    stop_event: threading.Event = field(default_factory=threading.Event, repr=False)
    thread: threading.Thread | None = field(default=None, repr=False)
    backend: Backend | None = field(default=None, repr=False)  # asked where the run stands in line

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

    def waiting_text(self) -> str | None:
        """Where the run's request stands in the shared endpoint's line, while others come first:
        "waiting: 5 requests ahead (9 in line)". None when it is being answered, or if the
        endpoint cannot say (only the embedded endpoint keeps a line)."""
        line = self.backend.queue() if self.running and self.backend else None
        ahead = (line or {}).get("ahead")
        if not ahead:
            return None
        return (f"waiting: {ahead} request{'s' if ahead > 1 else ''} ahead of this run's on the shared "
                f"endpoint ({line['waiting'] + line['serving']} in line)")


_jobs: dict[str, Job] = {}


def get_job(job_id: str | None) -> Job | None:
    return _jobs.get(job_id) if job_id else None


def start_job(trials: list, backend: Backend, store: Store, *, name: str = "",
              suite: Suite | None = None, concurrency: int = 1, owner: str | None = None) -> Job:
    """Start ``run_experiment`` in a daemon thread and return its job at once; the run belongs
    to ``owner``, a browser of a room (None: everyone's)."""
    from toolkit.bench.experiment import run_experiment

    job = Job(id=uuid.uuid4().hex[:12], total=len(trials), backend=backend)

    def progress(done: int, total: int, row: dict) -> None:
        job.done, job.total = done, total
        job.run_id = row.get("run_id", job.run_id)
        job.selection_ok += bool(row.get("selection_ok"))
        job.arguments_ok += bool(row.get("arguments_ok"))
        job.cached += bool(row.get("cached"))

    def work() -> None:
        try:
            job.run_id = run_experiment(trials, backend, store, name=name, progress=progress,
                                        stop_event=job.stop_event, concurrency=concurrency,
                                        suite=suite, owner=owner)
            run = store.run(job.run_id)
            job.status, job.error = run["status"], run.get("error")
        except Exception as error:  # shown on the page as one sentence; the run is kept
            job.status = "failed"
            job.error = str(error) if isinstance(error, LabError) else \
                f"{type(error).__name__}: {error}"
            job.run_id = job.run_id or _newest_run(store, owner)
        finally:
            job.ended = time.monotonic()

    # A daemon thread, so stopping the app never waits for a model that is still answering.
    job.thread = threading.Thread(target=work, name=f"experiment-{job.id}", daemon=True)
    _jobs[job.id] = job
    job.thread.start()
    return job


def _newest_run(store: Store, owner: str | None) -> int | None:
    runs = store.runs(visible_to=owner)
    if owner is not None:  # in a room, the newest of this browser's own: never a neighbour's
        runs = runs[runs["owner"] == owner]
    return int(runs["id"].iloc[0]) if len(runs) else None


def ended_text(job: Job) -> tuple[str, str]:
    """("success" | "warning" | "error", a sentence) about how a job ended."""
    if job.status == "finished":
        sent = job.total - job.cached
        how = (f"{sent} sent and {job.cached} read back from earlier runs (the same request and seed)"
               if job.cached else "all sent to the model")
        return "success", f"Run {job.run_id} finished: {job.total} trials in {job.seconds:.0f} s, {how}."
    if job.status == "stopped":
        return "warning", (f"Run {job.run_id} stopped after {job.done} of {job.total} trials; "
                           "the trials done are kept and shown below.")
    kept = f"the {job.done} trial(s) already done are kept" if job.done else "no trial was done"
    return "error", f"The run failed: {job.error or 'unknown error'} ({kept})."
