"""The BFCL-style checker, the Wilson interval, scoring recorded files and the command line."""
import itertools
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from toolkit.bench.argument_checks import normalise
from toolkit.bench.experiment import read_calls
from toolkit.bench.rates import summarise, wilson_interval
from toolkit.bench.scoring import CallsFileError, CutOff, check, main, score_file
from toolkit.bench.suite import load_suite
from toolkit.bench.suite_model import Case
from toolkit.bench.verdict import REASONS, Verdict
from toolkit.fake import ScriptedModel, ScriptedReply
from toolkit.fake import call as fake_call

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).parent.parent
MINI = load_suite(DATA / "mini_suite.json")


def call(name, **arguments):
    return {"name": name, "arguments": arguments}


def verdict(case_id, *calls):
    return check(MINI.case(case_id), list(calls))


def assert_fails(result, reason, *words, selection_ok=True):
    assert not result.arguments_ok
    assert result.selection_ok is selection_ok
    assert result.reason == reason
    for word in words:
        assert word in result.detail, result.detail


# ---------------------------------------------------------------- the right answer

def test_a_right_call_passes_both_selection_and_arguments():
    result = verdict("weather-beijing", call("get_weather", city="北京", unit="celsius"))
    assert (result.selection_ok, result.arguments_ok, result.reason, result.detail) == (
        True, True, None, None)
    assert result.case_id == "weather-beijing" and result.category == "simple"
    assert result.language == "zh" and result.passed


def test_arguments_as_a_json_string_are_parsed():
    result = verdict("weather-beijing", {"name": "get_weather", "arguments": '{"city": "Beijing"}'})
    assert result.arguments_ok


def test_openai_tool_call_shape_is_accepted():
    raw = {"id": "call_abc123", "type": "function",
           "function": {"name": "get_weather", "arguments": '{"city": "Beijing"}'}}
    assert verdict("weather-beijing", raw).arguments_ok


# ---------------------------------------------------------------- types

def test_an_int_is_accepted_where_a_number_is_expected():
    assert verdict("root", call("square_root", x=16)).arguments_ok
    assert verdict("root", call("square_root", x=16.0)).arguments_ok


def test_a_float_is_not_an_integer():
    assert_fails(verdict("volume", call("set_volume", level=7.0)), "wrong_type",
                 "'level'", "integer", "7.0")


def test_a_bool_is_not_an_integer_nor_a_number():
    assert_fails(verdict("volume", call("set_volume", level=True)), "wrong_type", "integer")
    assert_fails(verdict("root", call("square_root", x=False)), "wrong_type", "number", "boolean")


def test_an_int_is_not_a_bool():
    assert_fails(verdict("volume", call("set_volume", level=7, mute=0)), "wrong_type",
                 "'mute'", "boolean")
    assert verdict("volume", call("set_volume", level=7, mute=False)).arguments_ok


def test_a_number_as_a_string_is_the_wrong_type():
    assert_fails(verdict("root", call("square_root", x="16")), "wrong_type", "'x'", '"16"')


# ---------------------------------------------------------------- optional parameters

def test_an_optional_parameter_may_be_left_out_when_the_key_lists_the_empty_string():
    assert verdict("weather-beijing", call("get_weather", city="Beijing")).arguments_ok
    assert verdict("volume", call("set_volume", level=7)).arguments_ok


def test_an_optional_parameter_the_key_needs_may_not_be_left_out():
    result = verdict("weather-fahrenheit", call("get_weather", city="Beijing"))
    assert_fails(result, "missing_required", "'unit'", "fahrenheit")


def test_a_required_parameter_left_out_is_missing_required():
    assert_fails(verdict("weather-beijing", call("get_weather", unit="celsius")),
                 "missing_required", "'city'")


def test_a_parameter_the_key_says_to_leave_out_must_be_left_out():
    result = verdict("email", call("send_email", to=["a@example.com", "b@example.com"],
                                   subject="Hello", cc=["c@example.com"]))
    assert_fails(result, "unexpected_parameter", "'cc'", "left out")


def test_an_empty_string_is_not_the_same_as_leaving_a_parameter_out():
    result = verdict("weather-beijing", call("get_weather", city="Beijing", unit=""))
    assert_fails(result, "value_not_accepted", "'unit'")


# ---------------------------------------------------------------- unexpected parameters

def test_a_parameter_missing_from_the_schema_is_unexpected():
    result = verdict("weather-beijing", call("get_weather", city="Beijing", country="China"))
    assert_fails(result, "unexpected_parameter", "'country'", "schema")


def test_a_parameter_missing_from_the_answer_key_is_unexpected():
    result = verdict("hotel", call("book_hotel", city="上海", nights=2, room_type="double",
                                   guest={"name": "李雷", "phone": "13800138000"}))
    assert_fails(result, "unexpected_parameter", "'room_type'", "answer key")


# ---------------------------------------------------------------- string values

@pytest.mark.parametrize("city", ["Beijing", "beijing", "  BEIJING ", "Beijing.", "Bei-jing",
                                  "北京", "北京。", " 北 京 ", "ＢＥＩＪＩＮＧ"])
def test_strings_are_compared_after_normalising_case_spaces_and_punctuation(city):
    assert verdict("weather-beijing", call("get_weather", city=city)).arguments_ok


@pytest.mark.parametrize("city", ["Beijin", "上海", "北京市", "Peking"])
def test_a_different_string_is_not_accepted(city):
    result = verdict("weather-beijing", call("get_weather", city=city))
    assert_fails(result, "value_not_accepted", "'city'", "Beijing", "北京", json.dumps(
        city, ensure_ascii=False))


def test_normalise():
    assert normalise("Hello, World!") == "helloworld"
    assert normalise("“你好”，世界。") == "你好世界"
    assert normalise("2025/05/01") == normalise("2025-05-01") == "20250501"
    assert normalise("-") != normalise("/")


def test_enum_values_compare_without_case():
    assert verdict("weather-fahrenheit",
                   call("get_weather", city="Beijing", unit="Fahrenheit")).arguments_ok
    assert_fails(verdict("weather-fahrenheit", call("get_weather", city="Beijing", unit="celsius")),
                 "value_not_accepted", '"fahrenheit"', '"celsius"')


# ---------------------------------------------------------------- nested objects and lists

def hotel(**guest):
    return call("book_hotel", city="上海", nights=2, guest=guest)


def test_nested_objects_are_checked_key_by_key():
    assert verdict("hotel", hotel(name="Li Lei", phone="138-0013-8000")).arguments_ok
    assert_fails(verdict("hotel", hotel(name="李雷", phone="13800138001")),
                 "value_not_accepted", "'guest.phone'", "13800138000", "13800138001")
    assert_fails(verdict("hotel", hotel(name="李雷")), "missing_required", "'guest.phone'")
    assert_fails(verdict("hotel", hotel(name="李雷", phone="13800138000", email="li@example.com")),
                 "unexpected_parameter", "'guest.email'")


def test_a_nested_object_given_as_text_is_the_wrong_type():
    result = verdict("hotel", call("book_hotel", city="上海", nights=2, guest="李雷 13800138000"))
    assert_fails(result, "wrong_type", "'guest'", "object")


def test_lists_are_compared_element_by_element():
    email = lambda to: verdict("email", call("send_email", to=to, subject="hello"))  # noqa: E731
    assert email(["a@example.com", "b@example.com"]).arguments_ok
    assert email(["B@example.com", "a@example.com"]).arguments_ok
    assert_fails(email(["a@example.com"]), "value_not_accepted", "'to'")
    assert_fails(email(["a@example.com", "c@example.com"]), "value_not_accepted", "'to[1]'",
                 "c@example.com")
    assert_fails(email("a@example.com"), "wrong_type", "'to'", "array")
    assert_fails(email(["a@example.com", 2]), "wrong_type", "'to[1]'", "string")


# ---------------------------------------------------------------- several calls

def test_parallel_calls_match_in_any_order():
    beijing, shanghai = call("get_weather", city="北京"), call("get_weather", city="上海")
    assert verdict("weather-two", beijing, shanghai).arguments_ok
    assert verdict("weather-two", shanghai, beijing).arguments_ok


@given(st.permutations(range(2)))
def test_parallel_multiple_calls_match_in_any_order(order):
    calls = [call("get_weather", city="Beijing"), call("square_root", x=81)]
    assert verdict("weather-and-root", *[calls[i] for i in order]).arguments_ok


def test_duplicated_calls_do_not_cover_two_expected_calls():
    result = verdict("weather-two", call("get_weather", city="北京"), call("get_weather", city="北京"))
    assert_fails(result, "value_not_accepted", "Shanghai", "北京")


def test_calls_are_paired_by_a_maximum_matching_not_greedily():
    # The first expected call accepts both cities; a greedy pairing would give it Beijing and
    # leave nothing for the second, which accepts Beijing only.
    case = Case.model_validate({
        "id": "either", "category": "parallel", "language": "en", "question": "q",
        "tools": ["get_weather"],
        "expected": [{"name": "get_weather", "arguments": {"city": ["Beijing", "Shanghai"]}},
                     {"name": "get_weather", "arguments": {"city": ["Beijing"]}}]})
    schemas = {"get_weather": MINI.tools["get_weather"].parameters}
    result = check(case, [call("get_weather", city="Beijing"), call("get_weather", city="Shanghai")],
                   schemas=schemas)
    assert result.arguments_ok


def test_too_few_or_too_many_calls_is_a_wrong_call_count():
    assert_fails(verdict("weather-two", call("get_weather", city="北京")), "wrong_call_count",
                 "2", "1", selection_ok=False)
    assert_fails(verdict("weather-beijing", call("get_weather", city="北京"),
                         call("get_weather", city="北京")),
                 "wrong_call_count", selection_ok=False)


def test_calling_another_tool_is_a_wrong_tool():
    assert_fails(verdict("root", call("set_volume", level=16)), "wrong_tool",
                 "square_root", "set_volume", selection_ok=False)
    assert_fails(verdict("root", call("sqrt", x=16)), "wrong_tool", "sqrt", selection_ok=False)


def test_one_of_two_tools_wrong_is_a_wrong_tool():
    assert_fails(verdict("weather-and-root", call("get_weather", city="Beijing"),
                         call("set_volume", level=9)),
                 "wrong_tool", selection_ok=False)


def test_no_call_when_one_is_expected():
    assert_fails(verdict("root"), "no_call", "square_root", selection_ok=False)
    assert_fails(check(MINI.case("root"), None), "no_call", selection_ok=False)


# ---------------------------------------------------------------- irrelevance

def test_irrelevance_passes_only_without_a_call():
    assert verdict("joke").arguments_ok
    assert_fails(verdict("joke", call("get_weather", city="Beijing")), "spurious_call",
                 "get_weather", selection_ok=False)


def test_irrelevance_with_an_unparsable_reply_fails():
    assert_fails(check(MINI.case("joke"), parse_error="unterminated JSON"), "unparsable",
                 selection_ok=False)


# ---------------------------------------------------------------- unparsable replies

@pytest.mark.parametrize("arguments", ['{"city": "Beijing"', "city=Beijing", "[1, 2]", '"Beijing"'])
def test_arguments_that_are_not_a_json_object_are_unparsable(arguments):
    result = verdict("weather-beijing", {"name": "get_weather", "arguments": arguments})
    assert_fails(result, "unparsable", "get_weather")


def test_a_reply_that_could_not_be_parsed_is_unparsable():
    result = check(MINI.case("root"), calls=None, parse_error="no closing </tool> tag")
    assert_fails(result, "unparsable", "no closing </tool> tag", selection_ok=False)
    assert check(MINI.case("root"), parse_error=True).reason == "unparsable"


def test_parse_error_and_calls_together_are_refused():
    with pytest.raises(ValueError):
        check(MINI.case("root"), [call("square_root", x=16)], parse_error="bad")


@pytest.mark.parametrize("raw", [{"arguments": {"x": 16}}, {"name": "", "arguments": {}}, "sqrt(16)"])
def test_a_call_without_a_name_is_unparsable(raw):
    assert_fails(check(MINI.case("root"), [raw]), "unparsable", selection_ok=False)


def test_a_case_without_schemas_is_refused():
    case = Case.model_validate({"id": "bare", "category": "simple", "language": "en",
                                "question": "q", "tools": ["get_weather"],
                                "expected": [{"name": "get_weather", "arguments": {"city": ["x"]}}]})
    with pytest.raises(ValueError, match="get_weather"):
        check(case, [call("get_weather", city="x")])


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8)
junk_call = st.fixed_dictionaries({
    "name": st.sampled_from(["get_weather", "square_root", "set_volume", "book_hotel", "nope", ""]),
    "arguments": st.dictionaries(st.sampled_from(["city", "unit", "x", "level", "guest", "to"]),
                                 json_values, max_size=3) | st.text(max_size=10),
})


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([case.id for case in MINI.cases]), st.lists(junk_call, max_size=3))
def test_any_reply_gets_a_consistent_verdict(case_id, calls):
    result = check(MINI.case(case_id), calls)
    assert result.reason is None or result.reason in REASONS
    assert result.arguments_ok == (result.reason is None)
    assert result.selection_ok or not result.arguments_ok
    assert result.arguments_ok or result.detail


def test_a_verdict_cannot_have_right_arguments_with_a_wrong_selection():
    with pytest.raises(ValidationError):
        Verdict(selection_ok=False, arguments_ok=True)
    with pytest.raises(ValidationError):
        Verdict(selection_ok=True, arguments_ok=False)  # a failure needs its reason
    with pytest.raises(ValidationError):
        Verdict(selection_ok=False, arguments_ok=False, reason="bad_luck")


# ---------------------------------------------------------------- Wilson interval

@pytest.mark.parametrize("successes, n, low, high", [
    # Hand-computed: centre (p + z²/2n) / (1 + z²/n), half-width z √(p(1-p)/n + z²/4n²) / (1 + z²/n)
    (0, 10, 0.0, 0.277540),
    (3, 10, 0.107789, 0.603227),
    (5, 10, 0.236590, 0.763410),
    (10, 10, 0.722460, 1.0),
    (1, 1, 0.206543, 1.0),
])
def test_wilson_interval_matches_hand_computed_values(successes, n, low, high):
    got = wilson_interval(successes, n)
    assert got == pytest.approx((low, high), abs=1e-6)


@pytest.mark.parametrize("n", [6, 11, 20, 1000])
def test_wilson_interval_ends_exactly_at_0_and_1_for_all_failures_or_all_successes(n):
    # The formula lands a rounding error away (2.8e-17, 0.9999999999999999) for these n.
    assert wilson_interval(0, n)[0] == 0.0
    assert wilson_interval(n, n)[1] == 1.0


def test_wilson_interval_with_another_z():
    assert wilson_interval(5, 10, z=1.0) == pytest.approx((0.349244, 0.650756), abs=1e-6)


def test_wilson_interval_without_data_is_everything():
    assert wilson_interval(0, 0) == (0.0, 1.0)


@pytest.mark.parametrize("successes, n", [(11, 10), (-1, 10), (1, -1)])
def test_wilson_interval_refuses_impossible_counts(successes, n):
    with pytest.raises(ValueError):
        wilson_interval(successes, n)


@given(st.integers(1, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_interval_holds_the_rate_and_is_symmetric(counts):
    successes, n = counts
    low, high = wilson_interval(successes, n)
    assert 0.0 <= low <= successes / n <= high <= 1.0
    mirror_low, mirror_high = wilson_interval(n - successes, n)
    assert math.isclose(low, 1 - mirror_high, abs_tol=1e-12)
    assert math.isclose(high, 1 - mirror_low, abs_tol=1e-12)


# ---------------------------------------------------------------- summaries

def test_summarise_counts_both_rates_with_intervals_and_reasons():
    verdicts = [
        verdict("root", call("square_root", x=16)),                 # pass
        verdict("root", call("square_root", x=15)),                 # selection only
        verdict("root", call("set_volume", level=16)),              # wrong tool
        verdict("joke", call("get_weather", city="Beijing")),       # spurious
    ]
    summary = summarise(verdicts)
    assert summary["n"] == 4
    assert summary["selection_successes"] == 2 and summary["selection_rate"] == 0.5
    assert summary["arguments_successes"] == 1 and summary["arguments_rate"] == 0.25
    assert summary["selection_interval"] == wilson_interval(2, 4)
    assert summary["arguments_interval"] == wilson_interval(1, 4)
    assert summary["reasons"]["value_not_accepted"] == 1
    assert summary["reasons"]["wrong_tool"] == 1
    assert summary["reasons"]["spurious_call"] == 1
    assert sum(summary["reasons"].values()) == 3
    assert list(summary["reasons"]) == list(REASONS)


def test_summarise_nothing():
    summary = summarise([])
    assert summary["n"] == 0
    assert summary["selection_rate"] is None and summary["arguments_rate"] is None
    assert summary["selection_interval"] == (0.0, 1.0)


# ---------------------------------------------------------------- recorded files

def test_score_file_scores_every_line():
    verdicts = score_file(MINI, DATA / "recorded_calls.jsonl")
    assert [(v.case_id, v.reason) for v in verdicts] == [
        ("weather-beijing", None),
        ("weather-beijing", "value_not_accepted"),
        ("root", "wrong_tool"),
        ("volume", "unparsable"),
        ("weather-two", None),
        ("joke", None),
        ("joke", "spurious_call"),
    ]


@pytest.mark.parametrize("line, words", [
    ('{"case_id": "root", "calls": [', ["line 2", "not valid JSON"]),
    ('{"case_id": "no-such-case", "calls": []}', ["line 2", "no-such-case"]),
    ('{"calls": []}', ["line 2", "case_id"]),
    ('{"case_id": "root"}', ["line 2", "calls", "parse_error"]),
    ('{"case_id": "root", "calls": [], "parse_error": "x"}', ["line 2", "exactly one"]),
    ('{"case_id": "root", "calls": {"name": "square_root"}}', ["line 2", "list"]),
    ('{"case_id": "root", "parse_error": 3}', ["line 2", "string"]),
])
def test_score_file_names_the_file_and_line_of_a_bad_record(tmp_path, line, words):
    path = tmp_path / "calls.jsonl"
    path.write_text('{"case_id": "joke", "calls": []}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(CallsFileError) as error:
        score_file(MINI, path)
    for word in ["calls.jsonl", *words]:
        assert word in str(error.value)


def test_score_file_reports_a_missing_file(tmp_path):
    with pytest.raises(CallsFileError, match="missing.jsonl"):
        score_file(MINI, tmp_path / "missing.jsonl")


# ---------------------------------------------------------------- command line

def test_cli_prints_rates_with_n_and_intervals(capsys):
    code = main(["--suite", str(DATA / "mini_suite.json"),
                 "--calls", str(DATA / "recorded_calls.jsonl")])
    out = capsys.readouterr().out
    assert code == 0
    all_row = next(line for line in out.splitlines() if line.startswith("all"))
    assert all_row.split()[:2] == ["all", "7"]
    assert "57.1%" in all_row and "42.9%" in all_row           # 4/7 and 3/7
    low, high = wilson_interval(4, 7)
    assert f"{low:.1%}" in all_row and f"{high:.1%}" in all_row
    assert "95% Wilson" in out
    assert any(line.split()[:2] == ["irrelevance", "2"] for line in out.splitlines())
    assert "spurious_call 1" in out


def test_cli_groups_by_language(capsys):
    main(["--suite", str(DATA / "mini_suite.json"), "--calls", str(DATA / "recorded_calls.jsonl"),
          "--by", "language"])
    rows = {line.split()[0]: line.split()[1] for line in capsys.readouterr().out.splitlines()
            if line.strip().split()[:1] in (["en"], ["zh"])}
    assert rows == {"zh": "3", "en": "4"}


def test_cli_exits_with_2_on_a_bad_calls_file(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n", encoding="utf-8")
    code = main(["--suite", str(DATA / "mini_suite.json"), "--calls", str(bad)])
    err = capsys.readouterr().err
    assert code == 2
    assert "bad.jsonl: line 1" in err


def test_cli_exits_with_2_on_a_bad_suite(tmp_path, capsys):
    suite = tmp_path / "suite.json"
    suite.write_text('{"format_version": 7}', encoding="utf-8")
    code = main(["--suite", str(suite), "--calls", str(DATA / "recorded_calls.jsonl")])
    assert code == 2
    assert "suite.json" in capsys.readouterr().err


def test_cli_runs_as_a_module():
    command = [sys.executable, "-m", "toolkit.bench.scoring", "--suite", "tests/data/mini_suite.json"]
    good = subprocess.run(command + ["--calls", "tests/data/recorded_calls.jsonl"],
                          cwd=ROOT, capture_output=True, text=True)
    assert good.returncode == 0, good.stderr
    assert "all" in good.stdout
    bad = subprocess.run(command + ["--calls", "tests/data/no-such-file.jsonl"],
                         cwd=ROOT, capture_output=True, text=True)
    assert bad.returncode == 2
    assert "no-such-file.jsonl" in bad.stderr
    missing_argument = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    assert missing_argument.returncode == 2


def test_cli_scores_the_shipped_suite_by_default(tmp_path, capsys):
    calls = tmp_path / "calls.jsonl"
    suite = load_suite()
    calls.write_text("\n".join(json.dumps({"case_id": case.id, "calls": case.reference_calls()},
                                          ensure_ascii=False)
                               for case in itertools.islice(suite.cases, 5)), encoding="utf-8")
    assert main(["--calls", str(calls)]) == 0
    assert "100.0%" in capsys.readouterr().out


# ---------------------------------------------------------------- replies cut off by max_tokens

def test_a_cut_off_reply_has_a_reason_of_its_own():
    result = check(MINI.case("root"), parse_error=CutOff("max_tokens ran out mid-call"))
    assert_fails(result, "cut_off", "max_tokens ran out", selection_ok=False)
    assert check(MINI.case("root"), parse_error="max_tokens ran out mid-call").reason == "unparsable"


def _completion(reply):
    return ScriptedModel([reply]).chat.completions.create(model="fake", messages=[{"role": "user", "content": "?"}])


@pytest.mark.parametrize("protocol, reply", [
    ("native", ScriptedReply(tool_calls=[fake_call("get_weather", '{"city": "BAN-TET-ZHO_FAN')], finish_reason="length")),
    ("string", ScriptedReply(content='<tool>{"name": "get_weather", "arguments": {"city": "Shangh',
                             finish_reason="length")),
])
def test_a_call_stopped_by_max_tokens_is_read_as_cut_off_not_as_unparsable(protocol, reply):
    calls_read, _, problem = read_calls(_completion(reply), protocol)
    assert calls_read == [] and isinstance(problem, CutOff), problem
    assert check(MINI.case("weather-beijing"), parse_error=problem).reason == "cut_off"


def test_broken_arguments_in_a_reply_that_was_not_cut_off_stay_unparsable():
    broken = ScriptedReply(tool_calls=[fake_call("get_weather", '{"city": "Beijing"')], finish_reason="tool_calls")
    calls_read, _, problem = read_calls(_completion(broken), "native")
    assert problem is None and len(calls_read) == 1  # read as given, so scoring judges the arguments
    assert check(MINI.case("weather-beijing"), calls_read).reason == "unparsable"


def test_a_whole_call_in_a_reply_that_reached_max_tokens_is_scored_as_it_is():
    whole = ScriptedReply(tool_calls=[fake_call("get_weather", {"city": "Beijing"})], finish_reason="length")
    calls_read, _, problem = read_calls(_completion(whole), "native")
    assert problem is None and [c.name for c in calls_read] == ["get_weather"]
