"""BFCL multi-turn conversations run in the background for the Experiment tab.

Like an experiment (``toolkit.app.jobs``), a run of conversations happens in a thread of its
own, so a click never waits for a model; the page keeps the job's id and polls it. Each
finished conversation is a line of the run file the moment it ends (``run_cases``), so a run
stopped or broken keeps what it did, and running the same plan again resumes it.
"""
from __future__ import annotations

import re
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.lab_error import LabError

if TYPE_CHECKING:
    from toolkit.bench.multi_turn_data import MultiTurnCase
    from toolkit.bench.multi_turn_run import CaseRun
    from toolkit.client import Backend

__all__ = ["ConversationJob", "get_conversation_job", "run_file_for", "start_conversations"]


@dataclass
class ConversationJob:
    id: str
    total: int
    path: Path
    done: int = 0
    passed: int = 0
    skipped: int = 0
    status: str = "running"  # running | finished | stopped | failed
    error: str | None = None
    started: float = field(default_factory=time.monotonic)
    ended: float | None = None
    stop_event: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def running(self) -> bool:
        return self.ended is None

    def progress_text(self) -> str:
        seconds = (self.ended or time.monotonic()) - self.started
        return (f"{self.done} of {self.total} conversations · {self.passed} passed · "
                f"{self.skipped} skipped (too long for the model) · {seconds:.0f} s")

    def ended_text(self) -> tuple[str, str]:
        """("success" | "warning" | "error", a sentence) about how the run ended."""
        if self.status == "finished":
            return "success", f"Finished: {self.done} conversations, {self.passed} passed by BFCL's verdict."
        if self.status == "stopped":
            return "warning", f"Stopped after {self.done} of {self.total} conversations; those are kept."
        return "error", f"The run failed: {self.error} (the {self.done} conversation(s) finished are kept)."


_jobs: dict[str, ConversationJob] = {}


def get_conversation_job(job_id: str | None) -> ConversationJob | None:
    return _jobs.get(job_id) if job_id else None


def run_file_for(folder: Path, category: str, model: str, settings: dict) -> Path:
    """One run file per category, model and settings, so that the same plan resumes its file."""
    words = "-".join(f"{key}{value}" for key, value in sorted(settings.items()) if value is not None)
    return folder / (re.sub(r"[^A-Za-z0-9._-]+", "_", f"{category}-{model}-{words}") + ".jsonl")


def start_conversations(backend: Backend, cases: list[MultiTurnCase], classes: dict[str, type],
                        path: Path, settings: dict, repeats: int = 1) -> ConversationJob:
    """Run ``cases`` in a daemon thread into ``path``; the job comes back at once."""
    from toolkit.bench.multi_turn_run import run_cases

    job = ConversationJob(id=uuid.uuid4().hex[:12], total=len(cases) * repeats, path=path)

    def progress(run: CaseRun) -> None:
        job.done += 1
        job.skipped += run.skipped is not None
        job.passed += bool(run.verdict and run.verdict["valid"])

    def work() -> None:
        try:
            runs = run_cases(backend, cases, classes, path, settings=settings, repeats=repeats,
                             progress=progress, should_stop=job.stop_event.is_set)
            job.done = len(runs)
            job.skipped = sum(run.skipped is not None for run in runs)
            job.passed = sum(bool(run.verdict and run.verdict["valid"]) for run in runs)
            job.status = "stopped" if job.stop_event.is_set() and len(runs) < job.total else "finished"
        except Exception as error:  # one sentence on the page; the finished conversations are kept
            job.status = "failed"
            job.error = str(error) if isinstance(error, LabError) else f"{type(error).__name__}: {error}"
        finally:
            job.ended = time.monotonic()

    threading.Thread(target=work, name=f"conversations-{job.id}", daemon=True).start()
    _jobs[job.id] = job
    return job
