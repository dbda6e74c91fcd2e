"""The router over tool groups, and the benchmark that compares it with all tools at once,
on a scripted model whose replies are written here (nothing is measured)."""
import importlib.util
import json
from pathlib import Path

import pytest

from toolkit import fake
from toolkit.bench.suite import lesson_suite
from toolkit.tool_groups import ToolGroup, ask_group, ask_routed, check_groups, route

ROOT = Path(__file__).resolve().parents[1]


def spec(name: str) -> dict:
    return {"type": "function", "function": {"name": name, "description": f"{name}.",
                                             "parameters": {"type": "object", "properties": {}}}}


WEATHER = ToolGroup("weather", "Weather questions.", (spec("get_weather"),))
MATHS = ToolGroup("maths", "Arithmetic.", (spec("calculate"), spec("square_root")))
QUESTION = [{"role": "user", "content": "What is the square root of 2?"}]


def test_the_router_is_offered_one_handoff_per_group_and_must_choose_one():
    model = fake.ScriptedModel([fake.calls(fake.call("maths_agent"))])
    group, reply = route(model.backend(), QUESTION, [WEATHER, MATHS], temperature=0, tool_choice="auto")
    assert group is MATHS
    sent = model.requests[0]
    assert [t["function"]["name"] for t in sent["tools"]] == ["weather_agent", "maths_agent"]
    assert sent["tool_choice"] == "required" and sent["parallel_tool_calls"] is False  # forced, one hand-off
    assert sent["temperature"] == 0
    described = sent["tools"][1]["function"]
    assert "calculate" in described["description"] and "square_root" in described["description"]
    assert described["parameters"] == {"type": "object", "properties": {}}  # the question is handed over as it is


def test_a_reply_that_names_no_group_routes_nowhere():
    for reply in (fake.text("I think maths."), fake.calls(fake.call("square_root", {"x": 2}))):
        group, _ = route(fake.ScriptedModel([reply]).backend(), QUESTION, [WEATHER, MATHS])
        assert group is None


def test_the_agent_sees_the_same_question_and_only_its_groups_tools():
    model = fake.ScriptedModel([fake.calls(fake.call("maths_agent")),
                                fake.calls(fake.call("square_root", {"x": 2}))])
    routed = ask_routed(model.backend(), QUESTION, [WEATHER, MATHS], tool_choice="required", max_tokens=32)
    assert routed.group is MATHS
    assert routed.reply.choices[0].message.tool_calls[0].function.name == "square_root"
    agent_request = model.requests[1]
    assert agent_request["messages"] == QUESTION
    assert [t["function"]["name"] for t in agent_request["tools"]] == ["calculate", "square_root"]
    assert agent_request["max_tokens"] == 32 and agent_request["tool_choice"] == "required"


def test_no_agent_is_asked_when_the_router_chose_no_group():
    model = fake.ScriptedModel([fake.text("no idea")])
    routed = ask_routed(model.backend(), QUESTION, [WEATHER, MATHS])
    assert routed.group is None and routed.reply is None and len(model.requests) == 1


def test_ask_group_sends_the_options_it_is_given():
    model = fake.ScriptedModel([fake.calls(fake.call("get_weather"))])
    ask_group(model.backend(), QUESTION, WEATHER, seed=3)
    assert model.requests[0]["seed"] == 3 and len(model.requests[0]["tools"]) == 1


def test_bad_groups_get_one_error_naming_every_problem_and_nothing_is_sent():
    model = fake.ScriptedModel([])
    bad = [ToolGroup("maths", "x", (spec("calculate"),)), ToolGroup("maths", "y", ()), ToolGroup("no spaces", "z", (spec("a"),))]
    with pytest.raises(ValueError) as error:
        route(model.backend(), QUESTION, bad)
    message = str(error.value)
    assert "used twice" in message and "has no tools" in message and "'no spaces'" in message
    assert model.requests == []
    with pytest.raises(ValueError, match="at least one group"):
        check_groups([])


def load_benchmark():
    path = ROOT / "benchmarks" / "tool_groups.py"
    module_spec = importlib.util.spec_from_file_location("tool_groups_benchmark", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


def test_the_benchmarks_groups_hold_every_suite_tool_once():
    benchmark = load_benchmark()
    suite = lesson_suite()
    groups = benchmark.suite_groups(suite)
    names = [s["function"]["name"] for group in groups for s in group.tools]
    assert sorted(names) == sorted(suite.tools)
    with pytest.raises(ValueError, match="in none"):
        benchmark.suite_groups(suite, {"weather": ("Weather.", ["get_weather"])})


def test_the_benchmark_scores_routing_mistakes_and_asks_the_right_group_too(tmp_path, monkeypatch):
    """Two questions: one routed right, one routed wrong. The wrong one fails routed, and its
    right group's agent is asked as well, for the perfect-router figure."""
    benchmark = load_benchmark()
    suite = lesson_suite()
    weather, root = suite.case("simple-en-weather-beijing"), suite.case("simple-en-square-root-144")

    def reply(request: dict):
        names = [t["function"]["name"] for t in request["tools"]]
        question = request["messages"][-1]["content"]
        if len(names) == 17:  # all at once: right for the weather, wrong for the root
            return fake.calls(fake.call("get_weather", {"city": "Beijing"}) if question == weather.question
                              else fake.call("calculate", {"a": 144, "b": 2, "operator": "divide"}))
        if names[0].endswith("_agent"):  # the router: weather right, the root sent to money
            return fake.calls(fake.call("weather_agent" if question == weather.question else "money_agent"))
        if "get_weather" in names:
            return fake.calls(fake.call("get_weather", {"city": "Beijing"}))
        if "square_root" in names:
            return fake.calls(fake.call("square_root", {"x": 144}))
        return fake.calls(fake.call(names[0], {}))

    model = fake.ScriptedModel([reply] * 20)
    monkeypatch.setattr(benchmark, "connect", lambda **_: model.backend())
    monkeypatch.setattr(benchmark, "pick_cases", lambda _suite, n: [weather.id, root.id])
    out = tmp_path / "groups.json"
    assert benchmark.main(["--out", str(out)]) == 0
    record = json.loads(out.read_text(encoding="utf-8"))
    by_case = {row["case_id"]: row for row in record["cases"]}
    assert by_case[root.id]["routed_to"] == "money" and by_case[root.id]["right_group"] == "maths"
    assert by_case[root.id]["routed"]["reason"] == "wrong_tool"
    assert by_case[root.id]["perfect_router"]["selection_ok"] is True
    summary = record["summary"]
    assert summary["router_right_group"]["successes"] == 1 and summary["router_right_group"]["n"] == 2
    assert summary["all_at_once"]["selection"]["successes"] == 1
    assert summary["routed"]["selection"]["successes"] == 1
    assert summary["perfect_router"]["selection"]["successes"] == 2
    assert summary["paired"]["selection"] == {"only_all_at_once": 0, "only_routed": 0, "both": 1, "neither": 1}
    # 2 all at once + 2 router + 3 agents (both routed groups, and maths for the misrouted root)
    assert len(model.requests) == 7
    assert all(request["tool_choice"] == "required" and request["temperature"] == 0 for request in model.requests)
