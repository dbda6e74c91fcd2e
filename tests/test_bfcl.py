"""The BFCL importer: its mapping to a suite, every quirk of BFCL's files, bad input, and the
real bfcl-eval wheel (fetched by .ci/run into a cache folder; a failure under CI when missing).

The small files here are written for these tests in BFCL's format; none is copied from BFCL.
"""
import json
import os
import sys
import zipfile
from pathlib import Path

import pytest

from toolkit.bench.bfcl import (
    BFCL_CATEGORIES,
    BfclSuite,
    import_bfcl,
    import_bfcl_category,
    openai_name,
)
from toolkit.bench.scoring import check
from toolkit.bench.suite import load_suite
from toolkit.bench.suite_checks import SuiteError

DATA = Path(__file__).parent / "data"


# ---------------------------------------------------------------- writing small BFCL files

def write_jsonl(path: Path, records) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)
                              for r in records), encoding="utf-8")
    return path


def function(name, properties, required=()):
    return {"name": name, "description": f"Does {name}.",
            "parameters": {"type": "dict", "properties": properties, "required": list(required)}}


def question(case_id, *functions, text="Please help."):
    return {"id": case_id, "question": [[{"role": "user", "content": text}]],
            "function": list(functions)}


def answer(case_id, *calls):
    return {"id": case_id, "ground_truth": list(calls)}


def load(tmp_path, questions, answers=None) -> BfclSuite:
    q = write_jsonl(tmp_path / "q.jsonl", questions)
    a = None if answers is None else write_jsonl(tmp_path / "a.jsonl", answers)
    return import_bfcl(q, a)


def error_of(tmp_path, questions, answers=None) -> str:
    with pytest.raises(SuiteError) as error:
        load(tmp_path, questions, answers)
    return str(error.value)


METAL = function("statue.cast", {"metal": {"type": "string", "enum": ["Bronze", "Iron"]},
                                 "height": {"type": "integer"}}, required=["metal"])


def one_case(tmp_path, ground_truth, fn=METAL, case_id="simple_python_0"):
    return load(tmp_path, [question(case_id, fn)], [answer(case_id, {fn["name"]: ground_truth})])


# ---------------------------------------------------------------- the mapping

@pytest.fixture(scope="module")
def bfcl():
    return import_bfcl(DATA / "bfcl_questions.jsonl", DATA / "bfcl_answers.jsonl")


def test_categories_languages_and_answers(bfcl):
    got = {case.id: (case.category, case.language) for case in bfcl.cases}
    assert got == {
        "simple_0": ("simple", "en"), "simple_1": ("simple", "zh"), "simple_2": ("simple", "en"),
        "multiple_0": ("multiple", "en"), "parallel_0": ("parallel", "en"),
        "parallel_multiple_0": ("parallel_multiple", "en"), "live_simple_0-0-0": ("simple", "en"),
    }
    parallel = bfcl.case("parallel_0")
    assert [call.name for call in parallel.expected] == ["spotify_play", "spotify_play"]
    assert parallel.expected[1].arguments == {"artist": ["Maroon 5"], "duration": [15]}
    assert bfcl.case("live_simple_0-0-0").messages[0].role == "system"
    assert bfcl.case("simple_2").messages[0].content.startswith("Find the area")
    assert bfcl.skipped == () and bfcl.total == 7


def test_bfcl_types_become_json_schema_types(bfcl):
    hotel = bfcl.tools["hotel.book"].parameters
    assert hotel["type"] == "object" and hotel["properties"]["guest"]["type"] == "object"
    assert bfcl.tools["geometry.circle_area"].parameters["properties"]["radius"]["type"] == "number"
    robot = bfcl.tools["robot.move"].parameters["properties"]
    assert robot["point"]["type"] == "array" and robot["point"]["items"]["type"] == "number"
    assert robot["payload"]["type"] == "string"  # "any": what BFCL sends and checks


def test_functions_that_share_a_name_but_differ_stay_apart(bfcl):
    assert bfcl.case("multiple_0").tools[1] == "calculate_triangle_area"   # same as simple_0
    key = bfcl.case("simple_2").tools[0]
    assert key == "calculate_triangle_area#simple_2"
    assert bfcl.tools[key].name == "calculate_triangle_area"
    assert bfcl.tool_spec(key)["function"]["name"] == "calculate_triangle_area"
    assert bfcl.tools[key].parameters["properties"]["base"]["type"] == "number"


def test_cases_are_scored_like_any_other(bfcl):
    area = bfcl.case("simple_0")
    assert check(area, [{"name": "calculate_triangle_area",
                         "arguments": {"base": 10, "height": 5}}]).arguments_ok
    assert check(area, [{"name": "calculate_triangle_area",
                         "arguments": {"base": 10.0, "height": 5}}]).reason == "wrong_type"
    circle = bfcl.case("simple_1")
    assert check(circle, [{"name": "geometry_circle_area",
                           "arguments": {"radius": 3.5, "units": "Centimeters"}}]).arguments_ok
    hotel = bfcl.case("multiple_0")
    assert check(hotel, [{"name": "hotel_book", "arguments": {
        "hotel": "grand hotel", "city": "Paris", "guest": {"name": "Alice Martin"}}}]).arguments_ok
    sums = bfcl.case("parallel_multiple_0")
    calls = [{"name": "math_toolkit_product_of_primes", "arguments": {"count": 5}},
             {"name": "math_toolkit_sum_of_multiples",
              "arguments": {"lower_limit": 1, "upper_limit": 1000, "multiples": [5, 3]}}]
    assert check(sums, calls).reason == "value_not_accepted"
    for case in bfcl.cases:
        assert check(case, case.reference_calls()).arguments_ok, case.id


def test_irrelevance_needs_no_answers():
    suite = import_bfcl(DATA / "bfcl_irrelevance.jsonl")
    assert [(c.id, c.category, c.language, c.expected) for c in suite.cases] == [
        ("irrelevance_0", "irrelevance", "en", []), ("irrelevance_1", "irrelevance", "zh", [])]
    weight = suite.tools["determine_body_mass_index"].parameters["properties"]["weight"]
    assert weight["type"] == "number"
    assert check(suite.cases[0], []).arguments_ok


def test_load_suite_hands_a_bfcl_question_file_to_the_importer():
    assert len(load_suite(DATA / "bfcl_irrelevance.jsonl").cases) == 2


# ---------------------------------------------------------------- ids and names

def test_v4_ids_name_the_categories(tmp_path):
    fn = function("ping", {"host": {"type": "string"}}, required=["host"])
    ids = ["simple_python_3", "multiple_4", "live_simple_5-1-0", "live_multiple_6-2-1"]
    suite = load(tmp_path, [question(i, fn) for i in ids],
                 [answer(i, {"ping": {"host": ["a"]}}) for i in ids])
    assert [c.category for c in suite.cases] == ["simple", "multiple", "simple", "multiple"]


def test_dotted_names_are_sent_under_an_openai_legal_name_and_map_back(tmp_path):
    suite = one_case(tmp_path, {"metal": ["Bronze"]})
    case = suite.cases[0]
    assert openai_name("statue.cast") == "statue_cast"
    assert suite.tool_spec(case.tools[0])["function"]["name"] == "statue_cast"
    assert case.expected[0].name == "statue_cast"
    assert check(case, [{"name": "statue_cast", "arguments": {"metal": "Bronze"}}]).arguments_ok
    assert suite.bfcl_name(case, "statue_cast") == "statue.cast"
    assert suite.bfcl_names == {"statue.cast": "statue.cast"}
    assert suite.normalised['function name made OpenAI-legal ("." sent as "_")'] == 1


def test_two_names_that_become_one_are_skipped(tmp_path):
    dotted = function("a.b", {"x": {"type": "string"}})
    plain = function("a_b", {"x": {"type": "string"}})
    suite = load(tmp_path, [question("multiple_0", dotted, plain)],
                 [answer("multiple_0", {"a.b": {"x": ["1"]}})])
    assert suite.cases == () and suite.tools == {}
    assert suite.skipped[0].reason == "two functions share one OpenAI-legal name"


# ---------------------------------------------------------------- answer keys outside the schema

def test_a_string_spelled_unlike_its_enum_value_is_respelled(tmp_path):
    suite = one_case(tmp_path, {"metal": ["bronze"], "height": [2, ""]})
    assert suite.cases[0].expected[0].arguments["metal"] == ["Bronze"]
    assert suite.normalised["accepted string respelled as the enum value it matches"] == 1


def test_a_value_outside_the_enum_is_dropped_or_the_case_skipped(tmp_path):
    suite = one_case(tmp_path, {"metal": ["Iron", "steel"]})
    assert suite.cases[0].expected[0].arguments["metal"] == ["Iron"]
    assert suite.normalised["accepted value dropped: outside the schema's enum"] == 1
    suite = one_case(tmp_path, {"metal": ["steel"]})
    assert suite.cases == ()
    assert suite.skipped[0].reason == ("every accepted value of a parameter is outside the "
                                       "schema's enum")
    assert suite.skipped[0].detail == 'statue.cast.metal: "steel"'


def test_may_be_omitted_on_a_required_parameter_is_dropped(tmp_path):
    # BFCL checks required parameters first: leaving one out never passes, "" or not.
    suite = one_case(tmp_path, {"metal": ["Iron", ""]})
    assert suite.cases[0].expected[0].arguments["metal"] == ["Iron"]
    suite = one_case(tmp_path, {"metal": [""]})
    assert suite.skipped[0].reason.endswith('"" (may be left out), but the parameter is required')


def test_a_parameter_the_schema_lacks(tmp_path):
    suite = one_case(tmp_path, {"metal": ["Iron"], "colour": ["red", ""]})
    assert suite.cases[0].expected[0].arguments == {"metal": ["Iron"]}
    suite = one_case(tmp_path, {"metal": ["Iron"], "colour": ["red"]})
    assert suite.skipped[0].reason == "the answer key needs a parameter the function does not have"


def test_null_among_the_accepted_values(tmp_path):
    # "height" has no default: null is not its default, and its type does not allow it.
    suite = one_case(tmp_path, {"metal": ["Iron"], "height": ["", None]})
    assert suite.cases[0].expected[0].arguments["height"] == [""]
    assert not check(suite.cases[0], [{"name": "statue_cast",
                                       "arguments": {"metal": "Iron", "height": None}}]).arguments_ok
    suite = one_case(tmp_path, {"metal": ["Iron"], "height": [None]})
    assert suite.skipped[0].reason.startswith("every accepted value of a parameter is null")


def test_a_parameter_whose_default_is_null_takes_null_as_bfcl_does(tmp_path):
    fn = function("sensor.history", {
        "t0": {"type": "string", "default": None},
        "unit": {"type": "string", "enum": ["c", "f"], "default": None},
        "page": {"type": "integer", "default": 1},
        "serial": {"type": "string"}}, required=[])
    suite = one_case(tmp_path, {"t0": [None, ""], "unit": ["", None], "page": ["", None],
                                "serial": ["", None]}, fn=fn)
    properties = suite.tools["sensor.history"].parameters["properties"]
    assert properties["t0"]["type"] == ["string", "null"]
    assert properties["unit"] == {"type": ["string", "null"], "enum": ["c", "f", None], "default": None}
    assert properties["page"]["type"] == "integer" and properties["serial"]["type"] == "string"
    assert "parameter whose default is null: null added to its type" in suite.normalised
    case = suite.cases[0]

    def passes(**arguments) -> bool:
        return check(case, [{"name": "sensor_history", "arguments": arguments}]).arguments_ok

    assert passes() and passes(t0=None) and passes(unit=None) and passes(t0=None, unit=None)
    assert not passes(page=None)    # its default is 1: null is a value of another type
    assert not passes(serial=None)  # no default at all
    assert not passes(unit="k")     # the enum still holds


def test_a_value_of_another_type_is_dropped_or_the_case_skipped(tmp_path):
    # BFCL takes a string where the schema wants a list for a variable name ("data['x']").
    fn = function("fit", {"x": {"type": "array", "items": {"type": "float"}}}, required=["x"])
    suite = one_case(tmp_path, {"x": [[1, 2], "data['x']"]}, fn=fn)
    assert suite.cases[0].expected[0].arguments["x"] == [[1, 2]]
    suite = one_case(tmp_path, {"x": ["data['x']"]}, fn=fn)
    assert "of another type than the schema's" in suite.skipped[0].reason
    assert suite.skipped[0].detail == "fit.x: \"data['x']\" is not array"


def test_an_object_inside_an_object_is_a_literal(tmp_path):
    point = {"type": "dict", "properties": {"x": {"type": "float"}, "y": {"type": "float"}}}
    fn = function("go", {"to": {"type": "dict", "properties": {"point": point}}}, required=["to"])
    suite = one_case(tmp_path, {"to": [{"point": [{"x": 1.5, "y": 2}]}]}, fn=fn)
    assert suite.cases[0].expected[0].arguments["to"] == [{"point": [{"x": [1.5], "y": [2]}]}]
    call = {"name": "go", "arguments": {"to": {"point": {"x": 1.5, "y": 2}}}}
    assert check(suite.cases[0], [call]).arguments_ok


def test_an_empty_list_of_accepted_values_is_skipped(tmp_path):
    fn = function("log", {"lines": {"type": "array", "items": {"type": "string"}}},
                  required=["lines"])
    suite = one_case(tmp_path, {"lines": []}, fn=fn)
    assert suite.skipped[0].reason.startswith("the answer key accepts no value for a parameter")


# ---------------------------------------------------------------- schema quirks

def test_an_enum_written_as_a_single_string_becomes_a_list(tmp_path):
    fn = function("set_mode", {"mode": {"type": "string", "enum": "eco"}}, required=["mode"])
    suite = one_case(tmp_path, {"mode": ["eco"]}, fn=fn)
    assert suite.tools["set_mode"].parameters["properties"]["mode"]["enum"] == ["eco"]


def test_an_enum_of_the_wrong_type_is_read_in_the_declared_type(tmp_path):
    fn = function("book", {"adults": {"type": "integer", "enum": ["1", "2", "dontcare"]},
                           "pets": {"type": "boolean", "enum": ["True", "False"]},
                           "when": {"type": "integer", "enum": ["dontcare"]}}, required=["adults"])
    suite = one_case(tmp_path, {"adults": [2], "pets": ["", True]}, fn=fn)
    properties = suite.tools["book"].parameters["properties"]
    assert properties["adults"]["enum"] == [1, 2]
    assert properties["pets"]["enum"] == [True, False]
    assert "enum" not in properties["when"] and properties["when"]["type"] == "integer"


def test_an_enum_on_an_array_moves_to_its_items(tmp_path):
    fn = function("track", {"metrics": {"type": "array", "items": {"type": "string"},
                                        "enum": ["buzz", "trust"]}}, required=["metrics"])
    suite = one_case(tmp_path, {"metrics": [["trust", "buzz"]]}, fn=fn)
    metrics = suite.tools["track"].parameters["properties"]["metrics"]
    assert "enum" not in metrics
    assert metrics["items"] == {"type": "string", "enum": ["buzz", "trust"]}


def test_a_type_bfcl_does_not_use_for_python_skips_the_case(tmp_path):
    fn = function("put", {"table": {"type": "HashMap"}}, required=["table"])
    suite = one_case(tmp_path, {"table": [{}]}, fn=fn)
    assert suite.skipped[0].reason == "a type this importer does not know"


# ---------------------------------------------------------------- questions

def test_irrelevance_relevance_and_questions_the_lab_cannot_score(tmp_path):
    fn = function("ping", {"host": {"type": "string"}})
    turns = [[{"role": "user", "content": "a"}], [{"role": "user", "content": "b"}]]
    two_turns = dict(question("irrelevance_1", fn), question=turns)
    suite = load(tmp_path, [question("irrelevance_0", fn), two_turns,
                            dict(question("live_irrelevance_2-0-0"), function=[]),
                            question("live_relevance_3-0-0", fn)])
    assert [c.id for c in suite.cases] == ["irrelevance_0"]
    assert [(s.case_id, s.reason) for s in suite.skipped] == [
        ("irrelevance_1", "the question has more than one turn"),
        ("live_irrelevance_2-0-0", "the question offers no function"),
        ("live_relevance_3-0-0",
         "BFCL only checks that some call is made; the lab's scorer needs an answer key")]
    report = suite.report()
    assert "1 of 4 cases imported" in report and "skipped 3:" in report
    assert "1  the question offers no function (live_irrelevance_2-0-0)" in report


def test_what_the_lab_checks_still_reject_is_skipped_too(tmp_path):
    fn = function("ping", {"host": {"type": "string"}}, required=["host"])
    suite = load(tmp_path, [question("simple_python_0", fn)],
                 [answer("simple_python_0", *[{"ping": {"host": ["a"]}}] * 2)])
    assert suite.skipped[0].reason == "the lab's suite checks reject it"
    assert suite.skipped[0].detail.endswith("expected: a 'simple' case cannot expect 2 call(s)")


def test_a_skipped_case_leaves_no_tool_behind(tmp_path):
    good = function("ping", {"host": {"type": "string"}}, required=["host"])
    lonely = function("pong", {"host": {"type": "string"}}, required=["host"])
    suite = load(tmp_path, [question("simple_python_0", good), question("simple_python_1", lonely)],
                 [answer("simple_python_0", {"ping": {"host": ["a"]}}),
                  answer("simple_python_1", {"pong": {"port": ["1"]}})])
    assert list(suite.tools) == ["ping"] and [c.id for c in suite.cases] == ["simple_python_0"]


# ---------------------------------------------------------------- where the files are read

def bfcl_data(folder: Path) -> Path:
    """A small data/ folder laid out as in the bfcl-eval wheel."""
    fn = function("geo.area", {"side": {"type": "float"}}, required=["side"])
    write_jsonl(folder / "BFCL_v4_simple_python.json", [question("simple_python_0", fn)])
    write_jsonl(folder / "possible_answer" / "BFCL_v4_simple_python.json",
                [answer("simple_python_0", {"geo.area": {"side": [2]}})])
    write_jsonl(folder / "BFCL_v4_irrelevance.json", [question("irrelevance_0", fn)])
    write_jsonl(folder / "BFCL_v4_multi_turn_base.json", [question("multi_turn_base_0", fn)])
    return folder


def test_a_category_from_a_data_folder_the_unpacked_wheel_or_the_wheel(tmp_path):
    data = bfcl_data(tmp_path / "unpacked" / "bfcl_eval" / "data")
    wheel = tmp_path / "bfcl_eval-0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for file in data.rglob("*.json"):
            archive.write(file, f"bfcl_eval/data/{file.relative_to(data).as_posix()}")
    for source in (data, tmp_path / "unpacked", wheel):
        suite = import_bfcl_category(source, "simple_python")
        assert [c.expected[0].name for c in suite.cases] == ["geo_area"], source
        assert len(import_bfcl_category(source, "irrelevance").cases) == 1
    assert import_bfcl_category(wheel, "simple_python").source.endswith(
        "bfcl_eval-0-py3-none-any.whl:bfcl_eval/data/BFCL_v4_simple_python.json")


def test_a_question_file_finds_its_answers_beside_it(tmp_path):
    data = bfcl_data(tmp_path)
    assert len(import_bfcl(data / "BFCL_v4_simple_python.json").cases) == 1


# ---------------------------------------------------------------- bad input: one clear error

def test_a_file_that_is_not_json_lines(tmp_path):
    path = tmp_path / "BFCL_v4_simple_python.json"
    path.write_text(json.dumps({"simple_python": ["simple_python_0"]}, indent=4))
    with pytest.raises(SuiteError) as error:
        import_bfcl(path)
    [problem] = error.value.problems
    assert problem.endswith(
        "BFCL_v4_simple_python.json: line 1: not valid JSON (Expecting property name enclosed in "
        "double quotes); a BFCL file holds one JSON object per line")


def test_a_missing_answers_file(tmp_path):
    data = bfcl_data(tmp_path)
    (data / "possible_answer" / "BFCL_v4_simple_python.json").unlink()
    with pytest.raises(SuiteError, match="BFCL_v4_simple_python.json: no answers file: BFCL keeps "
                                         "them in possible_answer/BFCL_v4_simple_python.json"):
        import_bfcl_category(data, "simple_python")


@pytest.mark.parametrize("category, message", [
    ("multi_turn_base", "category 'multi_turn_base': multi-turn categories are scored by running the calls"),
    ("simple_java", "category 'simple_java': BFCL scores Java and JavaScript cases after "
                    "converting every argument"),
    ("simple_javascript", "category 'simple_javascript': BFCL scores Java and JavaScript"),
    ("memory", "category 'memory': agentic categories are not supported"),
    ("exec_simple", "category 'exec_simple' is not a BFCL single-turn category; choose one of "
                    "simple_python, multiple"),
])
def test_a_category_that_is_refused(tmp_path, category, message):
    with pytest.raises(SuiteError, match=message):
        import_bfcl_category(bfcl_data(tmp_path), category)


def test_a_multi_turn_file_is_refused_by_its_ids(tmp_path):
    data = bfcl_data(tmp_path)
    with pytest.raises(SuiteError, match="BFCL_v4_multi_turn_base.json: line 1: case "
                                         "'multi_turn_base_0': multi-turn categories are scored"):
        import_bfcl(data / "BFCL_v4_multi_turn_base.json")


QUESTION = question("simple_python_7", function("area", {"side": {"type": "float"}}, ["side"]))
ANSWER = answer("simple_python_7", {"area": {"side": [2]}})


def test_the_error_examples_start_from_a_valid_pair(tmp_path):
    assert len(load(tmp_path, [QUESTION], [ANSWER]).cases) == 1


@pytest.mark.parametrize("questions, answers, message", [
    ([QUESTION], [], "q.jsonl: line 1: case 'simple_python_7': no possible answer with this id "
                     "in "),
    ([QUESTION], None, "q.jsonl: no answers file: BFCL keeps them in possible_answer/q.jsonl"),
    ([QUESTION], [ANSWER, answer("simple_python_8")],
     "a.jsonl: line 2: case 'simple_python_8': no question with this id"),
    ([QUESTION], [ANSWER, ANSWER], "a.jsonl: line 2: case 'simple_python_7': a second answer"),
    ([QUESTION, "{not json"], [ANSWER], "q.jsonl: line 2: not valid JSON"),
    ([QUESTION, {"question": "x"}], [ANSWER], "q.jsonl: line 2: needs a string 'id'"),
    ([dict(QUESTION, id="java_7")], [dict(ANSWER, id="java_7")],
     "q.jsonl: line 1: case 'java_7': the id prefix is not a category this importer knows"),
])
def test_errors_name_the_file_the_line_and_what_to_do(tmp_path, questions, answers, message):
    assert message in error_of(tmp_path, questions, answers)


def test_missing_files_and_a_wheel_that_is_not_one(tmp_path):
    with pytest.raises(SuiteError, match="nothing.jsonl: cannot read"):
        import_bfcl(tmp_path / "nothing.jsonl")
    with pytest.raises(SuiteError, match="no BFCL_v4_simple_python.json here"):
        import_bfcl_category(tmp_path, "simple_python")
    fake = tmp_path / "fake.whl"
    fake.write_text("not a zip")
    with pytest.raises(SuiteError, match="fake.whl: not a wheel or zip file"):
        import_bfcl_category(fake, "simple_python")
    with zipfile.ZipFile(tmp_path / "other.whl", "w") as archive:
        archive.writestr("other/data/README.md", "")
    with pytest.raises(SuiteError, match="other.whl: no data/BFCL_v4_simple_python.json in it"):
        import_bfcl_category(tmp_path / "other.whl", "simple_python")


# ---------------------------------------------------------------- the real wheel

BFCL_VERSION = "2026.3.23"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "tool-calling-lab" / "bfcl"

# At least this many cases of each category are imported (of how many BFCL has).
AT_LEAST = {"simple_python": (395, 400), "multiple": (198, 200), "parallel": (198, 200),
            "parallel_multiple": (195, 200), "irrelevance": (240, 240),
            "live_simple": (250, 258), "live_multiple": (1030, 1053), "live_parallel": (15, 16),
            "live_parallel_multiple": (22, 24), "live_irrelevance": (875, 884),
            "live_relevance": (0, 16)}


@pytest.fixture(scope="module")
def wheel() -> Path:
    """The bfcl-eval wheel, which ``.ci/run`` downloads into a cache folder before the tests
    (``pip download bfcl-eval==VERSION --no-deps -d CACHE``), so the suite never waits on the
    network. Missing under CI, that is a failure; elsewhere the test says how to fetch it."""
    found = sorted(CACHE.glob(f"bfcl_eval-{BFCL_VERSION}-*.whl"))
    if found:
        return found[0]
    how = f"python -m pip download bfcl-eval=={BFCL_VERSION} --no-deps -d {CACHE}"
    if os.environ.get("CI"):
        pytest.fail(f"the BFCL wheel is not in {CACHE}: .ci/run should have fetched it ({how})")
    pytest.skip(f"the BFCL wheel is not in {CACHE}; fetch it with: {how}")


def test_every_category_of_the_real_wheel_imports(wheel):
    assert set(AT_LEAST) == set(BFCL_CATEGORIES)
    for category in BFCL_CATEGORIES:
        suite = import_bfcl_category(wheel, category)
        print(suite.report())
        least, total = AT_LEAST[category]
        assert suite.total == total and len(suite.cases) >= least, suite.report()
        assert len(suite.cases) + len(suite.skipped) == total
        for case in suite.cases:
            assert check(case, case.reference_calls()).arguments_ok, case.id
            for key in case.tools:  # sent under a legal name that maps back to BFCL's
                name = suite.tools[key].name
                assert openai_name(suite.bfcl_name(case, name)) == name


def _agreement_benchmark():
    import importlib.util
    path = Path(__file__).parent.parent / "benchmarks" / "bfcl_agreement.py"
    spec = importlib.util.spec_from_file_location("bfcl_agreement", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def checker_imports_undone(monkeypatch):
    """Loading BFCL's checker puts a stub model table in sys.modules and the extracted wheel
    on sys.path; both go back as they were afterwards, so no later test meets the stub."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield
    for name in [name for name in sys.modules if name.split(".")[0] == "bfcl_eval"]:
        del sys.modules[name]


def test_the_scorer_and_bfcls_own_checker_part_only_where_the_data_readme_says(
        wheel, tmp_path, checker_imports_undone):
    """BFCL's ast_checker, imported from the wheel, judges the same calls as the lab's scorer:
    each accepted value, values left out, wrong values and types, extra parameters, another
    function, parallel calls reversed. Every disagreement is of a kind data/README.md explains."""
    agreement = _agreement_benchmark()
    result = agreement.compare(wheel, agreement.CATEGORIES,
                               agreement.load_ast_checker(wheel, tmp_path))
    counts, kinds = result["counts"], result["kinds"]
    assert counts["verdicts"] > 30_000 and counts["both pass"] > 6_000
    assert set(kinds) <= set(agreement.EXPLAINED), {k: v[:2] for k, v in kinds.items()}
    same = counts["both pass"] + counts["both fail"]
    assert same / counts["verdicts"] > 0.995
    by_case = {item[0]: kind for kind, items in kinds.items() for item in items}
    # A null for an optional parameter whose default is null: both checkers pass it now.
    assert "live_multiple_1041-268-0" not in by_case
    # Values outside the schema's enum ("Any" for a genre): BFCL passes them, the lab does not.
    assert by_case["live_multiple_755-169-10"] == by_case["live_multiple_870-182-7"] == "off_enum"
    readme = (Path(__file__).parent.parent / "data" / "README.md").read_text(encoding="utf-8")
    for kind in kinds:
        assert f"`{kind}`" in readme, f"data/README.md does not explain {kind}"
