"""The Responses API backend without the model: the lab's HTTP server and its Responses
translation in front of a scripted model, reached by ``connect(api="responses")``.

The scripted replies are written by hand, so these tests check the translation and the wire
(what was sent, what came back, what the loop saw), never a model's behaviour.
"""

import json
import threading
from pathlib import Path

import openai
import pytest

from toolkit import responses_api
from toolkit.app.backends import BackendChoice, open_backend
from toolkit.client import ResponsesClient, connect
from toolkit.engine.request import parse_request
from toolkit.engine.serve import base_url_of, make_server
from toolkit.fake import ScriptedModel, call, calls, text
from toolkit.lab_error import LabError
from toolkit.loop import run_turn
from toolkit.tools import tool


@tool
def get_weather(city: str) -> str:
    """Get the current weather of a city.

    Args:
        city: the city's name
    """
    return f"Sunny in {city}"


class ScriptedEngine:
    """The engine's interface (chat requests in, chat replies out) over a scripted model.
    Requests are checked as the real engine checks them, so a 400 stays a 400."""

    models = {"scripted": None}

    def __init__(self, *replies):
        self.fake = ScriptedModel(list(replies))

    def complete(self, request, should_stop=None):
        parse_request(request)
        return self.fake.create(**request).model_dump()

    def stream(self, request, should_stop=None):
        parse_request(request)
        return (chunk.model_dump() for chunk in self.fake.create(**request))


@pytest.fixture
def scripted():
    """(engine, backend): the lab's server in front of a scripted engine, over the Responses API."""
    engine = ScriptedEngine()
    server = make_server(engine=engine)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield engine, connect(base_url_of(server), "scripted", "k", api="responses", capture=True, max_retries=0)
    server.shutdown()
    server.server_close()


def test_a_tool_round_trip_through_the_loop_goes_over_responses(scripted):
    engine, backend = scripted
    engine.fake.add(calls(call("get_weather", {"city": "Oslo"}, id="call_1")), text("It is sunny in Oslo."))
    result = run_turn(backend, [{"role": "user", "content": "Weather in Oslo?"}], [get_weather],
                      tool_choice="required", request_options={"max_tokens": 30, "temperature": 0, "seed": 1})

    assert result.stop_reason == "answered" and result.final_text == "It is sunny in Oslo."
    assert [e.call_id for e in result.rounds[0].executions] == ["call_1"]
    # On the wire: two POST /responses, the second carrying the call and its output, matched by call_id.
    assert [x.url.rsplit("/", 1)[-1] for x in backend.exchanges] == ["responses", "responses"]
    first, second = (x.request for x in backend.exchanges)
    assert first["tools"][0]["name"] == "get_weather" and "function" not in first["tools"][0]
    assert first["tool_choice"] == "required" and first["max_output_tokens"] == 30
    assert "seed" not in first  # a remote /responses endpoint takes no seed (the embedded one does)
    kinds = [item.get("type", "message") for item in second["input"]]
    assert kinds == ["message", "function_call", "function_call_output"]
    assert second["input"][1]["call_id"] == second["input"][2]["call_id"] == "call_1"
    assert second["input"][2]["output"] == "Sunny in Oslo"
    assert backend.exchanges[0].response["output"][0]["type"] == "function_call"
    assert backend.exchanges[1].response["output"][0]["content"][0]["type"] == "output_text"
    # The engine got back the chat request the loop meant: the result as a tool message.
    assert engine.fake.requests[1]["messages"][-1] == {"role": "tool", "tool_call_id": "call_1",
                                                       "content": "Sunny in Oslo"}
    # The loop's own record keeps the chat-shaped request, as with any backend.
    assert result.rounds[0].request["tool_choice"] == "required"


def test_a_streamed_reply_reads_as_chat_chunks(scripted):
    engine, backend = scripted
    engine.fake.add(calls(call("get_weather", {"city": "Oslo"}, id="call_a"),
                          call("get_weather", {"city": "Rome"}, id="call_b")))
    chunks = list(backend.chat(messages=[{"role": "user", "content": "Oslo and Rome?"}],
                               tools=[get_weather.spec()], stream=True, stream_options={"include_usage": True}))
    deltas = [d for c in chunks for choice in c.choices for d in choice.delta.tool_calls or []]
    ids = [d.id for d in deltas if d.id]
    arguments = {i: "".join(d.function.arguments or "" for d in deltas if d.index == i) for i in (0, 1)}
    assert ids == ["call_a", "call_b"]
    assert [json.loads(arguments[i])["city"] for i in (0, 1)] == ["Oslo", "Rome"]
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "tool_calls"
    assert chunks[-1].choices == []  # the usage chunk asked for (the scripted model counts no tokens)
    events = backend.exchanges[-1].response  # the raw server-sent events, as they came
    assert "event: response.created" in events and "event: response.completed" in events


def test_the_official_client_reads_every_event_of_a_scripted_stream(scripted):
    engine, backend = scripted
    engine.fake.add(text("Hello there, friend."))
    client = backend.client.openai
    with client.responses.stream(model="scripted", input="Hi", max_output_tokens=10) as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_response()
    assert kinds[:4] == ["response.created", "response.in_progress", "response.output_item.added",
                         "response.content_part.added"]
    assert kinds[-4:] == ["response.output_text.done", "response.content_part.done",
                          "response.output_item.done", "response.completed"]
    assert final.output_text == "Hello there, friend."


def test_parameters_without_a_responses_counterpart_are_refused_by_name(scripted):
    _, backend = scripted
    with pytest.raises(LabError, match="'stop'"):
        backend.chat(messages=[{"role": "user", "content": "hi"}], stop=["\n"])
    assert backend.exchanges == []  # nothing was sent


def test_the_request_translation_covers_the_chat_fields():
    chat = {"model": "m", "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "Weather?"}]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "Sunny"}],
        "tools": [get_weather.spec()], "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
        "max_completion_tokens": 9, "seed": 4, "n": 1,
        "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}}}}
    body = responses_api.responses_request(chat, send_seed=True)
    assert body["input"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "input_text", "text": "Weather?"}]},
        {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": '{"city": "Oslo"}'},
        {"type": "function_call_output", "call_id": "c1", "output": "Sunny"}]
    assert body["tool_choice"] == {"type": "function", "name": "get_weather"}
    assert body["tools"][0]["name"] == "get_weather" and body["tools"][0]["parameters"]["required"] == ["city"]
    # Chat's unstated strict is "off"; the Responses API would take unstated as "on".
    assert body["tools"][0]["strict"] is False
    strict_spec = {"type": "function", "function": {**get_weather.spec()["function"], "strict": True}}
    assert responses_api.responses_request({**chat, "tools": [strict_spec]})["tools"][0]["strict"] is True
    assert body["max_output_tokens"] == 9 and body["extra_body"] == {"seed": 4}
    assert body["text"] == {"format": {"type": "json_schema", "name": "x", "schema": {"type": "object"}}}
    assert "extra_body" not in responses_api.responses_request({**chat, "n": 1}, send_seed=False)
    with pytest.raises(ValueError, match="'logprobs'"):
        responses_api.responses_request({**chat, "logprobs": True})


def test_an_incomplete_response_reads_as_finish_reason_length():
    from openai.types.responses import Response

    response = Response.model_validate({
        "id": "resp_1", "object": "response", "created_at": 0, "model": "m", "status": "incomplete",
        "incomplete_details": {"reason": "max_output_tokens"}, "parallel_tool_calls": True,
        "tool_choice": "auto", "tools": [],
        "output": [{"type": "message", "id": "msg_1", "role": "assistant", "status": "incomplete",
                    "content": [{"type": "output_text", "text": "Hel", "annotations": []}]}],
        "usage": {"input_tokens": 5, "output_tokens": 2, "total_tokens": 7,
                  "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                  "output_tokens_details": {"reasoning_tokens": 0}}})
    completion = responses_api.completion_from_response(response)
    assert completion.choices[0].finish_reason == "length"
    assert completion.choices[0].message.content == "Hel" and completion.choices[0].message.tool_calls is None
    assert completion.usage.prompt_tokens == 5 and completion.usage.total_tokens == 7


def test_an_endpoint_without_the_responses_api_is_a_clear_error():
    from tests.test_client import StubEndpoint

    stub = StubEndpoint()
    try:
        stub.status, stub.body = 404, {"error": {"message": "Not Found", "type": "not_found", "code": None}}
        backend = connect(stub.url, "some-model", "k", api="responses", max_retries=0)
        with pytest.raises(LabError, match="does not serve the Responses API"):
            backend.chat(messages=[{"role": "user", "content": "hi"}])
        stub.body = {"error": {"message": "no such model", "type": "invalid_request_error", "code": "model_not_found"}}
        with pytest.raises(LabError, match="does not know the model") as caught:
            backend.chat(messages=[{"role": "user", "content": "hi"}])
        assert "Responses API" not in str(caught.value)
    finally:
        stub.server.shutdown()


def test_the_api_is_a_setting(monkeypatch):
    monkeypatch.delenv("LAB_API", raising=False)
    assert connect("http://127.0.0.1:9/v1", "m", "k").api == "chat"
    monkeypatch.setenv("LAB_API", "responses")
    backend = connect("http://127.0.0.1:9/v1", "m", "k")
    assert backend.api == "responses" and isinstance(backend.client, ResponsesClient)
    assert backend.client.api_key == "k" and "Responses API" in backend.label
    with pytest.raises(LabError, match="Unknown API"):
        connect("http://127.0.0.1:9/v1", "m", "k", api="graphql")
    remote = open_backend(BackendChoice("remote", "http://127.0.0.1:9/v1", "m", api="chat"))
    assert remote.api == "chat" and isinstance(remote.client, openai.OpenAI)


def test_experiment_trials_go_over_responses_unchanged(scripted):
    from toolkit.bench.experiment import send

    engine, backend = scripted
    engine.fake.add(calls(call("get_weather", {"city": "Oslo"}, id="call_x")))
    body = {"model": "scripted", "messages": [{"role": "user", "content": "Oslo?"}], "tools": [get_weather.spec()],
            "tool_choice": "auto", "parallel_tool_calls": False, "temperature": 0.0, "max_tokens": 64, "seed": 7}
    completion, _ = send(backend, body)
    assert completion.choices[0].message.tool_calls[0].id == "call_x"
    assert backend.exchanges[-1].url.endswith("/responses")
    assert backend.exchanges[-1].request["parallel_tool_calls"] is False


def test_the_sidebar_offers_both_apis(monkeypatch, tmp_path):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("LAB_RUNS_DB", str(tmp_path / "runs.sqlite"))
    monkeypatch.setenv("LAB_APP_BACKEND", "scripted")
    monkeypatch.setenv("LAB_API", "responses")
    at = AppTest.from_file(str(Path(__file__).resolve().parent.parent / "app.py"), default_timeout=120)
    at.run()
    assert not at.exception
    assert [o.split(" (")[0] for o in at.radio(key="api").options] == ["Chat Completions", "Responses API"]
    assert at.radio(key="api").value == "responses"
    at.radio(key="api").set_value("chat").run()
    assert not at.exception
