"""The ``<tool>`` protocol's grammar: what it allows, and that the model's text under it parses."""

import jsonschema
import openai
import pytest
from specs import weather_spec

from toolkit.client import connect_embedded
from toolkit.lab_error import LabError
from toolkit.protocol import extract_calls
from toolkit.protocol_grammar import generate_call, protocol_gbnf

SQUARE_ROOT = {"type": "function", "function": {
    "name": "square_root", "description": "Square root of a number.",
    "parameters": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}}}
NOW = {"type": "function", "function": {"name": "current_time", "description": "The time now."}}


def weather_and_root() -> list[dict]:
    """get_weather and square_root, with a fresh copy of the weather spec."""
    return [weather_spec(), SQUARE_ROOT]


def rules_of(gbnf: str) -> dict[str, str]:
    return dict(line.split(" ::= ", 1) for line in gbnf.splitlines())


def test_the_whole_reply_is_one_tagged_call():
    rules = rules_of(protocol_gbnf(weather_and_root()))
    assert rules["root"] == '"<tool>" call "</tool>"'
    assert rules["call"] == "call-0 | call-1"  # one alternative per tool, nothing else


def test_names_are_fixed_literals_and_values_follow_the_schema():
    weather = weather_spec()
    weather["function"]["parameters"]["properties"]["unit"] = {"type": "string", "enum": ["celsius", "fahrenheit"]}
    rules = rules_of(protocol_gbnf([weather, SQUARE_ROOT]))
    assert rules["call-0-name"] == '"\\"get_weather\\""'
    assert rules["call-1-name"] == '"\\"square_root\\""'
    assert rules["call-0-arguments-unit"] == '"\\"celsius\\"" | "\\"fahrenheit\\""'
    assert rules["call-1-arguments-x-kv"].endswith("number")  # x can only be a number
    # A misspelt or invented name appears nowhere in the grammar, so it cannot be generated.
    assert "get_wether" not in protocol_gbnf([weather, SQUARE_ROOT])


def test_a_tool_without_parameters_takes_an_empty_object():
    gbnf = protocol_gbnf([NOW])
    assert '"\\"current_time\\""' in gbnf
    assert rules_of(gbnf)["call-arguments"] == '"{" space  "}" space'


def test_no_tools_is_refused_with_a_reason():
    with pytest.raises(ValueError, match="at least one tool"):
        protocol_gbnf([])


@pytest.mark.embedded
@pytest.mark.parametrize("question, specs", [
    ("Write a haiku about autumn.", weather_and_root()),  # nothing in the prompt asks for a call
    ("上海今天天气怎么样？", [SQUARE_ROOT]),  # only a tool that does not fit is offered
])
def test_the_models_text_under_the_grammar_is_one_call_that_fits_the_schema(question, specs):
    # No system prompt describes the tools or the format: the grammar alone shapes the reply.
    reply = generate_call([{"role": "user", "content": question}], specs, max_tokens=96)
    assert reply.finish_reason == "stop", reply.text  # 96 tokens are room enough for these calls
    offered = {spec["function"]["name"]: spec["function"]["parameters"] for spec in specs}
    result = extract_calls(reply.text, set(offered), repair="none")
    assert not result.failures and len(result.calls) == 1 and not result.text, reply.text
    call = result.calls[0]
    jsonschema.validate(call.arguments, offered[call.name])


@pytest.mark.embedded
def test_a_call_cut_off_by_max_tokens_says_so_and_does_not_parse():
    reply = generate_call([{"role": "user", "content": "Weather in Beijing?"}], weather_and_root(), max_tokens=4)
    assert reply.finish_reason == "length"
    assert not extract_calls(reply.text, {"get_weather", "square_root"}, repair="none").calls


@pytest.mark.embedded
def test_the_grammar_travels_in_the_request_and_waits_its_turn_at_the_endpoint():
    backend = connect_embedded(capture=True, api="chat")
    specs = weather_and_root()
    generate_call([{"role": "user", "content": "Weather in Beijing?"}], specs, max_tokens=40, backend=backend)
    sent = backend.last_exchange().request
    assert sent["grammar"] == protocol_gbnf(specs)
    assert "tools" not in sent  # the tools are only in the grammar (and whatever the messages say)


@pytest.mark.embedded
@pytest.mark.parametrize("gbnf", [
    'root ::= "yes',                # a literal that never closes
    'root = "yes"',                 # "=" where GBNF has "::="
    '{"type": "object"}',           # a JSON Schema is not a grammar (response_format takes those)
    'root ::= answer',              # names a rule that is never defined
    'start ::= "yes"',              # no root
    'root ::= root "x" | "x"',      # left recursion
    'root ::= [a-',                 # an unclosed character class
])
def test_a_grammar_llama_cpp_cannot_parse_is_a_400_and_the_endpoint_keeps_serving(embedded, gbnf):
    ask = [{"role": "user", "content": "Yes or no?"}]
    with pytest.raises(openai.BadRequestError) as caught:
        embedded.client.chat.completions.create(model=embedded.model, messages=ask, max_tokens=4,
                                                extra_body={"grammar": gbnf})
    assert caught.value.body["param"] == "grammar"
    assert "GBNF" in caught.value.body["message"]
    # The endpoint is still there, and a grammar that parses still shapes the reply.
    reply = embedded.client.chat.completions.create(model=embedded.model, messages=ask, max_tokens=4,
                                                    temperature=0, seed=0,
                                                    extra_body={"grammar": 'root ::= "yes" | "no"'})
    assert reply.choices[0].message.content in ("yes", "no")


@pytest.mark.embedded
def test_a_refused_grammar_request_is_a_lab_error_with_the_endpoints_reason(embedded):
    # A request the endpoint refuses (here: a grammar with tools that may be called) comes back
    # as the lab's error with the endpoint's reason, not as a crash.
    with pytest.raises(LabError, match="grammar"):
        embedded.chat(messages=[{"role": "user", "content": "hi"}], tools=[weather_spec()],
                      extra_body={"grammar": protocol_gbnf([weather_spec()])})
