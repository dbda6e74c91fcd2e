"""One whole turn on the embedded model, with each protocol.

The model is tiny and untrained for tools, so most of these tests check the shape of what
happened (rounds, executions, how the turn ended), never which tool it picked or what it wrote.
The few that do pin temperature 0 and say so: they hold what the Playground tells a learner
about the embedded models to what the models do.
"""

import json

import pytest

from toolkit.engine import BASE_MODEL, EMBEDDED_MODELS
from toolkit.loop import run_turn
from toolkit.tools import tool
from toolkit.trace import format_trace, read_trace

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


# --- After tool results: what the engine guarantees -------------------------------------------------

AFTER_QUESTIONS = ["What is the weather in Beijing?", "How warm is it in Lima?", "上海天气怎么样？",
                   "What is the square root of 81?"]


@pytest.mark.parametrize("question", AFTER_QUESTIONS)
def test_after_a_result_the_engine_never_asks_for_the_answered_call_again(embedded, question):
    """Under "auto", the turn never repeats a call that already has a result, and a text reply
    never carries the template's markup: whatever the model prefers, the loop closes."""
    result = run_turn(embedded, [{"role": "user", "content": question}], [get_weather, square_root],
                      tool_choice="required", max_rounds=3,
                      request_options={"max_tokens": 80, "temperature": 0, "seed": 0})
    asked = [(c.name, json.dumps(json.loads(c.arguments), sort_keys=True)) for r in result.rounds for c in r.calls]
    assert len(asked) == len(set(asked)), f"a call was asked for twice: {asked}"
    assert result.stop_reason in {"answered", "max_rounds"}
    if result.stop_reason == "answered":
        assert "<tool" not in result.final_text and "<|im" not in result.final_text
        assert result.messages[-1] == {"role": "assistant", "content": result.final_text}


def test_the_weather_round_trip_ends_in_an_answer_that_states_the_result(embedded):
    """Pinned: temperature 0, seed 0, the demo weather tool, a city it knows."""
    from toolkit.demo_tools import demo_toolset

    result = run_turn(embedded, [{"role": "user", "content": "What's the weather in Shanghai?"}],
                      demo_toolset(["get_weather", "calculate"]), max_rounds=3,
                      request_options={"max_tokens": 120, "temperature": 0, "seed": 0})
    assert result.stop_reason == "answered", format_trace(result)
    assert len(result.rounds) == 2 and [c.name for c in result.rounds[0].calls] == ["get_weather"]
    facts = json.loads(result.rounds[0].executions[0].result_text)
    assert str(facts["temperature"]) in result.final_text or facts["condition"] in result.final_text.lower()


def playground_turn(model: str, question: str, max_rounds: int = 3):
    """One Playground turn as the page asks it: all demo tools, its request options."""
    from app_pages.playground import PLAYGROUND_REQUEST
    from toolkit.client import connect_embedded
    from toolkit.demo_tools import DEMO_TOOLS, demo_toolset

    return run_turn(connect_embedded(model), [{"role": "user", "content": question}],
                    demo_toolset([each.name for each in DEMO_TOOLS]), max_rounds=max_rounds,
                    request_options=PLAYGROUND_REQUEST)


def test_the_playgrounds_example_question_shows_the_whole_loop_on_the_default_model():
    """Pinned: temperature 0. The question offered in the Playground's input box, asked of the
    model the page opens on, gets a call of the weather tool for a city it knows, then an answer.
    (The first tuned model, offered all four demo tools, answers weather questions from memory.)"""
    from app_pages.playground import EXAMPLE_QUESTION

    result = playground_turn(BASE_MODEL, EXAMPLE_QUESTION)
    assert result.stop_reason == "answered" and len(result.rounds) == 2, format_trace(result)
    calls = result.rounds[0].calls
    assert [c.name for c in calls] == ["get_weather"], format_trace(result)
    assert "condition" in json.loads(result.rounds[0].executions[0].result_text), format_trace(result)


@pytest.mark.parametrize("model", EMBEDDED_MODELS)
def test_every_embedded_model_spells_beijing_as_the_playground_says(model):
    """Pinned: temperature 0. What the Playground's caption warns about (``BEIJING_SPELLING``)."""
    from app_pages.playground import BEIJING_SPELLING

    result = playground_turn(model, "What's the weather in Beijing?", max_rounds=1)
    call = result.rounds[0].calls[0]
    assert call.name == "get_weather" and json.loads(call.arguments)["city"] == "B Beijing"
    assert "`B Beijing`" in BEIJING_SPELLING


def test_a_text_reply_carries_no_template_markup_in_any_capitals():
    """What the engine guarantees whatever the model prefers. The first tuned model, offered the
    four demo tools, answers this question in text, and once wrote ``<tool_Call>`` there."""
    from toolkit.engine import TUNED_MODEL
    from toolkit.engine.markup import MARKERS

    result = playground_turn(TUNED_MODEL, "What's the weather in Shanghai?")
    texts = [each.reply_text or "" for each in result.rounds]
    assert any(texts), format_trace(result)  # it wrote text, so the ban had something to hold
    assert not [marker for text in texts for marker in MARKERS if marker in text.lower()], texts


def test_a_result_too_long_for_the_context_is_cut_by_the_loop_and_the_reply_comes_back(embedded):
    @tool
    def read_log(name: str) -> str:
        """Read a log file.

        Args:
            name: the file's name
        """
        return "ERROR disk full; " * 4000  # about 68,000 characters: far past the context

    result = run_turn(embedded, [{"role": "user", "content": "Read the log app.log"}], [read_log],
                      tool_choice="required", max_rounds=1,
                      request_options={"max_tokens": 60, "temperature": 0, "seed": 0})
    execution = result.rounds[0].executions[0]
    assert execution.truncated_chars > 60000 and len(execution.result_text) <= 2100
    assert len(result.rounds) == 2 and result.rounds[1].finish_reason is not None
    assert result.stop_reason in {"answered", "max_rounds"}
