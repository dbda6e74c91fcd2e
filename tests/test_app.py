"""The app, driven by Streamlit's AppTest: what a learner sees, and that nothing raised.

Experiments and playground turns run on the scripted model (``LAB_APP_BACKEND=scripted``),
so these tests need no model and assert on the page, never on accuracy figures.
"""

import json
import shutil
import socket
import threading
import time
from pathlib import Path

import pandas as pd
import pytest
import streamlit as st
from app_runs import TIMEOUT, open_tab, run_until_done
from streamlit.testing.v1 import AppTest

import toolkit.bench.suite as suite_module
from toolkit.app import backends, inputs, jobs, scripted_model, tables
from toolkit.bench.store import Store
from toolkit.bench.suite import load_suite
from toolkit.lab_error import LabError

APP = str(Path(__file__).resolve().parent.parent / "app.py")


@pytest.fixture
def runs_db(tmp_path, monkeypatch):
    path = tmp_path / "runs.sqlite"
    monkeypatch.setenv("LAB_RUNS_DB", str(path))
    monkeypatch.delenv("LAB_APP_BACKEND", raising=False)
    for name in ("LAB_BASE_URL", "LAB_MODEL", "LAB_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return path


@pytest.fixture
def scripted(runs_db, monkeypatch):
    monkeypatch.setenv("LAB_APP_BACKEND", "scripted")
    return runs_db


def open_app() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    assert not at.exception
    return at


def texts(elements) -> list[str]:
    return [str(element.value) for element in elements]


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# --------------------------------------------------------------------- the page


def test_the_page_loads_and_says_what_the_embedded_model_can_do(runs_db):
    at = open_app()
    note = " ".join(texts(at.sidebar.info))
    assert "SmolLM2-135M-Instruct" in note and "OpenAI-compatible endpoint" in note
    assert len(note) < 300  # short, so the API choice and "Test connection" stay in view
    detail = " ".join(texts(at.sidebar.expander[0].markdown))
    assert "descriptions score the same" in detail and "+tools" in detail
    assert [tab.label for tab in at.tabs] == ["Experiment", "History", "Playground"]
    assert any("No runs yet" in text for text in texts(open_tab(at, "History").info))
    assert not runs_db.exists() or Store(runs_db).runs().empty


def test_an_unreachable_endpoint_shows_an_error_and_never_the_key(runs_db):
    at = open_app()
    at.radio(key="backend_kind").set_value("remote").run()
    assert not at.sidebar.info  # the embedded note is for the embedded model only
    at.text_input(key="base_url").set_value(f"http://127.0.0.1:{closed_port()}/v1")
    at.text_input(key="model_name").set_value("some-model")
    at.text_input(key="api_key").set_value("sk-secret-never-shown-123")
    at.button(key="test_connection").click().run()
    assert not at.exception
    errors = texts(at.sidebar.error)
    assert len(errors) == 1 and "Cannot reach" in errors[0]
    page = " ".join(texts(at.sidebar.error) + texts(at.markdown) + texts(at.info))
    assert "sk-secret-never-shown-123" not in page
    assert "Traceback" not in page


def test_a_remote_endpoint_without_a_model_name_says_so(runs_db):
    at = open_app()
    at.radio(key="backend_kind").set_value("remote").run()
    at.text_input(key="base_url").set_value("https://example.invalid/v1")
    at.button(key="test_connection").click().run()
    assert not at.exception
    assert any("name of a model" in text for text in texts(at.sidebar.error))


@pytest.mark.parametrize("schema, problem", [
    ('{"type": "object", "properties": {"city": {"type": "string"}', "not valid JSON"),
    ('{"type": "object", "properties": {"city": {"type": "strin"}}}', "not a valid JSON Schema"),
    ('{"type": "object", "properties": {}, "required": ["city"]}', "required"),
])
def test_an_invalid_custom_schema_shows_an_inline_error_and_runs_nothing(scripted, schema,
                                                                        problem):
    at = open_expanders(open_app())
    at.selectbox(key="schema_tool").set_value("get_weather").run()
    at.text_area(key="schema_get_weather").set_value(schema).run()
    assert not at.exception
    assert any(problem in text and "get_weather" in text for text in texts(at.error))
    close_expanders(at)  # the schema still applies, and its error still shows, when they are closed
    assert not at.get("text_area") and any(problem in text for text in texts(at.error))
    at.button(key="run").click().run()
    assert not at.exception
    assert any(text.startswith("Nothing was run") for text in texts(at.error))
    assert at.session_state["job_id"] is None
    assert not at.get("progress")
    assert Store(scripted).runs().empty


@pytest.fixture
def edited_suite(tmp_path, monkeypatch):
    """A copy of the shipped suite with one tool's parameters no valid JSON Schema (a keyword of
    the wrong type, which only the JSON Schema check catches), served as the shipped suite."""
    folder = tmp_path / "scenarios"
    shutil.copytree(suite_module.DEFAULT_DIR, folder)
    tools_file = folder / "tools.json"
    data = json.loads(tools_file.read_text("utf-8"))
    data["tools"]["get_weather"]["parameters"]["properties"]["city"]["minLength"] = "two"
    tools_file.write_text(json.dumps(data, ensure_ascii=False), "utf-8")
    monkeypatch.setattr(suite_module, "DEFAULT_DIR", folder)
    st.cache_resource.clear()  # the app keeps the suite per process
    yield folder
    st.cache_resource.clear()


def test_a_shipped_suite_edited_into_an_invalid_schema_is_caught_before_anything_runs(scripted, edited_suite):
    # The form is drawn from a suite loaded without the JSON Schema check; the check comes after
    # the Run button, and a click is acted on only after it.
    at = open_app()
    assert at.button(key="run")  # the form is there
    assert any("The lab's suite cannot be used" in text and "get_weather" in text
               and "not a valid JSON Schema" in text for text in texts(at.error))
    at.button(key="run").click().run()
    assert not at.exception
    assert any(text.startswith("Nothing was run") for text in texts(at.error))
    assert at.session_state["job_id"] is None
    assert Store(scripted).runs().empty


def open_expanders(at: AppTest) -> AppTest:
    """Open the custom descriptions and the custom schema (their widgets are drawn only then)."""
    at.session_state["descriptions_open"] = at.session_state["schema_open"] = True
    return at.run()


def close_expanders(at: AppTest) -> AppTest:
    at.session_state["descriptions_open"] = at.session_state["schema_open"] = False
    return at.run()


def test_a_small_experiment_stores_its_trials_and_shows_the_charts(scripted):
    at = open_app()
    at.number_input(key="n_cases").set_value(3).run()
    assert any("6 trials" in text for text in texts(at.caption))
    run_until_done(at)
    assert any("finished" in text for text in texts(at.success))
    runs = Store(scripted).runs()
    assert list(runs["status"]) == ["finished"] and list(runs["n_done"]) == [6]
    charts = at.get("plotly_chart")
    assert len(charts) >= 3  # accuracy, failure reasons, confusion (and the history's)
    figures = [json.loads(chart.proto.spec) for chart in charts]
    assert any("How often the model got it right" in f["layout"]["title"]["text"] for f in figures)
    assert any("one parameter at a time" in text for text in texts(at.markdown))
    # the first trial's raw request and reply are on the page
    shown = [element.proto.body for element in at.get("json")]
    assert any('"messages"' in body and '"tools"' in body for body in shown)
    assert any('"choices"' in body for body in shown)


def sent_tools(db) -> list[dict]:
    store = Store(db)
    run_id = int(store.runs()["id"].iloc[0])
    trials = store.trials(run_id, full=True)
    return [tool["function"] for request in trials["request"]
            for tool in json.loads(request).get("tools", [])]


def test_custom_descriptions_and_a_custom_schema_reach_the_requests(scripted):
    at = open_app()
    at.number_input(key="n_cases").set_value(2).run()
    at.selectbox(key="factor").set_value("description").run()
    at.multiselect(key="values_description").set_value(["clear", "custom"]).run()
    assert not at.get("text_area")  # closed expanders draw nothing
    open_expanders(at)
    tool = next(name for name in at.selectbox(key="schema_tool").options if name != "(none)")
    at.text_area(key=f"description_{tool}").set_value("My own words for this tool.")
    at.selectbox(key="schema_tool").set_value(tool).run()
    schema = json.loads(at.text_area(key=f"schema_{tool}").value)
    schema["properties"]["note"] = {"type": "string", "description": "added by the learner"}
    at.text_area(key=f"schema_{tool}").set_value(json.dumps(schema)).run()
    assert not at.error
    close_expanders(at)
    open_expanders(at)  # opened again, it shows what was written
    assert at.text_area(key=f"description_{tool}").value == "My own words for this tool."
    close_expanders(at)  # and, closed, what was written still reaches the requests
    run_until_done(at)
    assert any("finished" in text for text in texts(at.success))
    sent = [t for t in sent_tools(scripted) if t["name"] == tool]
    descriptions = {t["description"] for t in sent}
    assert "My own words for this tool." in descriptions and len(descriptions) == 2
    assert all("note" in t["parameters"]["properties"] for t in sent)


def test_a_two_factor_grid_runs_every_combination(scripted):
    at = open_app()
    at.number_input(key="n_cases").set_value(2).run()
    at.selectbox(key="factor").set_value("description").run()
    at.toggle(key="grid").set_value(True).run()
    at.selectbox(key="second_factor").set_value("enums").run()
    assert any("2 cases × 4 setting(s)" in text for text in texts(at.caption))
    run_until_done(at)
    trials = Store(scripted).trials(1)
    assert len(trials) == 8
    assert set(zip(trials["description"], trials["enums"])) == {
        ("clear", True), ("clear", False), ("vague", True), ("vague", False)}
    assert at.get("plotly_chart")


def test_a_bad_temperature_list_is_an_inline_error(scripted):
    at = open_app()
    at.selectbox(key="factor").set_value("temperature").run()
    at.text_input(key="values_temperature").set_value("0, hot").run()
    assert any("'hot' is not a number" in text for text in texts(at.error))
    at.button(key="run").click().run()
    assert any(text.startswith("Nothing was run") for text in texts(at.error))
    assert not at.exception


def test_history_lists_the_run_and_offers_its_csv(scripted):
    at = open_app()
    at.number_input(key="n_cases").set_value(2).run()
    run_until_done(at)
    at.selectbox(key="factor").set_value("enums").run()
    run_until_done(at)
    picker = history_picker(open_tab(at, "History"), "Run A")
    assert len(picker.options) == 2 and all("scripted" in option for option in picker.options)
    history = at.tabs[1]
    runs, *_, compared = [frame.value for frame in history.dataframe]
    assert len(runs) == 2 and set(runs["status"]) == {"finished"}
    assert "changed" in compared.columns and len(compared) == 4
    # the two runs share their cases, so History pairs them trial by trial
    said = " ".join(texts(history.markdown))
    assert "Right tool: run 1" in said and "against run 2" in said and "4 paired trials of 2 cases" in said and "no case changed" in said
    assert history.get("download_button")
    assert not at.exception


def history_picker(at: AppTest, label: str):
    return next(box for box in at.tabs[1].selectbox if box.label == label)


def test_history_and_playground_run_only_when_opened(scripted):
    at = open_app()
    assert not at.tabs[1].children and not at.tabs[2].children  # closed: nothing of theirs ran
    at.number_input(key="n_cases").set_value(3).run()
    open_tab(at, "History")
    assert at.tabs[1].children and not at.tabs[2].children
    assert at.number_input(key="n_cases").value == 3  # the Experiment tab is still drawn, as set
    open_tab(at, "Playground")
    assert at.chat_input(key="play_input") and not at.tabs[1].children
    assert not at.exception


def test_history_compares_and_exports_the_newest_two_runs_as_runs_come_in(scripted):
    at = open_tab(open_app(), "History")
    at.number_input(key="n_cases").set_value(1).run()
    for _ in range(3):
        run_until_done(at)
        newest = int(Store(scripted).runs()["id"].iloc[0])
        if newest > 1:  # with one run there is nothing to pair
            assert history_picker(at, "Run A").value == newest
            assert history_picker(at, "Run B").value == newest - 1
        assert history_picker(at, "Export a run").value == newest


def test_the_page_says_what_its_run_shows_under_the_chart(scripted):
    at = run_until_done(open_app())
    said = " ".join(texts(at.markdown))
    assert "Right tool" in said and "on the same" in said and "exact McNemar" in said
    assert "a real difference" in said or "no difference this run can show" in said
    assert "read back" not in said
    figures = [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]
    assert any(f["layout"]["title"]["text"].startswith("The paired difference") for f in figures)
    # The same run again reads every trial back from the first, and the page says so.
    at = run_until_done(at)
    assert any("read back from earlier runs" in text for text in texts(at.success))
    assert "16 of 16 trials were read back" in " ".join(texts(at.markdown))


def test_before_a_run_the_page_says_how_large_a_difference_the_plan_can_show(scripted):
    from toolkit.bench.effects import plan_power

    at = open_app()
    at.selectbox(key="factor").set_value("temperature").run()
    cases = at.number_input(key="n_cases").value
    categories = at.multiselect(key="categories").value
    expected = plan_power("SmolLM2-135M-Instruct", "temperature", cases, categories=categories)
    assert expected and expected.startswith("Power: on SmolLM2-135M-Instruct (0.0 vs 1.0")
    assert expected in texts(at.caption)
    at.number_input(key="n_cases").set_value(40).run()  # more cases: a smaller difference shows
    larger = plan_power("SmolLM2-135M-Instruct", "temperature", 40, categories=categories)
    assert larger in texts(at.caption) and larger != expected


def test_what_changed_shows_the_discordant_cases_and_both_trials_of_one(scripted):
    at = run_until_done(open_app())
    assert any(text.startswith("**What changed**") for text in texts(at.markdown))
    comparison = at.selectbox(key="experiment_changed_pick")
    assert comparison.options[0].endswith("right tool")
    # The scripted model calls the first tool offered natively and never writes a <tool> tag, so
    # the cases whose first tool is the right one are right under native only.
    changed = next(frame.value for frame in at.dataframe if "changed" in frame.value.columns)
    assert len(changed) and set(changed["changed"]) == {"only native right"}
    # the two requests differ (tools sent natively against tools described in the prompt)
    diffs = [code.value for code in at.code if code.language == "diff"]
    assert diffs[0].startswith("--- native\n+++ string") and "+   \"content\": \"You are a helpful assistant." in diffs[0]
    assert '-   "finish_reason": "tool_calls",' in diffs[1]
    assert not at.exception


def test_the_opening_experiment_says_what_to_look_for_and_clear_vs_vague_is_one_click_away(scripted):
    from toolkit.app.factors import LOOK_FOR
    from toolkit.bench.effects import effect_note

    at = open_app()
    assert LOOK_FOR in texts(at.caption)
    at.button(key="also_try_description").click().run()
    assert not at.exception
    assert at.selectbox(key="factor").value == "description"
    assert at.multiselect(key="values_description").value == ["clear", "vague"]
    assert LOOK_FOR not in texts(at.caption)
    # What the setting did on this model, from the stored effects table (or that it was not measured).
    note = effect_note("SmolLM2-135M-Instruct", "description")
    assert (note or "Not measured on SmolLM2-135M-Instruct yet") in " ".join(texts(at.caption))


def held_model(replies: int):
    """A scripted model whose every reply waits for ``release``; ``asked`` counts the requests
    that reached it, so a test can act while a trial is with the model."""
    from toolkit import fake

    asked, release = threading.Semaphore(0), threading.Event()

    def slow(request):
        asked.release()
        release.wait(10)
        return fake.text("no tool needed")

    return fake.ScriptedModel([slow] * replies), asked, release


def test_the_stop_button_ends_a_run_and_keeps_its_trials(scripted, monkeypatch):
    model, asked, release = held_model(12)
    monkeypatch.setattr(scripted_model, "scripted_backend", lambda mode: model.backend())
    at = open_app()
    at.button(key="run").click().run()
    assert asked.acquire(timeout=10)  # the first trial is with the model
    at.run()
    assert at.get("progress") and at.button(key="stop")
    at.button(key="stop").click().run()
    release.set()
    deadline = time.monotonic() + TIMEOUT
    while at.session_state["job_id"] is not None and time.monotonic() < deadline:
        time.sleep(0.2)
        at.run()
    assert not at.exception
    assert any("stopped after" in text for text in texts(at.warning))
    runs = Store(scripted).runs()
    assert list(runs["status"]) == ["stopped"] and 1 <= runs["n_done"][0] < 12
    assert at.get("plotly_chart")


def test_a_run_waiting_on_a_shared_endpoint_shows_how_many_requests_are_ahead(scripted, monkeypatch):
    model, asked, release = held_model(16)
    backend = model.backend()
    line = {"object": "queue", "serving": 1, "waiting": 8, "ahead": 5}
    backend.queue = lambda: line  # where the endpoint says this run's request stands
    monkeypatch.setattr(scripted_model, "scripted_backend", lambda mode: backend)
    at = open_app()
    at.button(key="run").click().run()
    assert asked.acquire(timeout=10)
    at.run()
    assert "waiting: 5 requests ahead of this run's on the shared endpoint (9 in line)" in texts(at.caption)
    line["ahead"] = 0  # its turn came: the model is answering it
    at.run()
    assert not any(text.startswith("waiting:") for text in texts(at.caption))
    release.set()
    at.button(key="stop").click().run()
    assert not at.exception


def test_an_endpoint_failing_mid_run_keeps_what_was_done(scripted, monkeypatch):
    monkeypatch.setenv("LAB_APP_BACKEND", "scripted:fail-after=3")
    at = open_app()
    at.number_input(key="n_cases").set_value(4).run()
    run_until_done(at)
    errors = texts(at.error)
    assert any("The run failed" in text and "Cannot reach" in text for text in errors)
    assert all("Traceback" not in text for text in errors)
    runs = Store(scripted).runs()
    assert list(runs["status"]) == ["failed"] and list(runs["n_done"]) == [3]
    assert at.get("plotly_chart")  # the three trials done are still charted
    # trials sharing a prompt run back to back, so the three done are all under one value
    said = " ".join(texts(at.markdown))
    assert "has finished trials in this run: nothing to compare" in said
    assert list(Store(scripted).runs()["n_done"]) == [3]  # reading the pairs stored nothing


def test_a_playground_turn_shows_every_round_and_the_trace(scripted):
    at = open_tab(open_app(), "Playground")
    at.chat_input(key="play_input").set_value("What's the weather in Paris?").run()
    assert not at.exception
    traces = [text for text in texts(at.code) if text.startswith("Turn (native protocol)")]
    assert traces and "call get_weather" in traces[0] and "answered" in traces[0]
    labels = [expander.label for expander in at.expander]
    assert any(label.startswith("Round 1: get_weather") for label in labels)
    assert any(label.startswith("Round 2: no call") for label in labels)
    # a second turn keeps the first
    at.chat_input(key="play_input").set_value("And in Tokyo?").run()
    assert len(at.session_state["chat_turns"]) == 2
    assert len([t for t in texts(at.code) if t.startswith("Turn (")]) == 2


def test_the_playground_warns_of_the_embedded_models_spelling_of_beijing_only_for_them(runs_db, monkeypatch):
    from app_pages.playground import BEIJING_SPELLING, EXAMPLE_QUESTION

    at = open_tab(open_app(), "Playground")
    assert any(BEIJING_SPELLING in text for text in texts(at.caption))
    assert at.chat_input(key="play_input").placeholder.endswith(EXAMPLE_QUESTION)
    monkeypatch.setenv("LAB_BASE_URL", "http://127.0.0.1:9/v1")  # the page opens on the remote endpoint
    at = open_tab(open_app(), "Playground")
    assert at.sidebar.radio(key="backend_kind").value == "remote"
    assert not any(BEIJING_SPELLING in text for text in texts(at.caption))


def test_a_failing_endpoint_in_the_playground_shows_an_error(scripted, monkeypatch):
    monkeypatch.setenv("LAB_APP_BACKEND", "scripted:fail-after=0")
    at = open_tab(open_app(), "Playground")
    at.chat_input(key="play_input").set_value("What's the weather in Paris?").run()
    assert not at.exception
    assert any("Cannot reach" in text for text in texts(at.error))
    assert at.session_state["chat_turns"] == []


# --------------------------------------------------------------------- toolkit.app


def test_parse_schema_names_the_problem():
    good = inputs.parse_schema('{"type": "object", "properties": {"x": {"type": "number"}}}', "t")
    assert good["properties"]["x"]["type"] == "number"
    for text, words in [("{", "line 1, column 2"), ("[1]", "JSON object"),
                        ('{"type": "string"}', "describe an object")]:
        with pytest.raises(inputs.InputProblem, match="custom schema for t") as problem:
            inputs.parse_schema(text, "t")
        assert words in str(problem.value)


def test_parse_numbers():
    assert inputs.parse_numbers("0, 0.7，1", "temperature", low=0, high=2) == [0.0, 0.7, 1.0]
    assert inputs.parse_numbers("0; 4; 4", "distractors", low=0, high=16, whole=True) == [0, 4]
    for text in ("", "abc", "3"):
        with pytest.raises(inputs.InputProblem, match="temperature"):
            inputs.parse_numbers(text, "temperature", low=0, high=2)


def test_a_custom_schema_changes_what_the_model_sees_not_the_answer_key():
    suite = load_suite()
    schema = {"type": "object", "properties": {"town": {"type": "string"}}, "required": ["town"]}
    custom = inputs.with_parameters(suite, "get_weather", schema)
    assert custom.tool_spec("get_weather")["function"]["parameters"] == schema
    assert suite.tools["get_weather"].parameters != schema
    case = next(c for c in custom.cases if "get_weather" in c.tools)
    assert case.schemas == next(c for c in suite.cases if c.id == case.id).schemas


def test_rates_view_puts_each_rate_with_its_interval():
    import pandas as pd

    from toolkit.bench.rates import rate_table

    trials = pd.DataFrame({"enums": ["on", "on", "off"], "selection_ok": [True, False, True],
                           "arguments_ok": [True, False, False]})
    view = tables.rates_view(rate_table(trials, ["enums"]))
    assert list(view.columns) == ["enums", "n", "selection (95% interval)",
                                  "arguments (95% interval)"]
    assert view["selection (95% interval)"].tolist() == ["50% (9%–91%)", "100% (21%–100%)"]


def reading_of(rows: dict[str, list[bool]], cached: int = 0) -> str:
    trials = pd.DataFrame([{"protocol": value, "selection_ok": ok, "arguments_ok": ok, "cached": n < cached,
                            "case_id": f"case-{n}", "repeat": 0, "seed": 0}
                           for value, oks in rows.items() for n, ok in enumerate(oks)])
    return tables.reading(trials, "protocol")


def test_reading_judges_the_pair_not_the_overlap_of_intervals():
    apart = reading_of({"native": [True] * 11 + [False], "string": [False] * 12})
    assert "string 0% against native 92% on the same 12 cases" in apart and "a real difference" in apart
    # 10 cases lost and 2 gained on 30: the Wilson intervals overlap, the paired test sees it.
    lost = reading_of({"native": [True] * 16 + [False] * 14,
                       "string": [True] * 6 + [False] * 10 + [True] * 2 + [False] * 12})
    assert "p = 0.039 (exact McNemar): a real difference" in lost
    close = reading_of({"native": [True] * 5 + [False], "string": [True] * 3 + [False] * 3})
    assert close.count("no difference this run can show") == 2 and "read back" not in close
    assert "The paired interval puts the difference between" in close
    tied = reading_of({"native": [True] * 6, "string": [True] * 6}, cached=3)  # 3 of each value read back
    assert "no case changed" in tied and "6 of 12 trials were read back" in tied
    assert "nothing to compare" in reading_of({"native": [True, False]})


def test_example_arguments_fit_the_schema():
    schema = load_suite().tools["get_weather"].parameters
    arguments = scripted_model.example_arguments(schema)
    assert set(arguments) == set(schema["required"])


def test_check_connection_explains_instead_of_raising_anything_else():
    with pytest.raises(LabError, match="must start with http"):
        backends.check_connection(backends.BackendChoice("remote", "example.com/v1", "m"))
    with pytest.raises(LabError, match="Cannot reach"):
        backends.check_connection(backends.BackendChoice(
            "remote", f"http://127.0.0.1:{closed_port()}/v1", "m", "k"), timeout=5)


def test_a_job_stops_between_trials(tmp_path):
    from toolkit import fake
    from toolkit.bench.trials import Settings, plan

    asked, release = threading.Event(), threading.Event()

    def slow(request):
        asked.set()
        release.wait(5)
        return fake.text("no tool needed")

    model = fake.ScriptedModel([slow] * 10)
    suite = load_suite()
    trials = plan(suite, Settings(), "description", ["clear", "vague"], cases=5)
    store = Store(tmp_path / "runs.sqlite")
    job = jobs.start_job(trials, model.backend(), store, name="stop test", suite=suite)
    assert jobs.get_job(job.id) is job and job.running
    assert asked.wait(10)
    job.stop()
    release.set()
    job.thread.join(10)
    assert not job.running and job.status == "stopped" and job.done == 1
    level, text = jobs.ended_text(job)
    assert level == "warning" and "stopped after 1 of 10" in text
    assert store.run(job.run_id)["status"] == "stopped"
    csv = tables.run_csv(store, job.run_id).decode("utf-8")
    assert csv.splitlines()[0].startswith("id,run_id,") and len(csv.splitlines()) == 2


def test_the_benchmarked_quick_plan_is_what_the_untouched_page_runs(scripted):
    """benchmarks/bench_experiment.py times ``quick_plan``; it must be the page's own default."""
    from toolkit.app.factors import QUICK, quick_plan
    from toolkit.bench.suite import load_suite

    at = run_until_done(open_app())
    assert any("finished" in text for text in texts(at.success))
    ran = Store(scripted).trials(1)
    planned = quick_plan(load_suite())
    assert sorted(ran["case_id"]) == sorted(t.case_id for t in planned)
    factor = QUICK["factor"]
    assert sorted(json.loads(v)[factor] for v in ran["factor_values"]) == sorted(
        getattr(t.settings, factor) for t in planned)
    assert {t.settings.tool_choice for t in planned} == {"auto"}
    assert {t.settings.parallel_tool_calls for t in planned} == {None}


# --------------------------------------------------------------------- a BFCL file as the suite


def write_bfcl(folder: Path, answers: bool = True) -> Path:
    """Two BFCL-format questions, and their answers in possible_answer/ beside them."""
    area = {"name": "geo.area", "description": "Area of a square.", "parameters": {
        "type": "dict", "properties": {"side": {"type": "float"}}, "required": ["side"]}}
    questions = folder / "BFCL_v4_simple_python.json"
    questions.write_text("\n".join(json.dumps({
        "id": f"simple_python_{n}", "function": [area],
        "question": [[{"role": "user", "content": f"Area of a square of side {n + 2}?"}]]})
        for n in range(2)), encoding="utf-8")
    if answers:
        (folder / "possible_answer").mkdir()
        (folder / "possible_answer" / questions.name).write_text("\n".join(json.dumps({
            "id": f"simple_python_{n}", "ground_truth": [{"geo.area": {"side": [n + 2]}}]})
            for n in range(2)), encoding="utf-8")
    return questions


def test_a_bfcl_file_without_answers_is_an_error_and_runs_nothing(scripted, tmp_path):
    questions = write_bfcl(tmp_path, answers=False)
    at = open_app()
    at.radio(key="suite_source").set_value("A BFCL question file").run()
    assert any("type the path" in text for text in texts(at.error))
    at.text_input(key="bfcl_path").set_value(str(questions)).run()
    assert not at.exception
    [error] = [text for text in texts(at.error) if "BFCL" in text]
    assert "BFCL_v4_simple_python.json: no answers file" in error
    at.button(key="run").click().run()
    assert any(text.startswith("Nothing was run") for text in texts(at.error))
    assert at.session_state["job_id"] is None
    assert Store(scripted).runs().empty


def test_a_good_bfcl_file_is_run_like_the_shipped_suite(scripted, tmp_path):
    questions = write_bfcl(tmp_path)
    at = open_app()
    at.radio(key="suite_source").set_value("A BFCL question file").run()
    at.text_input(key="bfcl_path").set_value(str(questions)).run()
    assert not at.exception and not at.error
    assert any("2 of 2 cases imported" in text for text in texts(at.caption))
    run_until_done(at)
    assert any("finished" in text for text in texts(at.success))
    trials = Store(scripted).trials(1)
    assert set(trials["case_id"]) == {"simple_python_0", "simple_python_1"}


def test_top_k_is_offered_only_while_tools_are_retrieved(scripted):
    at = open_app()
    assert not [box for box in at.selectbox if box.key == "fixed_retrieval"]  # drawn only when opened
    assert any(text.startswith("Held fixed:") and "retrieval off" in text for text in texts(at.caption))
    at.session_state["fixed_open"] = True
    at.run()
    assert "fixed_top_k" not in [box.key for box in at.number_input]  # retrieval is off at first
    at.selectbox(key="fixed_retrieval").set_value("tfidf").run()
    top_k = next(box for box in at.number_input if box.key == "fixed_top_k")
    assert top_k.label == "Retrieved tools (top_k)"
    top_k.set_value(1).run()
    at.session_state["fixed_open"] = False
    at.run()  # closed, the values still hold, and the line says so
    assert any("retrieval tfidf" in text and "(top_k) 1;" in text for text in texts(at.caption))
    at.number_input(key="n_cases").set_value(1).run()
    run_until_done(at)  # and they reach the run
    settings = json.loads(Store(scripted).trials(1, full=True)["settings"].iloc[0])
    assert (settings["retrieval"], settings["top_k"]) == ("tfidf", 1)
    assert not at.exception


def test_a_run_whose_cases_cannot_be_read_back_says_so_instead_of_a_per_parameter_table(scripted):
    import sqlite3

    at = open_app()
    at.number_input(key="n_cases").set_value(1).run()
    run_until_done(at)
    with sqlite3.connect(scripted) as db:  # as if the run had been made on a suite file since moved
        plan = json.loads(db.execute("SELECT plan FROM runs WHERE id = 1").fetchone()[0])
        db.execute("UPDATE runs SET plan = ? WHERE id = 1", (json.dumps({**plan, "suite": "/moved/away"}),))
    at.run()
    assert any("No per-parameter view for this run" in text for text in texts(at.info))
    assert not at.exception
