"""One whole turn on the embedded model, with each protocol.

The model is tiny and untrained for tools, so these tests check the shape of what happened
(rounds, executions, how the turn ended), never which tool it picked or what it wrote.
"""

import json

import pytest

from toolkit.loop import format_trace, run_turn
from toolkit.tools import tool
from toolkit.trace import read_trace

pytestmark = pytest.mark.embedded


@tool
def get_weather(city: str) -> str:
    """Get the current weather of a city.

    Args:
        city: the city's name, e.g. Beijing
    """
    return f"Sunny, 21 C in {city}"


@tool
def square_root(x: float) -> float:
    """Square root of a number.

    Args:
        x: a number that is not negative
    """
    return x ** 0.5


@pytest.mark.parametrize("protocol", ["native", "string"])
def test_a_whole_turn_on_the_embedded_model(embedded, protocol, tmp_path):
    messages = [{"role": "user", "content": "What is the weather in Beijing?"}]
    trace = tmp_path / "trace.jsonl"
    result = run_turn(embedded, messages, [get_weather, square_root], protocol=protocol,
                      tool_choice="required", max_rounds=1, trace_path=str(trace),
                      request_options={"max_tokens": 80, "temperature": 0, "seed": 0})

    assert result.stop_reason in {"answered", "max_rounds", "no_reply"}
    assert 1 <= len(result.rounds) <= 2
    if protocol == "native":
        # "required" is enforced by the engine's grammar: the first reply must call a tool
        assert result.rounds[0].calls and result.rounds[0].request["tool_choice"] == "required"
        assert all(r.request["tool_choice"] == "auto" for r in result.rounds[1:])
        assert result.rounds[0].executions
    for each in result.rounds:
        if each.executions:
            assert [e.call_id for e in each.executions] == [c.id for c in each.calls]
            assert all(e.result_text for e in each.executions)
    if result.stop_reason == "answered":
        assert result.final_text and result.messages[-1]["role"] == "assistant"
    assert len(read_trace(trace)) == len(result.rounds)
    json.dumps(result.to_dict())
    assert format_trace(result).startswith(f"Turn ({protocol} protocol)")
