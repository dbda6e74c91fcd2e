"""The engine's template, request checks and parser, without running the model."""

import json

import pytest

from toolkit.engine.parser import CallStreamer, parse_reply
from toolkit.engine.request import RequestError, parse_request
from toolkit.engine.template import render_prompt

from specs import weather_spec

TIME = {"type": "function", "function": {"name": "get_time", "description": "Current time"}}
ASK = [{"role": "user", "content": "Weather in Beijing?"}]


def test_prompt_keeps_the_callers_system_prompt_and_adds_tools_to_it():
    prompt = render_prompt([{"role": "system", "content": "Be brief."}, *ASK], [weather_spec()])
    assert prompt.startswith("<|im_start|>system\nBe brief.\n\n# Tools")
    assert '"name": "get_weather"' in prompt
    assert prompt.endswith("<|im_start|>assistant\n")
    assert "SmolLM" not in prompt  # no default system prompt injected


def test_prompt_without_system_or_tools_starts_with_the_user_turn():
    assert render_prompt(ASK, None).startswith("<|im_start|>user\nWeather in Beijing?")


def test_prompt_shows_calls_and_their_results_to_the_model():
    history = ASK + [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Beijing"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "Sunny, 25 C"},
    ]
    prompt = render_prompt(history, [weather_spec()])
    assert '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Beijing"}}\n</tool_call>' in prompt
    assert '<|im_start|>tool\n<tool_response id="call_1" name="get_weather">\nSunny, 25 C\n</tool_response>' in prompt


def test_tool_choice_modes():
    assert parse_request({"messages": ASK}).mode == "none"
    assert parse_request({"messages": ASK, "tools": [weather_spec()]}).mode == "auto"
    assert parse_request({"messages": ASK, "tools": [weather_spec()], "tool_choice": "none"}).mode == "none"
    assert parse_request({"messages": ASK, "tools": [weather_spec()], "tool_choice": "required"}).mode == "required"
    named = parse_request({"messages": ASK, "tools": [weather_spec(), TIME],
                           "tool_choice": {"type": "function", "function": {"name": "get_time"}}})
    assert named.mode == "required" and [t["function"]["name"] for t in named.tools] == ["get_time"]
    assert named.parallel is False
    assert parse_request({"messages": ASK, "tools": [weather_spec()], "parallel_tool_calls": False}).parallel is False


def test_tool_without_parameters_means_no_parameters():
    tool = parse_request({"messages": ASK, "tools": [TIME]}).tools[0]
    assert tool["function"]["parameters"] == {"type": "object", "properties": {}}


@pytest.mark.parametrize("request_body, param", [
    ({"messages": ASK, "tools": [weather_spec()], "tool_choice": {"type": "function", "function": {"name": "nope"}}}, "tool_choice"),
    ({"messages": ASK, "tool_choice": "required"}, "tool_choice"),
    ({"messages": ASK, "tools": [{"type": "function", "function": {"name": "x", "parameters": {"type": "object", "properties": {"a": {"type": "strin"}}}}}]}, "tools[0].function.parameters"),
    ({"messages": ASK, "tools": [{"type": "function", "function": {"name": "x", "parameters": {"type": "array"}}}]}, "tools[0].function.parameters"),
    ({"messages": ASK, "tools": [{"type": "function", "function": {"name": "bad name!"}}]}, "tools[0].function.name"),
    ({"messages": ASK, "tools": [weather_spec(), weather_spec()]}, "tools[1].function.name"),
    ({"messages": ASK + [{"role": "tool", "tool_call_id": "call_x", "content": "?"}]}, "messages[1].tool_call_id"),
    ({"messages": []}, "messages"),
    ({"messages": [{"role": "robot", "content": "hi"}]}, "messages[0].role"),
    ({"messages": ASK, "temperature": 3}, "temperature"),
    ({"messages": ASK, "max_tokens": 0}, "max_tokens"),
    ({"messages": ASK, "seed": "x"}, "seed"),
    ({"messages": ASK, "grammar": ""}, "grammar"),
    ({"messages": ASK, "grammar": {"root": "yes"}}, "grammar"),
    ({"messages": ASK, "grammar": 'root ::= "yes"', "tools": [weather_spec()]}, "grammar"),
    ({"messages": ASK, "grammar": 'root ::= "yes"', "response_format": {"type": "json_object"}}, "grammar"),
])
def test_requests_the_engine_cannot_honour_are_rejected_with_the_field(request_body, param):
    with pytest.raises(RequestError) as caught:
        parse_request(request_body)
    assert caught.value.param == param
    assert str(caught.value)


def test_parse_reply_text_and_calls():
    assert parse_reply("Hello there") == ("Hello there", [])
    text = ('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Beijing"}}\n</tool_call>\n'
            '<tool_call>\n{"name": "get_weather", "arguments": {"city": "上海"}}\n</tool_call>')
    content, calls = parse_reply(text)
    assert content is None
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [("get_weather", {"city": "Beijing"}), ("get_weather", {"city": "上海"})]


def test_parse_reply_keeps_a_call_cut_off_by_max_tokens_with_its_partial_arguments():
    content, calls = parse_reply('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Bei')
    assert content is None
    assert [(c.name, c.arguments) for c in calls] == [("get_weather", '{"city": "Bei')]


def test_parse_reply_keeps_whole_calls_before_one_cut_off():
    text = ('<tool_call>\n{"name": "a", "arguments": {"x": 1}}\n</tool_call>\n'
            '<tool_call>\n{"name": "b", "arguments": {"y": [1, ')
    content, calls = parse_reply(text)
    assert [(c.name, c.arguments) for c in calls] == [("a", '{"x": 1}'), ("b", '{"y": [1,')]


def test_parse_reply_leaves_text_as_content_when_even_the_name_is_cut_off():
    content, calls = parse_reply('<tool_call>\n{"name": "get_wea')
    assert calls == [] and content.startswith("<tool_call>")


def test_streamed_fragments_add_up_to_the_arguments_whatever_the_split():
    text = ('<tool_call>\n{"name": "a", "arguments": {"x": "}{", "y": [1, 2]}}\n</tool_call>\n'
            '<tool_call>\n{"name": "b", "arguments": {}}\n</tool_call>')
    _, expected = parse_reply(text)
    for size in (1, 2, 3, 7, len(text)):
        streamer, deltas = CallStreamer(), []
        for start in range(0, len(text), size):
            deltas += streamer.feed(text[start:start + size])
        heads = [d for d in deltas if "id" in d]
        assert [h["function"]["name"] for h in heads] == ["a", "b"]
        assert len(set(streamer.ids)) == 2
        for index, call in enumerate(expected):
            joined = "".join(d["function"]["arguments"] for d in deltas if d["index"] == index)
            assert joined == call.arguments


STRICT_OK = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": False}


def test_response_format_json_object_and_json_schema_become_the_schema_text_must_match():
    assert parse_request({"messages": ASK}).response_format is None
    assert parse_request({"messages": ASK, "response_format": {"type": "text"}}).response_format is None
    assert parse_request({"messages": ASK, "response_format": {"type": "json_object"}}).response_format == {"type": "object"}
    spec = {"type": "json_schema", "json_schema": {"name": "place", "schema": STRICT_OK, "strict": True}}
    assert parse_request({"messages": ASK, "response_format": spec}).response_format == STRICT_OK


@pytest.mark.parametrize("response_format, words", [
    ({"type": "xml"}, "cannot honour 'xml'"),
    ("json", "must be 'text'"),
    ({"type": "json_schema", "json_schema": {"schema": STRICT_OK}}, "needs a 'name'"),
    ({"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": 7}}}, "not a valid JSON Schema"),
    ({"type": "json_schema", "json_schema": {"name": "x", "strict": True,
                                             "schema": {"type": "object", "properties": {"a": {"type": "string"}}}}},
     "additionalProperties"),
])
def test_a_response_format_the_engine_cannot_honour_is_a_400(response_format, words):
    with pytest.raises(RequestError) as caught:
        parse_request({"messages": ASK, "response_format": response_format})
    assert caught.value.param == "response_format" and words in str(caught.value)


def test_strict_functions_must_keep_openais_strict_rules():
    loose = {"type": "function", "function": {**weather_spec()["function"], "strict": True}}
    with pytest.raises(RequestError, match="additionalProperties"):
        parse_request({"messages": ASK, "tools": [loose]})
    optional = {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
                "required": ["city"], "additionalProperties": False}
    with pytest.raises(RequestError, match=r"missing \['unit'\]"):
        parse_request({"messages": ASK, "tools": [{"type": "function", "function": {
            "name": "w", "parameters": optional, "strict": True}}]})
    nested = {"type": "object", "additionalProperties": False, "required": ["guest"], "properties": {
        "guest": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}}
    with pytest.raises(RequestError, match="properties.guest"):
        parse_request({"messages": ASK, "tools": [{"type": "function", "function": {
            "name": "book", "parameters": nested, "strict": True}}]})
    fine = {"type": "function", "function": {"name": "w", "parameters": STRICT_OK, "strict": True}}
    assert parse_request({"messages": ASK, "tools": [fine]}).tools[0]["function"]["name"] == "w"


def test_a_grammar_is_kept_for_a_text_reply_even_with_tools_that_may_not_be_called():
    assert parse_request({"messages": ASK}).grammar is None
    assert parse_request({"messages": ASK, "grammar": 'root ::= "yes"'}).grammar == 'root ::= "yes"'
    held = parse_request({"messages": ASK, "grammar": 'root ::= "no"', "tools": [weather_spec()], "tool_choice": "none"})
    assert (held.mode, held.grammar) == ("none", 'root ::= "no"')


def test_an_enum_under_a_list_of_types_keeps_its_values_in_the_grammar():
    """OpenAI's strict mode writes an optional enum as {"type": ["string", "null"], "enum": [...,
    null]}; llama.cpp's converter would make that "any string or null" and lose the enum."""
    from toolkit.engine.grammar import call_rules, for_converter

    unit = {"type": ["string", "null"], "enum": ["celsius", "fahrenheit", None]}
    tool = {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"unit": unit, "city": {"type": ["string", "null"]}}}}}
    rules, _ = call_rules([tool])
    unit_rule = next(line for line in rules.splitlines() if line.startswith("call-arguments-unit ::="))
    assert unit_rule == 'call-arguments-unit ::= "\\"celsius\\"" | "\\"fahrenheit\\"" | "null"'
    city_rule = next(line for line in rules.splitlines() if line.startswith("call-arguments-city ::="))
    assert city_rule == "call-arguments-city ::= string | null"  # no enum: the types stay
    assert for_converter(unit) == {"enum": ["celsius", "fahrenheit", None]}
    assert unit["type"] == ["string", "null"]  # the tool's own schema is not changed
