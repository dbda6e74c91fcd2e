"""How the engine writes a reply in steps, checked with a scripted stand-in for llama.cpp.

The stand-in plays back the text of each step a character a token, and the two decisions
(call or text, another call or stop) are scripted too, so every rule of ``reply.py`` can be
tested exactly: repeats dropped, later calls held back, max_tokens, the finish reasons.
"""

import json

import pytest

from toolkit.engine import reply as reply_module
from toolkit.engine.parser import parse_reply
from toolkit.engine.reply import ReplyWriter
from toolkit.engine.request import parse_request

WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "Weather of a city",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
ASK = [{"role": "user", "content": "Weather in Oslo and Lima?"}]


def body(city: str) -> str:
    return '{"name": "get_weather", "arguments": {"city": "%s"}}\n</tool_call>' % city


class ScriptedLlama:
    """Enough of ``llama_cpp.Llama`` for the writer: one scripted text per generation step."""

    def __init__(self, steps: list[str]):
        self.steps = list(steps)
        self.prompts: list[list[int]] = []
        self.raw = self

    def tokenize(self, data: bytes, add_bos=False, special=True) -> list[int]:
        return list(data.decode("utf-8"))  # a character a token keeps counting simple

    def token_eos(self) -> int:
        return -1

    def create_completion(self, prompt, max_tokens, grammar=None, stream=True, **_):
        self.prompts.append(prompt)
        text = self.steps.pop(0)
        for character in text[:max_tokens]:
            yield {"choices": [{"text": character, "finish_reason": None}]}
        yield {"choices": [{"text": "", "finish_reason": "length" if len(text) > max_tokens else "stop"}]}


@pytest.fixture
def decisions(monkeypatch):
    """Script the two decisions: whether to open a call, and then a yes/no per later call."""
    script = {"call": True, "another": [], "thresholds": []}

    def opens_call(llm, prompt, opener, threshold):
        script["thresholds"].append(("call", threshold))
        return script["call"], -1.0

    def opens_another_call(llm, so_far, another, end, threshold):
        script["thresholds"].append(("another", threshold))
        return script["another"].pop(0), 0.5

    monkeypatch.setattr(reply_module.decide, "opens_call", opens_call)
    monkeypatch.setattr(reply_module.decide, "opens_another_call", opens_another_call)
    monkeypatch.setattr(reply_module, "grammar_for", lambda tools, mode: None)
    monkeypatch.setattr(reply_module, "response_grammar", lambda schema: None)
    return script


def write(steps, budget=500, thresholds=None, **request):
    llm = ScriptedLlama(steps)
    writer = ReplyWriter(llm, thresholds) if thresholds else ReplyWriter(llm)
    pieces = list(writer.write(parse_request({"messages": ASK, "tools": [WEATHER], **request}), [0], budget))
    calls_text = "".join(p.text for p in pieces if p.kind == "calls")
    return pieces, parse_reply(calls_text)[1], llm


def test_each_decision_uses_the_thresholds_of_the_writers_model(decisions):
    from toolkit.engine.decide import Thresholds

    decisions["another"] = [True, False]
    write([body("Oslo"), body("Lima")], thresholds=Thresholds(call=-1.2, another_call=-2.0), tool_choice="auto")
    assert decisions["thresholds"] == [("call", -1.2), ("another", -2.0), ("another", -2.0)]
    decisions["thresholds"].clear()
    decisions["another"] = [False]
    write([body("Oslo")], tool_choice="auto")
    assert decisions["thresholds"] == [("call", -8.5), ("another", 0.0)]  # the base model's defaults


def test_a_repeated_call_is_dropped_and_ends_the_reply(decisions):
    decisions["another"] = [True, True]
    pieces, calls, _ = write([body("Oslo"), body("Lima"), body("Oslo")], tool_choice="required")
    assert [json.loads(c.arguments)["city"] for c in calls] == ["Oslo", "Lima"]
    assert pieces[-1].finish == "stop"


def test_json_equal_arguments_count_as_a_repeat_whatever_the_spacing(decisions):
    decisions["another"] = [True]
    again = '{"name": "get_weather", "arguments": {"city":"Oslo" }}\n</tool_call>'
    _, calls, _ = write([body("Oslo"), again], tool_choice="required")
    assert len(calls) == 1


def test_the_model_decides_no_more_calls(decisions):
    decisions["another"] = [False]
    pieces, calls, llm = write([body("Oslo"), body("Lima")], tool_choice="required")
    assert len(calls) == 1 and llm.steps == [body("Lima")]  # the second step never ran
    assert pieces[-1].finish == "stop"


def test_parallel_calls_off_means_one_call_and_no_decision(decisions):
    decisions["another"] = []  # popping from it would fail the test
    _, calls, _ = write([body("Oslo")], tool_choice="required", parallel_tool_calls=False)
    assert len(calls) == 1


def test_auto_gives_text_when_the_model_would_not_open_a_call(decisions):
    decisions["call"] = False
    pieces, calls, _ = write(["It is sunny."])
    assert calls == [] and "".join(p.text for p in pieces) == "It is sunny."
    assert {p.kind for p in pieces} == {"content"} and pieces[-1].finish == "stop"


def test_auto_opens_a_call_when_the_model_would(decisions):
    decisions["another"] = [False]
    _, calls, llm = write([body("Oslo")])
    assert [c.name for c in calls] == ["get_weather"]
    assert "".join(llm.prompts[0][1:]) == "<tool_call>\n"  # the engine wrote the opening itself


def test_none_never_asks_about_calls(decisions, monkeypatch):
    monkeypatch.setattr(reply_module.decide, "opens_call", lambda *a: pytest.fail("asked under 'none'"))
    pieces, calls, _ = write(["Hello"], tool_choice="none")
    assert calls == [] and pieces[-1].kind == "content"


def test_a_call_cut_off_by_max_tokens_is_kept_with_finish_length(decisions):
    pieces, calls, _ = write([body("Oslo")], budget=len("<tool_call>\n") + 40, tool_choice="required")
    assert pieces[-1].finish == "length"
    assert calls[0].name == "get_weather" and not calls[0].arguments.endswith("}")
    assert sum(p.tokens for p in pieces) == len("<tool_call>\n") + 40


def test_a_repeat_cut_off_midway_is_dropped_not_kept(decisions):
    decisions["another"] = [True]
    first = len("<tool_call>\n") + len(body("Oslo"))
    pieces, calls, _ = write([body("Oslo"), body("Oslo")], budget=first + 1 + len("<tool_call>\n") + 20,
                             tool_choice="required")
    assert len(calls) == 1 and pieces[-1].finish == "length"


def test_a_later_call_arrives_whole_while_the_first_streams(decisions):
    decisions["another"] = [True, False]
    pieces, calls, _ = write([body("Oslo"), body("Lima")], tool_choice="required")
    texts = [p.text for p in pieces if p.kind == "calls" and p.text]
    assert len(calls) == 2
    # the first call came a character at a time; the second one in the same pieces, but only
    # after the decision that it is new (the writer yields it once it is complete)
    assert texts[0] == "<tool_call>\n" and texts[1] == "{"


def test_usage_counts_every_token_of_the_reply(decisions):
    decisions["another"] = [True, False]
    pieces, _, _ = write([body("Oslo"), body("Lima")], tool_choice="required")
    expected = 2 * len("<tool_call>\n") + len(body("Oslo")) + len(body("Lima")) + len("\n")
    assert sum(p.tokens for p in pieces) == expected


def test_a_later_call_must_carry_something_the_user_asked_for_that_earlier_calls_left_out(decisions):
    decisions["another"] = [True, True]
    _, calls, _ = write([body("Oslo"), body("Paris"), body("Lima")], tool_choice="required")
    assert [json.loads(c.arguments)["city"] for c in calls] == ["Oslo"]  # Paris was never asked about


def test_the_first_call_is_kept_even_if_the_user_never_wrote_its_values(decisions):
    decisions["another"] = [False]
    _, calls, _ = write([body("Paris")], tool_choice="required")
    assert [json.loads(c.arguments)["city"] for c in calls] == ["Paris"]


def test_usage_counts_the_tokens_of_a_dropped_repeat_too(decisions):
    decisions["another"] = [True]
    pieces, calls, _ = write([body("Oslo"), body("Oslo")], tool_choice="required")
    assert len(calls) == 1
    assert sum(p.tokens for p in pieces) == 2 * (len("<tool_call>\n") + len(body("Oslo"))) + len("\n")


def test_a_number_counts_as_asked_for_only_when_the_user_wrote_it_whole():
    from toolkit.engine.decide import adds_something_asked

    assert adds_something_asked({"x": 2}, [{"x": 81}], "Square roots of 81 and 2?")
    assert adds_something_asked({"x": 2.5}, [{"x": 81}], "Square roots of 81 and 2.5?")
    assert not adds_something_asked({"x": 1.0}, [{"city": "Oslo"}], "144的平方根是多少？")
    assert not adds_something_asked({"x": 81}, [{"x": 81.0}], "Square root of 81?")
    assert adds_something_asked({"city": "上海"}, [{"city": "北京"}], "北京和上海的天气")
