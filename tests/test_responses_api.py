"""OpenAI's Responses API on the embedded endpoint, through the official openai client.

The Responses door leads to the same engine as chat completions (template, grammar, parser,
decisions), so these tests assert what that engine guarantees (a forced function is called and
its arguments match the schema; call ids are unique; "none" gives text) and the shape of the
Responses objects and events; never the words the model chose. Generations are few and short.
"""

import json

import httpx
import openai
import pytest

from toolkit.client import connect
from toolkit.json_schema import validator_for
from toolkit.loop import run_turn
from toolkit.tools import tool

from specs import weather_spec

pytestmark = pytest.mark.embedded

SQRT = {"type": "function", "name": "square_root", "description": "Square root of a number",
        "parameters": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}}
QUESTION = "What is the weather in Beijing and in Shanghai?"


def weather() -> dict:
    """The shared get_weather spec as the Responses API takes a function: its fields at the top level."""
    return {"type": "function", **weather_spec()["function"]}


def check_arguments(arguments: dict) -> None:
    """Raises unless ``arguments`` match get_weather's parameters."""
    parameters = weather()["parameters"]
    validator_for(parameters)(parameters).validate(arguments)


def respond(backend, **kwargs):
    kwargs.setdefault("max_output_tokens", 40)
    kwargs.setdefault("temperature", 0)
    kwargs.setdefault("extra_body", {"seed": 0})
    return backend.client.responses.create(model=backend.model, **kwargs)


def test_a_forced_function_is_one_call_that_matches_its_schema_as_chat_gives_it(embedded):
    choice = {"type": "function", "name": "get_weather"}
    response = respond(embedded, input=QUESTION, tools=[weather(), SQRT], tool_choice=choice)

    assert response.object == "response" and response.id.startswith("resp_")
    assert response.status == "completed" and response.incomplete_details is None
    assert response.model == embedded.model and response.created_at > 0
    [item] = response.output
    assert item.type == "function_call" and item.name == "get_weather" and item.status == "completed"
    assert item.call_id.startswith("call_") and item.id.startswith("fc_")
    check_arguments(json.loads(item.arguments))
    assert response.tool_choice.name == "get_weather" and [t.name for t in response.tools] == ["get_weather", "square_root"]
    assert response.usage.total_tokens == response.usage.input_tokens + response.usage.output_tokens
    # The same question through chat completions: the same prompt, the same engine, the same call.
    chat = embedded.client.chat.completions.create(
        model=embedded.model, messages=[{"role": "user", "content": QUESTION}], max_tokens=40, temperature=0, seed=0,
        tools=[{"type": "function", "function": {k: v for k, v in t.items() if k != "type"}} for t in (weather(), SQRT)],
        tool_choice={"type": "function", "function": {"name": "get_weather"}})
    [chat_call] = chat.choices[0].message.tool_calls
    assert (chat_call.function.name, chat_call.function.arguments) == (item.name, item.arguments)
    assert chat.usage.prompt_tokens == response.usage.input_tokens


def test_parallel_calls_have_unique_call_ids_and_item_ids(embedded):
    response = respond(embedded, instructions="Call get_weather once for every city the user names.",
                       input=QUESTION, tools=[weather()], tool_choice="required", max_output_tokens=60)
    calls = [item for item in response.output if item.type == "function_call"]
    assert calls and len(calls) == len(response.output)
    assert len({c.call_id for c in calls}) == len({c.id for c in calls}) == len(calls)
    for each in calls:
        if each.status == "completed":
            check_arguments(json.loads(each.arguments))


def test_a_function_call_output_round_trip_ends_in_a_message(embedded):
    history = [
        {"role": "user", "content": "What is the weather in Beijing?"},
        {"type": "function_call", "call_id": "call_weather_1", "name": "get_weather", "arguments": '{"city": "Beijing"}'},
        {"type": "function_call_output", "call_id": "call_weather_1", "output": "Sunny, 25 C"},
    ]
    response = respond(embedded, input=history, tools=[weather()], tool_choice="none", max_output_tokens=12)
    [message] = response.output
    assert message.type == "message" and message.role == "assistant" and message.id.startswith("msg_")
    assert [part.type for part in message.content] == ["output_text"]
    assert response.output_text == message.content[0].text
    if response.status == "incomplete":
        assert response.incomplete_details.reason == "max_output_tokens" and response.usage.output_tokens == 12


def test_max_output_tokens_cuts_the_reply_and_says_so(embedded):
    response = respond(embedded, input="Tell me a long story about the sea.", max_output_tokens=3, store=True)
    assert response.status == "incomplete" and response.incomplete_details.reason == "max_output_tokens"
    assert response.output[0].status == "incomplete" and response.usage.output_tokens == 3
    assert response.model_extra.get("store") is False  # accepted, but nothing is kept


def test_a_streamed_text_reply_sends_the_official_events_in_order(embedded):
    events = list(respond(embedded, input="Say hello.", max_output_tokens=4, stream=True))
    kinds = [event.type for event in events]
    assert [event.sequence_number for event in events] == list(range(len(events)))
    deltas = kinds.count("response.output_text.delta")
    assert deltas >= 1
    assert kinds == ["response.created", "response.in_progress", "response.output_item.added",
                     "response.content_part.added", *["response.output_text.delta"] * deltas,
                     "response.output_text.done", "response.content_part.done", "response.output_item.done",
                     "response.incomplete" if events[-1].response.status == "incomplete" else "response.completed"]
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    done = next(e for e in events if e.type == "response.output_text.done")
    assert done.text == text == events[-1].response.output_text
    assert events[0].response.status == "in_progress" and events[0].response.output == []
    assert events[-1].response.usage.output_tokens <= 4


def test_a_streamed_function_call_adds_up_in_the_stream_helper(embedded):
    with embedded.client.responses.stream(model=embedded.model, input=QUESTION, tools=[weather()],
                                          tool_choice={"type": "function", "name": "get_weather"},
                                          temperature=0, max_output_tokens=40, extra_body={"seed": 0}) as stream:
        events = list(stream)
        final = stream.get_final_response()
    kinds = [event.type for event in events]
    assert kinds[2] == "response.output_item.added" and kinds[-1] == "response.completed"
    assert "response.function_call_arguments.done" in kinds and "response.output_item.done" in kinds
    fragments = "".join(e.delta for e in events if e.type == "response.function_call_arguments.delta")
    done = next(e for e in events if e.type == "response.function_call_arguments.done")
    [item] = final.output
    assert item.type == "function_call" and item.arguments == fragments == done.arguments
    assert done.item_id == item.id and item.call_id.startswith("call_")
    check_arguments(item.parsed_arguments or json.loads(item.arguments))


BAD = {
    "built-in web search": {"tools": [{"type": "web_search"}]},
    "built-in file search": {"tools": [{"type": "file_search", "vector_store_ids": ["vs_1"]}]},
    "built-in code interpreter": {"tools": [{"type": "code_interpreter", "container": {"type": "auto"}}]},
    "built-in mcp": {"tools": [{"type": "mcp", "server_label": "x", "server_url": "https://example.com"}]},
    "tool nested as in chat": {"tools": [{"type": "function", "function": {"name": "get_weather"}}]},
    "tool schema not an object": {"tools": [{**weather(), "parameters": {"type": "string"}}]},
    "tool schema invalid": {"tools": [{**weather(), "parameters": {"type": "object", "properties": {"a": {"type": 5}}}}]},
    "tool name invalid": {"tools": [{**weather(), "name": "get weather"}]},
    "duplicate tool names": {"tools": [weather(), weather()]},
    "strict schema not closed": {"tools": [{**weather(), "strict": True}]},
    "tool_choice names a missing tool": {"tools": [weather()], "tool_choice": {"type": "function", "name": "nope"}},
    "tool_choice built in": {"tools": [weather()], "tool_choice": {"type": "web_search_preview"}},
    "required without tools": {"tool_choice": "required"},
    "previous_response_id": {"previous_response_id": "resp_123"},
    "conversation": {"conversation": "conv_123"},
    "max_output_tokens zero": {"max_output_tokens": 0},
    "unknown parameter": {"extra_body": {"frobnicate": True}},
    "orphan function_call_output": {"input": [
        {"role": "user", "content": "Hi"}, {"type": "function_call_output", "call_id": "call_nobody", "output": "x"}]},
    "output before its call": {"input": [
        {"type": "function_call_output", "call_id": "call_1", "output": "x"},
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"}]},
    "function_call without call_id": {"input": [{"type": "function_call", "name": "get_weather", "arguments": "{}"}]},
    "function_call arguments not a string": {"input": [
        {"type": "function_call", "call_id": "c", "name": "get_weather", "arguments": {"city": "Oslo"}}]},
    "unknown item type": {"input": [{"type": "reasoning", "summary": []}]},
    "bad role": {"input": [{"role": "tool", "content": "x"}]},
    "image part": {"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "https://x/y.png"}]}]},
    "empty input": {"input": []},
}


@pytest.mark.parametrize("bad", BAD.values(), ids=BAD.keys())
def test_what_cannot_be_honoured_is_a_400_with_a_reason(embedded, bad):
    request = {"input": "What is the weather in Beijing?", **bad}
    with pytest.raises(openai.BadRequestError) as caught:
        embedded.client.responses.create(model=embedded.model, **request)
    assert caught.value.status_code == 400
    error = caught.value.body
    assert error["type"] == "invalid_request_error" and error["message"] and error["param"]
    assert ".function." not in error["message"]  # worded in the Responses API's field names


def test_a_streamed_request_is_checked_before_its_first_event(embedded):
    with pytest.raises(openai.BadRequestError, match="function_call_output"):
        embedded.client.responses.create(model=embedded.model, stream=True, input=BAD["orphan function_call_output"]["input"])


def test_an_unknown_model_is_a_404_and_a_malformed_body_a_400(embedded):
    with pytest.raises(openai.NotFoundError) as caught:
        embedded.client.responses.create(model="gpt-nonexistent", input="Hi")
    assert caught.value.body["code"] == "model_not_found"
    for body in (b"{not json", b"[1, 2]"):
        response = httpx.post(f"{embedded.base_url}/responses", content=body,
                              headers={"Content-Type": "application/json"}, timeout=30)
        assert response.status_code == 400 and response.json()["error"]["message"]


@tool
def get_weather(city: str) -> str:
    """Get the current weather of a city.

    Args:
        city: the city's name, e.g. Beijing
    """
    return f"Sunny, 21 C in {city}"


def test_the_loop_runs_a_tool_round_trip_over_the_responses_api(embedded):
    backend = connect(api="responses", capture=True)
    result = run_turn(backend, [{"role": "user", "content": "What is the weather in Beijing?"}], [get_weather],
                      tool_choice={"type": "function", "function": {"name": "get_weather"}}, max_rounds=1,
                      request_options={"max_tokens": 30, "temperature": 0, "seed": 0})

    first = result.rounds[0]
    assert [c.name for c in first.calls] == ["get_weather"] and first.executions[0].ok
    assert result.stop_reason in {"answered", "max_rounds"} and len(result.rounds) == 2
    if result.stop_reason == "answered":
        assert result.final_text and result.messages[-1]["role"] == "assistant"
    # What went over the wire: two POST /responses; the second answers the first's call by call_id.
    assert [x.url.endswith("/responses") for x in backend.exchanges] == [True, True]
    call_id = backend.exchanges[0].response["output"][0]["call_id"]
    assert first.calls[0].id == call_id
    second = backend.exchanges[1].request["input"]
    assert second[-1] == {"type": "function_call_output", "call_id": call_id, "output": first.executions[0].result_text}
    assert backend.exchanges[0].request["seed"] == 0  # the embedded endpoint takes a seed on /responses too


def test_the_app_opens_the_embedded_model_over_the_responses_api(embedded, monkeypatch):
    from toolkit.app.backends import BackendChoice, open_backend

    for base_url in (None, "http://127.0.0.1:9/v1"):  # LAB_BASE_URL set or not, the learner picked embedded
        monkeypatch.delenv("LAB_APP_BACKEND", raising=False)
        if base_url:
            monkeypatch.setenv("LAB_BASE_URL", base_url)
        backend = open_backend(BackendChoice("embedded", api="responses"))
        assert backend.embedded and backend.api == "responses" and backend.client.send_seed
