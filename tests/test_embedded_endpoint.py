"""The embedded model over HTTP, through the official openai client.

Asserts on structure (which field is filled, how many calls, what they parse to), never on
the words a model chose.
"""

import json

import openai
import pytest

from specs import weather_spec
from toolkit.engine import EMBEDDED_MODELS

pytestmark = pytest.mark.embedded

SQRT = {"type": "function", "function": {
    "name": "square_root", "description": "Square root of a number",
    "parameters": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}}}
ASK = [{"role": "user", "content": "What is the weather in Beijing and in Shanghai?"}]


def tools() -> list[dict]:
    """get_weather and square_root, a fresh copy of the weather spec for each request."""
    return [weather_spec(), SQRT]


def chat(backend, **kwargs):
    kwargs.setdefault("max_tokens", 60)
    kwargs.setdefault("temperature", 0)
    kwargs.setdefault("seed", 0)
    return backend.client.chat.completions.create(model=backend.model, **kwargs)


def test_models_lists_the_embedded_model_first(embedded):
    assert [m.id for m in embedded.client.models.list().data][0] == "SmolLM2-135M-Instruct"


def test_required_gives_at_least_one_valid_call(embedded):
    reply = chat(embedded, messages=ASK, tools=tools(), tool_choice="required", parallel_tool_calls=False)
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content is None
    assert len(choice.message.tool_calls) >= 1
    for call in choice.message.tool_calls:
        assert call.function.name in {"get_weather", "square_root"}
        assert isinstance(json.loads(call.function.arguments), dict)
        assert call.id.startswith("call_")
    assert reply.usage.prompt_tokens > 50 and reply.usage.completion_tokens > 0


def test_named_function_gives_exactly_that_function(embedded):
    reply = chat(embedded, messages=ASK, tools=tools(), tool_choice={"type": "function", "function": {"name": "square_root"}})
    calls = reply.choices[0].message.tool_calls
    assert [c.function.name for c in calls] == ["square_root"]
    assert isinstance(json.loads(calls[0].function.arguments)["x"], (int, float))


def test_none_gives_text_only_and_leaves_tools_out_of_the_prompt(embedded):
    reply = chat(embedded, messages=ASK, tools=tools(), tool_choice="none")
    assert reply.choices[0].message.tool_calls is None
    assert reply.choices[0].message.content
    # the prompt had no tool section: far fewer prompt tokens than with tools
    with_tools = chat(embedded, messages=ASK, tools=tools(), tool_choice="required", max_tokens=5)
    assert reply.usage.prompt_tokens < with_tools.usage.prompt_tokens - 50


def test_auto_answers_with_text_or_valid_calls(embedded):
    for seed in range(3):
        reply = chat(embedded, messages=ASK, tools=tools(), temperature=1.0, seed=seed)
        message = reply.choices[0].message
        assert (message.content is None) != (message.tool_calls is None)
        for call in message.tool_calls or []:
            json.loads(call.function.arguments)


def test_parallel_calls_have_unique_ids_and_can_be_limited_to_one(embedded):
    messages = [{"role": "system", "content": "Call get_weather once for every city the user names."}, *ASK]
    ids = set()
    for seed in range(4):
        reply = chat(embedded, messages=messages, tools=[weather_spec()], tool_choice="required", temperature=0.8, seed=seed, max_tokens=80)
        calls = reply.choices[0].message.tool_calls
        ids.update(c.id for c in calls)
        single = chat(embedded, messages=messages, tools=[weather_spec()], tool_choice="required", parallel_tool_calls=False,
                      temperature=0.8, seed=seed, max_tokens=80)
        assert len(single.choices[0].message.tool_calls) == 1
    assert len(ids) >= 4


def test_seed_makes_sampling_repeatable(embedded):
    from toolkit.engine.serve import forget_shared_replies

    first = chat(embedded, messages=ASK, temperature=1.0, seed=7, max_tokens=20).choices[0].message.content
    forget_shared_replies()  # so the model samples the second reply itself, not the endpoint's memory
    second = embedded.client.chat.completions.with_raw_response.create(
        model=embedded.model, messages=ASK, temperature=1.0, seed=7, max_tokens=20)
    assert second.headers["X-Lab-Reply"] == "computed"
    assert first == second.parse().choices[0].message.content


def test_max_tokens_gives_finish_reason_length(embedded):
    reply = chat(embedded, messages=[{"role": "user", "content": "Tell me a long story."}], max_tokens=3)
    assert reply.choices[0].finish_reason == "length"
    assert reply.usage.completion_tokens == 3


def test_tool_result_round_trip_reaches_the_model(embedded):
    call = {"id": "call_abc", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Beijing"}'}}
    messages = [*ASK, {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "call_abc", "content": "Beijing: sunny, 25 degrees celsius"}]
    reply = chat(embedded, messages=messages, tools=tools(), tool_choice="none", max_tokens=40)
    sent = embedded.last_exchange().request
    assert sent["messages"][-1]["tool_call_id"] == "call_abc"
    assert reply.choices[0].message.content
    # The result was in the prompt: the same turn without it is shorter by at least its tokens.
    without = chat(embedded, messages=ASK, tools=tools(), tool_choice="none", max_tokens=1)
    assert reply.usage.prompt_tokens > without.usage.prompt_tokens + 10


def test_streaming_text(embedded):
    stream = chat(embedded, messages=ASK, stream=True, max_tokens=15)
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text and len(chunks) > 3
    assert chunks[-1].choices[0].finish_reason in {"stop", "length"}


def streamed_calls(stream) -> tuple[list[dict], str | None]:
    calls: dict[int, dict] = {}
    finish = None
    for chunk in stream:
        if not chunk.choices:
            continue
        finish = chunk.choices[0].finish_reason or finish
        for delta in chunk.choices[0].delta.tool_calls or []:
            entry = calls.setdefault(delta.index, {"id": None, "name": None, "arguments": ""})
            entry["id"] = delta.id or entry["id"]
            if delta.function and delta.function.name:
                entry["name"] = delta.function.name
            if delta.function and delta.function.arguments:
                entry["arguments"] += delta.function.arguments
    return [calls[index] for index in sorted(calls)], finish


def test_streaming_tool_calls_add_up_to_the_same_calls_as_a_whole_reply(embedded):
    # OpenAI's defaults for parallel calls; temperature 0 and a seed make the reply repeatable.
    request = dict(messages=ASK, tools=tools(), tool_choice="required", max_tokens=150, seed=3)
    calls, finish = streamed_calls(chat(embedded, stream=True, **request))
    assert finish == "tool_calls" and calls
    for entry in calls:
        assert entry["id"] and entry["name"] in {"get_weather", "square_root"}
        assert isinstance(json.loads(entry["arguments"]), dict)
    whole = chat(embedded, **request).choices[0]
    assert whole.finish_reason == finish
    assert [(c.function.name, c.function.arguments) for c in whole.message.tool_calls] == \
        [(c["name"], c["arguments"]) for c in calls]


# Questions that each need exactly one call, asked with OpenAI's defaults otherwise.
ONE_CALL = ["What's the weather like in Beijing right now?", "How warm is it in Oslo, in fahrenheit?",
            "What is the square root of 81?", "上海现在天气怎么样？"]


@pytest.mark.parametrize("choice", ["required", None])
def test_a_reply_never_repeats_a_call_and_ends_before_max_tokens(embedded, choice):
    """Engine guarantees: no two calls in a reply are the same; a reply of calls stops by itself."""
    for question in ONE_CALL:
        request = dict(messages=[{"role": "user", "content": question}], tools=tools(), max_tokens=300, seed=0)
        if choice:
            request["tool_choice"] = choice
        reply = chat(embedded, **request).choices[0]
        calls = [(c.function.name, json.loads(c.function.arguments)) for c in reply.message.tool_calls or []]
        assert all(a != b for i, a in enumerate(calls) for b in calls[i + 1:]), calls
        assert reply.finish_reason in ({"tool_calls"} if choice else {"tool_calls", "stop"}), (question, reply)


def test_response_format_json_object_gives_a_json_object(embedded):
    reply = chat(embedded, messages=[{"role": "user", "content": "Describe Paris as JSON."}],
                 response_format={"type": "json_object"}, max_tokens=120, seed=0).choices[0]
    if reply.finish_reason == "stop":  # complete: the grammar guarantees an object
        assert isinstance(json.loads(reply.message.content), dict)
    else:  # cut off: still the start of one
        assert reply.message.content.lstrip().startswith("{")


def test_response_format_json_schema_gives_text_that_matches_it(embedded):
    import jsonschema

    schema = {"type": "object", "additionalProperties": False, "required": ["city", "sunny"],
              "properties": {"city": {"type": "string", "maxLength": 20}, "sunny": {"type": "boolean"}}}
    reply = chat(embedded, messages=[{"role": "user", "content": "Is it sunny in Rome?"}], max_tokens=80, seed=0,
                 response_format={"type": "json_schema", "json_schema": {"name": "sky", "schema": schema, "strict": True}})
    assert reply.choices[0].finish_reason == "stop"
    jsonschema.validate(json.loads(reply.choices[0].message.content), schema)


@pytest.mark.parametrize("bad", [
    {"tools": tools(), "tool_choice": {"type": "function", "function": {"name": "missing"}}},
    {"tools": [{"type": "function", "function": {"name": "x", "parameters": {"type": "object", "properties": {"a": {"type": 5}}}}}]},
    {"messages": [{"role": "tool", "tool_call_id": "nope", "content": "x"}]},
    {"response_format": {"type": "grammar"}},
    {"response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "string", "pattern": "(a"}}}},
    {"tools": [{"type": "function", "function": {"name": "x", "strict": True, "parameters": {
        "type": "object", "properties": {"a": {"type": "string"}}}}}]},
])
def test_bad_requests_get_400_and_the_server_keeps_serving(embedded, bad):
    request = {"messages": ASK, **bad}
    with pytest.raises(openai.BadRequestError) as caught:
        chat(embedded, **request)
    assert caught.value.status_code == 400
    assert caught.value.body["message"]
    assert chat(embedded, messages=ASK, max_tokens=2).choices[0].message.content is not None


def test_tool_without_parameters_is_called_with_an_empty_object(embedded):
    now = {"type": "function", "function": {"name": "get_time", "description": "Current time"}}
    reply = chat(embedded, messages=[{"role": "user", "content": "What time is it?"}], tools=[now], tool_choice="required",
                 parallel_tool_calls=False)
    assert json.loads(reply.choices[0].message.tool_calls[0].function.arguments) == {}


def test_malformed_body_gets_400_and_the_server_keeps_serving(embedded):
    import httpx

    for body in (b"{not json", b"[1, 2]", "{\"messages\": \"\xff\"}".encode("latin-1")):
        response = httpx.post(f"{embedded.base_url}/chat/completions", content=body,
                              headers={"Content-Type": "application/json"}, timeout=30)
        assert response.status_code == 400
        assert response.json()["error"]["message"]
    assert chat(embedded, messages=ASK, max_tokens=2).choices[0].message.content is not None


def test_concurrent_requests_wait_their_turn_and_none_is_dropped(embedded):
    from concurrent.futures import ThreadPoolExecutor

    def one(seed):
        return chat(embedded, messages=ASK, max_tokens=4, seed=seed).choices[0].message.content

    with ThreadPoolExecutor(4) as pool:
        replies = list(pool.map(one, range(4)))
    assert len(replies) == 4 and all(reply is not None for reply in replies)


STORY = {"messages": [{"role": "user", "content": "Tell me a long story about a dragon."}],
         "temperature": 0, "seed": 0, "max_tokens": 120}


def test_generation_ends_as_soon_as_the_caller_says_stop(embedded):
    from toolkit.engine.serve import embedded_engine

    engine = embedded_engine()
    full = engine.complete(STORY)["usage"]["completion_tokens"]
    stopped = engine.complete(STORY, should_stop=lambda: True)["usage"]["completion_tokens"]
    assert full > 10
    assert stopped <= 2


def test_a_client_that_hangs_up_does_not_keep_the_model_busy(embedded):
    """The server checks for a closed connection at every token and stops generating."""
    import socket
    import threading

    from toolkit.engine.serve import embedded_engine, make_server

    engine, used = embedded_engine(), []

    class Recording:  # the real engine, noting how many tokens each reply took
        model_name = engine.model_name

        def __getattr__(self, name):  # everything else is the real engine's
            return getattr(engine, name)

        def complete(self, request, should_stop=None):
            reply = engine.complete(request, should_stop=should_stop)
            used.append(reply["usage"]["completion_tokens"])
            return reply

    server = make_server(engine=Recording())
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        body = json.dumps(STORY).encode()
        with socket.create_connection(server.server_address[:2]) as client:
            client.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                           + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        # The next request waits for the abandoned one, then is answered in full.
        from toolkit.client import connect

        backend = connect(f"http://{server.server_address[0]}:{server.server_address[1]}/v1", model=engine.model_name)
        answered = chat(backend, messages=STORY["messages"], max_tokens=120, seed=0)
        assert answered.usage.completion_tokens > 10
        assert used[0] <= 2 and used[1] == answered.usage.completion_tokens
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("model", EMBEDDED_MODELS)
def test_at_temperature_0_the_seed_changes_no_reply(embedded, model):
    """What lets the endpoint compute a greedy request once for every seed a room sends: asked
    directly (no shared replies), two seeds give the same text and the same calls."""
    from toolkit.engine.serve import embedded_engine

    engine = embedded_engine()
    body = {"model": model, "messages": [{"role": "user", "content": "What's the weather in Paris, in celsius?"}],
            "tools": tools(), "temperature": 0, "max_tokens": 48}

    def reply(seed: int) -> tuple:
        message = engine.complete({**body, "seed": seed})["choices"][0]["message"]
        return message["content"], [(c["function"]["name"], c["function"]["arguments"])
                                    for c in message.get("tool_calls") or []]

    assert reply(0) == reply(7) == reply(123456)
