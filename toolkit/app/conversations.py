"""BFCL multi-turn conversations run in the background for the Experiment tab.

Like an experiment (``toolkit.app.jobs``), a run of conversations happens in a thread of its
own, so a click never waits for a model; the page keeps the job's id and polls it. Each
finished conversation is a line of the run file the moment it ends (``run_cases``), so a run
stopped or broken keeps what it did, and running the same plan again resumes it.
"""
from __future__ import annotations

import json
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

__all__ = ["RECORDED_RUNS", "ConversationJob", "comparable_run_files", "conversation_run_rows", "get_conversation_job",
           "run_file_for", "settings_in_words", "start_conversations"]

# Runs the lab recorded on BFCL's slice (the embedded models and llama-cpp-python's own server):
# offered beside the learner's own, so a first run has something to be compared with offline.
RECORDED_RUNS = Path(__file__).resolve().parents[2] / "data" / "recorded_runs" / "multi_turn"

# How a run file names a setting left at its default.
_DEFAULTS = {"tool_choice": "auto", "descriptions": "full"}


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


def comparable_run_files(folders: list[Path], category: str, but: Path | None = None) -> list[Path]:
    """The run files in ``folders`` whose conversations are of ``category`` (other than ``but``),
    newest first: the runs a run of that category can be paired with."""
    found = [path for folder in folders for path in _run_files(folder)
             if path != but and _category_of(path) == category]
    return sorted(found, key=lambda path: path.stat().st_mtime, reverse=True)


def _run_files(folder: Path) -> list[Path]:
    """The run files kept in ``folder`` (none if it does not exist yet), newest first."""
    files = folder.glob("*.jsonl") if folder.is_dir() else ()
    return sorted(files, key=lambda path: path.stat().st_mtime, reverse=True)


def _category_of(path: Path) -> str | None:
    """The category of a run file's first conversation (None: empty or not a run file)."""
    try:
        with path.open(encoding="utf-8") as file:
            return json.loads(file.readline()).get("category")
    except (OSError, ValueError, AttributeError):
        return None


def settings_in_words(first: list[CaseRun], second: list[CaseRun]) -> tuple[str, str]:
    """What two runs were sent with that differs, in words ("temperature 0.0" against
    "temperature 1.0"): the labels of a paired comparison. The repeat number is not a setting."""
    a, b = _held(first), _held(second)
    differ = sorted(key for key in a.keys() | b.keys() if a.get(key) != b.get(key))
    if not differ:
        return "the first run", "the second run"
    return tuple(", ".join(f"{key} {held.get(key, 'mixed')}" for key in differ) for held in (a, b))


def _held(runs: list[CaseRun]) -> dict[str, object]:
    """The settings every conversation of a run shares, defaults named ("tool_choice auto")."""
    seen: dict[str, set[str]] = {}
    for run in runs:
        settings = {**_DEFAULTS, **{k: v for k, v in run.settings.items() if v is not None}}
        for key, value in settings.items():
            if key != "repeat":
                seen.setdefault(key, set()).add(json.dumps(value))
    return {key: json.loads(next(iter(values))) for key, values in seen.items() if len(values) == 1}


def conversation_run_rows(folder: Path) -> list[dict]:
    """One row per run file in ``folder``, newest first: its category, what it was sent with,
    and how many conversations and turns were right. A file that cannot be read is listed
    with the reason, so nothing kept is hidden."""
    from toolkit.bench.multi_turn_run import rate_rows, read_runs

    rows = []
    for path in _run_files(folder):
        try:
            runs = read_runs(path)
        except LabError as error:
            rows.append({"file": path.name, "problem": str(error)})
            continue
        if not runs:
            continue
        rates = {row["measure"]: f"{row['right']}/{row['of']}" for row in rate_rows(runs)}
        held = ", ".join(f"{key} {value}" for key, value in sorted(_held(runs).items()))
        rows.append({"file": path.name, "category": runs[0].category, "settings": held,
                     "conversations": len(runs), "skipped": sum(run.skipped is not None for run in runs),
                     "whole conversation": rates.get("whole conversation (BFCL)", "–"),
                     "turns": rates.get("turns, each on its own", "–")})
    return rows
