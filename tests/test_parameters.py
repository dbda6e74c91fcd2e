"""Arguments judged one parameter at a time, grouped by the kind of value each takes."""
import json
from pathlib import Path

import pandas as pd
import pytest

from toolkit.bench.parameters import format_parameter_table, kind_of, parameter_outcomes, parameter_table
from toolkit.bench.suite import load_suite

MINI = load_suite(Path(__file__).parent / "data" / "mini_suite.json")
FAHRENHEIT = MINI.case("weather-fahrenheit")  # city Beijing, unit fahrenheit (an enum)


def weather(**arguments):
    return {"name": "get_weather", "arguments": json.dumps(arguments)}


@pytest.mark.parametrize("schema, kind", [
    ({"type": "string", "enum": ["a", "b"]}, "enum"), ({"type": "string"}, "free text"),
    ({"type": "integer"}, "number"), ({"type": "number"}, "number"), ({"type": "boolean"}, "boolean"),
    ({"type": "object"}, "nested"), ({"type": "array"}, "nested"), ({"type": ["string", "null"]}, "free text"),
    ({}, "other"),
])
def test_kinds(schema, kind):
    assert kind_of(schema) == kind


def test_the_enum_parameter_is_judged_even_when_another_argument_fails():
    rows = parameter_outcomes(FAHRENHEIT, [weather(city="Peking", unit="fahrenheit")])
    assert {(r["parameter"], r["kind"], r["right"]) for r in rows} == {
        ("city", "free text", False), ("unit", "enum", True)}


def test_a_missing_or_mistyped_value_is_wrong_and_an_optional_one_left_out_is_not_counted():
    assert [r["right"] for r in parameter_outcomes(FAHRENHEIT, [weather(city="Beijing")])
            if r["parameter"] == "unit"] == [False]
    assert [r["right"] for r in parameter_outcomes(FAHRENHEIT, [weather(city=7, unit="fahrenheit")])
            if r["parameter"] == "city"] == [False]
    optional = parameter_outcomes(MINI.case("weather-beijing"), [weather(city="北京")])
    assert [(r["parameter"], r["right"]) for r in optional] == [("city", True)]  # unit may be left out


def test_only_calls_to_the_right_tool_are_judged():
    assert parameter_outcomes(FAHRENHEIT, [{"name": "square_root", "arguments": '{"x": 4}'}]) == []
    assert parameter_outcomes(FAHRENHEIT, []) == []
    assert parameter_outcomes(FAHRENHEIT, [{"name": "get_weather", "arguments": '{"city": "Bei'}]) == []


def test_a_table_per_kind_and_setting_with_intervals():
    trials = pd.DataFrame([
        {"case_id": "weather-fahrenheit", "enums": "on", "calls": json.dumps([weather(city="Peking", unit="fahrenheit")])},
        {"case_id": "weather-fahrenheit", "enums": "off", "calls": json.dumps([weather(city="Beijing", unit="F")])},
        {"case_id": "weather-fahrenheit", "enums": "off", "calls": "[]"},
    ])
    table = parameter_table(trials, MINI, ["enums"])
    enum = table[table["kind"] == "enum"].set_index("enums")
    assert enum.loc["on", "right"] == 1 and enum.loc["off", "right"] == 0 and enum.loc["off", "values"] == 1
    assert (table["low"] <= table["rate"]).all() and (table["rate"] <= table["high"]).all()
    assert "1/1" in format_parameter_table(table)


def test_trials_read_without_their_calls_are_refused_with_what_to_do():
    with pytest.raises(KeyError, match="full=True"):
        parameter_table(pd.DataFrame([{"case_id": "weather-fahrenheit"}]), MINI)
    assert "no call to the right tool" in format_parameter_table(parameter_table(
        pd.DataFrame(columns=["case_id", "calls"]), MINI))
