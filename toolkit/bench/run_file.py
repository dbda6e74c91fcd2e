"""A stored run as one file: record it where the model is, replay it where there is none.

    python -m toolkit.bench.experiment export 3 runs/suite-on-qwen.jsonl     # at home
    python -m toolkit.bench.experiment import runs/suite-on-qwen.jsonl       # in the room

The app's History tab downloads and uploads the same file. It is JSON lines, readable with any
text editor. The first line says what the file is and which run it holds:

    {"format": "tool-calling-lab run", "version": 1, "trials": 92,
     "run": {"name": ..., "created": ..., "backend": ..., "model": ..., "base_url": ...,
             "plan": {...}, "status": ..., "error": ..., "n_trials": ...}}

then one line per trial, in the order they were written, with every field the run database
keeps about it: the request sent and the reply received (as JSON, not as text holding JSON),
the calls as parsed, the verdict and its reason, seconds and tokens. Only the database's own
ids are left out; an import gives new ones. So is the browser that owned the run in a room: an
import from the command line is everyone's run, an upload in shared mode the uploader's. Importing sends nothing to any model: the charts
and tables are drawn from the stored verdicts, as they are for a run made here.

A file is read whole before anything is stored, and stored in one transaction, so a bad file
(not a run export, from a newer lab, cut off, a run already stored) is refused with one error
that says what is wrong, and the database is left as it was.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from toolkit.bench.store import RUN_COLUMNS, RunAlreadyStored, Store
from toolkit.lab_error import LabError

FORMAT = "tool-calling-lab run"
VERSION = 1  # raise it when a field changes, so that an older lab refuses what it cannot read


class RunFileError(LabError):
    """A file that cannot be imported as a run; its text says why."""


class _Record(BaseModel):
    # Strict: a "1" where a number belongs, or a field this version does not know, is a damaged
    # or foreign file, not something to guess at.
    model_config = ConfigDict(extra="forbid", strict=True)


# The file holds exactly what the store keeps: a column added to the store is added to these
# records too, with a new VERSION (tests/test_run_file.py fails until the two agree).
class RunRecord(_Record):
    name: str
    created: str
    backend: str
    model: str
    base_url: str
    plan: dict[str, Any]
    status: Literal["running", "finished", "failed", "stopped"]
    error: str | None
    n_trials: int


class TrialRecord(_Record):
    position: int
    case_id: str
    category: str | None
    language: str | None
    factor_values: dict[str, Any]
    settings: dict[str, Any]
    repeat: int
    cache_key: str
    cached: bool
    request: dict[str, Any]
    reply: Any
    calls: list[Any] | None
    model_text: str | None
    selection_ok: bool
    arguments_ok: bool
    reason: str | None
    detail: str | None
    latency_s: float | None
    prompt_tokens: int | None
    completion_tokens: int | None
    expected_tools: str | None
    chosen_tools: str | None
    finished: str


class Header(_Record):
    format: Literal[FORMAT]
    version: int
    trials: int
    run: RunRecord


# ---------------------------------------------------------------- writing

def run_file_text(store: Store, run_id: int) -> str:
    """The run file of one stored run, as text."""
    run = store.run(run_id)  # KeyError for an unknown run
    trials = store.trial_records(run_id)
    header = {"format": FORMAT, "version": VERSION, "trials": len(trials),
              "run": {column: run[column] for column in RUN_COLUMNS}}
    lines = [header, *({c: t[c] for c in TrialRecord.model_fields} for t in trials)]
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)


def export_run(store: Store, run_id: int, path: str | Path) -> Path:
    """Write one stored run to ``path``; an existing file is never overwritten."""
    path = Path(path)
    text = run_file_text(store, run_id)
    if path.exists():
        raise RunFileError(f"{path} already exists; nothing was written. Choose another name or "
                           "delete it first.")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# ---------------------------------------------------------------- reading

def read_run_file(data: bytes | str, name: str = "the file") -> tuple[dict, list[dict]]:
    """(the run, its trials) from a run file's content, checked line by line; ``RunFileError``
    names the first thing wrong. ``name`` is how the error calls the file."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError:
            raise RunFileError(f"{name} is not a run exported by the lab (it is not UTF-8 text)") from None
    lines = data.split("\n")
    whole = data.endswith("\n")  # the writer ends every line; a file cut short ends mid-line
    if lines and lines[-1] == "":
        lines.pop()
    header = _header(lines[0] if lines else "", name, cut=len(lines) == 1 and not whole)
    trials = []
    for number, line in enumerate(lines[1:], start=2):
        last = number == len(lines)
        try:
            fields = json.loads(line)
        except json.JSONDecodeError as problem:
            if last and not whole:
                raise _cut_off(name, header, len(trials)) from None
            raise RunFileError(f"{name}, line {number}: not JSON ({problem.msg})") from None
        trials.append(_checked(TrialRecord, fields, f"{name}, line {number} (trial {number - 1})"))
    if len(trials) < header.trials:
        raise _cut_off(name, header, len(trials))
    if len(trials) > header.trials:
        raise RunFileError(f"{name} holds {len(trials)} trials where its first line says "
                           f"{header.trials}: two files joined, or one edited by hand")
    return header.run.model_dump(), [trial.model_dump() for trial in trials]


def _header(line: str, name: str, cut: bool) -> Header:
    not_a_run = (f"{name} is not a run exported by the lab: its first line should be "
                 f'{{"format": "{FORMAT}", "version": ..., ...}}')
    try:
        fields = json.loads(line)
    except json.JSONDecodeError:
        raise RunFileError(f"{name} is cut off in its first line" if cut and line.startswith(
            f'{{"format": "{FORMAT}"') else not_a_run) from None
    if not isinstance(fields, dict) or fields.get("format") != FORMAT:
        raise RunFileError(not_a_run)
    version = fields.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise RunFileError(f"{name} has no valid format version (found {version!r})")
    if version > VERSION:
        raise RunFileError(f"{name} was written by a newer version of the lab (run file version "
                           f"{version}; this one reads up to {VERSION}). Update the lab to import it.")
    return _checked(Header, fields, f"{name}, line 1")


def _checked(model: type[_Record], fields: Any, where: str):
    try:
        return model.model_validate(fields)
    except ValidationError as problem:
        first = problem.errors()[0]
        place = ".".join(str(part) for part in first["loc"]) or "the line"
        raise RunFileError(f"{where}: {place}: {first['msg']}") from None


def _cut_off(name: str, header: Header, read: int) -> RunFileError:
    return RunFileError(f"{name} is cut off: its first line says {header.trials} trials and only "
                        f"{read} are complete. Copy or download it again.")


def import_run(store: Store, data: bytes | str, name: str = "the file", owner: str | None = None) -> int:
    """Add the run of a run file's content to ``store``; return its id there. A bad file, or a
    run the store already holds (``RunAlreadyStored``), stores nothing. ``owner``: the browser
    of a room that uploaded it (None: a recorded run, everyone's)."""
    run, trials = read_run_file(data, name)
    return add_read_run(store, run, trials, name, owner)


def add_read_run(store: Store, run: dict, trials: list[dict], name: str = "the file",
                 owner: str | None = None) -> int:
    """Store what ``read_run_file`` read; a run already there is refused, naming the file."""
    try:
        return store.add_recorded_run(run, trials, owner)
    except RunAlreadyStored as stored:
        raise RunAlreadyStored(f"{name}: {stored}", stored.run_id) from None


def import_run_file(store: Store, path: str | Path) -> int:
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as problem:
        raise RunFileError(f"cannot read {path}: {problem.strerror or problem}") from None
    return import_run(store, data, str(path))
