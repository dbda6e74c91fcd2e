"""Shared mode: the app served to a room uses the instructor's endpoint and starts no program,
and each browser lists its own runs and the instructor's recorded ones, never a neighbour's."""

from pathlib import Path

import pytest
from app_runs import open_tab, run_until_done
from streamlit.testing.v1 import AppTest

from toolkit.app import jobs
from toolkit.app.scripted_model import scripted_backend
from toolkit.app.shared_mode import (
    BROWSER_PARAM,
    describe,
    is_browser_id,
    shared_choice,
    shared_mode,
)
from toolkit.bench.experiment import run_experiment
from toolkit.bench.store import Store
from toolkit.bench.suite import load_suite
from toolkit.bench.trials import Settings, plan

APP = str(Path(__file__).resolve().parent.parent / "app.py")
KEY = "sk-instructor-secret-123"


@pytest.fixture
def shared(tmp_path, monkeypatch):
    monkeypatch.setenv("LAB_RUNS_DB", str(tmp_path / "runs.sqlite"))
    monkeypatch.setenv("LAB_SHARED", "1")
    monkeypatch.setenv("LAB_BASE_URL", "https://models.example.org/v1/chat")
    monkeypatch.setenv("LAB_MODEL", "room-model")
    monkeypatch.setenv("LAB_API_KEY", KEY)
    monkeypatch.setenv("LAB_APP_BACKEND", "scripted")  # turns run on the scripted model: no network
    monkeypatch.delenv("LAB_MCP_COMMANDS", raising=False)


def page_text(at: AppTest) -> str:
    parts = [str(e.value) for group in (at.sidebar.info, at.info, at.caption, at.markdown, at.error, at.warning)
             for e in group]
    return " ".join(parts)


def test_nothing_in_the_sidebar_can_change_the_endpoint_and_the_key_is_never_shown(shared):
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception
    keys = {element.key for element in [*at.text_input, *at.radio, *at.selectbox]}
    assert not keys & {"backend_kind", "base_url", "model_name", "api_key", "embedded_model", "api"}
    [note] = [str(e.value) for e in at.sidebar.info]
    assert "room-model" in note and "models.example.org" in note
    assert KEY not in page_text(at) and "/v1/chat" not in note


def test_the_playground_offers_the_demo_tools_and_no_command_box(shared, tmp_path):
    at = AppTest.from_file(APP, default_timeout=120)
    open_tab(at, "Playground")
    assert not at.exception
    assert not [r for r in at.radio if r.key == "play_source"]
    assert not [t for t in at.text_input if t.key == "play_mcp_command"]
    assert any("MCP servers are off" in str(c.value) for c in at.caption)
    at.chat_input(key="play_input").set_value("What's the weather in Paris?").run()
    assert not at.exception
    [turn] = at.session_state["chat_turns"]
    assert turn["rounds"][0]["executions"][0]["name"] == "get_weather"


def test_the_mode_and_the_backend_come_from_the_environment_only():
    assert shared_mode({"LAB_SHARED": "1"}) and shared_mode({"LAB_SHARED": " Yes "})
    assert not shared_mode({}) and not shared_mode({"LAB_SHARED": "0"})
    remote = shared_choice({"LAB_BASE_URL": "http://10.0.0.5:8000/v1", "LAB_MODEL": "qwen", "LAB_API_KEY": KEY,
                            "LAB_API": "responses"})
    assert (remote.kind, remote.base_url, remote.model, remote.api_key, remote.api) == (
        "remote", "http://10.0.0.5:8000/v1", "qwen", KEY, "responses")
    assert KEY not in repr(remote) and KEY not in describe(remote)
    embedded = shared_choice({"LAB_API": "nonsense"})
    assert (embedded.kind, embedded.api) == ("embedded", "chat")
    assert "embedded SmolLM2-135M-Instruct" in describe(embedded)


# ---------------------------------------------------------------- each browser's runs

def open_browser(query: dict | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update(query or {})
    at.run()
    assert not at.exception
    return at


def listed(at: AppTest) -> tuple[list[int], list[str]]:
    """The runs in History's table and whose each run is."""
    runs = open_tab(at, "History").tabs[1].dataframe[0].value
    return list(runs["id"]), list(runs["by"])


def run_small(at: AppTest) -> AppTest:
    at.number_input(key="n_cases").set_value(1).run()
    return run_until_done(at)


def picker(at: AppTest, label: str):
    return next(box for box in open_tab(at, "History").tabs[1].selectbox if box.label == label)


@pytest.fixture
def recorded_run(shared, tmp_path):
    """A run the instructor made on the serving machine before the room came (it has no owner)."""
    suite = load_suite()
    with Store(tmp_path / "runs.sqlite") as store:
        return run_experiment(plan(suite, Settings(), cases=1), scripted_backend(), store, name="recorded",
                              suite=suite)


def test_each_browser_lists_its_own_runs_and_the_recorded_ones_never_a_neighbours(recorded_run, tmp_path):
    first, second = open_browser(), open_browser()
    ids = [at.query_params[BROWSER_PARAM] for at in (first, second)]
    assert ids[0] != ids[1] and all(is_browser_id(i) for i in ids)
    assert any("kept under this page's address" in str(c.value) for c in first.sidebar.caption)
    for at in (first, second):
        assert listed(at) == ([recorded_run], ["recorded by the instructor"])
        run_small(at)
    first.run()
    with Store(tmp_path / "runs.sqlite") as store:
        runs = store.runs()
        assert len(runs) == 3 and set(runs["owner"].dropna()) == set(ids)  # two runs, one each
        own = {owner: int(run_id) for owner, run_id in zip(runs["owner"], runs["id"]) if isinstance(owner, str)}
    for at, mine, neighbour in ((first, *ids), (second, *ids[::-1])):
        assert listed(at) == ([own[mine], recorded_run], ["you", "recorded by the instructor"])
        for label in ("Run A", "Run B", "Export a run"):
            options = picker(at, label).options
            assert [o.split(" · ")[0] for o in options] == [f"#{own[mine]}", f"#{recorded_run}"]
            assert options[1].endswith("recorded by the instructor") and "recorded by" not in options[0]
        assert (picker(at, "Run A").value, picker(at, "Run B").value) == (own[mine], recorded_run)
        assert f"#{own[neighbour]}" not in " ".join(str(e.value) for e in at.tabs[1].markdown)


def test_a_reload_or_a_bookmark_keeps_the_runs_and_a_new_tab_starts_without(shared):
    first = open_browser()
    run_small(first)
    mine = first.query_params[BROWSER_PARAM]
    reloaded = open_browser({BROWSER_PARAM: mine})
    assert reloaded.query_params[BROWSER_PARAM] == mine
    assert listed(reloaded) == (listed(first)[0], ["you"])
    fresh = open_browser()
    assert fresh.query_params[BROWSER_PARAM] != mine
    assert any("No runs yet" in str(e.value) for e in open_tab(fresh, "History").info)


@pytest.mark.parametrize("given", ["x", "../../runs/lab.sqlite", "A" * 17, ""])
def test_an_id_the_lab_did_not_make_is_replaced_once_with_a_warning(shared, given):
    at = open_browser({BROWSER_PARAM: given})
    def replaced_note(at):  # the sidebar also warns that the scripted model answers
        return [str(e.value) for e in at.sidebar.warning if "browser id" in str(e.value)]
    [warning] = replaced_note(at)
    assert "not one the lab made" in warning and "no runs of its own" in warning
    replaced = at.query_params[BROWSER_PARAM]
    assert is_browser_id(replaced) and replaced != given
    at.run()  # said once; the page keeps its new id
    assert not at.exception and not replaced_note(at) and at.query_params[BROWSER_PARAM] == replaced


def test_a_run_that_fails_before_its_first_trial_is_found_among_its_browsers_own(tmp_path):
    suite = load_suite()
    with Store(tmp_path / "runs.sqlite") as store:
        mine = run_experiment(plan(suite, Settings(), cases=1), scripted_backend(), store, owner="browser-a")
        run_experiment(plan(suite, Settings(), cases=1), scripted_backend(), store, owner="browser-b")
        recorded = run_experiment(plan(suite, Settings(), cases=1), scripted_backend(), store)
        assert jobs._newest_run(store, "browser-a") == mine
        assert jobs._newest_run(store, "browser-c") is None  # a recorded run is not this browser's
        assert jobs._newest_run(store, None) == recorded  # alone: the newest run


def test_without_shared_mode_history_lists_every_run_as_before(recorded_run, tmp_path, monkeypatch):
    with Store(tmp_path / "runs.sqlite") as store:  # a run an attendee made when the room was on
        suite = load_suite()
        theirs = run_experiment(plan(suite, Settings(), cases=1), scripted_backend(), store, name="theirs",
                                suite=suite, owner="browser-a")
    monkeypatch.delenv("LAB_SHARED")
    at = open_browser()
    assert BROWSER_PARAM not in at.query_params and "room_browser" not in at.session_state
    runs = open_tab(at, "History").tabs[1].dataframe[0].value
    assert list(runs["id"]) == [theirs, recorded_run] and "by" not in runs.columns
    assert not any("recorded by" in option for option in picker(at, "Run A").options)
    assert not any("A run you import is yours" in str(c.value) for c in at.caption)
    run_small(at)  # a run made alone is no one's: every browser would list it if a room came
    with Store(tmp_path / "runs.sqlite") as store:
        runs = store.runs()
        assert len(runs) == 3 and runs["owner"].fillna("nobody").tolist() == ["nobody", "browser-a", "nobody"]
