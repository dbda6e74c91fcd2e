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

from specs import weather_spec

ASK = [{"role": "user", "content": "Weather in Oslo and Lima?"}]


def body(city: str) -> str:
    return '{"name": "get_weather", "arguments": {"city": "%s"}}\n</tool_call>' % city


class ScriptedLlama:
    """Enough of ``llama_cpp.Llama`` for the writer: one scripted text per generation step."""

    def __init__(self, steps: list[str]):
        self.steps = list(steps)
        self.prompts: list[list[int]] = []
        self.stops: list[list[str] | None] = []
        self.read: list[str] = []  # what each step's reader took of its text
        self.raw = self

    def tokenize(self, data: bytes, add_bos=False, special=True) -> list[int]:
        return list(data.decode("utf-8"))  # a character a token keeps counting simple

    def token_eos(self) -> int:
        return -1

    def detokenize(self, tokens: list) -> bytes:
        return "".join(tokens).encode("utf-8")

    def create_completion(self, prompt, max_tokens, grammar=None, stream=True, stop=None,
                          stopping_criteria=None, **_):
        self.prompts.append(prompt)
        self.stops.append(stop)
        text = self.steps.pop(0)
        self.read.append("")
        for index, character in enumerate(text[:max_tokens]):
            # As llama-cpp-python does: the criteria see the tokens evaluated so far, after the
            # next one was sampled; when they say stop, that sampled token is never sent.
            if index and stopping_criteria and stopping_criteria(list(prompt) + list(text[:index]), None):
                yield {"choices": [{"text": "", "finish_reason": "stop"}]}
                return
            self.read[-1] += character
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
    # The markup ban reads a real vocabulary; markup.py has tests of its own (below).
    monkeypatch.setattr(reply_module.ReplyWriter, "markup_ban", lambda self, prompt_length: None)
    return script


def write(steps, budget=500, thresholds=None, **request):
    llm = ScriptedLlama(steps)
    writer = ReplyWriter(llm, thresholds) if thresholds else ReplyWriter(llm)
    pieces = list(writer.write(parse_request({"messages": ASK, "tools": [weather_spec()], **request}), [0], budget))
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


# --- After tool results ---------------------------------------------------------------------

def answered(*cities: str, user: str = "Weather in Oslo and Lima?") -> list[dict]:
    """A turn in which get_weather was already called for ``cities`` and each call has a result."""
    calls = [{"id": f"call_{i}", "type": "function",
              "function": {"name": "get_weather", "arguments": json.dumps({"city": city})}} for i, city in enumerate(cities)]
    results = [{"role": "tool", "tool_call_id": f"call_{i}", "content": '{"temperature": 21}'} for i in range(len(cities))]
    return [{"role": "user", "content": user}, {"role": "assistant", "content": None, "tool_calls": calls}, *results]


def test_after_results_the_call_or_text_decision_uses_its_own_threshold(decisions):
    from toolkit.engine.decide import Thresholds

    decisions["call"] = False
    write(["It is 21 degrees."], thresholds=Thresholds(call=-1.2, another_call=-2.0, after_results=-0.5),
          messages=answered("Oslo"))
    assert decisions["thresholds"] == [("call", -0.5)]


def test_a_first_call_that_repeats_an_answered_one_becomes_the_answer_under_auto(decisions):
    pieces, calls, llm = write([body("Oslo"), "It is 21 degrees in Oslo."], messages=answered("Oslo"))
    assert calls == []
    assert "".join(p.text for p in pieces if p.kind == "content") == "It is 21 degrees in Oslo."
    assert pieces[-1].kind == "content" and pieces[-1].finish == "stop"
    # the answer is written from the prompt itself, not after the dropped call
    assert llm.prompts[-1] == [0]
    # nothing of the dropped call reached the client, but its tokens count in usage
    assert not any(p.kind == "calls" and p.text for p in pieces)
    assert sum(p.tokens for p in pieces) == len("<tool_call>\n") + len(body("Oslo")) + len("It is 21 degrees in Oslo.")


def test_spacing_and_key_order_do_not_hide_an_answered_repeat(decisions):
    again = '{"name": "get_weather", "arguments": {"city":"Oslo" }}\n</tool_call>'
    _, calls, _ = write([again, "21 degrees."], messages=answered("Oslo"))
    assert calls == []


def test_a_new_call_after_results_is_made(decisions):
    decisions["another"] = [False]
    _, calls, _ = write([body("Lima")], messages=answered("Oslo"))
    assert [json.loads(c.arguments)["city"] for c in calls] == ["Lima"]


def test_a_later_call_that_repeats_an_answered_one_is_dropped(decisions):
    decisions["another"] = [True]
    _, calls, _ = write([body("Lima"), body("Oslo")], messages=answered("Oslo"))
    assert [json.loads(c.arguments)["city"] for c in calls] == ["Lima"]


def test_a_call_answered_before_the_last_user_message_may_be_asked_again(decisions):
    decisions["another"] = [False]
    messages = answered("Oslo") + [{"role": "assistant", "content": "21 degrees."},
                                   {"role": "user", "content": "And now, in Oslo?"}]
    _, calls, _ = write([body("Oslo")], messages=messages)
    assert [json.loads(c.arguments)["city"] for c in calls] == ["Oslo"]


def test_under_required_an_answered_repeat_is_still_a_call(decisions):
    decisions["another"] = [False]
    _, calls, _ = write([body("Oslo")], messages=answered("Oslo"), tool_choice="required")
    assert [c.name for c in calls] == ["get_weather"]


def test_the_first_call_is_held_back_while_it_may_repeat_an_answered_one(decisions):
    decisions["another"] = [False]
    pieces, calls, _ = write([body("Lima")], messages=answered("Oslo"))
    texts = [p.text for p in pieces if p.kind == "calls" and p.text]
    assert len(calls) == 1 and texts[0] == "<tool_call>\n" and texts[1] == body("Lima")[0]
    # held back: every piece of the call follows the decision, none streamed before it was complete
    assert "".join(texts) == "<tool_call>\n" + body("Lima")


def test_the_answer_after_a_dropped_repeat_has_the_whole_of_max_tokens(decisions):
    budget = len("<tool_call>\n") + len(body("Oslo"))
    pieces, calls, _ = write([body("Oslo"), "x" * budget], budget=budget, messages=answered("Oslo"))
    assert calls == [] and "".join(p.text for p in pieces if p.kind == "content") == "x" * budget
    assert pieces[-1].finish == "stop"


def test_answered_calls_are_those_with_results_since_the_last_user_message():
    from toolkit.engine.decide import answered_calls, ends_with_results

    messages = answered("Oslo", "Lima")
    assert answered_calls(messages) == {("get_weather", '{"city": "Oslo"}'), ("get_weather", '{"city": "Lima"}')}
    assert ends_with_results(messages)
    without_result = messages[:-1]  # Lima's result is missing
    assert answered_calls(without_result) == {("get_weather", '{"city": "Oslo"}')}
    assert answered_calls(messages + [{"role": "user", "content": "thanks"}]) == set()
    assert not ends_with_results(messages + [{"role": "user", "content": "thanks"}])


# --- The markup ban ---------------------------------------------------------------------------

class Vocabulary:
    """A tiny vocabulary in llama_cpp.Llama's shape: a token's text by its id."""

    TEXTS = ["<|im_end|>", "<", "tool_", "call>", "The", " answer", " 3", " <", " 5", "<tool_call>",
             "</", "|im_start|>", "<|im_start|>", "tool", "_response", "3<", "<t", "ool_", ">", "<tool>", "_resp", "onse",
             "<tool_Call>", "_Call>", "<TOOL_CALL>", "<|IM_END|>"]

    def n_vocab(self):
        return len(self.TEXTS)

    def token_eos(self):
        return 0

    def detokenize(self, tokens, special=True):
        return "".join(self.TEXTS[t] for t in tokens).encode()

    def ids(self, *texts):
        return [self.TEXTS.index(t) for t in texts]


def allowed_after(ban, vocabulary, *texts):
    import numpy as np

    prompt = vocabulary.ids("The")
    scores = ban.for_prompt(len(prompt))(np.array(prompt + vocabulary.ids(*texts)), np.zeros(vocabulary.n_vocab()))
    return {vocabulary.TEXTS[t] for t in range(vocabulary.n_vocab()) if scores[t] > -np.inf}


def test_tokens_that_hold_markup_are_never_allowed_and_the_end_token_always_is():
    from toolkit.engine.markup import MarkupBan

    vocabulary = Vocabulary()
    allowed = allowed_after(MarkupBan(vocabulary), vocabulary, "The", " answer")
    assert "<|im_end|>" in allowed
    assert not allowed & {"<tool_call>", "<|im_start|>"}
    assert {"<", " <", "tool_", "</", "<tool>"} <= allowed  # nothing begun yet; <tool> is not the template's


def test_a_marker_cannot_be_completed_across_tokens():
    from toolkit.engine.markup import MarkupBan

    vocabulary = Vocabulary()
    ban = MarkupBan(vocabulary)
    assert "tool_" in allowed_after(ban, vocabulary, "<")  # "<tool_" is not yet markup
    assert "call>" not in allowed_after(ban, vocabulary, "<", "tool_")
    assert "call>" not in allowed_after(ban, vocabulary, "<t", "ool_")
    assert "|im_start|>" not in allowed_after(ban, vocabulary, " 3", " <")
    assert "onse" not in allowed_after(ban, vocabulary, "</", "tool", "_resp")
    assert "_response" not in allowed_after(ban, vocabulary, "<", "tool")
    assert {">", "_resp"} <= allowed_after(ban, vocabulary, "<", "tool")  # "<tool>" and "<tool_resp" stay possible
    assert {" 5", "The", "<|im_end|>"} <= allowed_after(ban, vocabulary, " 3", " <")  # "3 < 5" can be written
    assert "_response" in allowed_after(ban, vocabulary, "tool")  # "tool_response" alone is a word, not markup
    assert "call>" in allowed_after(ban, vocabulary, "The")  # only the reply's own text counts


def test_markup_in_other_capitals_is_banned_too():
    from toolkit.engine.markup import MarkupBan

    vocabulary = Vocabulary()
    ban = MarkupBan(vocabulary)
    assert not allowed_after(ban, vocabulary, "The") & {"<tool_Call>", "<TOOL_CALL>", "<|IM_END|>"}
    assert "_Call>" not in allowed_after(ban, vocabulary, "<", "tool")
    assert "_Call>" in allowed_after(ban, vocabulary, "tool")  # no "<" before it: not markup


def test_the_prompt_does_not_count_as_reply_text():
    import numpy as np

    from toolkit.engine.markup import MarkupBan

    vocabulary = Vocabulary()
    ban = MarkupBan(vocabulary).for_prompt(2)
    scores = ban(np.array(vocabulary.ids("<", "tool_")), np.zeros(vocabulary.n_vocab()))  # the prompt ends "<tool_"
    assert scores[vocabulary.ids("call>")[0]] == 0


def test_after_results_the_answer_is_written_from_the_models_answer_prompt(decisions):
    llm = ScriptedLlama([body("Oslo"), "21 degrees."])
    writer = ReplyWriter(llm, answer_prompt=lambda messages: f"NOTE:{len(messages)}")
    pieces = list(writer.write(parse_request({"messages": answered("Oslo"), "tools": [weather_spec()]}), [0], 500))
    assert "".join(p.text for p in pieces if p.kind == "content") == "21 degrees."
    assert llm.prompts[-1] == list("NOTE:3")
    assert llm.stops[-1] == ["\n\n"]  # one short answer: a blank line ends it
    # before any result, text comes from the ordinary prompt
    decisions["call"] = False
    llm = ScriptedLlama(["Hello."])
    writer = ReplyWriter(llm, answer_prompt=lambda messages: pytest.fail("no results yet"))
    list(writer.write(parse_request({"messages": ASK, "tools": [weather_spec()]}), [0], 500))
    assert llm.prompts == [[0]]


def test_the_answer_prompt_folds_results_into_the_question_and_leaves_calls_and_tools_out():
    from toolkit.engine.template import render_answer_prompt

    messages = [{"role": "system", "content": "Be brief."}] + answered("Oslo", "Lima")
    messages[-1]["content"] = "Error: the weather service is down."
    messages[-2]["content"] = '{"temperature": 21, "found": true}'
    prompt = render_answer_prompt(messages)
    assert prompt.startswith("<|im_start|>system\nBe brief.\n\nReply to the user with what the tool said.<|im_end|>")
    assert ("Weather in Oslo and Lima?\n\n(The get weather tool says: temperature: 21; found: yes. "
            "The get weather tool says: Error: the weather service is down.)<|im_end|>") in prompt
    assert "<tool_call>" not in prompt and "<tool_response" not in prompt and "# Tools" not in prompt
    assert prompt.endswith("<|im_start|>assistant\n")


def test_a_call_that_differs_only_by_a_default_value_is_a_repeat(decisions):
    weather = weather_spec()
    weather["function"]["parameters"]["properties"]["unit"] = {
        "type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"}  # the default this test is about
    same = '{"name": "get_weather", "arguments": {"city": "Oslo", "unit": "celsius"}}\n</tool_call>'
    other = '{"name": "get_weather", "arguments": {"city": "Oslo", "unit": "fahrenheit"}}\n</tool_call>'
    _, calls, _ = write([same, "21 degrees."], messages=answered("Oslo"), tools=[weather])
    assert calls == []  # the tool runs {"city": "Oslo"} and this call the same way
    decisions["another"] = [False]
    _, calls, _ = write([other], messages=answered("Oslo"), tools=[weather])
    assert [json.loads(c.arguments)["unit"] for c in calls] == ["fahrenheit"]


# -- the closing tag: written by the engine once the call's JSON is whole --------------------

def test_the_model_is_stopped_at_the_end_of_the_calls_json_and_the_engine_closes_it(decisions):
    # Whatever the model would write after the JSON is never read: the grammar allows only
    # white space and the closing tag there, so the engine writes the tag itself.
    pieces, calls, llm = write(['{"name": "get_weather", "arguments": {"city": "Oslo"}}  \n</tool_call>'],
                               parallel_tool_calls=False)
    assert llm.read == ['{"name": "get_weather", "arguments": {"city": "Oslo"}}']
    assert "".join(p.text for p in pieces).endswith('"Oslo"}}\n</tool_call>')
    assert [c.name for c in calls] == ["get_weather"] and pieces[-1].finish == "stop"
    assert sum(p.tokens for p in pieces) == len("<tool_call>\n" + body("Oslo"))  # usage as if written


def test_a_brace_inside_a_string_does_not_end_the_call(decisions):
    pieces, calls, llm = write([body("Oslo}}")], parallel_tool_calls=False)
    assert json.loads(calls[0].arguments) == {"city": "Oslo}}"}
    assert llm.read == [body("Oslo}}").removesuffix("\n</tool_call>")]


def test_a_closing_tag_that_max_tokens_cuts_is_cut_where_the_models_would_be(decisions):
    whole = "<tool_call>\n" + body("Oslo")
    for room in (5, 1):  # the JSON fits, and 5 or 1 characters of "\n</tool_call>" after it
        budget = len(whole) - len("\n</tool_call>") + room
        pieces, _, _ = write([body("Oslo")], budget=budget, parallel_tool_calls=False)
        assert "".join(p.text for p in pieces) == whole[:budget]
        assert pieces[-1].finish == "length" and sum(p.tokens for p in pieces) == budget


def test_a_json_ending_in_a_newline_gets_the_tag_without_another():
    # (a model's token can be "}\n": the tag then follows it as the model's own would)
    writer = ReplyWriter(ScriptedLlama([]))
    assert [p.text for p in writer._close_call('{"name": "a", "arguments": {}}\n', 100)] == ["</tool_call>", ""]
    assert [p.text for p in writer._close_call('{"name": "a", "arguments": {}}', 100)] == ["\n</tool_call>", ""]
