"""The graders of labs 01-04: they pass the reference solutions, report stubs as not done,
and fail typical wrong answers with feedback that names the failing case."""

import json
import math
import re

from labs.grading import NotDoneYet


def stub(*args, **kwargs):
    raise NotDoneYet


def failing_cases(report) -> str:
    return "\n".join(f"{o.case}: {o.note}" for o in report.failures)


# --------------------------------------------------------------------------- lab 01

def test_read_and_run_passes_the_solution():
    from labs.graders.read_and_run import grade
    from labs.solutions.read_and_run import run_reply

    report = grade(run_reply)
    assert report.passed, str(report)


def test_read_and_run_passes_the_solution_whatever_the_seed():
    from labs.graders.read_and_run import grade
    from labs.solutions.read_and_run import run_reply

    for seed in range(10):
        report = grade(run_reply, seed=seed)
        assert report.passed, str(report)
        assert sum(o.case.startswith("made-up case") for o in report.outcomes) == 7


def test_read_and_run_a_table_of_the_public_cases_fails_the_made_up_ones():
    from labs.graders.read_and_run import CASES, REFUSALS, grade
    from labs.solutions.read_and_run import run_reply

    public_tools = {"square_root": math.sqrt, "cube": lambda x: x ** 3}
    table = {text: expected for _, text, expected in CASES}
    table |= {text: run_reply(text, public_tools) for _, text, _, _ in REFUSALS}

    report = grade(lambda text, tools: table[text], seed=3)
    failed = [o.case for o in report.failures]
    assert len(failed) == 7 and all(case.startswith("made-up case") for case in failed), failed
    assert "raised KeyError" in failing_cases(report)


def test_read_and_run_code_that_knows_only_the_public_tools_fails_the_made_up_ones():
    from labs.graders.read_and_run import grade

    known = {"square_root": math.sqrt, "cube": lambda x: x ** 3}

    def public_tools_only(text, tools):  # reads the call but runs its own copy of the two tools
        found = re.search(r"CALL\s+([\w.]+)\s*\(([^)]*)\)", text)
        if not found:
            return None
        if found.group(1) not in known:
            return f"Error: there is no tool named {found.group(1)}. Call one of {sorted(tools)}."
        try:
            return str(known[found.group(1)](float(found.group(2))))
        except ValueError:
            return f"Error: {found.group(2)} is not a number"

    report = grade(public_tools_only, seed=5)
    assert not report.passed
    assert all(o.case.startswith("made-up case") for o in report.failures)
    assert "made-up case 1" in failing_cases(report)


def test_read_and_run_reports_a_stub_as_not_done():
    from labs.graders.read_and_run import grade

    report = grade(stub)
    assert not report.passed and "not done yet" in str(report)


def test_read_and_run_catches_eval():
    from labs.graders.read_and_run import grade

    def with_eval(text, tools):  # runs whatever the model wrote: the mistake the lab is about
        found = re.search(r"CALL (.*)", text)
        if not found:
            return None
        try:
            return str(eval(found.group(1), {"print": lambda *a: None}, dict(tools)))
        except Exception as error:
            return f"Error: {error}"

    report = grade(with_eval)
    assert not report.passed
    assert "a Python built-in is not a tool" in failing_cases(report)
    assert "a call with text around it" in failing_cases(report)


def test_read_and_run_catches_a_missing_allow_list():
    from labs.graders.read_and_run import grade

    def runs_any_math_function(text, tools):
        found = re.search(r"CALL\s+(\w+)\s*\(([^)]*)\)", text)
        if not found:
            return None
        return str(getattr(math, found.group(1), tools.get(found.group(1)))(float(found.group(2))))

    report = grade(runs_any_math_function)
    failures = failing_cases(report)
    assert "a Python built-in is not a tool" in failures or "an argument that is not a number" in failures
    assert "raised" in failures  # the exception is reported, not raised


def test_read_and_run_rejects_an_error_text_that_breaks_the_rule():
    from labs.graders.read_and_run import grade
    from labs.solutions.read_and_run import run_reply

    def lowercase_errors(text, tools):  # refuses the right calls, in the wrong words
        result = run_reply(text, tools)
        return result.replace("Error: ", "error: ", 1) if result and result.startswith("Error: ") else result

    report = grade(lowercase_errors)
    failures = failing_cases(report)
    assert not report.passed
    assert "a name that was never offered" in failures and "start the text with exactly 'Error: '" in failures
    assert "one call" not in failures  # the calls that should run still pass


def test_read_and_run_rejects_a_refusal_that_only_repeats_the_reply():
    """"Error: " + the reply holds the name and the argument, but says neither what failed nor
    what to do next."""
    from labs.graders.read_and_run import REFUSALS, grade
    from labs.solutions.read_and_run import run_reply

    def echo_refusals(text, tools):  # runs the right calls, refuses the right ones, says nothing
        result = run_reply(text, tools)
        return "Error: " + text if result and result.startswith("Error: ") else result

    for seed in range(5):
        report = grade(echo_refusals, seed=seed)
        failures = failing_cases(report)
        assert not report.passed
        assert "a name that was never offered: say which tools there are (cube, square_root)" in failures
        assert "an argument that is not a number: say that the argument is not a number" in failures
        assert "made-up case 6: a name that was never offered: say which tools there are" in failures
        assert "made-up case 7: an argument that is not a number: say that the argument is not a number" in failures
        refusals = {case for case, *_ in REFUSALS} | {"made-up case 6: a name that was never offered",
                                                      "made-up case 7: an argument that is not a number"}
        assert {o.case for o in report.failures} == refusals  # only the refusals fail
        assert grade(run_reply, seed=seed).passed


# --------------------------------------------------------------------------- lab 02a

def test_extract_regex_passes_the_solution():
    from labs.graders.extract_regex import grade
    from labs.solutions.extract_regex import extract_calls

    report = grade(extract_calls)
    assert report.passed, str(report)


def test_extract_regex_passes_the_solution_whatever_the_seed():
    from labs.graders.extract_regex import KINDS, grade
    from labs.solutions.extract_regex import extract_calls

    for seed in range(10):
        report = grade(extract_calls, seed=seed)
        assert report.passed, str(report)
        assert sum(o.case.startswith("made-up case") for o in report.outcomes) == len(KINDS)


def test_extract_regex_a_table_of_the_public_cases_fails_the_made_up_ones():
    from labs.graders.extract_regex import CASES, grade

    table = {text: expected for _, text, expected in CASES}

    report = grade(lambda text: table.get(text, []), seed=4)
    failed = [o.case for o in report.failures]
    # every made-up reply with a call fails; the one without a call is answered by the [] default
    assert failed == [f"made-up case {n}: {kind}" for n, kind in enumerate(
        ["one call", "several calls", "several calls, a closing tag forgotten",
         "a closing tag forgotten at the end", "code fences"], start=1)], failed


def test_extract_regex_reports_a_stub_as_not_done():
    from labs.graders.extract_regex import grade

    report = grade(stub)
    assert not report.passed and "not done yet" in str(report)


def test_extract_regex_fails_the_classic_parser_and_names_the_cases():
    from labs.graders.extract_regex import grade

    def classic(text):  # the first-match parser from the seed article
        match = re.search(r"<tool>(.*?)</tool>", text, re.DOTALL)
        if not match:
            return []
        try:
            return [json.loads(match.group(1))]
        except json.JSONDecodeError:
            return []

    report = grade(classic)
    text = str(report)
    assert "several calls in one reply: found 1 call(s), expected 2" in text
    assert "missing closing tag at the end" in text
    assert "code fence inside the tags" in text
    assert "input:" in text


def test_extract_regex_fails_a_regex_without_dotall():
    from labs.graders.extract_regex import grade

    def no_dotall(text):
        return [{"name": c["name"], "arguments": c["arguments"]}
                for c in map(json.loads, re.findall(r"<tool>(.*?)</tool>", text))]

    report = grade(no_dotall)
    failures = failing_cases(report)
    assert "JSON spread over several lines" in failures
    assert "several calls in one reply" not in failures


# --------------------------------------------------------------------------- lab 02b

def test_json_repair_passes_the_solution():
    from labs.graders.json_repair import grade
    from labs.solutions.json_repair import repair

    report = grade(repair)
    assert report.passed, str(report)


def test_json_repair_passes_the_solution_whatever_the_seed():
    from labs.graders.json_repair import grade
    from labs.solutions.json_repair import repair

    for seed in range(60):
        report = grade(repair, seed=seed)
        assert report.passed, str(report)
        assert sum(o.case.startswith("made-up case") for o in report.outcomes) == 8


def test_json_repair_passes_the_toolkit_and_the_library():
    """The toolkit passes every case; the json_repair library passes the public ones (it misreads
    an object with two values in smart quotes, which made-up cases may hold)."""
    import json_repair

    from labs.graders.json_repair import grade
    from toolkit.repair import repair_json

    for seed in range(20):
        report = grade(lambda text: json.loads(repair_json(text)), seed=seed)
        assert report.passed, str(report)
    public = [o for o in grade(json_repair.loads, seed=0).outcomes if not o.case.startswith("made-up case")]
    assert len(public) == 13 and all(o.passed for o in public)


def test_json_repair_a_table_of_the_public_cases_fails_the_made_up_ones():
    from labs.graders.json_repair import CASES, grade

    table = {text: expected for _, text, expected in CASES}

    def look_up(text):
        return table[text]

    report = grade(look_up, seed=7)
    failed = [o.case for o in report.failures]
    assert len(failed) == 8 and all(case.startswith("made-up case") for case in failed), failed
    assert "made-up case 3: single quotes: raised KeyError" in failing_cases(report)


def test_json_repair_reports_a_stub_as_not_done():
    from labs.graders.json_repair import grade

    report = grade(stub)
    assert not report.passed and "not done yet" in str(report)


def test_json_repair_catches_blind_quote_replacement():
    from labs.graders.json_repair import grade

    def blind(text):
        text = text.replace("'", '"')
        return json.loads(re.sub(r",(\s*[}\]])", r"\1", text))

    report = grade(blind)
    failures = failing_cases(report)
    assert "inside strings: an apostrophe in a double-quoted value" in failures
    assert "inside strings: ',}' in a value is not a trailing comma" in failures
    assert "trailing comma in an object" not in failures


def test_json_repair_catches_comment_removal_that_breaks_urls():
    from labs.graders.json_repair import grade

    def strips_slashes(text):
        text = re.sub(r"//[^\n]*", "", text)
        text = re.sub(r"/\*.*?\*/", "", text)
        return json.loads(re.sub(r",(\s*[}\]])", r"\1", text))

    report = grade(strips_slashes)
    assert "inside strings: // in a URL is not a comment" in failing_cases(report)
    assert "got:" in str(report) or "raised" in str(report)


# --------------------------------------------------------------------------- lab 03

def test_feed_results_back_passes_the_solution():
    from labs.graders.feed_results_back import grade
    from labs.solutions.feed_results_back import add_round, results_message

    report = grade(results_message, add_round)
    assert report.passed, str(report)


def test_feed_results_back_passes_the_solution_whatever_the_seed():
    from labs.graders.feed_results_back import grade
    from labs.solutions.feed_results_back import add_round, results_message

    for seed in range(10):
        report = grade(results_message, add_round, seed=seed)
        assert report.passed, str(report)
        assert sum("made-up" in o.case for o in report.outcomes) == 7


def test_feed_results_back_a_table_of_the_public_cases_fails_the_made_up_ones():
    from labs.graders.feed_results_back import HISTORY, MESSAGE_CASES, grade
    from labs.solutions.feed_results_back import results_message

    table = {(str(calls), str(finished)): expected for _, calls, finished, expected in MESSAGE_CASES}

    def look_up(calls, finished):
        return table[str(calls), str(finished)]

    def fixed_round(history, reply, calls, finished):  # the public round's answer, whatever is asked
        return [*HISTORY, {"role": "assistant", "content": reply},
                {"role": "user", "content": results_message(calls[:2], finished)}]

    report = grade(look_up, fixed_round, seed=6)
    failed = [o.case for o in report.failures]
    assert all("made-up" in case for case in failed), failed
    assert sum(case.startswith("results_message: made-up case") for case in failed) == 5
    assert "add_round on a made-up later round" in failed


def test_feed_results_back_reports_a_stub_as_not_done():
    from labs.graders.feed_results_back import grade

    report = grade(stub, stub)
    assert not report.passed and "not done yet" in str(report)


def test_feed_results_back_catches_pairing_by_position():
    from labs.graders.feed_results_back import grade
    from labs.solutions.feed_results_back import add_round

    def by_position(calls, finished):
        return "\n".join(f'<tool_result id="{c["id"]}" name="{c["name"]}">\n{result}\n</tool_result>'
                         for c, (_, result) in zip(calls, finished))

    report = grade(by_position, add_round)
    assert "two results that finished in the other order" in failing_cases(report)
    assert "pair results with calls by id, not by position" in failing_cases(report)


def test_feed_results_back_catches_finishing_order_and_a_changed_history():
    from labs.graders.feed_results_back import grade
    from labs.solutions.feed_results_back import results_message

    def in_finishing_order(calls, finished):
        names = {c["id"]: c["name"] for c in calls}
        return "\n".join(f'<tool_result id="{i}" name="{names[i]}">\n{r}\n</tool_result>'
                         for i, r in finished if i in names)

    def appends_in_place(history, reply, calls, finished):
        history += [{"role": "assistant", "content": reply},
                    {"role": "user", "content": results_message(calls, finished)}]
        return history

    report = grade(in_finishing_order, appends_in_place)
    failures = failing_cases(report)
    assert "the right blocks, in the wrong order" in failures
    assert "add_round leaves the caller's history alone" in failures


def test_feed_results_back_rejects_a_missing_result_that_breaks_the_error_rule():
    from labs.graders.feed_results_back import grade
    from labs.solutions.feed_results_back import add_round

    def lowercase_no_result(calls, finished):  # pairs by id, but words the gap the old way
        by_id = dict(finished)
        return "\n".join(f'<tool_result id="{c["id"]}" name="{c["name"]}">\n{by_id.get(c["id"], "error: no result")}'
                         "\n</tool_result>" for c in calls)

    report = grade(lowercase_no_result, add_round)
    failures = failing_cases(report)
    assert "a call whose tool never finished" in failures and "start with 'Error: '" in failures
    assert "two results that finished in the other order" not in failures


# --------------------------------------------------------------------------- lab 04

def test_tool_schema_passes_the_solution():
    from labs.graders.tool_schema_by_hand import grade
    from labs.solutions.tool_schema_by_hand import order_status_tool, weather_tool

    report = grade(order_status_tool, weather_tool)
    assert report.passed, str(report)


def test_tool_schema_passes_the_solution_whatever_the_seed():
    from labs.graders.tool_schema_by_hand import grade
    from labs.solutions.tool_schema_by_hand import order_status_tool, weather_tool

    for seed in range(10):
        report = grade(order_status_tool, weather_tool, seed=seed)
        assert report.passed, str(report)
        assert sum("made-up case" in o.case for o in report.outcomes) == 12


def test_tool_schema_that_lists_the_public_values_fails_the_made_up_ones():
    from labs.graders.tool_schema_by_hand import grade
    from labs.solutions.tool_schema_by_hand import order_status_tool, weather_tool

    def only_the_public_order():  # the public argument sets as an enum instead of "a string"
        tool = order_status_tool()
        tool["function"]["parameters"]["properties"]["order_id"]["enum"] = ["A1024"]
        return tool

    def only_the_public_cities():
        tool = weather_tool()
        tool["function"]["parameters"]["properties"]["city"]["enum"] = ["Beijing", "Shanghai"]
        return tool

    report = grade(only_the_public_order, only_the_public_cities, seed=2)
    failed = [o.case for o in report.failures]
    assert failed and all("made-up case: accepts" in case for case in failed), failed
    assert {case.split(":")[0] for case in failed} == {"get_order_status", "get_weather"}
    assert "follow the spec but the schema rejects them" in failing_cases(report)


def test_tool_schema_reports_a_stub_as_not_done():
    from labs.graders.tool_schema_by_hand import grade

    report = grade(stub, stub)
    assert not report.passed and "not done yet" in str(report)


def test_tool_schema_catches_a_free_string_unit_and_a_wrong_required():
    from labs.graders.tool_schema_by_hand import grade
    from labs.solutions.tool_schema_by_hand import order_status_tool, weather_tool

    def free_unit():
        tool = weather_tool()
        parameters = tool["function"]["parameters"]
        del parameters["properties"]["unit"]["enum"]
        parameters["required"] = ["city", "unit"]
        return tool

    report = grade(order_status_tool, free_unit)
    failures = failing_cases(report)
    assert 'get_weather: enum of unit: unit has a fixed set of values: list them in "enum"' in failures
    assert "unit is optional, so leave it out of required" in failures
    assert "get_order_status" not in failures


def test_tool_schema_catches_an_old_order_tool_name_and_extra_arguments():
    from labs.graders.tool_schema_by_hand import grade
    from labs.solutions.tool_schema_by_hand import order_status_tool, weather_tool

    def old_name_open_arguments():  # the name every other lesson and lab spells differently
        tool = order_status_tool()
        tool["function"]["name"] = "query_order_status"
        del tool["function"]["parameters"]["additionalProperties"]
        return tool

    report = grade(old_name_open_arguments, weather_tool)
    failures = failing_cases(report)
    assert "get_order_status: name" in failures
    assert "get_order_status: no other arguments" in failures
    assert "get_order_status: rejects {'order_id': 'A1024', 'priority': 'high'}" in failures


def test_tool_schema_catches_a_bare_function_capitalised_enum_and_no_descriptions():
    from labs.graders.tool_schema_by_hand import grade
    from labs.solutions.tool_schema_by_hand import order_status_tool, weather_tool

    def bare_weather():
        function = weather_tool()["function"]
        function["parameters"]["properties"]["unit"]["enum"] = ["Celsius", "Fahrenheit"]
        return function  # the inner dict only

    def undocumented_order():
        tool = order_status_tool()
        for schema in tool["function"]["parameters"]["properties"].values():
            schema.pop("description")
        tool["function"]["description"] = "orders"
        return tool

    report = grade(undocumented_order, bare_weather)
    failures = failing_cases(report)
    assert 'get_weather: shape: the outer dict must be {"type": "function"' in failures
    assert "get_order_status: description of order_id" in failures
    assert "get_order_status: description:" in failures

    def capitalised():
        tool = weather_tool()
        tool["function"]["parameters"]["properties"]["unit"]["enum"] = ["Celsius", "Fahrenheit"]
        return tool

    report = grade(order_status_tool, capitalised)
    assert "get_weather: enum of unit" in failing_cases(report)
    assert "not in the spec: ['Celsius', 'Fahrenheit']" in failing_cases(report)


def test_tool_schema_reports_an_invalid_json_schema():
    from labs.graders.tool_schema_by_hand import grade
    from labs.solutions.tool_schema_by_hand import order_status_tool, weather_tool

    def invalid():
        tool = weather_tool()
        tool["function"]["parameters"]["required"] = "city"  # must be a list
        return tool

    report = grade(order_status_tool, invalid)
    assert "get_weather: parameters is valid JSON Schema: jsonschema says:" in failing_cases(report)
