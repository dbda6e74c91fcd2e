"""Call ids: random without a seed; derived from the prompt and seed with one, so a seeded
conversation, whose next prompt shows each result under its call's id, repeats run after run."""
import re

import pytest

from toolkit.engine.parser import CallStreamer, new_call_id

ID = re.compile(r"^call_[0-9a-f]{24}$")


def test_ids_are_random_without_a_basis_and_repeat_with_one():
    assert new_call_id() != new_call_id()
    assert new_call_id("prompt|0") == new_call_id("prompt|0") != new_call_id("prompt|1")
    assert new_call_id("prompt|0", 0) != new_call_id("prompt|0", 1)  # two calls of one reply
    assert all(ID.match(new_call_id(basis)) for basis in (None, "prompt|0"))


def test_the_stream_gives_the_same_ids_as_the_whole_reply_would():
    text = '<tool_call>\n{"name": "a", "arguments": {}}\n</tool_call>\n<tool_call>\n{"name": "b", "arguments": {}}\n</tool_call>'
    streamer = CallStreamer("basis")
    streamer.feed(text)
    assert streamer.ids == [new_call_id("basis", 0), new_call_id("basis", 1)]


@pytest.mark.embedded
def test_a_seeded_request_gets_the_same_ids_and_an_unseeded_one_new_ones():
    from toolkit.engine import Engine

    engine = Engine()
    tool = {"type": "function", "function": {"name": "get_weather", "description": "Weather in a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
    body = {"messages": [{"role": "user", "content": "Weather in Paris?"}], "tools": [tool],
            "tool_choice": "required", "temperature": 0, "max_tokens": 40}
    ids = lambda extra: [c["id"] for c in engine.complete({**body, **extra})["choices"][0]["message"]["tool_calls"]]  # noqa: E731
    assert ids({"seed": 3}) == ids({"seed": 3}) != ids({"seed": 4})
    assert ids({}) != ids({})
