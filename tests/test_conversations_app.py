"""The Experiment tab with BFCL's multi-turn conversations as the suite, driven by AppTest on the
scripted model (``LAB_APP_BACKEND=scripted``): the page's structure, never its figures."""
import json
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.test_bfcl import BFCL_VERSION, CACHE
from toolkit.bench.multi_turn_run import read_runs

APP = str(Path(__file__).resolve().parent.parent / "app.py")
CONVERSATIONS = "BFCL multi-turn conversations"


@pytest.fixture
def scripted(tmp_path, monkeypatch):
    if not sorted(CACHE.glob(f"bfcl_eval-{BFCL_VERSION}-*.whl")):
        pytest.skip(f"the BFCL wheel is not in {CACHE}")
    monkeypatch.setenv("LAB_RUNS_DB", str(tmp_path / "runs.sqlite"))
    monkeypatch.setenv("LAB_APP_BACKEND", "scripted")
    for name in ("LAB_BASE_URL", "LAB_MODEL", "LAB_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def conversations_tab() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.radio(key="suite_source").set_value(CONVERSATIONS).run()
    assert not at.exception
    return at


def until_shown(at: AppTest, seconds: float = 120) -> None:
    """Rerun the page (as its progress fragment would) until the run's results are shown."""
    deadline = time.monotonic() + seconds
    while not ("mt_shown" in at.session_state and at.session_state["mt_shown"] == at.session_state["mt_job"]):
        assert time.monotonic() < deadline, "the conversations did not end in time"
        time.sleep(0.3)
        at.run()
        assert not at.exception


def test_conversations_run_in_the_background_and_open_turn_by_turn(scripted):
    at = conversations_tab()
    assert at.toggle(key="mt_one_api").value  # the embedded model's context holds one API's documents
    at.number_input(key="mt_cases").set_value(2)
    at.button(key="mt_run").click().run()
    until_shown(at)
    assert any("Finished: 2 conversations" in str(s.value) for s in at.success)
    table = at.dataframe[0].value
    assert list(table["measure"])[:2] == ["whole conversation (BFCL)", "turns, each on its own"]
    assert list(table["of"])[0] == 2
    files = list((scripted / "multi_turn").glob("*.jsonl"))
    assert len(files) == 1 and len(read_runs(files[0])) == 2
    labels = at.selectbox(key="mt_case").options
    assert len(labels) == 2 and all(label.startswith("multi_turn_base_") for label in labels)
    shown = " ".join(str(m.value) for m in at.markdown)
    assert "**Turn 1**" in shown and "> **User:**" in shown
    assert any("The answer key" in str(c.value) for c in at.caption)
    # The same plan again resumes from the file: nothing is sent twice.
    before = files[0].read_text(encoding="utf-8")
    at.button(key="mt_run").click().run()
    until_shown(at)
    assert files[0].read_text(encoding="utf-8") == before


def test_a_multi_turn_file_typed_as_a_single_turn_file_says_where_to_go(scripted):
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.radio(key="suite_source").set_value("A BFCL question file").run()
    at.text_input(key="bfcl_path").set_value("data/BFCL_v4_multi_turn_base.json").run()
    assert any(f"is a multi-turn file: choose “{CONVERSATIONS}” above" in str(e.value) for e in at.error)


def test_without_the_wheel_the_panel_says_how_to_fetch_it(scripted, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(scripted / "empty-cache"))
    at = conversations_tab()
    assert any("pip download bfcl-eval==2026.3.23" in str(e.value) for e in at.error)
    assert "mt_run" not in [button.key for button in at.button]


def test_a_run_file_line_that_is_not_a_conversation_is_refused(tmp_path):
    from toolkit.bench.multi_turn_run import parse_runs
    from toolkit.lab_error import LabError

    with pytest.raises(LabError, match="line 1 of the run file is not a conversation"):
        parse_runs(json.dumps({"case": 1}))
    assert parse_runs('{"case_id": "cut') == []  # a line cut off by a crash is ignored


def test_a_finished_run_is_paired_with_a_recorded_run_of_the_same_conversations(scripted):
    at = conversations_tab()
    at.number_input(key="mt_cases").set_value(2)
    at.button(key="mt_run").click().run()
    until_shown(at)
    compare = at.selectbox(key="mt_compare")
    assert compare.options and all("multi_turn_base" in option for option in compare.options)
    compare.select_index(compare.options.index("recorded: lab-SmolLM2-135M-Instruct-multi_turn_base")).run()
    # The scripted model's settings against the recorded embedded run: the model is what differs.
    sentences = " ".join(str(m.value) for m in at.markdown if str(m.value).startswith("- "))
    assert "Whole conversation right: model" in sentences and "Turn right on its own: model" in sentences
    assert "on the same 2 cases" in sentences
    assert not at.exception


def test_with_no_other_run_of_the_category_the_panel_says_how_to_get_one(scripted, monkeypatch):
    import app_pages.conversations

    monkeypatch.setattr(app_pages.conversations, "RECORDED_RUNS", scripted / "nothing recorded")
    at = conversations_tab()
    at.number_input(key="mt_cases").set_value(1)
    at.button(key="mt_run").click().run()
    until_shown(at)
    assert "mt_compare" not in [box.key for box in at.selectbox]
    assert any("compare the two runs pair by pair" in str(c.value) for c in at.caption)


def _run(case_id: str, category: str = "multi_turn_base", **settings):
    from toolkit.bench.multi_turn_run import CaseRun

    return CaseRun(case_id, category, {"temperature": 0.0, "seed": 0, "tool_choice": None, "repeat": 0, **settings})


def test_two_runs_are_labelled_by_the_settings_that_differ_with_defaults_named():
    from toolkit.app.conversations import settings_in_words

    assert settings_in_words([_run("a")], [_run("a", temperature=1.0)]) == ("temperature 0.0", "temperature 1.0")
    assert settings_in_words([_run("a")], [_run("a", tool_choice="required", descriptions="none")]) == (
        "descriptions full, tool_choice auto", "descriptions none, tool_choice required")
    assert settings_in_words([_run("a")], [_run("a", repeat=3)]) == ("the first run", "the second run")
    # A run whose conversations were sent with different values says so rather than pick one.
    assert settings_in_words([_run("a"), _run("b", seed=1)], [_run("a", seed=2)]) == ("seed mixed", "seed 2")


def test_only_run_files_of_the_same_category_are_offered(tmp_path):
    from toolkit.app.conversations import comparable_run_files

    def write(name, *runs):
        (tmp_path / name).write_text("".join(run.to_json() + "\n" for run in runs), encoding="utf-8")
        return tmp_path / name

    mine = write("mine.jsonl", _run("multi_turn_base_1"))
    other = write("other.jsonl", _run("multi_turn_base_1", temperature=1.0))
    write("func.jsonl", _run("multi_turn_miss_func_1", "multi_turn_miss_func"))
    write("empty.jsonl")
    (tmp_path / "broken.jsonl").write_text("not json\n", encoding="utf-8")
    assert comparable_run_files([tmp_path, tmp_path / "absent"], "multi_turn_base", but=mine) == [other]


def test_history_lists_the_conversation_runs_with_their_rates_and_an_unreadable_file(scripted):
    from app_runs import open_tab

    folder = scripted / "multi_turn"
    folder.mkdir()
    run = _run("multi_turn_base_1", temperature=1.0)
    run.verdict = {"valid": False, "turns": [{"ok": True, "expected": ["ls()"]}, {"ok": False, "expected": []}]}
    (folder / "mine.jsonl").write_text(run.to_json() + "\n", encoding="utf-8")
    (folder / "broken.jsonl").write_text('{"case": 1}\n', encoding="utf-8")
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    open_tab(at, "History")
    assert not at.exception
    [listed] = [box for box in at.expander if box.label == "BFCL multi-turn runs (2)"]
    table = listed.dataframe[0].value
    rows = {row["file"]: row for row in table.to_dict("records")}
    assert rows["mine.jsonl"]["whole conversation"] == "0/1" and rows["mine.jsonl"]["turns"] == "1/2"
    assert "temperature 1.0" in rows["mine.jsonl"]["settings"]
    assert "not a conversation" in rows["broken.jsonl"]["problem"]
