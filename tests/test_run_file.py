"""A run carried as one file: exported from one database, imported into another with every
trial and rate as it was; bad files refused with one error and the database left untouched.

Runs are made on the app's scripted model, whose figures mean nothing: these tests compare a
run with its copy, never with a model's accuracy.
"""
import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from toolkit.app.scripted_model import scripted_backend
from toolkit.app.tables import run_tables
from toolkit.bench.experiment import run_experiment
from toolkit.bench.experiment_cli import main
from toolkit.bench.rates import rate_table
from toolkit.bench.run_file import (
    FORMAT,
    VERSION,
    RunFileError,
    RunRecord,
    TrialRecord,
    export_run,
    import_run,
    import_run_file,
    read_run_file,
    run_file_text,
)
from toolkit.bench.store import RUN_COLUMNS, TRIAL_COLUMNS, RunAlreadyStored, Store
from toolkit.bench.suite import lesson_suite, load_suite
from toolkit.bench.trials import Settings, plan
from toolkit.fake import ScriptedModel

RECORDED = Path(__file__).resolve().parent.parent / "data" / "recorded_runs"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A database holding one run of six cases, clear against vague descriptions, made on the
    scripted model (which calls the first tool offered: right on some cases, wrong on others)."""
    path = tmp_path_factory.mktemp("home") / "home.sqlite"
    suite = load_suite()
    trials = plan(suite, Settings(), "description", ["clear", "vague"], cases=6)
    with Store(path) as store:
        run_id = run_experiment(trials, scripted_backend(), store, name="at home", suite=suite)
        text = run_file_text(store, run_id)
    return path, run_id, text


def snapshot(path: Path) -> list[str]:
    """Everything a database holds, as SQL: equal snapshots, equal databases."""
    if not path.exists():
        return []
    with closing(sqlite3.connect(path)) as db:
        return list(db.iterdump())


def comparable(store: Store, run_id: int):
    """A run's record and trials without the ids its database gave them."""
    run = {k: v for k, v in store.run(run_id).items() if k != "id"}
    trials = store.trials(run_id, full=True).drop(columns=["id", "run_id"])
    return run, trials


@pytest.fixture
def room(tmp_path, recorded):
    """The room's database, already holding a run of its own, and its content before a test."""
    path = tmp_path / "room.sqlite"
    suite = load_suite()
    with Store(path) as store:
        run_experiment(plan(suite, Settings(), cases=2), scripted_backend(), store, name="in the room",
                       suite=suite)
    return path


# ---------------------------------------------------------------- the round trip

def test_the_file_holds_every_field_the_store_keeps(tmp_path):
    # A column added to the store without a field here (and a new VERSION) would be lost.
    assert set(RunRecord.model_fields) == set(RUN_COLUMNS)
    assert set(TrialRecord.model_fields) == set(TRIAL_COLUMNS) - {"run_id"}
    # every column of the runs table, but its id and who in a room may see the run
    Store(tmp_path / "lab.sqlite").close()
    with closing(sqlite3.connect(tmp_path / "lab.sqlite")) as db:
        stored = {row[1] for row in db.execute("PRAGMA table_info(runs)")}
    assert stored - {"id", "owner"} == set(RUN_COLUMNS)


def test_a_run_imported_into_an_empty_store_has_the_same_trials_and_rates(recorded, tmp_path):
    home, run_id, text = recorded
    lines = [json.loads(line) for line in text.splitlines()]
    assert lines[0]["format"] == FORMAT and lines[0]["version"] == VERSION
    assert lines[0]["trials"] == len(lines) - 1 == 12
    assert isinstance(lines[1]["request"], dict) and "messages" in lines[1]["request"]  # JSON, not text
    with Store(home) as before, Store(tmp_path / "empty.sqlite") as after:
        new_id = import_run(after, text)
        run_a, trials_a = comparable(before, run_id)
        run_b, trials_b = comparable(after, new_id)
        assert run_b == run_a
        assert trials_b.equals(trials_a)
        assert [t["id"] for t in after.trial_records(new_id)] == sorted(t["id"] for t in after.trial_records(new_id))
        for by in (None, ["description"], ["category"], ["description", "category"]):
            assert rate_table(trials_b, by).equals(rate_table(trials_a, by))
        # the app's own tables of the run, as History and the run view draw them
        _, factors_a, shown_a, table_a = run_tables(before, run_id)
        _, factors_b, shown_b, table_b = run_tables(after, new_id)
        assert factors_b == factors_a == ["description"]
        assert table_b.equals(table_a)
        assert shown_b.drop(columns="id").equals(shown_a.drop(columns="id"))
        # exported again, it is the same file
        assert run_file_text(after, new_id) == text


def test_an_imported_run_counts_as_sent_so_the_same_plan_reads_it_back(recorded, tmp_path):
    # Same endpoint, model, request and seed: the store answers from the imported trials, as it
    # does from any earlier run in it, and the model is asked nothing.
    _, _, text = recorded
    suite = load_suite()
    silent = ScriptedModel()  # no reply to give: a request sent would fail the run
    with Store(tmp_path / "room.sqlite") as store:
        imported = import_run(store, text)
        again = run_experiment(plan(suite, Settings(), "description", ["clear", "vague"], cases=6),
                               silent.backend(), store, suite=suite)
        assert store.run(again)["status"] == "finished" and not silent.requests
        assert store.trials(again)["cached"].all() and len(store.trials(again)) == 12
        assert store.trials(again)["arguments_ok"].tolist() == store.trials(imported)["arguments_ok"].tolist()


def test_an_upload_is_its_browsers_and_an_import_without_an_owner_is_everyones(recorded, room):
    _, _, text = recorded
    with Store(room) as store:
        a = import_run(store, text, owner="browser-a")
        b = import_run(store, text, owner="browser-b")  # a copy only A can list does not count as stored
        with pytest.raises(RunAlreadyStored, match=f"as run {a}"):
            import_run(store, text, owner="browser-a")
        everyone = import_run(store, text)  # the instructor's, from the serving machine
        with pytest.raises(RunAlreadyStored, match=f"as run {everyone}"):
            import_run(store, text, owner="browser-c")  # C lists the recorded copy already
        assert list(store.runs(visible_to="browser-a")["id"]) == [everyone, a, 1]
        assert list(store.runs(visible_to="browser-b")["id"]) == [everyone, b, 1]
        assert list(store.runs(visible_to="browser-c")["id"]) == [everyone, 1]
        assert (store.run(a)["owner"], store.run(everyone)["owner"]) == ("browser-a", None)
        # the owner belongs to this database: exported again, the file is the one uploaded
        assert run_file_text(store, a) == text


def test_the_cli_exports_and_imports_a_run(recorded, tmp_path, capsys):
    home, run_id, text = recorded
    file = tmp_path / "out" / "run.jsonl"
    assert main(["export", str(run_id), str(file), "--db", str(home)]) == 0
    assert f"run {run_id} written to {file} (12 trials" in capsys.readouterr().out
    assert file.read_text(encoding="utf-8") == text
    room = tmp_path / "room.sqlite"
    assert main(["import", str(file), "--db", str(room)]) == 0
    out = capsys.readouterr().out
    assert "run 1 imported" in out and "nothing was sent to a model" in out and "by description" in out
    with Store(room) as store:
        assert len(store.trials(1)) == 12


def test_export_refuses_an_unknown_run_and_an_existing_file(recorded, tmp_path, capsys):
    home, run_id, _ = recorded
    taken = tmp_path / "taken.jsonl"
    taken.write_text("keep me", encoding="utf-8")
    with Store(home) as store:
        with pytest.raises(RunFileError, match="already exists"):
            export_run(store, run_id, taken)
        with pytest.raises(KeyError, match="no run 99"):
            export_run(store, 99, tmp_path / "new.jsonl")
    assert taken.read_text(encoding="utf-8") == "keep me"
    assert main(["export", "99", str(tmp_path / "new.jsonl"), "--db", str(home)]) == 2
    assert "error: no run 99" in capsys.readouterr().err
    assert main(["export", "1", str(tmp_path / "new.jsonl"), "--db", str(tmp_path / "none.sqlite")]) == 2
    assert "no run database" in capsys.readouterr().err
    assert not (tmp_path / "new.jsonl").exists() and not (tmp_path / "none.sqlite").exists()


# ---------------------------------------------------------------- bad files

def cut(text: str, where: str) -> str:
    lines = text.splitlines(keepends=True)
    return {"mid-trial": "".join(lines[:5]) + lines[5][:40],
            "between trials": "".join(lines[:5]),
            "in the first line": lines[0][:60]}[where]


def with_header(text: str, **changes) -> str:
    lines = text.splitlines(keepends=True)
    header = {**json.loads(lines[0]), **changes}
    return json.dumps(header) + "\n" + "".join(lines[1:])


def with_trial_field(text: str, name: str, value) -> str:
    lines = text.splitlines(keepends=True)
    trial = {**json.loads(lines[3]), name: value}
    return "".join(lines[:3]) + json.dumps(trial) + "\n" + "".join(lines[4:])


BAD_FILES = {
    "a CSV export": (lambda text: "id,case_id\n1,weather\n", "is not a run exported by the lab"),
    "empty": (lambda text: "", "is not a run exported by the lab"),
    "other JSON": (lambda text: '{"format_version": 1, "cases": []}\n', "is not a run exported by the lab"),
    "not text": (lambda text: b"\x89PNG\r\n\x1a\n\x00\xff", "not UTF-8 text"),
    "a newer version": (lambda text: with_header(text, version=VERSION + 1),
                        f"newer version of the lab (run file version {VERSION + 1}"),
    "cut mid-trial": (lambda text: cut(text, "mid-trial"), "is cut off: its first line says 12 trials and only 4"),
    "cut between trials": (lambda text: cut(text, "between trials"), "is cut off: its first line says 12 trials and only 4"),
    "cut in the first line": (lambda text: cut(text, "in the first line"), "is cut off in its first line"),
    "two files joined": (lambda text: text + text.splitlines(keepends=True)[1], "holds 13 trials where its first line says 12"),
    "a damaged verdict": (lambda text: with_trial_field(text, "selection_ok", "yes"),
                          "line 4 (trial 3): selection_ok: Input should be a valid boolean"),
    "a field it does not know": (lambda text: with_trial_field(text, "mood", "happy"),
                                 "line 4 (trial 3): mood: Extra inputs are not permitted"),
    "a line that is not JSON": (lambda text: with_trial_field(text, "x", 1).replace('"x": 1}', '"x": }', 1),
                                "line 4: not JSON"),
}


@pytest.mark.parametrize("kind", list(BAD_FILES))
def test_a_bad_file_is_refused_with_one_error_and_the_store_is_unchanged(kind, recorded, room):
    _, _, text = recorded
    damage, message = BAD_FILES[kind]
    before = snapshot(room)
    with Store(room) as store, pytest.raises(RunFileError) as refused:
        import_run(store, damage(text), "run.jsonl")
    assert message in str(refused.value) and "run.jsonl" in str(refused.value)
    assert snapshot(room) == before


@pytest.mark.parametrize("kind", ["a CSV export", "a newer version", "cut mid-trial"])
def test_the_cli_refuses_a_bad_file_with_exit_code_2_and_writes_nothing(kind, recorded, room, tmp_path, capsys):
    _, _, text = recorded
    damage, message = BAD_FILES[kind]
    file = tmp_path / "run.jsonl"
    file.write_text(damage(text), encoding="utf-8")
    before = snapshot(room)
    assert main(["import", str(file), "--db", str(room)]) == 2
    assert message in capsys.readouterr().err
    assert snapshot(room) == before
    # and a refused file does not even create a database
    assert main(["import", str(file), "--db", str(tmp_path / "new.sqlite")]) == 2
    assert not (tmp_path / "new.sqlite").exists()


def test_a_missing_file_is_one_error(tmp_path, capsys):
    assert main(["import", str(tmp_path / "nowhere.jsonl"), "--db", str(tmp_path / "lab.sqlite")]) == 2
    assert "cannot read" in capsys.readouterr().err
    with Store(tmp_path / "lab.sqlite") as store, pytest.raises(RunFileError, match="cannot read"):
        import_run_file(store, tmp_path / "nowhere.jsonl")


def test_a_run_already_stored_is_refused_not_duplicated(recorded, room, capsys, tmp_path):
    home, run_id, text = recorded
    with Store(room) as store:
        first = import_run(store, text)
    before = snapshot(room)
    with Store(room) as store, pytest.raises(RunAlreadyStored, match=f"already stored in .* as run {first}"):
        import_run(store, text)
    assert snapshot(room) == before
    file = tmp_path / "run.jsonl"
    file.write_text(text, encoding="utf-8")
    assert main(["import", str(file), "--db", str(room)]) == 2
    assert f"as run {first}" in capsys.readouterr().err
    assert snapshot(room) == before
    # back into the database it came from: that run is the one already there
    home_before = snapshot(home)
    with Store(home) as store, pytest.raises(RunAlreadyStored, match=f"as run {run_id}"):
        import_run(store, text)
    assert snapshot(home) == home_before


def test_a_failure_half_way_through_the_writes_stores_nothing(recorded, room):
    _, _, text = recorded
    run, trials = read_run_file(text)
    trials[5]["case_id"] = None  # NOT NULL in the database: the sixth insert fails
    before = snapshot(room)
    with Store(room) as store:
        with pytest.raises(sqlite3.IntegrityError):
            store.add_recorded_run(run, trials)
        assert snapshot(room) == before
        # the same connection writes on: nothing of the failed import comes with it
        good = import_run(store, text)
        assert list(store.runs()["id"]) == [good, 1] and list(store.runs()["n_done"]) == [12, 2]


# ---------------------------------------------------------------- the shipped recording

def test_the_shipped_recording_imports_and_its_rates_are_its_trials(tmp_path):
    [file] = sorted(RECORDED.glob("*.jsonl"))
    assert file.stat().st_size < 1_000_000  # shipped in the repository: keep it small
    lines = [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines()]
    header, trials = lines[0], lines[1:]
    assert header["run"]["status"] == "finished" and header["trials"] == len(trials) == header["run"]["n_trials"]
    with Store(tmp_path / "room.sqlite") as store:
        run_id = import_run_file(store, file)
        [rates] = rate_table(store.trials(run_id)).to_dict("records")
        assert rates["n"] == len(trials)
        assert rates["selection_successes"] == sum(t["selection_ok"] for t in trials)
        assert rates["arguments_successes"] == sum(t["arguments_ok"] for t in trials)
        by_category = rate_table(store.trials(run_id), "category").set_index("category")
        for category, row in by_category.iterrows():
            mine = [t for t in trials if t["category"] == category]
            assert (row["n"], row["arguments_successes"]) == (len(mine), sum(t["arguments_ok"] for t in mine))
        # recorded when the suite had its first 92 cases, the ones the lessons still use
        assert set(store.trials(run_id)["case_id"]) == {case.id for case in lesson_suite().cases}


# ---------------------------------------------------------------- the app's History tab

APP = str(Path(__file__).resolve().parent.parent / "app.py")


@pytest.fixture
def browser(tmp_path, monkeypatch):
    """A browser on the app, whose run database is ``room.sqlite``; a new one each call."""
    monkeypatch.setenv("LAB_RUNS_DB", str(tmp_path / "room.sqlite"))
    monkeypatch.setenv("LAB_APP_BACKEND", "scripted")  # no model: an import must need none
    for name in ("LAB_BASE_URL", "LAB_MODEL", "LAB_API_KEY", "LAB_SHARED"):
        monkeypatch.delenv(name, raising=False)

    def open_page():
        from streamlit.testing.v1 import AppTest

        at = AppTest.from_file(APP, default_timeout=120)
        at.session_state["tab"] = "History"  # where runs are imported; only the open tab runs
        at.run()
        assert not at.exception
        return at
    return open_page


def upload(at, content, name="run.jsonl"):
    data = content.encode("utf-8") if isinstance(content, str) else content
    at.file_uploader(key="history_import").set_value((name, data, "application/jsonl")).run()
    assert not at.exception
    return at


def said(at, kind) -> list[str]:
    return [str(element.value) for element in getattr(at, kind)]


def test_history_imports_a_run_file_into_an_empty_database_and_shows_the_run(browser, recorded, tmp_path):
    _, _, text = recorded
    at = browser()
    assert any("import a recorded run" in message for message in said(at, "info"))
    upload(at, text)
    [success] = said(at, "success")
    assert "as run 1" in success and "12 trials" in success and "nothing was sent to a model" in success
    history = at.tabs[1]
    runs = history.dataframe[0].value
    assert list(runs["name"]) == ["at home"] and list(runs["n_done"]) == [12]
    # the run's charts and every trial, drawn from the file
    assert len(history.get("plotly_chart")) >= 4  # Run A's accuracy; the run's accuracy, failures, confusion
    trials = next(frame.value for frame in history.dataframe if len(frame.value) == 12)
    assert set(trials["description"]) == {"clear", "vague"}
    assert any('"messages"' in element.proto.body for element in history.get("json"))
    assert [b.label for b in history.get("download_button")] == ["Download CSV", "Download run file"]
    # the page reruns with the file still in the uploader: it is not imported twice
    at.run()
    assert not at.exception and not said(at, "error")
    assert list(Store(tmp_path / "room.sqlite").runs()["id"]) == [1]


@pytest.mark.parametrize("kind, message", [
    ("a CSV export", "is not a run exported by the lab"),
    ("a newer version", "newer version of the lab"),
    ("cut mid-trial", "is cut off"),
    ("already stored", "already stored in"),
])
def test_history_refuses_a_bad_upload_with_one_error_and_keeps_the_database(kind, message, browser, recorded, tmp_path):
    _, _, text = recorded
    db = tmp_path / "room.sqlite"
    with Store(db) as store:
        first = import_run(store, text)
    before = snapshot(db)
    at = browser()
    upload(at, text if kind == "already stored" else BAD_FILES[kind][0](text), "broken.jsonl")
    [error] = said(at, "error")
    assert error.startswith("Not imported: ") and message in error and "broken.jsonl" in error
    if kind == "already stored":
        assert f"as run {first}" in error
    assert not said(at, "success")
    assert snapshot(db) == before


def test_in_shared_mode_the_instructors_import_is_in_every_history_and_an_upload_in_its_browsers(
        browser, recorded, tmp_path, monkeypatch):
    _, _, text = recorded
    monkeypatch.setenv("LAB_SHARED", "1")
    file = tmp_path / "recorded.jsonl"
    file.write_text(text, encoding="utf-8")
    # before the room arrives, from a shell on the serving machine
    assert main(["import", str(file), "--db", str(tmp_path / "room.sqlite")]) == 0
    first, second = browser(), browser()
    for at in (first, second):
        runs = at.tabs[1].dataframe[0].value
        assert list(runs["name"]) == ["at home"] and list(runs["by"]) == ["recorded by the instructor"]
    assert any("A run you import is yours" in caption for caption in said(first, "caption"))
    # a run uploaded in one browser is that browser's: the other does not list it
    with Store(tmp_path / "home2.sqlite") as other:
        suite = load_suite()
        run_id = run_experiment(plan(suite, Settings(), cases=1), scripted_backend(), other, name="second",
                                suite=suite)
        second_file = run_file_text(other, run_id)
    upload(first, second_file)
    assert list(first.tabs[1].dataframe[0].value["by"]) == ["you", "recorded by the instructor"]
    second.run()
    assert list(second.tabs[1].dataframe[0].value["name"]) == ["at home"]
    # and the second browser may upload the same file as its own
    upload(second, second_file)
    [success] = said(second, "success")
    assert "as run 3" in success
    assert list(second.tabs[1].dataframe[0].value["name"]) == ["second", "at home"]
