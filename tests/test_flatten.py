"""Flattening nested-object parameters: the flat schema, the flat answer key, and calls put back
in the nested shape so that the same checker scores both shapes."""

import json

import pytest

from toolkit.bench.flatten import (
    Flattening,
    flat_suite,
    flatten_key,
    flatten_schema,
    nest_arguments,
    nest_calls,
    nested_object_cases,
)
from toolkit.bench.scoring import check
from toolkit.bench.suite import load_suite

HOTEL = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "City."},
        "guest": {"type": "object", "description": "The guest the room is booked for",
                  "properties": {"name": {"type": "string", "description": "Full name."},
                                 "phone": {"type": "string"}},
                  "required": ["name"]},
        "extras": {"type": "object", "description": "Optional extras.",
                   "properties": {"breakfast": {"type": "boolean"},
                                  "parking": {"type": "object",
                                              "properties": {"spaces": {"type": "integer"}}}}},
    },
    "required": ["city", "guest"],
}


@pytest.fixture(scope="module")
def suite():
    return load_suite()


def test_objects_become_prefixed_fields_with_paths_back():
    flat = flatten_schema(HOTEL)
    assert list(flat.schema["properties"]) == ["city", "guest_name", "guest_phone", "extras_breakfast",
                                               "extras_parking_spaces"]
    assert flat.paths["guest_name"] == ("guest", "name")
    assert flat.paths["extras_parking_spaces"] == ("extras", "parking", "spaces")
    assert flat.paths["city"] == ("city",)
    assert flat.changed


def test_a_flat_field_is_required_only_when_it_and_every_object_above_it_are():
    flat = flatten_schema(HOTEL)
    assert flat.schema["required"] == ["city", "guest_name"]  # phone is optional, extras too


def test_a_flat_field_keeps_its_parents_description_before_its_own():
    properties = flatten_schema(HOTEL).schema["properties"]
    assert properties["guest_name"]["description"] == "The guest the room is booked for. Full name."
    assert properties["guest_phone"]["description"] == "The guest the room is booked for"
    assert properties["city"]["description"] == "City."


def test_lists_of_objects_and_open_objects_stay_as_they_are():
    schema = {"type": "object", "properties": {
        "passengers": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "point": {"type": "object", "properties": {"x": {"type": "number"}}, "additionalProperties": True},
    }}
    flat = flatten_schema(schema)
    assert flat.schema["properties"] == schema["properties"]
    assert not flat.changed


def test_two_fields_with_the_same_flat_name_are_refused():
    schema = {"type": "object", "properties": {
        "guest_name": {"type": "string"},
        "guest": {"type": "object", "properties": {"name": {"type": "string"}}}}}
    with pytest.raises(ValueError, match="guest_name"):
        flatten_schema(schema)


def test_only_object_schemas_are_flattened():
    with pytest.raises(ValueError):
        flatten_schema({"type": "string"})


def test_the_answer_key_follows_the_fields():
    flat = flatten_schema(HOTEL)
    key = {"city": ["Shanghai", "上海"], "guest": [{"name": ["Li Lei"], "phone": ["13800138000"]}],
           "extras": ["", {"breakfast": [True], "parking": [{"spaces": [1]}]}]}
    assert flatten_key(key, flat) == {
        "city": ["Shanghai", "上海"], "guest_name": ["Li Lei"], "guest_phone": ["13800138000"],
        # the object could be left out, so each of its fields may be
        "extras_breakfast": [True, ""], "extras_parking_spaces": [1, ""]}


def test_an_object_that_must_be_left_out_sends_no_field():
    flat = flatten_schema(HOTEL)
    assert flatten_key({"city": ["Oslo"], "guest": [{"name": ["A"]}], "extras": [""]}, flat) == {
        "city": ["Oslo"], "guest_name": ["A"]}


def test_keys_that_cannot_be_split_into_fields_are_refused():
    flat = flatten_schema(HOTEL)
    with pytest.raises(ValueError, match="2 accepted objects"):
        flatten_key({"guest": [{"name": ["A"]}, {"name": ["B"]}]}, flat)
    with pytest.raises(ValueError, match="does not have"):
        flatten_key({"room": ["double"]}, flat)
    with pytest.raises(ValueError, match="field specs"):
        flatten_key({"guest": ["Li Lei"]}, flat)


def test_flat_arguments_go_back_to_the_nested_shape():
    flat = flatten_schema(HOTEL)
    arguments = {"city": "Shanghai", "guest_name": "Li Lei", "extras_parking_spaces": 2}
    assert nest_arguments(arguments, flat) == {"city": "Shanghai", "guest": {"name": "Li Lei"},
                                               "extras": {"parking": {"spaces": 2}}}


def test_unknown_names_are_kept_for_the_checker_and_a_clash_leaves_the_call_as_sent():
    flat = flatten_schema(HOTEL)
    assert nest_arguments({"city": "Oslo", "floor": 3}, flat) == {"city": "Oslo", "floor": 3}
    clash = {"guest_name": "Li Lei", "guest": {"name": "Li Lei"}}
    assert nest_arguments(clash, flat) == clash


def test_calls_are_nested_only_for_flattened_tools_and_only_when_they_parse():
    flattenings = {"book_hotel": flatten_schema(HOTEL),
                   "get_weather": Flattening({"type": "object", "properties": {}}, {"city": ("city",)})}
    calls = [{"name": "book_hotel", "arguments": json.dumps({"city": "Oslo", "guest_name": "A"})},
             {"name": "book_hotel", "arguments": '{"city": "Oslo",'},
             {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
             {"name": "unknown", "arguments": {"guest_name": "A"}}]
    nested = nest_calls(calls, flattenings)
    assert nested[0]["arguments"] == {"city": "Oslo", "guest": {"name": "A"}}
    assert nested[1:] == calls[1:]


def test_the_nested_cases_with_objects_are_found(suite):
    ids = nested_object_cases(suite)
    assert ids and all(suite.case(i).category == "nested" for i in ids)
    flat, flattenings = flat_suite(suite, ids)
    for case_id in ids:
        assert any(flattenings[call.name].changed for call in suite.case(case_id).expected)
    others = [c.id for c in suite.cases if c.category == "nested" and c.id not in ids]
    for case_id in others:  # lists of objects or of strings only: nothing to flatten
        assert not any(flattenings[call.name].changed for call in suite.case(case_id).expected)


def test_flat_and_nested_scoring_agree_on_the_suite(suite):
    """The flat suite loads (its keys fit its schemas), and a flat call scores the same against
    the flat key as it does against the suite's own key once put back in the nested shape."""
    ids = nested_object_cases(suite)
    flat, flattenings = flat_suite(suite, ids)
    for case_id in ids:
        nested_case, flat_case = suite.case(case_id), flat.case(case_id)
        right = flat_case.reference_calls()
        assert check(flat_case, right).arguments_ok
        assert check(nested_case, nest_calls(right, flattenings)).arguments_ok
        wrong = [{**call, "arguments": {k: v for k, v in call["arguments"].items() if not k.startswith(("guest_", "filters_"))}}
                 for call in right]
        assert not check(flat_case, wrong).arguments_ok
        assert not check(nested_case, nest_calls(wrong, flattenings)).arguments_ok
        for name, tool in flat.tools.items():
            assert tool.parameters == flattenings[tool.name or name].schema


def test_nest_calls_takes_the_tool_calls_a_reply_is_read_into():
    from toolkit.messages import ToolCall

    schema = {"type": "object", "properties": {"room": {"type": "object", "properties": {
        "beds": {"type": "integer"}}, "required": ["beds"]}}, "required": ["room"]}
    flattening = flatten_schema(schema)
    flat_key = next(iter(flattening.schema["properties"]))
    [back] = nest_calls([ToolCall("c1", "book", json.dumps({flat_key: 2}))], {"book": flattening})
    assert isinstance(back, ToolCall) and back.id == "c1" and json.loads(back.arguments) == {"room": {"beds": 2}}
    [broken] = nest_calls([ToolCall("c2", "book", "{not json")], {"book": flattening})
    assert broken.arguments == "{not json"  # left for the checker to report
