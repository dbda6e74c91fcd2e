"""benchmarks/copied_values.py's verdicts: what counts as a name copied exactly, what as the
split-token slip ("H Havana"), and what as neither. Pure logic, no model."""

import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "copied_values.py"
spec = importlib.util.spec_from_file_location("copied_values", SCRIPT)
copied_values = importlib.util.module_from_spec(spec)
spec.loader.exec_module(copied_values)


def reply(*calls):
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": arguments}}
        for i, (name, arguments) in enumerate(calls)]}


def item(language="en", name="Havana"):
    return next(q for q in copied_values.questions() if q["language"] == language and name in q["accepted"])


def test_every_held_out_name_is_asked_in_both_languages_through_the_tool_of_its_kind():
    asked = copied_values.questions()
    assert len(asked) == 2 * len(copied_values.HELD_OUT_SPLIT_NAMES)
    assert item("en", "Havana")["tool"] == "current_weather"
    assert item("zh", "Rachel")["tool"] == "phone_number_of"
    assert "哈瓦那" in item("zh", "Havana")["question"]


@pytest.mark.parametrize("arguments, verdict", [
    ('{"city": "Havana"}', "exact"),
    ('{"city": " Havana "}', "exact"),
    ('{"city": "H Havana"}', "stray piece"),
    ('{"city": "Havana Havana"}', "stray piece"),
    ('{"city": "Hav"}', "other"),
    ('{"city": 3}', "other"),
    ('{"town": "Havana"}', "other"),
    ('{"city": "Hav', "other"),  # cut off: not JSON
    ('["Havana"]', "other"),
])
def test_the_value_decides_the_verdict(arguments, verdict):
    assert copied_values.judge(item(), reply(("current_weather", arguments))) == verdict


def test_a_chinese_question_accepts_the_name_as_written_or_its_english_form():
    question = item("zh", "Havana")
    assert copied_values.judge(question, reply(("current_weather", json.dumps({"city": "哈瓦那"})))) == "exact"
    assert copied_values.judge(question, reply(("current_weather", '{"city": "Havana"}'))) == "exact"


def test_another_tool_no_call_or_two_calls_is_other():
    assert copied_values.judge(item(), reply(("phone_number_of", '{"person": "Havana"}'))) == "other"
    assert copied_values.judge(item(), {"role": "assistant", "content": "Sunny.", "tool_calls": None}) == "other"
    two = reply(("current_weather", '{"city": "Havana"}'), ("current_weather", '{"city": "Havana"}'))
    assert copied_values.judge(item(), two) == "other"
