"""The shipped scenario suite, the suite file format and its errors (BFCL: test_bfcl.py)."""
import copy
import json
import re
from collections import Counter
from pathlib import Path

import pytest

import toolkit
from toolkit.bench.scoring import check
from toolkit.bench.suite import DEFAULT_DIR, load_suite
from toolkit.bench.suite_checks import SuiteError
from toolkit.bench.suite_model import CATEGORIES, Case

DATA = Path(__file__).parent / "data"
SUITE = load_suite()
CJK = re.compile(r"[\u4e00-\u9fff]")


# ---------------------------------------------------------------- the shipped suite

def test_the_shipped_suite_is_big_enough_and_covers_every_category_in_both_languages():
    assert len(SUITE.cases) >= 80
    counts = Counter((case.category, case.language) for case in SUITE.cases)
    for category in CATEGORIES:
        assert counts[category, "en"] >= 3 and counts[category, "zh"] >= 3, category
    languages = Counter(case.language for case in SUITE.cases)
    assert 0.4 <= languages["zh"] / len(SUITE.cases) <= 0.6


def test_the_shipped_suite_loads_from_anywhere(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert [case.id for case in load_suite().cases] == [case.id for case in SUITE.cases]
    # Package data: the files sit inside the toolkit, so an installed toolkit carries them.
    package = Path(toolkit.__file__).resolve().parent
    assert DEFAULT_DIR.is_relative_to(package) and sorted(DEFAULT_DIR.glob("*.json"))


def test_every_tool_has_a_clear_and_a_vague_description():
    assert len(SUITE.tools) >= 12
    for name, tool in SUITE.tools.items():
        assert tool.clear.strip() and tool.vague.strip(), name
        assert len(tool.vague) < len(tool.clear), name


def test_the_shipped_tools_have_the_promised_shapes():
    def prop(tool, *path):
        schema = SUITE.tools[tool].parameters
        for key in path:
            schema = schema["properties"][key]
        return schema

    assert prop("get_weather", "unit")["enum"] == ["celsius", "fahrenheit"]
    assert set(prop("list_orders", "status")["enum"]) == {"pending", "shipped", "delivered"}
    assert set(prop("calculate", "operator")["enum"]) == {"add", "subtract", "multiply", "divide"}
    assert prop("square_root", "x")["type"] == "number"
    assert prop("book_hotel", "guest", "phone")["type"] == "string"
    assert prop("book_flight", "passengers")["items"]["type"] == "object"
    assert prop("schedule_meeting", "attendees")["items"]["type"] == "string"
    assert prop("send_email", "to")["type"] == "array"
    assert set(prop("export_report", "format")["enum"]) == {"pdf", "xlsx", "csv"}
    assert prop("search_products", "filters", "in_stock")["type"] == "boolean"
    for tool in ("convert_currency", "set_reminder", "translate_text", "get_stock_price",
                 "get_order_status"):
        assert tool in SUITE.tools


@pytest.mark.parametrize("case", SUITE.cases, ids=lambda case: case.id)
def test_each_shipped_case_is_passed_by_its_reference_answer_in_any_order(case):
    calls = case.reference_calls()
    assert check(case, calls).arguments_ok
    assert check(case, calls[::-1]).arguments_ok


def _keys_complete(spec, schema, where):
    properties = schema.get("properties")
    if properties is None:
        return []
    missing = [f"{where}.{name}" for name in properties if name not in spec]
    for name, options in spec.items():
        for option in options:
            sub = properties[name]
            if isinstance(option, dict):
                missing += _keys_complete(option, sub, f"{where}.{name}")
            elif isinstance(option, list) and isinstance(sub.get("items"), dict):
                for item in option:
                    if isinstance(item, dict):
                        missing += _keys_complete(item, sub["items"], f"{where}.{name}[]")
    return missing


def test_every_shipped_answer_key_says_what_to_do_with_every_parameter():
    # A parameter missing from the key may not be sent at all; the shipped keys say so
    # explicitly with [""] rather than by silence.
    missing = [f"{case.id}: {gap}"
               for case in SUITE.cases for call in case.expected
               for gap in _keys_complete(call.arguments, case.schemas[call.name], call.name)]
    assert missing == []


def test_chinese_questions_accept_chinese_and_latin_city_names():
    for case in SUITE.filter(languages="zh"):
        for call in case.expected:
            for name in ("city", "origin", "destination"):
                if name in call.arguments:
                    options = call.arguments[name]
                    assert any(CJK.search(o) for o in options), case.id
                    assert any(o.isascii() for o in options), case.id
    beijing = SUITE.case("parallel-zh-weather-two-cities")
    for city in ("Beijing", "北京", "上海", "Shanghai"):
        others = "Shanghai" if city in ("Beijing", "北京") else "北京"
        calls = [{"name": "get_weather", "arguments": {"city": c}} for c in (city, others)]
        assert check(beijing, calls).arguments_ok


def test_irrelevance_cases_offer_tools_but_expect_none():
    cases = SUITE.filter(categories="irrelevance").cases
    assert cases and all(case.tools and not case.expected for case in cases)


def test_multiple_cases_offer_distractors_and_parallel_cases_expect_several_calls():
    for case in SUITE.filter(categories=["multiple"]):
        assert len(case.tools) >= 2 and len(case.expected) == 1
    for case in SUITE.filter(categories=["parallel", "parallel_multiple"]):
        assert len(case.expected) >= 2
    for case in SUITE.filter(categories="parallel_multiple"):
        assert len({call.name for call in case.expected}) >= 2


# ---------------------------------------------------------------- the Suite API

def test_tool_spec_is_an_openai_tool_with_the_chosen_description():
    clear = SUITE.tool_spec("get_weather")
    assert clear["type"] == "function"
    assert clear["function"]["name"] == "get_weather"
    assert clear["function"]["description"] == SUITE.tools["get_weather"].clear
    assert clear["function"]["parameters"]["properties"]["unit"]["enum"] == ["celsius", "fahrenheit"]
    vague = SUITE.tool_spec("get_weather", description="vague")
    assert vague["function"]["description"] == SUITE.tools["get_weather"].vague
    own = SUITE.tool_spec("get_weather", description="Weather in a city, any day.")
    assert own["function"]["description"] == "Weather in a city, any day."


def test_tool_spec_without_enums_turns_every_enum_into_a_free_string():
    spec = SUITE.tool_spec("search_products", enums=False)["function"]["parameters"]
    category = spec["properties"]["filters"]["properties"]["category"]
    assert "enum" not in category and category["type"] == "string"
    assert category["description"] == "Product category."
    assert "enum" not in spec["properties"]["sort_by"]
    assert "enum" not in json.dumps(spec)
    # the suite's own schema keeps its enums
    assert "enum" in SUITE.tools["search_products"].parameters["properties"]["sort_by"]
    assert "enum" in json.dumps(SUITE.tool_spec("search_products", enums=True))


def test_tool_spec_refuses_unknown_tools_and_empty_descriptions():
    with pytest.raises(KeyError):
        SUITE.tool_spec("get_wether")
    with pytest.raises(ValueError):
        SUITE.tool_spec("get_weather", description="  ")


def test_filter_by_category_language_and_limit():
    chosen = SUITE.filter(categories=["enum", "nested"], languages=["zh"])
    assert chosen.cases
    assert {(c.category, c.language) for c in chosen} <= {("enum", "zh"), ("nested", "zh")}
    assert len(chosen) == sum(c.category in ("enum", "nested") and c.language == "zh"
                              for c in SUITE.cases)
    assert [c.id for c in SUITE.filter(limit=5)] == [c.id for c in SUITE.cases[:5]]
    assert SUITE.filter(categories="simple").tools == SUITE.tools
    with pytest.raises(ValueError):
        SUITE.filter(categories=["simpel"])


def test_distractors_are_tools_the_case_does_not_expect_and_repeat_by_seed():
    case = SUITE.case("parallel_multiple-en-weather-and-stock")
    first = SUITE.distractors(case, 5, seed=7)
    assert len(first) == len(set(first)) == 5
    assert not {"get_weather", "get_stock_price"} & set(first)
    assert set(first) <= set(SUITE.tools)
    assert SUITE.distractors(case.id, 5, seed=7) == first
    assert any(SUITE.distractors(case, 5, seed=seed) != first for seed in range(8, 12))
    assert SUITE.distractors(case, 0) == []
    everything = len(SUITE.tools) - 2
    assert len(SUITE.distractors(case, everything)) == everything
    with pytest.raises(ValueError):
        SUITE.distractors(case, everything + 1)


def test_cases_carry_the_schemas_of_their_offered_tools():
    case = SUITE.case("multiple-en-has-it-shipped")
    assert set(case.schemas) == set(case.tools)
    assert case.schemas["list_orders"] == SUITE.tools["list_orders"].parameters


def test_a_question_is_a_single_user_message():
    case = SUITE.case("simple-en-add")
    assert [(m.role, m.content) for m in case.messages] == [("user", "What is 3 plus 5?")]
    assert case.question == "What is 3 plus 5?"
    with_system = SUITE.case("multiple-zh-order-status")
    assert [m.role for m in with_system.messages] == ["system", "user"]


# ---------------------------------------------------------------- malformed files

TOOLS = {
    "get_weather": {
        "clear": "Get the current weather in one city.",
        "vague": "Weather.",
        "parameters": {"type": "object",
                       "properties": {"city": {"type": "string"},
                                      "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
                       "required": ["city"]},
    },
    "book_hotel": {
        "clear": "Book a hotel room.",
        "vague": "Booking.",
        "parameters": {"type": "object",
                       "properties": {"nights": {"type": "integer"},
                                      "guest": {"type": "object",
                                                "properties": {"name": {"type": "string"},
                                                               "phone": {"type": "string"}},
                                                "required": ["name"]}},
                       "required": ["nights"]},
    },
}
CASE = {
    "id": "weather-3", "category": "simple", "language": "en",
    "question": "Weather in Beijing?", "tools": ["get_weather"],
    "expected": [{"name": "get_weather", "arguments": {"city": ["Beijing"], "unit": ["celsius", ""]}}],
}
HOTEL = {
    "id": "hotel-1", "category": "nested", "language": "zh",
    "question": "订两晚", "tools": ["book_hotel", "get_weather"],
    "expected": [{"name": "book_hotel", "arguments": {"nights": [2],
                                                       "guest": [{"name": ["李雷"], "phone": [""]}]}}],
}


def write(folder, name, data):
    path = folder / name
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def suite_file(folder, cases=None, tools=None, name="x.json"):
    return write(folder, name, {"format_version": 1, "tools": copy.deepcopy(tools or TOOLS),
                                "cases": copy.deepcopy(cases or [CASE, HOTEL])})


def problems_of(path):
    with pytest.raises(SuiteError) as error:
        load_suite(path)
    return str(error.value)


def test_the_valid_base_file_loads(tmp_path):
    suite = load_suite(suite_file(tmp_path))
    assert [c.id for c in suite.cases] == ["weather-3", "hotel-1"]


def edited(case, edit):
    case = copy.deepcopy(case)
    edit(case)
    return case


@pytest.mark.parametrize("case, expected_message", [
    (edited(CASE, lambda c: c["expected"][0].update(name="get_wether")),
     "x.json: case 'weather-3': expected[0].name 'get_wether' is not a tool of the suite"),
    (edited(CASE, lambda c: c["expected"][0].update(name="book_hotel")),
     "x.json: case 'weather-3': expected[0].name 'book_hotel' is not among the case's tools"),
    (edited(CASE, lambda c: c["tools"].append("get_stock")),
     "x.json: case 'weather-3': tools[1] 'get_stock' is not a tool of the suite"),
    (edited(CASE, lambda c: c["expected"][0]["arguments"].update(city=[3])),
     "x.json: case 'weather-3': expected[0].arguments.city[0]: 3 is not string"),
    (edited(CASE, lambda c: c["expected"][0]["arguments"].update(unit=["kelvin"])),
     "x.json: case 'weather-3': expected[0].arguments.unit[0]: \"kelvin\" is not one of the enum values"),
    (edited(CASE, lambda c: c["expected"][0]["arguments"].update(country=["China"])),
     "x.json: case 'weather-3': expected[0].arguments.country: not a property of the schema"),
    (edited(CASE, lambda c: c["expected"][0]["arguments"].pop("city")),
     "x.json: case 'weather-3': expected[0].arguments.city: required by the schema"),
    (edited(CASE, lambda c: c["expected"][0]["arguments"].update(city=["Beijing", ""])),
     "x.json: case 'weather-3': expected[0].arguments.city: \"\" (may be omitted) is not allowed"),
    (edited(CASE, lambda c: c["expected"][0]["arguments"].update(city="Beijing")),
     "x.json: case 'weather-3': expected[0].arguments.city: Input should be a valid list"),
    (edited(CASE, lambda c: c["expected"][0]["arguments"].update(city=[])),
     "x.json: case 'weather-3': expected[0].arguments.city: must be a non-empty list"),
    (edited(HOTEL, lambda c: c["expected"][0]["arguments"].update(nights=[True])),
     "x.json: case 'hotel-1': expected[0].arguments.nights[0]: true is not integer"),
    (edited(HOTEL, lambda c: c["expected"][0]["arguments"].update(nights=[2.0])),
     "x.json: case 'hotel-1': expected[0].arguments.nights[0]: 2.0 is not integer"),
    (edited(HOTEL, lambda c: c["expected"][0]["arguments"].update(guest=[{"name": "李雷"}])),
     "x.json: case 'hotel-1': expected[0].arguments.guest[0].name: must be a non-empty list"),
    (edited(HOTEL, lambda c: c["expected"][0]["arguments"].update(guest=[{"phone": ["1"]}])),
     "x.json: case 'hotel-1': expected[0].arguments.guest[0].name: required by the schema"),
    (edited(HOTEL, lambda c: c["expected"][0]["arguments"].update(guest=[{"name": [""]}])),
     "x.json: case 'hotel-1': expected[0].arguments.guest[0].name: \"\" (may be omitted) is not allowed"),
    (edited(HOTEL, lambda c: c["expected"][0]["arguments"].update(guest=["李雷"])),
     "x.json: case 'hotel-1': expected[0].arguments.guest[0]: \"李雷\" is not object"),
    (edited(CASE, lambda c: c.update(category="irrelevance")),
     "x.json: case 'weather-3': expected: a 'irrelevance' case cannot expect 1 call(s)"),
    (edited(CASE, lambda c: c.update(expected=c["expected"] * 2)),
     "x.json: case 'weather-3': expected: a 'simple' case cannot expect 2 call(s)"),
    (edited(CASE, lambda c: c.update(category="simpel")),
     "x.json: case 'weather-3': category: Input should be"),
    (edited(CASE, lambda c: c.update(language="fr")),
     "x.json: case 'weather-3': language: Input should be 'en' or 'zh'"),
    (edited(CASE, lambda c: c.update(expect=[])),
     "x.json: case 'weather-3': expect: Extra inputs are not permitted"),
    (edited(CASE, lambda c: c.update(messages=[{"role": "user", "content": "q"}])),
     "x.json: case 'weather-3': give either 'messages' or 'question'"),
    (edited(CASE, lambda c: (c.pop("question"), c.update(messages=[{"role": "system",
                                                                     "content": "q"}]))),
     "x.json: case 'weather-3': messages: at least one user message"),
    (edited(CASE, lambda c: c.update(tools=["get_weather", "get_weather"])),
     "x.json: case 'weather-3': tools: a tool is listed twice"),
    (edited(CASE, lambda c: c.update(tools=[])),
     "x.json: case 'weather-3': tools: List should have at least 1 item"),
])
def test_a_malformed_case_names_the_file_the_case_and_the_field(tmp_path, case, expected_message):
    message = problems_of(suite_file(tmp_path, cases=[case, HOTEL if case["id"] != "hotel-1" else CASE]))
    assert expected_message in message


def tool_edit(edit):
    tools = copy.deepcopy(TOOLS)
    edit(tools)
    return tools


@pytest.mark.parametrize("tools, expected_message", [
    (tool_edit(lambda t: t["get_weather"].pop("vague")),
     "x.json: tool 'get_weather': vague: Field required"),
    (tool_edit(lambda t: t["get_weather"].update(vague="")),
     "x.json: tool 'get_weather': vague: String should have at least 1 character"),
    (tool_edit(lambda t: t["get_weather"]["parameters"].update(type="dict")),
     "x.json: tool 'get_weather': parameters: not a valid JSON Schema"),
    (tool_edit(lambda t: t["get_weather"]["parameters"].update(type="string")),
     "x.json: tool 'get_weather': parameters: must be an object schema"),
    (tool_edit(lambda t: t["get_weather"]["parameters"].update(required=["city", "town"])),
     "x.json: tool 'get_weather': parameters.required: 'town' is not a property"),
    (tool_edit(lambda t: t["get_weather"]["parameters"]["properties"]["unit"].update(enum=["c", 1])),
     "x.json: tool 'get_weather': parameters.properties.unit.enum: 1 is not string"),
])
def test_a_malformed_tool_names_the_file_the_tool_and_the_field(tmp_path, tools, expected_message):
    assert expected_message in problems_of(suite_file(tmp_path, tools=tools))


def test_check_schemas_false_leaves_out_only_the_json_schema_check(tmp_path):
    # The app draws its form from such a load and makes the full check before running anything.
    invalid = suite_file(tmp_path, tools=tool_edit(
        lambda t: t["get_weather"]["parameters"]["properties"]["city"].update(type="strin")))
    assert "not a valid JSON Schema" in problems_of(invalid)
    bad_keyword = suite_file(tmp_path, tools=tool_edit(
        lambda t: t["get_weather"]["parameters"]["properties"]["unit"].update(minLength="two")), name="z.json")
    assert "not a valid JSON Schema" in problems_of(bad_keyword)
    assert [c.id for c in load_suite(bad_keyword, check_schemas=False).cases] == ["weather-3", "hotel-1"]
    # A schema the other checks cannot read (they assume valid ones) gets the full check after
    # all, so the error still names it rather than failing somewhere else.
    with pytest.raises(SuiteError, match="not a valid JSON Schema"):
        load_suite(invalid, check_schemas=False)
    not_an_object = suite_file(tmp_path, tools=tool_edit(
        lambda t: t["get_weather"]["parameters"].update(type="string")), name="y.json")
    with pytest.raises(SuiteError, match="must be an object schema"):
        load_suite(not_an_object, check_schemas=False)  # every other check is kept


def test_a_case_offering_a_broken_tool_is_reported_too(tmp_path):
    tools = tool_edit(lambda t: t["get_weather"].pop("clear"))
    message = problems_of(suite_file(tmp_path, tools=tools))
    assert "tool 'get_weather': clear: Field required" in message
    assert "case 'weather-3': tools[0] 'get_weather' is not a tool of the suite" in message


def test_all_problems_are_gathered_into_one_error(tmp_path):
    bad_city = edited(CASE, lambda c: c["expected"][0]["arguments"].update(city=[3]))
    bad_nights = edited(HOTEL, lambda c: c["expected"][0]["arguments"].update(nights=["two"]))
    with pytest.raises(SuiteError) as error:
        load_suite(suite_file(tmp_path, cases=[bad_city, bad_nights]))
    assert len(error.value.problems) == 2
    assert "2 problems" in str(error.value)


def test_tools_and_cases_may_live_in_separate_files(tmp_path):
    write(tmp_path, "tools.json", {"format_version": 1, "tools": TOOLS})
    write(tmp_path, "cases.json", {"format_version": 1, "cases": [CASE, HOTEL]})
    suite = load_suite(tmp_path)
    assert set(suite.tools) == set(TOOLS) and len(suite.cases) == 2


def test_a_case_id_used_twice_names_both_files(tmp_path):
    write(tmp_path, "a.json", {"format_version": 1, "tools": TOOLS, "cases": [CASE]})
    write(tmp_path, "b.json", {"format_version": 1, "cases": [CASE]})
    message = problems_of(tmp_path)
    assert "b.json: case 'weather-3': id is already used in" in message and "a.json" in message


def test_a_tool_defined_twice_names_both_files(tmp_path):
    write(tmp_path, "a.json", {"format_version": 1, "tools": TOOLS})
    write(tmp_path, "b.json", {"format_version": 1, "tools": {"get_weather": TOOLS["get_weather"]}})
    message = problems_of(tmp_path)
    assert "b.json: tool 'get_weather' is already defined in" in message and "a.json" in message


@pytest.mark.parametrize("text, expected_message", [
    ('{"format_version": 2, "cases": []}', "x.json: format_version 2 is not supported"),
    ('{"cases": []}', "x.json: format_version None is not supported"),
    ('{"format_version": 1,\n "cases": [,]}', "x.json: line 2: not valid JSON"),
    ('[1, 2]', "x.json: the file must hold a JSON object"),
    ('{"format_version": 1, "case": []}', "x.json: unknown top-level field(s) case"),
    ('{"format_version": 1, "cases": {}}', "x.json: 'cases' must be a list"),
    ('{"format_version": 1, "tools": []}', "x.json: 'tools' must be an object"),
])
def test_a_malformed_file_names_the_file(tmp_path, text, expected_message):
    path = tmp_path / "x.json"
    path.write_text(text, encoding="utf-8")
    assert expected_message in problems_of(path)


def test_a_missing_path_or_an_empty_folder_is_an_error(tmp_path):
    assert "nowhere" in problems_of(tmp_path / "nowhere")
    assert "no .json suite files" in problems_of(tmp_path)


def test_case_built_in_code_converts_a_question():
    case = Case.model_validate(CASE)
    assert case.messages[0].role == "user" and case.question == "Weather in Beijing?"


def test_the_lesson_suite_is_the_seventeen_lesson_tools_and_the_ninety_two_lesson_cases():
    from toolkit.bench.suite import LESSON_TOOLS_FILE, lesson_suite

    lesson = lesson_suite()
    assert sorted(lesson.tools) == sorted(json.loads(LESSON_TOOLS_FILE.read_text("utf-8"))["tools"])
    assert len(lesson.tools) == 17 and len(SUITE.tools) > 17
    assert len(lesson.cases) == 92 and len(SUITE.cases) > 92
    assert [c.id for c in lesson.cases] == [c.id for c in SUITE.cases if c in lesson.cases]  # file order kept
    assert all(set(case.tools) <= set(lesson.tools) for case in lesson.cases)
    # distractors come from the lesson tools alone
    case = lesson.case("simple-en-weather-beijing")
    assert set(lesson.distractors(case, 16)) <= set(lesson.tools)
    with pytest.raises(KeyError, match="no tool nope"):
        SUITE.with_tools_only(["get_weather", "nope"])
    narrowed = SUITE.with_tools_only(lesson.tools)
    assert all(set(case.tools) <= set(lesson.tools) for case in narrowed.cases)
    assert not [case for case in SUITE.cases if set(case.tools) <= set(lesson.tools) and case not in narrowed.cases]
