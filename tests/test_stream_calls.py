"""Starting tools while a reply streams: results by id and in call order, failures as text,
and tools that really start before the stream has ended (checked with events, not clocks)."""

import threading

import pytest

from toolkit import fake
from toolkit.demo_tools import get_weather
from toolkit.stream_calls import StreamOrderError, run_streamed_calls
from toolkit.tools import tool


def chunk(delta=None, finish=None, usage=None) -> dict:
    """One chunk as a dict; ``delta=None`` makes the usage-only chunk that can end a stream."""
    body = {"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 0, "model": "test",
            "choices": [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]}
    if usage:
        body["usage"] = usage
    return body


def head(index, id, name) -> dict:
    return chunk({"tool_calls": [{"index": index, "id": id, "type": "function",
                                  "function": {"name": name, "arguments": ""}}]})


def more(index, fragment) -> dict:
    return chunk({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]})


def scripted_stream(*calls, content=None):
    model = fake.ScriptedModel([fake.calls(*calls, content=content)])
    return model.chat.completions.create(model="scripted", messages=[], stream=True)


def city_call(city, id):
    return fake.call("get_weather", {"city": city}, id=id)


def test_results_come_back_in_call_order_under_their_ids_whatever_order_the_tools_finish_in():
    release_first = threading.Event()

    @tool(name="get_weather")
    def held_weather(city: str) -> dict:
        """Weather, except that the first city waits until the last one is done."""
        if city == "Beijing":
            assert release_first.wait(5)
        answer = get_weather(city)
        if city == "Tokyo":
            release_first.set()
        return answer

    reply = run_streamed_calls(scripted_stream(city_call("Beijing", "call_9"), city_call("上海", "call_2"),
                                               city_call("Tokyo", "call_5")), [held_weather])
    assert [call.id for call in reply.calls] == ["call_9", "call_2", "call_5"]
    messages = reply.result_messages()
    assert [m["tool_call_id"] for m in messages] == ["call_9", "call_2", "call_5"]
    assert [m["role"] for m in messages] == ["tool"] * 3
    assert ['"Beijing"' in messages[0]["content"], '"Shanghai"' in messages[1]["content"],
            '"Tokyo"' in messages[2]["content"]] == [True, True, True]
    finished = [m.index for m in reply.timeline if m.event == "tool finished"]
    assert finished.index(2) < finished.index(0)  # Beijing finished after Tokyo...
    assert reply.assistant_message()["tool_calls"][0]["id"] == "call_9"  # ...and is still first


def test_a_tool_starts_while_the_rest_of_the_reply_is_still_streaming():
    first_started = threading.Event()
    seen_before_end = []

    @tool(name="get_weather")
    def noting_weather(city: str) -> dict:
        """Weather; says when the first call's tool has started."""
        if city == "Beijing":
            first_started.set()
        return get_weather(city)

    def stream():
        yield chunk({"role": "assistant", "content": ""})
        yield head(0, "call_a", "get_weather")
        yield more(0, '{"city": "Beijing"}')
        yield head(1, "call_b", "get_weather")  # call 0 is complete from here on
        seen_before_end.append(first_started.wait(5))
        yield more(1, '{"city": "Paris"}')
        yield chunk({}, "tool_calls")

    reply = run_streamed_calls(stream(), [noting_weather])
    assert seen_before_end == [True]
    events = [(m.event, m.index) for m in reply.timeline]
    assert events.index(("tool started", 0)) < events.index(("stream ended", None))
    assert events[0] == ("first chunk", None) and events[-1] == ("all results ready", None)
    for index in (0, 1):
        assert (events.index(("call complete", index)) < events.index(("tool started", index))
                < events.index(("tool finished", index)))
    assert reply.wait_after_stream is not None and reply.wait_after_stream >= 0


def test_after_stream_starts_no_tool_before_the_stream_has_ended():
    reply = run_streamed_calls(scripted_stream(city_call("Beijing", "call_1"), city_call("Paris", "call_2")),
                               [get_weather], start="after_stream")
    events = [(m.event, m.index) for m in reply.timeline]
    end = events.index(("stream ended", None))
    assert all(events.index(("tool started", i)) > end for i in (0, 1))
    assert [m["tool_call_id"] for m in reply.result_messages()] == ["call_1", "call_2"]


def test_a_tool_that_raises_becomes_error_text_and_the_other_calls_still_answer():
    @tool
    def flaky_lookup(city: str) -> dict:
        """Fails for one city."""
        if city == "Atlantis":
            raise ConnectionError("weather service at /srv/weather/api unreachable")
        return get_weather(city)

    reply = run_streamed_calls(scripted_stream(fake.call("flaky_lookup", {"city": "Atlantis"}, id="call_x"),
                                               fake.call("flaky_lookup", {"city": "Tokyo"}, id="call_y")),
                               [flaky_lookup])
    failed, fine = reply.result_messages()
    assert failed["tool_call_id"] == "call_x" and failed["content"].startswith("Error: ")
    assert "/srv/weather" not in failed["content"]  # sanitised: no paths for the model
    assert fine["tool_call_id"] == "call_y" and '"Tokyo"' in fine["content"]
    assert reply.executions[0].error == "tool_error" and "ConnectionError" in reply.executions[0].error_detail


def test_malformed_streamed_arguments_are_not_run_and_say_what_to_fix():
    ran = []

    @tool(name="get_weather")
    def counted_weather(city: str) -> dict:
        """Weather, counting runs."""
        ran.append(city)
        return get_weather(city)

    stream = [head(0, "call_bad", "get_weather"), more(0, '{"city": '), more(0, "Beijing}"),
              head(1, "call_ok", "get_weather"), more(1, '{"city": "Paris"}'), chunk({}, "tool_calls")]
    reply = run_streamed_calls(stream, [counted_weather])
    bad, ok = reply.result_messages()
    assert bad["tool_call_id"] == "call_bad" and bad["content"].startswith("Error: invalid arguments")
    assert ok["tool_call_id"] == "call_ok" and ran == ["Paris"]
    assert reply.calls[0].arguments == '{"city": Beijing}'  # kept exactly as streamed


@pytest.mark.parametrize("ending", [[chunk({}, "length")], []], ids=["finish_reason length", "no finish chunk"])
def test_a_stream_that_ends_in_the_middle_of_a_call_still_answers_every_call(ending):
    stream = [head(0, "call_1", "get_weather"), more(0, '{"city": "Tokyo"}'),
              head(1, "call_2", "get_weather"), more(1, '{"city": "Be')] + ending
    reply = run_streamed_calls(stream, [get_weather])
    first, cut = reply.result_messages()
    assert first["tool_call_id"] == "call_1" and '"Tokyo"' in first["content"]
    assert cut["tool_call_id"] == "call_2" and cut["content"].startswith("Error: ")
    assert reply.finish_reason == ("length" if ending else None)
    assert reply.timeline[-1].event == "all results ready"


def test_a_call_to_a_tool_not_offered_is_answered_with_error_text():
    reply = run_streamed_calls(scripted_stream(fake.call("get_wether", {"city": "Oslo"}, id="call_t")),
                               [get_weather])
    (message,) = reply.result_messages()
    assert message["tool_call_id"] == "call_t" and message["content"].startswith("Error: ")
    assert "get_weather" in message["content"]  # it names the tools there are


def test_text_usage_and_no_calls():
    stream = [chunk({"role": "assistant", "content": ""}), chunk({"content": "Sunny "}),
              chunk({"content": "today."}), chunk({}, "stop"),
              chunk(None, usage={"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12})]
    reply = run_streamed_calls(stream, [get_weather])
    assert reply.content == "Sunny today." and reply.calls == [] and reply.result_messages() == []
    assert reply.finish_reason == "stop" and reply.usage["total_tokens"] == 12
    assert reply.assistant_message() == {"role": "assistant", "content": "Sunny today."}


def test_interleaved_calls_are_refused_when_starting_early_and_assembled_after_the_stream():
    def stream():
        return [head(0, "call_1", "get_weather"), head(1, "call_2", "get_weather"),
                more(1, '{"city": "Paris"}'), more(0, '{"city": "Tokyo"}'), chunk({}, "tool_calls")]

    with pytest.raises(StreamOrderError, match="after_stream"):
        run_streamed_calls(stream(), [get_weather])
    reply = run_streamed_calls(stream(), [get_weather], start="after_stream")
    assert [c.arguments for c in reply.calls] == ['{"city": "Tokyo"}', '{"city": "Paris"}']
    assert all(m["content"].startswith('{"city"') for m in reply.result_messages())


def test_an_error_from_the_stream_itself_propagates():
    def broken():
        yield head(0, "call_1", "get_weather")
        yield more(0, '{"city": "Tokyo"}')
        yield head(1, "call_2", "get_weather")
        raise ConnectionError("connection dropped")

    with pytest.raises(ConnectionError):
        run_streamed_calls(broken(), [get_weather])


def test_settings_are_checked():
    with pytest.raises(ValueError, match="start"):
        run_streamed_calls([], [get_weather], start="early")
    with pytest.raises(ValueError, match="max_workers"):
        run_streamed_calls([], [get_weather], max_workers=0)


def test_the_timeline_prints_for_people():
    reply = run_streamed_calls(scripted_stream(city_call("Beijing", "call_1")), [get_weather])
    text, chart = reply.format_timeline(), reply.format_chart()
    assert "call 0 complete" in text and "all results ready" in text
    assert chart.splitlines()[1].startswith("stream") and "call 0 tool" in chart
