import pytest

from toolkit import fake
from toolkit.messages import ToolCall, assistant_from_reply, calls_of, tool_result


def test_scripted_model_replies_in_order_and_records_requests():
    model = fake.ScriptedModel([fake.calls(fake.call("get_weather", {"city": "北京"}, id="call_1")), "Sunny."])
    first = model.chat.completions.create(model="m", messages=[{"role": "user", "content": "北京天气?"}])
    assert first.choices[0].finish_reason == "tool_calls"
    assert calls_of(first.choices[0].message) == [ToolCall("call_1", "get_weather", '{"city": "北京"}')]
    second = model.chat.completions.create(model="m", messages=[])
    assert second.choices[0].message.content == "Sunny." and second.choices[0].finish_reason == "stop"
    assert model.requests[0]["messages"][0]["content"] == "北京天气?"


def test_scripted_model_says_when_the_script_runs_out():
    with pytest.raises(fake.ScriptExhausted, match="request #1"):
        fake.ScriptedModel([]).chat.completions.create(messages=[])


def test_a_reply_can_depend_on_the_request():
    model = fake.ScriptedModel([lambda request: f"you sent {len(request['messages'])} messages"])
    assert model.create(messages=[1, 2]).choices[0].message.content == "you sent 2 messages"


def test_streamed_fake_adds_up_to_the_same_reply():
    reply = fake.calls(fake.call("a", '{"x": "long enough to split"}'), fake.call("b", "{}"))
    chunks = list(fake.ScriptedModel([reply]).create(messages=[], stream=True))
    arguments = {}
    for chunk in chunks:
        for delta in chunk.choices[0].delta.tool_calls or []:
            arguments[delta.index] = arguments.get(delta.index, "") + (delta.function.arguments or "")
    assert arguments == {0: '{"x": "long enough to split"}', 1: "{}"}
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


def test_tool_call_arguments_stay_text_until_parsed():
    broken = ToolCall("c1", "f", "{'city': 'Beijing'")
    with pytest.raises(ValueError, match="not valid JSON"):
        broken.parsed_arguments()
    with pytest.raises(ValueError, match="must be a JSON object"):
        ToolCall("c2", "f", "[1]").parsed_arguments()
    assert ToolCall("c3", "f", "").parsed_arguments() == {}


def test_history_messages_are_spelled_like_openai():
    reply = fake.ScriptedModel([fake.calls(fake.call("f", {"a": 1}, id="c9"))]).create(messages=[])
    message = assistant_from_reply(reply.choices[0].message)
    assert message == {"role": "assistant", "content": None,
                       "tool_calls": [{"id": "c9", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}]}
    assert tool_result("c9", "ok") == {"role": "tool", "tool_call_id": "c9", "content": "ok"}


def test_scripted_model_works_as_a_backend():
    backend = fake.ScriptedModel(["hello"]).backend()
    assert backend.chat(messages=[]).choices[0].message.content == "hello"
    assert backend.client.requests[0]["model"] == "scripted"
