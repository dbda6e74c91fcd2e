"""Every run and every trial, kept in one SQLite file (``runs/lab.sqlite`` by default).

A trial is written the moment it finishes, so a run that fails or is stopped keeps what it
did, and a later run of the same plan reads those trials back instead of asking the model
again (see ``cache_key`` in :mod:`toolkit.bench.experiment`). The file is ordinary SQLite: open it
with ``sqlite3`` or any database browser to look around. It carries a schema version, so a
file made by an older lab is brought up to date when opened, and one made by a newer lab is
refused rather than damaged.

A run may have an owner: in shared mode (``toolkit.app.shared_mode``) the id of the browser that
started or uploaded it, so that each browser of a room lists its own runs and the recorded ones.
A run with no owner (made or imported from the command line, or by the app used alone) is
everyone's. Trials are never owned: the cache answers an identical request from any run.
"""
from __future__ import annotations

import json
import sqlite3
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from toolkit.bench.trials import FACTORS, Settings, label
from toolkit.lab_error import LabError

DEFAULT_PATH = Path("runs") / "lab.sqlite"

# The tables of schema version 1. IF NOT EXISTS because a file written before versioning
# (user_version 0) already has exactly these tables, and an empty file has none.
_VERSION_1 = (
    """CREATE TABLE IF NOT EXISTS runs (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL DEFAULT '',
    created     TEXT NOT NULL,
    backend     TEXT NOT NULL,
    model       TEXT NOT NULL,
    base_url    TEXT NOT NULL,
    plan        TEXT NOT NULL,
    status      TEXT NOT NULL,        -- running | finished | failed | stopped
    error       TEXT,
    n_trials    INTEGER NOT NULL
)""",
    """CREATE TABLE IF NOT EXISTS trials (
    id                INTEGER PRIMARY KEY,
    run_id            INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    position          INTEGER NOT NULL,   -- place in the plan
    case_id           TEXT NOT NULL,
    category          TEXT,
    language          TEXT,
    factor_values     TEXT NOT NULL,      -- JSON: the value of each factor of the run
    settings          TEXT NOT NULL,      -- JSON: every setting
    repeat            INTEGER NOT NULL,
    cache_key         TEXT NOT NULL,
    cached            INTEGER NOT NULL DEFAULT 0,
    request           TEXT NOT NULL,      -- JSON body sent (model included)
    reply             TEXT,               -- JSON body received
    calls             TEXT,               -- JSON: the calls as parsed
    model_text        TEXT,
    selection_ok      INTEGER NOT NULL,
    arguments_ok      INTEGER NOT NULL,
    reason            TEXT,
    detail            TEXT,
    latency_s         REAL,
    prompt_tokens     INTEGER,
    completion_tokens INTEGER,
    expected_tools    TEXT,
    chosen_tools      TEXT,
    finished          TEXT NOT NULL
)""",
    "CREATE INDEX IF NOT EXISTS trials_by_run ON trials(run_id, position)",
    "CREATE INDEX IF NOT EXISTS trials_by_cache_key ON trials(cache_key)",
)

# CREATE TABLE IF NOT EXISTS never adds a column to a table an older lab made, so each file
# records its schema version (PRAGMA user_version) and is brought forward step by step: step n
# takes a file from version n to n + 1. To change the schema, append a step (say
# "ALTER TABLE trials ADD COLUMN ..."); never edit one already released, because files that
# are past it would never see the edit.
_MIGRATIONS: tuple[tuple[str, ...], ...] = (
    _VERSION_1,
    # 1 -> 2: who may list a run in a room (NULL: everyone; every older run is everyone's).
    ("ALTER TABLE runs ADD COLUMN owner TEXT",),
)
SCHEMA_VERSION = len(_MIGRATIONS)

TRIAL_COLUMNS = (
    "run_id", "position", "case_id", "category", "language", "factor_values", "settings",
    "repeat", "cache_key", "cached", "request", "reply", "calls", "model_text", "selection_ok",
    "arguments_ok", "reason", "detail", "latency_s", "prompt_tokens", "completion_tokens",
    "expected_tools", "chosen_tools", "finished",
)
_BULKY = ("request", "reply", "calls")  # left out of the trials table unless asked for
_JSON = ("factor_values", "settings", "request", "reply", "calls")


# What a run file carries about a run. Not ``owner``: who may see a run belongs to the database
# it is kept in, so a run carried elsewhere arrives with the owner its import gives it.
RUN_COLUMNS = ("name", "created", "backend", "model", "base_url", "plan", "status", "error",
               "n_trials")
# What a run was when it was created never changes afterwards: two records that agree on all of
# it are the same run, wherever they were stored (its id differs from one database to another).
_RUN_IDENTITY = ("created", "name", "backend", "model", "base_url")


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class RunAlreadyStored(LabError):
    """A recorded run that the store already holds (see ``Store.add_recorded_run``)."""

    def __init__(self, message: str, run_id: int):
        super().__init__(message)
        self.run_id = run_id


class Store:
    """The run database. One connection, shared by threads behind a lock."""

    def __init__(self, path: str | Path = DEFAULT_PATH):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._db = sqlite3.connect(self.path, check_same_thread=False)
        self._db.row_factory = sqlite3.Row
        try:
            with self._lock:
                # Before anything else is set: a file from a newer lab is refused untouched.
                self._refuse_if_newer(self._version())
                # WAL lets the app read a run while another process is still writing it.
                self._db.execute("PRAGMA journal_mode=WAL")
                # In WAL mode NORMAL never corrupts the file; a power cut may lose the last trials.
                self._db.execute("PRAGMA synchronous=NORMAL")
                self._db.execute("PRAGMA foreign_keys=ON")
                if self._version() < SCHEMA_VERSION:
                    self._migrate()
        except BaseException:
            self._db.close()  # also rolls back a migration that failed half way
            raise

    def _version(self) -> int:
        return self._db.execute("PRAGMA user_version").fetchone()[0]

    def _refuse_if_newer(self, version: int) -> None:
        if version > SCHEMA_VERSION:
            raise LabError(
                f"{self.path} was written by a newer version of the lab (database version "
                f"{version}, this one knows up to {SCHEMA_VERSION}). Update the lab to open it, "
                "or use another file.")

    def _migrate(self) -> None:
        # One transaction for every step: a failure leaves the file as it was. IMMEDIATE takes
        # the write lock before the version is read again, so two programs opening the same
        # old file at once cannot both apply a step.
        self._db.execute("BEGIN IMMEDIATE")
        version = self._version()
        self._refuse_if_newer(version)
        for number in range(version, SCHEMA_VERSION):
            for statement in _MIGRATIONS[number]:
                self._db.execute(statement)
            self._db.execute(f"PRAGMA user_version = {number + 1}")
        self._db.commit()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _query(self, sql: str, parameters: Iterable[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self._db.execute(sql, tuple(parameters)).fetchall()

    # ------------------------------------------------------------ writing

    def create_run(self, *, name: str, backend: str, model: str, base_url: str, plan: dict,
                   n_trials: int, owner: str | None = None) -> int:
        with self._lock, self._db:
            cursor = self._db.execute(
                "INSERT INTO runs (name, created, backend, model, base_url, plan, status, n_trials, owner)"
                " VALUES (?, ?, ?, ?, ?, ?, 'running', ?, ?)",
                (name, now(), backend, model, base_url, json.dumps(plan, ensure_ascii=False), n_trials,
                 owner))
            return cursor.lastrowid

    def finish_run(self, run_id: int, status: str, error: str | None = None) -> None:
        with self._lock, self._db:
            self._db.execute("UPDATE runs SET status = ?, error = ? WHERE id = ?", (status, error, run_id))

    def add_trial(self, row: dict) -> int:
        values = [_to_cell(column, row.get(column)) for column in TRIAL_COLUMNS]
        with self._lock, self._db:
            cursor = self._db.execute(
                f"INSERT INTO trials ({', '.join(TRIAL_COLUMNS)}) "
                f"VALUES ({', '.join('?' * len(TRIAL_COLUMNS))})", values)
            return cursor.lastrowid

    def add_recorded_run(self, run: dict, trials: list[dict], owner: str | None = None) -> int:
        """Store a run recorded elsewhere, with its trials, as they are; return its new id.

        One transaction: a run already here (same creation time, name, backend, model, endpoint
        and plan) and visible to ``owner`` is refused with ``RunAlreadyStored``, and a failure
        half way stores nothing. A copy that only another browser of the room sees does not
        count: refusing would point at a run this one cannot list."""
        with self._lock:
            # IMMEDIATE takes the write lock before the check, so two imports of the same file
            # at once (the app and the command line) cannot both find the run missing.
            self._db.execute("BEGIN IMMEDIATE")
            try:
                stored = self._db.execute(
                    f"SELECT id, plan FROM runs WHERE {' AND '.join(f'{c} = ?' for c in _RUN_IDENTITY)}"
                    " AND (owner IS NULL OR owner IS ?)", [*(run[c] for c in _RUN_IDENTITY), owner]).fetchall()
                same = [row["id"] for row in stored if json.loads(row["plan"]) == run["plan"]]
                if same:
                    raise RunAlreadyStored(
                        f"this run is already stored in {self.path} as run {same[0]} (recorded "
                        f"{run['created']} on {run['backend']}); nothing was imported", same[0])
                cursor = self._db.execute(
                    f"INSERT INTO runs ({', '.join(RUN_COLUMNS)}, owner) "
                    f"VALUES ({', '.join('?' * len(RUN_COLUMNS))}, ?)",
                    [*(json.dumps(run["plan"], ensure_ascii=False) if c == "plan" else run[c]
                       for c in RUN_COLUMNS), owner])
                run_id = cursor.lastrowid
                self._db.executemany(
                    f"INSERT INTO trials ({', '.join(TRIAL_COLUMNS)}) "
                    f"VALUES ({', '.join('?' * len(TRIAL_COLUMNS))})",
                    [[_recorded_cell(c, run_id if c == "run_id" else trial.get(c)) for c in TRIAL_COLUMNS]
                     for trial in trials])
            except BaseException:
                self._db.rollback()
                raise
            self._db.commit()
            return run_id

    def delete_run(self, run_id: int) -> None:
        with self._lock, self._db:
            self._db.execute("DELETE FROM trials WHERE run_id = ?", (run_id,))
            self._db.execute("DELETE FROM runs WHERE id = ?", (run_id,))

    # ------------------------------------------------------------ reading

    def runs(self, visible_to: str | None = None) -> pd.DataFrame:
        """One row per run, newest first, with how many trials are stored and pass.

        ``visible_to``: a browser's id in a room; only its own runs and those with no owner are
        listed. None lists every run."""
        where, parameters = ("", ()) if visible_to is None else (
            " WHERE runs.owner IS NULL OR runs.owner = ?", (visible_to,))
        rows = self._query(
            "SELECT runs.*, COUNT(trials.id) AS n_done, SUM(trials.selection_ok) AS n_selection_ok,"
            " SUM(trials.arguments_ok) AS n_arguments_ok"
            f" FROM runs LEFT JOIN trials ON trials.run_id = runs.id{where}"
            " GROUP BY runs.id ORDER BY runs.id DESC", parameters)
        frame = pd.DataFrame([dict(row) for row in rows], columns=[
            "id", "name", "created", "backend", "model", "base_url", "plan", "status", "error",
            "n_trials", "owner", "n_done", "n_selection_ok", "n_arguments_ok"])
        frame["factors"] = [", ".join(json.loads(plan).get("factors", [])) for plan in frame["plan"]]
        for column in ("n_selection_ok", "n_arguments_ok"):
            frame[column] = frame[column].fillna(0).astype(int)
        return frame

    def run(self, run_id: int) -> dict:
        rows = self._query("SELECT * FROM runs WHERE id = ?", (run_id,))
        if not rows:
            raise KeyError(f"no run {run_id} in {self.path}")
        run = dict(rows[0])
        run["plan"] = json.loads(run["plan"])
        return run

    def trials(self, run_id: int, full: bool = False) -> pd.DataFrame:
        """The trials of a run in plan order, one column per setting; ``full`` adds the request,
        reply and calls JSON (bulky)."""
        columns = ["id", *(c for c in TRIAL_COLUMNS if full or c not in _BULKY)]
        rows = self._query(f"SELECT {', '.join(columns)} FROM trials WHERE run_id = ? "
                           "ORDER BY position", (run_id,))
        frame = pd.DataFrame([tuple(row) for row in rows], columns=columns)
        settings = [json.loads(text) for text in frame["settings"]]
        # A setting added after a run was recorded reads as its default: that is what it ran with.
        defaults = Settings().model_dump()
        for name in FACTORS:
            frame[name] = [label(s.get(name, defaults[name])) for s in settings]
        for name in ("selection_ok", "arguments_ok", "cached"):
            frame[name] = frame[name].astype(bool)
        return frame

    def trial(self, trial_id: int) -> dict:
        """Everything stored about one trial, JSON fields parsed."""
        rows = self._query("SELECT * FROM trials WHERE id = ?", (trial_id,))
        if not rows:
            raise KeyError(f"no trial {trial_id} in {self.path}")
        return _parsed(rows[0])

    def trial_records(self, run_id: int) -> list[dict]:
        """Everything stored about every trial of a run, JSON fields parsed, in the order the
        trials were written."""
        self.run(run_id)  # a clear error for an unknown run
        return [_parsed(row) for row in
                self._query("SELECT * FROM trials WHERE run_id = ? ORDER BY id", (run_id,))]

    def cached(self, keys: Iterable[str]) -> dict[str, dict]:
        """The newest stored trial for each cache key that has one."""
        keys = list(dict.fromkeys(keys))
        found: dict[str, dict] = {}
        for start in range(0, len(keys), 500):  # SQLite limits the number of parameters
            chunk = keys[start:start + 500]
            rows = self._query(f"SELECT * FROM trials WHERE cache_key IN ({', '.join('?' * len(chunk))})"
                               " ORDER BY id", chunk)
            for row in rows:
                found[row["cache_key"]] = dict(row)
        return found

    def compare(self, run_a: int, run_b: int) -> pd.DataFrame:
        """The trials of two runs side by side, matched by case, repeat and place in the plan.

        Two runs of the same plan (say on two models) match trial for trial; ``changed`` marks
        the trials where the verdict differs.
        """
        keep = ["position", "case_id", "category", "language", "repeat", "settings", "selection_ok",
                "arguments_ok", "reason", "chosen_tools", "expected_tools"]
        frames = []
        for run_id in (run_a, run_b):
            frame = self.trials(run_id)[keep].copy()
            frame["match"] = frame.groupby(["case_id", "repeat"]).cumcount()
            frames.append(frame)
        merged = frames[0].merge(frames[1], on=["case_id", "repeat", "match"], how="outer",
                                 suffixes=("_a", "_b"))
        for column in ("category", "language", "expected_tools"):
            merged[column] = merged[f"{column}_a"].fillna(merged[f"{column}_b"])
            merged = merged.drop(columns=[f"{column}_a", f"{column}_b"])
        merged = merged.sort_values(["position_a", "position_b"], na_position="last")
        merged["changed"] = ((merged["selection_ok_a"] != merged["selection_ok_b"])
                             | (merged["arguments_ok_a"] != merged["arguments_ok_b"]))
        order = ["case_id", "category", "language", "repeat", "expected_tools",
                 "selection_ok_a", "selection_ok_b", "arguments_ok_a", "arguments_ok_b",
                 "reason_a", "reason_b", "chosen_tools_a", "chosen_tools_b", "settings_a",
                 "settings_b", "changed"]
        return merged[order].reset_index(drop=True)

    def export_csv(self, run_id: int, path: str | Path) -> Path:
        """Every stored field of every trial of a run, one row per trial."""
        self.run(run_id)  # a clear error for an unknown run
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        self.trials(run_id, full=True).to_csv(path, index=False)
        return path


def _parsed(row: sqlite3.Row) -> dict:
    trial = dict(row)
    for name in _JSON:
        if trial[name] is not None:
            trial[name] = json.loads(trial[name])
    for name in ("selection_ok", "arguments_ok", "cached"):
        trial[name] = bool(trial[name])
    return trial


def _recorded_cell(column: str, value: Any) -> Any:
    # A recorded trial holds its JSON fields parsed, as ``trial_records`` gives them, even where
    # the JSON is a bare string; written back with the runner's own json.dumps, as it wrote them.
    if column in _JSON and value is not None:
        return json.dumps(value, ensure_ascii=False)
    return _to_cell(column, value)


def _to_cell(column: str, value: Any) -> Any:
    if column in _JSON and value is not None and not isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return int(value)
    return value
