"""Tests for the string protocol: rendering, extraction of <tool> calls, and JSON repair."""

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.protocol import (
    FAILURE_REASONS,
    ExtractionFailure,
    ParsedCall,
    extract_calls,
    render_system_prompt,
    render_tool_result,
)
from toolkit.repair import (
    JSONRepairError,
    parse_json_object,
    repair_json,
    repair_json_with_library,
)

CALCULATOR = {
    "type": "function",
    "function": {
        "name": "calculator",
        "description": "Evaluate an arithmetic expression such as sqrt(16) or 2 + 3.",
        "parameters": {
            "type": "object",
            "properties": {"expression": {"type": "string"}},
            "required": ["expression"],
        },
    },
}
KNOWN = {"get_weather", "calculator", "add"}


def only_call(text, **options):
    result = extract_calls(text, **options)
    assert result.failures == [], result.failures
    assert len(result.calls) == 1, result.calls
    return result.calls[0]


# --------------------------------------------------------------------------- rendering

def test_system_prompt_describes_every_tool_and_parameter(weather_spec):
    # The texts this test looks for in the prompt, set here rather than taken from the shared spec.
    weather = weather_spec["function"]
    weather["description"] = ("Get the current weather for a city. Use it when the user asks about "
                              "weather, temperature or conditions.")
    weather["parameters"]["properties"]["city"]["description"] = "City name in English, e.g. Beijing"
    weather["parameters"]["properties"]["unit"] = {"type": "string", "enum": ["celsius", "fahrenheit"],
                                                   "description": "Temperature unit"}
    prompt = render_system_prompt([weather_spec, CALCULATOR])
    assert "### get_weather" in prompt and "### calculator" in prompt
    assert "Get the current weather for a city." in prompt
    assert "- city (string, required): City name in English, e.g. Beijing" in prompt
    assert '- unit (one of "celsius", "fahrenheit", optional): Temperature unit' in prompt
    assert "- expression (string, required)" in prompt


def test_system_prompt_states_the_calling_convention(weather_spec):
    prompt = render_system_prompt([weather_spec])
    assert '<tool>{"name": "TOOL_NAME", "arguments": {"PARAMETER": "VALUE"}}</tool>' in prompt
    assert "one tag per call" in prompt
    assert "several tags" in prompt
    assert "plain text" in prompt
    assert "<tool_result>" in prompt


def test_the_prompts_own_example_follows_the_protocol(weather_spec):
    # If the example in the prompt did not parse, a model copying it would fail too.
    example = next(line for line in render_system_prompt([weather_spec]).splitlines()
                   if line.startswith("<tool>{"))
    call = only_call(example, repair="none")
    assert call.name == "TOOL_NAME"
    assert call.arguments == {"PARAMETER": "VALUE"}


def test_system_prompt_preamble_default_and_override(weather_spec):
    assert render_system_prompt([weather_spec]).startswith("You are a helpful assistant")
    custom = render_system_prompt([weather_spec], preamble="You answer weather questions.")
    assert custom.startswith("You answer weather questions.")
    assert "You are a helpful assistant" not in custom


def test_system_prompt_renders_nested_arrays_unions_and_bare_functions():
    tool = {  # a bare function dict, without the {"type": "function"} wrapper
        "name": "book_trip",
        "description": "Book a trip.",
        "parameters": {
            "type": "object",
            "properties": {
                "stops": {"type": "array", "items": {"type": "string"}},
                "traveller": {"type": "object", "required": ["name"],
                              "properties": {"name": {"type": "string"}}},
                "budget": {"anyOf": [{"type": "number"}, {"type": "null"}]},
                "note": {"type": ["string", "null"]},
            },
        },
    }
    prompt = render_system_prompt([tool])
    assert "### book_trip" in prompt
    assert "- stops (array of string, optional)" in prompt
    assert "- traveller (object, optional)" in prompt
    assert "  - name (string, required)" in prompt
    assert "- budget (number or null, optional)" in prompt
    assert "- note (string or null, optional)" in prompt


def test_system_prompt_for_a_tool_without_parameters_and_for_no_tools():
    tool = {"type": "function", "function": {"name": "get_time", "description": "Current time."}}
    assert "Parameters: none." in render_system_prompt([tool])
    empty = render_system_prompt([])
    assert "No tools are available" in empty and "<tool>" not in empty


def test_tool_result_is_a_tagged_user_turn_that_is_not_mistaken_for_a_call():
    result = json.dumps({"temp": 25, "condition": "sunny"})
    text = render_tool_result("get_weather", result)
    assert text == f'<tool_result name="get_weather">\n{result}\n</tool_result>'
    assert extract_calls(text).calls == []


# --------------------------------------------------------------------------- extraction: drifts

def test_clean_call_with_chinese_prose_around_it():
    reply = ('北京今天天气怎么样？我来查一下。'
             '<tool>{"name": "get_weather", "arguments": {"city": "Beijing", "unit": "celsius"}}</tool>'
             '稍等。')
    result = extract_calls(reply, known_tools=KNOWN)
    assert result.calls == [ParsedCall(
        "get_weather", {"city": "Beijing", "unit": "celsius"},
        '<tool>{"name": "get_weather", "arguments": {"city": "Beijing", "unit": "celsius"}}</tool>',
        None)]
    assert result.text == "北京今天天气怎么样？我来查一下。\n稍等。"
    assert result.failures == []


def test_several_calls_keep_their_order():
    reply = ('Checking both cities.\n'
             '<tool>{"name": "get_weather", "arguments": {"city": "Beijing"}}</tool>\n'
             '<tool>{"name": "get_weather", "arguments": {"city": "Shanghai"}}</tool>')
    result = extract_calls(reply)
    assert [call.arguments["city"] for call in result.calls] == ["Beijing", "Shanghai"]
    assert result.text == "Checking both cities."


def test_code_fence_around_the_tag_is_not_left_in_the_prose():
    reply = ('Let me calculate.\n```json\n'
             '<tool>{"name": "calculator", "arguments": {"expression": "sqrt(16)"}}</tool>\n'
             '```\nOne moment.')
    result = extract_calls(reply)
    assert result.calls[0].arguments == {"expression": "sqrt(16)"}
    assert result.text == "Let me calculate.\nOne moment."


def test_code_fence_inside_the_tag():
    reply = '<tool>\n```json\n{"name": "calculator", "arguments": {"expression": "2 + 3"}}\n```\n</tool>'
    assert only_call(reply, repair="none").arguments == {"expression": "2 + 3"}


def test_code_fence_instead_of_the_tag():
    reply = ('I will use the calculator.\n```json\n'
             '{"name": "calculator", "arguments": {"expression": "sqrt(16)"}}\n```')
    result = extract_calls(reply)
    assert [(c.name, c.arguments) for c in result.calls] == [("calculator", {"expression": "sqrt(16)"})]
    assert result.text == "I will use the calculator."


def test_a_fenced_block_that_is_not_a_call_stays_prose():
    reply = 'Here is the data:\n```json\n{"temp": 25}\n```'
    result = extract_calls(reply)
    assert result.calls == [] and result.is_plain_answer
    assert result.text == reply


def test_prose_with_its_own_closed_code_block_keeps_it():
    reply = ('Example:\n```python\nprint(1)\n```\n'
             '<tool>{"name": "calculator", "arguments": {"expression": "1+1"}}</tool>')
    assert extract_calls(reply).text == "Example:\n```python\nprint(1)\n```"


def test_a_reply_that_is_only_the_call_object():
    call = only_call('{"name": "get_weather", "arguments": {"city": "Shanghai"}}')
    assert (call.name, call.arguments) == ("get_weather", {"city": "Shanghai"})


def test_missing_closing_tag_at_the_end_of_the_reply():
    call = only_call('<tool>{"name": "get_weather", "arguments": {"city": "Beijing"}}')
    assert call.arguments == {"city": "Beijing"} and call.repaired_by is None


def test_missing_closing_tag_with_prose_after_the_call():
    result = extract_calls('<tool>{"name": "calculator", "arguments": {"expression": "sqrt(16)"}}'
                           ' Then I will add 1.')
    assert result.calls[0].arguments == {"expression": "sqrt(16)"}
    assert result.text == "Then I will add 1."


@pytest.mark.parametrize("repair", ["none", "hand", "library"])
@pytest.mark.parametrize("reply", [
    '<tool>{"name": "calculator", "arguments": {"expression": "sqrt(16)"',  # more arguments may have followed
    '<tool>{"name": "get_weather", "arguments": {"city": "Shangh',           # half a city
    '<tool>{"name": "get_weather", "argu',                                   # arguments never reached
    '<tool>{"name": "get_weather"',                                          # ...which repair would make {}
    '<tool>{"name": "get_weather", "arguments": "{\\"city\\": \\"Bei',        # arguments as a JSON string
    '{"name": "get_weather", "arguments": {"city": "Be',                     # a bare call object
    '```json\n{"name": "get_weather", "arguments": {"city": "Be',           # a fenced one
])
def test_a_call_cut_off_before_its_arguments_end_is_refused_whatever_the_repair(reply, repair):
    result = extract_calls(reply, repair=repair)
    assert not result.calls, result.calls
    assert [failure.reason for failure in result.failures] == ["cut_off"]
    assert "cut off" in result.failures[0].detail


FIRST_CALL = '<tool>{"name": "get_weather", "arguments": {"city": "Beijing"}}</tool>\n'


@pytest.mark.parametrize("repair", ["none", "hand", "library", "both"])
@pytest.mark.parametrize("later", [
    '<tool>{"name": "get_weather", "arguments": {"city": "Shangh',           # cut off, no tag after
    '<tool>{"name": "get_weather", "arguments": {"city": "Shangh</tool>',    # the tag inside an open string
    '<tool>{"name": "get_weather", "arguments": {"city":</tool>',            # a key whose value never came
    '<tool>{"name": "get_weather", "arguments": {"city": "Shanghai",\n</tool>',  # more was to come
    '<tool>{"name": "get_weather", "arguments": {</tool>',                   # arguments begun, none written
    '<tool>{"name": "</tool>',                                               # ...nor the name
    '<tool>{"name": "get_weather"</tool>',                                   # repair would make it {}
])
def test_a_later_call_cut_off_inside_its_json_is_refused_and_the_first_call_kept(later, repair):
    result = extract_calls(FIRST_CALL + later, repair=repair)
    assert [(c.name, c.arguments) for c in result.calls] == [("get_weather", {"city": "Beijing"})]
    assert [failure.reason for failure in result.failures] == ["cut_off"]
    assert "none is made up" in result.failures[0].detail


@pytest.mark.parametrize("reply", [
    '<tool>{"name": "get_weather", "arguments": {"city": "Beijing"}</tool>',  # only the last brace is missing
    '<tool>{"name": "get_weather", "arguments": {"city": "Beijing"}',         # ...and the closing tag too
])
def test_a_finished_call_that_lacks_its_last_brace_is_still_repaired(reply):
    call = only_call(reply)
    assert call.arguments == {"city": "Beijing"} and call.repaired_by == "hand"


def test_a_complete_call_without_arguments_is_a_call_with_none():
    assert only_call('<tool>{"name": "get_time"}</tool>').arguments == {}


def test_a_broken_call_does_not_swallow_the_next_one():
    reply = ('<tool>{"name": "get_weather", "arguments": {"city": "Beijing"}</tool>'
             '<tool>{"name": "add", "arguments": {"a": 1, "b": 2}}</tool>')
    result = extract_calls(reply)
    assert [(c.name, c.arguments) for c in result.calls] == [
        ("get_weather", {"city": "Beijing"}), ("add", {"a": 1, "b": 2})]


def test_whitespace_newlines_and_tag_spelling():
    reply = '< TOOL >\n  {\n    "name": "get_weather",\n    "arguments": {"city": "Beijing"}\n  }\n</ tool >'
    assert only_call(reply).arguments == {"city": "Beijing"}


@pytest.mark.parametrize("key", ["args", "parameters"])
def test_other_names_for_the_arguments_field(key):
    call = only_call(f'<tool>{{"name": "get_weather", "{key}": {{"city": "Beijing"}}}}</tool>')
    assert call.arguments == {"city": "Beijing"}


def test_arguments_given_as_a_json_encoded_string():
    payload = {"name": "get_weather", "arguments": json.dumps({"city": "Beijing"})}
    assert only_call(f"<tool>{json.dumps(payload)}</tool>").arguments == {"city": "Beijing"}


def test_arguments_string_that_needs_repair_reports_the_repair():
    payload = {"name": "get_weather", "arguments": "{'city': 'Beijing',}"}
    call = only_call(f"<tool>{json.dumps(payload)}</tool>")
    assert call.arguments == {"city": "Beijing"} and call.repaired_by == "hand"


def test_openai_shaped_function_object_inside_the_tag():
    payload = {"function": {"name": "calculator", "arguments": '{"expression": "sqrt(16)"}'}}
    call = only_call(f"<tool>{json.dumps(payload)}</tool>")
    assert (call.name, call.arguments) == ("calculator", {"expression": "sqrt(16)"})


def test_a_tool_without_arguments_may_be_called_bare():
    assert only_call('<tool>{"name": "get_time"}</tool>').arguments == {}


def test_closing_tag_inside_a_string_argument_does_not_end_the_call():
    call = only_call('<tool>{"name": "echo", "arguments": {"text": "</tool> <tool>"}}</tool>')
    assert call.arguments == {"text": "</tool> <tool>"}


def test_a_stray_closing_tag_is_not_prose():
    result = extract_calls('<tool>{"name": "add", "arguments": {"a": 1}} oops</tool>')
    assert result.calls[0].arguments == {"a": 1}
    assert result.text == "oops"


# --------------------------------------------------------------------------- extraction: failures

def test_no_call_found_for_a_plain_answer():
    result = extract_calls("北京今天晴，25 度。")
    assert result.calls == []
    assert [f.reason for f in result.failures] == ["no_call_found"]
    assert result.is_plain_answer
    assert result.text == "北京今天晴，25 度。"


def test_json_unrepairable_when_repair_is_off():
    result = extract_calls("<tool>{'name': 'get_weather', 'arguments': {'city': 'Beijing'}}</tool>",
                           repair="none")
    assert [f.reason for f in result.failures] == ["json_unrepairable"]
    assert "repair is turned off" in result.failures[0].detail
    assert not result.is_plain_answer


def test_json_unrepairable_when_the_hand_repair_gives_up():
    result = extract_calls('<tool>{"name": "get_weather", "arguments": {"city": Beijing}}</tool>')
    failure = result.failures[0]
    assert failure.reason == "json_unrepairable"
    assert failure.raw == '<tool>{"name": "get_weather", "arguments": {"city": Beijing}}</tool>'
    assert "hand repair could not fix it" in failure.detail


def test_json_unrepairable_when_the_tag_holds_no_object():
    result = extract_calls('<tool>get_weather(city="Beijing")</tool> Checking.')
    assert [f.reason for f in result.failures] == ["json_unrepairable"]
    assert "no JSON object" in result.failures[0].detail
    assert result.text == "Checking."


def test_unknown_tool_when_the_name_is_not_offered():
    result = extract_calls('<tool>{"name": "get_wether", "arguments": {"city": "Beijing"}}</tool>',
                           known_tools=KNOWN)
    failure = result.failures[0]
    assert failure.reason == "unknown_tool"
    assert "'get_wether'" in failure.detail and "get_weather" in failure.detail


def test_any_name_is_accepted_without_known_tools():
    assert only_call('<tool>{"name": "get_wether", "arguments": {}}</tool>').name == "get_wether"


def test_unknown_tool_when_the_name_is_missing():
    result = extract_calls('<tool>{"arguments": {"city": "Beijing"}}</tool>')
    assert [f.reason for f in result.failures] == ["unknown_tool"]
    assert '"name"' in result.failures[0].detail


@pytest.mark.parametrize("arguments, kind", [
    ('["Beijing"]', "array"), ('"Beijing"', "string"), ("null", "null"), ("42", "number")])
def test_arguments_invalid_when_not_an_object(arguments, kind):
    result = extract_calls(f'<tool>{{"name": "get_weather", "arguments": {arguments}}}</tool>')
    assert [f.reason for f in result.failures] == ["arguments_invalid"]
    assert "get_weather" in result.failures[0].detail


def test_arguments_invalid_names_the_type_it_got():
    result = extract_calls('<tool>{"name": "get_weather", "arguments": ["Beijing"]}</tool>')
    assert "JSON array" in result.failures[0].detail


def test_good_and_bad_calls_in_one_reply_are_both_reported():
    reply = ('<tool>{"name": "get_weather", "arguments": {"city": "Beijing"}}</tool>'
             '<tool>{"name": "send_email", "arguments": {}}</tool>')
    result = extract_calls(reply, known_tools=KNOWN)
    assert [c.name for c in result.calls] == ["get_weather"]
    assert [f.reason for f in result.failures] == ["unknown_tool"]


@pytest.mark.parametrize("reply, known", [
    ("just words", None),
    ("<tool>{'name': 'x', 'arguments': {'a': b}}</tool>", None),
    ('<tool>{"name": "nope", "arguments": {}}</tool>', KNOWN),
    ('<tool>{"name": "add", "arguments": [1, 2]}</tool>', KNOWN),
    ('<tool>{"name": "add", "arguments": "not json at all"}</tool>', KNOWN),
])
def test_every_failure_has_a_known_reason_and_a_one_sentence_detail(reply, known):
    for failure in extract_calls(reply, known_tools=known).failures:
        assert isinstance(failure, ExtractionFailure)
        assert failure.reason in FAILURE_REASONS
        assert failure.detail[0].isupper() and failure.detail.endswith(".")
        assert "\n" not in failure.detail


def test_unknown_repair_strategy_is_rejected():
    with pytest.raises(ValueError, match="repair must be"):
        extract_calls("<tool>{}</tool>", repair="magic")


# --------------------------------------------------------------------------- repair strategies in extraction

BAD_QUOTES = "<tool>{'name': 'get_weather', 'arguments': {'city': 'Shanghai'}}</tool>"
UNQUOTED_VALUE = "<tool>{name: get_weather, arguments: {city: Shanghai}}</tool>"


@pytest.mark.parametrize("repair, expected", [("hand", "hand"), ("library", "library"), ("both", "hand")])
def test_repaired_by_names_the_repair_that_worked(repair, expected):
    call = only_call(BAD_QUOTES, repair=repair)
    assert call.arguments == {"city": "Shanghai"} and call.repaired_by == expected


def test_the_library_fixes_what_the_hand_repair_cannot():
    assert extract_calls(UNQUOTED_VALUE, repair="hand").failures[0].reason == "json_unrepairable"
    for repair in ("library", "both"):
        call = only_call(UNQUOTED_VALUE, repair=repair)
        assert (call.name, call.arguments, call.repaired_by) == (
            "get_weather", {"city": "Shanghai"}, "library")


# --------------------------------------------------------------------------- repair_json (hand)

@pytest.mark.parametrize("broken, expected", [
    ('```json\n{"city": "Beijing"}\n```', {"city": "Beijing"}),
    ('```\n{"city": "Beijing"}', {"city": "Beijing"}),
    ('{"city": "Beijing" // the capital\n}', {"city": "Beijing"}),
    ('{/* where */ "city": "Beijing"}', {"city": "Beijing"}),
    ('{“city”: “Beijing”}', {"city": "Beijing"}),
    ("{'city': 'Beijing'}", {"city": "Beijing"}),
    ("{'text': 'it\\'s \"fine\"'}", {"text": "it's \"fine\""}),
    ('{city: "Beijing", unit_2: "celsius"}', {"city": "Beijing", "unit_2": "celsius"}),
    ('{"a": 1, "b": [1, 2,],}', {"a": 1, "b": [1, 2]}),
    ('{"a": 1, // last one\n}', {"a": 1}),
    ('{"name": "calculator", "arguments": {"expression": "sqrt(16)"', 
     {"name": "calculator", "arguments": {"expression": "sqrt(16)"}}),
    ('{"a": [1, {"b": 2,', {"a": [1, {"b": 2}]}),
    ('{"city": "Beiji', {"city": "Beiji"}),
    ("{'ok': True, 'missing': None, 'done': False}", {"ok": True, "missing": None, "done": False}),
])
def test_hand_repair_fixes_each_drift(broken, expected):
    with pytest.raises(json.JSONDecodeError):
        json.loads(broken)  # each case really is broken
    assert json.loads(repair_json(broken)) == expected


@pytest.mark.parametrize("valid", [
    '{"url": "http://example.com/a//b", "note": "/* not a comment */"}',
    '{"text": "a, } and ,]", "quote": "it\'s"}',
    '{"quote": "他说“你好”", "key": "name: value"}',
    '{"t": "True or None"}',
])
def test_hand_repair_leaves_string_contents_alone(valid):
    assert json.loads(repair_json(valid + " // trailing comment")) == json.loads(valid)


@pytest.mark.parametrize("hopeless", ["", "hello", "{city: Beijing}", '{"a": }', "{'a' 'b'}"])
def test_hand_repair_raises_when_it_cannot_help(hopeless):
    with pytest.raises(JSONRepairError, match="hand repair could not fix it"):
        repair_json(hopeless)


# --------------------------------------------------------------------------- repair_json_with_library

def test_library_repair_fixes_unquoted_values_and_missing_commas():
    assert json.loads(repair_json_with_library("{city: Beijing}")) == {"city": "Beijing"}
    fixed = repair_json_with_library('{"city": "Beijing" "unit": "celsius"}')
    assert json.loads(fixed) == {"city": "Beijing", "unit": "celsius"}


def test_library_repair_finds_the_object_inside_prose():
    fixed = repair_json_with_library('Sure! {"expression": "sqrt(16)",} hope that helps')
    assert json.loads(fixed) == {"expression": "sqrt(16)"}


@pytest.mark.parametrize("nothing", ["", "hello there", '""'])
def test_library_repair_raises_when_it_finds_nothing(nothing):
    with pytest.raises(JSONRepairError, match="found no JSON"):
        repair_json_with_library(nothing)


def test_library_repair_raises_for_a_non_object_when_an_object_is_expected():
    with pytest.raises(JSONRepairError, match="JSON array"):
        repair_json_with_library("[1, 2,")
    assert json.loads(repair_json_with_library("[1, 2,", expect_object=False)) == [1, 2]


# --------------------------------------------------------------------------- parse_json_object

def test_parse_json_object_reports_which_repair_was_used():
    assert parse_json_object('{"a": 1}') == ({"a": 1}, None)
    assert parse_json_object("{'a': 1}", repair="hand") == ({"a": 1}, "hand")
    assert parse_json_object("{'a': 1}", repair="library") == ({"a": 1}, "library")
    assert parse_json_object("{a: b}", repair="both") == ({"a": "b"}, "library")


def test_parse_json_object_without_repair_raises_with_the_json_error():
    with pytest.raises(JSONRepairError, match=r"Expecting .* line 1 column \d+, and repair is turned off"):
        parse_json_object("{'a': 1}", repair="none")


def test_parse_json_object_rejects_valid_json_that_is_not_an_object():
    # A valid array is not "broken", so no repair is tried and the message says what it is.
    with pytest.raises(JSONRepairError, match="JSON array, not an object"):
        parse_json_object("[1, 2]", repair="both")


def test_parse_json_object_both_gives_the_last_problem_when_everything_fails():
    with pytest.raises(JSONRepairError, match="json_repair library found no JSON"):
        parse_json_object("no json here", repair="both")


# --------------------------------------------------------------------------- properties

json_scalars = (st.none() | st.booleans() | st.integers()
                | st.floats(allow_nan=False, allow_infinity=False) | st.text())
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4),
    max_leaves=12)
argument_dicts = st.dictionaries(st.text(), json_values, max_size=5)
tool_names = st.from_regex(r"[a-z_]{1,20}", fullmatch=True)
# Prose is anything that does not itself open a tag (in any spelling extract_calls accepts).
prose = st.text().filter(lambda text: not re.search(r"<\s*tool\s*>", text, re.IGNORECASE))


@settings(max_examples=300)
@given(name=tool_names, arguments=argument_dicts, before=prose, after=prose,
       ensure_ascii=st.booleans())
def test_property_a_rendered_call_in_any_prose_is_extracted_exactly(
        name, arguments, before, after, ensure_ascii):
    payload = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=ensure_ascii)
    result = extract_calls(f"{before}<tool>{payload}</tool>{after}", repair="none")
    assert [(c.name, c.arguments) for c in result.calls] == [(name, arguments)]
    assert result.failures == []
    assert result.calls[0].repaired_by is None


@settings(max_examples=300)
@given(value=json_values, ensure_ascii=st.booleans())
def test_property_b_hand_repair_leaves_valid_json_meaning_unchanged(value, ensure_ascii):
    assert json.loads(repair_json(json.dumps(value, ensure_ascii=ensure_ascii))) == value


simple_strings = st.text(
    st.characters(categories=["L", "N", "P", "Zs"]), max_size=12)
simple_dicts = st.dictionaries(simple_strings, simple_strings, min_size=1, max_size=5)


def single_quoted(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


@given(obj=simple_dicts)
def test_property_c_trailing_comma_is_repaired(obj):
    broken = json.dumps(obj, ensure_ascii=False)[:-1] + ",}"
    assert json.loads(repair_json(broken)) == obj


@given(obj=simple_dicts, trailing_comma=st.booleans())
def test_property_c_single_quotes_are_repaired(obj, trailing_comma):
    items = ", ".join(f"{single_quoted(k)}: {single_quoted(v)}" for k, v in obj.items())
    broken = "{" + items + ("," if trailing_comma else "") + "}"
    assert json.loads(repair_json(broken)) == obj


# The library guesses where strings end by looking at the text around each quote; in
# json_repair 0.64 that guess goes wrong for escaped quotes and backslashes inside values
# ({"": "\\\"",} and {"": "\"0", ",": "",} come back changed), so this property keeps to
# letters, digits and spaces. Every repair is a guess, the library's too.
plain_words = st.text(st.characters(categories=["L", "N", "Zs"]), max_size=12)


@given(obj=st.dictionaries(plain_words, plain_words, min_size=1, max_size=5))
def test_property_c_the_library_repairs_the_same_inputs(obj):
    broken = json.dumps(obj, ensure_ascii=False)[:-1] + ",}"
    assert json.loads(repair_json_with_library(broken)) == obj
