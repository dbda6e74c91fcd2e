"""Constraints beyond enum: what the engine's grammar enforces, and what only the tool-side
validator catches (and how it tells the model)."""

from typing import Annotated

import pytest
from pydantic import Field

from toolkit import fake
from toolkit.engine.grammar import build_call_gbnf, call_rules, for_converter, grammar_pattern, integer_range
from toolkit.loop import run_turn
from toolkit.schema import without_constraints
from toolkit.tools import tool


@tool
def set_heating(room: str, celsius: Annotated[int, Field(ge=10, le=30)]) -> str:
    """Set a room's heating.

    Args:
        room: The room.
        celsius: Target temperature in degrees Celsius.
    """
    return f"{room} set to {celsius} C"


def one_tool(schema: dict) -> list[dict]:
    return [{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"x": schema}, "required": ["x"]}}}]


def rule_for_x(schema: dict) -> str:
    rules, _ = call_rules(one_tool(schema))
    return next(line for line in rules.splitlines() if line.startswith("call-arguments-x ::=")
                or line.startswith("call-arguments-x-kv ::="))


def call_text(value: str) -> str:
    return '{"name": "f", "arguments": {"x": %s}}\n</tool_call>' % value


# --- what the grammar is built from (no model needed) --------------------------------------------


def test_a_small_integer_range_becomes_an_enum_of_its_values():
    assert integer_range({"type": "integer", "minimum": 10, "maximum": 30}) == list(range(10, 31))
    assert integer_range({"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 4}) == [1, 2, 3]
    rule = rule_for_x({"type": "integer", "minimum": 1, "maximum": 3})
    assert rule == 'call-arguments-x ::= "1" | "2" | "3"'


@pytest.mark.parametrize("schema", [
    {"type": "integer", "minimum": 1},                      # one-sided
    {"type": "integer", "minimum": 0, "maximum": 100_000},  # too many values to list
    {"type": "number", "minimum": 10, "maximum": 30},       # 20.5 is allowed: no list of values
])
def test_ranges_the_grammar_cannot_list_are_left_to_the_validator(schema):
    assert integer_range(schema) is None
    assert rule_for_x(schema).endswith(("integer", "number"))  # any number of that type gets through


def test_patterns_are_kept_only_where_the_grammar_enforces_them_exactly():
    assert grammar_pattern(r"^\d{5}$") == "^[0-9]{5}$"         # \d rewritten: llama.cpp has no \d
    assert grammar_pattern(r"^[A-Z]{2}-[\d]+$") == "^[A-Z]{2}-[0-9]+$"
    for pattern in (r"\d{5}", r"^a.b$", r"^\w+$", r"^[^0-9]+$", r"^(?=a)b$", r'^a"b$', r"^\.$"):
        assert grammar_pattern(pattern) is None, pattern
    assert "pattern" not in for_converter({"type": "string", "pattern": r"\d{5}"})
    # A pattern the grammar cannot take no longer stops the grammar being built: any string.
    assert rule_for_x({"type": "string", "pattern": r"^\w+$"}).endswith("string")


def test_the_tools_own_schema_is_not_changed():
    schema = {"type": "integer", "minimum": 1, "maximum": 3}
    for_converter(schema)
    assert schema == {"type": "integer", "minimum": 1, "maximum": 3}


def test_without_constraints_removes_the_keywords_but_not_parameters_of_those_names():
    schema = {"type": "object", "properties": {
        "pattern": {"type": "string", "pattern": "^a$"},
        "n": {"type": "integer", "minimum": 1, "maximum": 3},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 5}, "minItems": 2}}}
    assert without_constraints(schema) == {"type": "object", "properties": {
        "pattern": {"type": "string"}, "n": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string"}}}}


# --- what llama.cpp's own grammar sampler lets through (the vocabulary, no generation) -----------


@pytest.fixture(scope="module")
def llm():
    from toolkit.engine.model import Engine

    return Engine().llm.raw


@pytest.mark.embedded
@pytest.mark.parametrize("schema, allowed, refused", [
    ({"type": "integer", "minimum": 10, "maximum": 30}, ["10", "25", "30"], ["40", "9", "-5", "250"]),
    ({"type": "string", "pattern": r"^\d{5}$"}, ['"94103"'], ['"9410"', '"941030"', '"ABCDE"']),
    ({"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 3},
     ['["a", "b"]', '["a", "b", "c"]'], ['["a"]', '[]', '["a", "b", "c", "d"]']),
])
def test_a_constrained_decode_cannot_write_a_value_the_grammar_enforces_against(llm, schema, allowed, refused):
    from toolkit.engine.grammar import gbnf_accepts

    gbnf = build_call_gbnf(one_tool(schema))
    for value in allowed:
        assert gbnf_accepts(gbnf, call_text(value), llm), value
    for value in refused:
        assert not gbnf_accepts(gbnf, call_text(value), llm), value


@pytest.mark.embedded
def test_a_number_range_is_not_enforced_by_the_grammar(llm):
    from toolkit.engine.grammar import gbnf_accepts

    gbnf = build_call_gbnf(one_tool({"type": "number", "minimum": 10, "maximum": 30}))
    assert gbnf_accepts(gbnf, call_text("45"), llm)  # only the validator can refuse it


# --- the validator: what the grammar lets through, the tool refuses, and says why -----------------


def test_an_out_of_range_argument_is_refused_and_the_model_is_told_the_limit():
    model = fake.ScriptedModel([fake.calls(fake.call("set_heating", {"room": "bedroom", "celsius": 40}, id="c1")),
                                fake.calls(fake.call("set_heating", {"room": "bedroom", "celsius": 30}, id="c2")),
                                "Set to 30 C, the highest it goes."])
    result = run_turn(model.backend(), [{"role": "user", "content": "40 degrees in the bedroom"}], [set_heating])
    first, second = result.tool_executions
    assert first.error == "invalid_arguments" and first.value is None
    assert "celsius" in first.result_text and "less than or equal to 30" in first.result_text
    assert "got 40" in first.result_text
    sent_back = [m for m in model.requests[1]["messages"] if m["role"] == "tool"]
    assert sent_back == [{"role": "tool", "tool_call_id": "c1", "content": first.result_text}]
    assert second.ok and second.value == "bedroom set to 30 C"
