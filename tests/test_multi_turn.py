"""BFCL's multi-turn categories: reading them, the simulated APIs called safely, the judge
against BFCL's own checker, and conversations run with the loop on a scripted model.

The small files written here follow BFCL's format but are made up for these tests; the real
cases, documents and APIs are read from the bfcl-eval wheel that ``.ci/run`` caches.
"""
import json
import sys
from pathlib import Path

import pytest

from tests.test_bfcl import BFCL_VERSION, CACHE
from toolkit.bench.multi_turn_apis import Call, World, api_classes, parse_call, toolset
from toolkit.bench.multi_turn_check import differences, judge_conversation, pass_hat_k
from toolkit.bench.multi_turn_data import (
    MULTI_TURN_CATEGORIES,
    NEW_FUNCTIONS_PROMPT,
    import_multi_turn,
    is_multi_turn_file,
)
from toolkit.bench.multi_turn_run import read_runs, run_case, run_cases, summary, trajectory
from toolkit.bench.suite_checks import SuiteError
from toolkit.fake import ScriptedModel, call, calls, text
from toolkit.lab_error import LabError
from toolkit.schema import ToolArgumentsError


@pytest.fixture(scope="module")
def wheel() -> Path:
    found = sorted(CACHE.glob(f"bfcl_eval-{BFCL_VERSION}-*.whl"))
    if not found:
        pytest.skip(f"the BFCL wheel is not in {CACHE}: python -m pip download "
                    f"bfcl-eval=={BFCL_VERSION} --no-deps -d {CACHE}")
    return found[0]


@pytest.fixture(scope="module")
def base(wheel):
    suite = import_multi_turn(wheel, "multi_turn_base")
    return suite, api_classes(suite.apis, suite.docs)


@pytest.fixture(scope="module")
def miss_func(wheel):
    suite = import_multi_turn(wheel, "multi_turn_miss_func")
    return suite, api_classes(suite.apis, suite.docs)


def one_api(suite, name="GorillaFileSystem"):
    """The first case that uses only ``name``: its prompt fits a small model's context."""
    return next(case for case in suite.cases if case.classes == (name,))


# ---------------------------------------------------------------- the files

def folder(tmp_path, questions, answers=None, docs=None):
    """A data/ folder in BFCL's layout, holding what the test gives."""
    data = tmp_path / "data"
    (data / "possible_answer").mkdir(parents=True)
    (data / "multi_turn_func_doc").mkdir()
    write = lambda path, rows: path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    write(data / "BFCL_v4_multi_turn_base.json", questions)
    if answers is not None:
        write(data / "possible_answer" / "BFCL_v4_multi_turn_base.json", answers)
    for name, rows in (docs if docs is not None else {"ticket_api.json": [LOGIN]}).items():
        write(data / "multi_turn_func_doc" / name, rows)
    return data


LOGIN = {"name": "ticket_login", "description": "Log in.",
         "parameters": {"type": "dict", "properties": {"username": {"type": "string"}}, "required": ["username"]}}


def question(**changes):
    record = {"id": "multi_turn_base_0", "question": [[{"role": "user", "content": "Log me in as ann."}],
                                                      [{"role": "user", "content": "Thanks."}]],
              "initial_config": {"TicketAPI": {}}, "involved_classes": ["TicketAPI"]}
    return {**record, **changes}


ANSWER = {"id": "multi_turn_base_0", "ground_truth": [["ticket_login(username='ann')"], []]}


def test_a_small_file_in_bfcls_layout_is_read_with_its_answers_and_documents(tmp_path):
    suite = import_multi_turn(folder(tmp_path, [question()], [ANSWER]) / "BFCL_v4_multi_turn_base.json")
    case = suite.cases[0]
    assert (suite.category, case.classes, case.abstain_turns) == ("multi_turn_base", ("TicketAPI",), (1,))
    assert [doc["name"] for doc in case.functions] == ["ticket_login"]
    assert case.user_messages(0) == [{"role": "user", "content": "Log me in as ann."}]
    assert is_multi_turn_file("x/BFCL_v4_multi_turn_base.json") and not is_multi_turn_file("BFCL_v4_simple_python.json")


@pytest.mark.parametrize("records, answers, docs, message", [
    ([question()], None, None, "no such file (no answers file"),
    ([question(involved_classes=["ShopAPI"])], [ANSWER], None, "the API class 'ShopAPI' is not one of BFCL's"),
    ([question(initial_config={"ShopAPI": {}})], [ANSWER], None,
     "'initial_config' names an API class that is not one of BFCL's (ShopAPI)"),
    ([question()], [{**ANSWER, "ground_truth": [[]]}], None, "2 turns asked but 1 answered"),
    ([question()], [{**ANSWER, "id": "multi_turn_base_9"}], None, "no answer with this id"),
    ([question(missed_function={"1": ["ticket_logout"]})], [ANSWER], None, "turn 1, which must be an empty turn"),
    ([question(question=[[{"role": "user", "content": "Hi"}], []], missed_function={"1": ["ticket_logout"]})],
     [ANSWER], None, "the held-back function 'ticket_logout' is in none of the case's APIs"),
    ([question()], [ANSWER], {},
     "multi_turn_func_doc/ticket_api.json: no such file (the function documents of TicketAPI)"),
    (["not json"], [ANSWER], None, "line 1: not valid JSON"),
])
def test_a_file_that_is_not_what_it_should_be_is_refused_with_the_place(tmp_path, records, answers, docs, message):
    data = folder(tmp_path, records, answers, docs)
    if records == ["not json"]:
        (data / "BFCL_v4_multi_turn_base.json").write_text("not json", encoding="utf-8")
    with pytest.raises(SuiteError, match=message.replace("(", r"\(").replace(")", r"\)")):
        import_multi_turn(data, "multi_turn_base")


def test_a_single_turn_name_or_a_missing_place_is_refused(tmp_path):
    with pytest.raises(SuiteError, match="not a BFCL multi-turn question file"):
        import_multi_turn(tmp_path / "BFCL_v4_simple_python.json")
    with pytest.raises(SuiteError, match="no such file or folder"):
        import_multi_turn(tmp_path / "nowhere", "multi_turn_base")
    with pytest.raises(SuiteError, match="not a BFCL multi-turn category"):
        import_multi_turn(tmp_path, "simple_python")


def test_the_four_categories_come_from_the_wheel_with_their_missing_functions(wheel):
    sizes = {category: import_multi_turn(wheel, category) for category in MULTI_TURN_CATEGORIES}
    assert all(len(suite.cases) == 200 for suite in sizes.values())
    case = sizes["multi_turn_miss_func"].cases[0]
    (turn, arriving), = case.held_back.items()
    names = [doc["name"] for doc in case.functions]
    assert all(doc["name"] not in names for doc in arriving)  # held back until its turn
    assert case.user_messages(turn) == [{"role": "user", "content": NEW_FUNCTIONS_PROMPT}]
    assert case.ground_truth[case.abstain_turns[0]] == ()  # the turn that needed it makes no call
    assert all(case.abstain_turns for case in sizes["multi_turn_miss_param"].cases)


# ---------------------------------------------------------------- the APIs, called safely

def test_the_api_classes_are_imported_from_the_wheel_itself(base):
    suite, classes = base
    assert set(classes) == set(suite.docs)
    assert all(".whl" in sys.modules[cls.__module__].__file__ for cls in classes.values())


def test_an_unknown_class_is_a_clear_error(base):
    with pytest.raises(LabError, match="ShopAPI is not one of BFCL's multi-turn APIs"):
        api_classes(None, ["ShopAPI"])


def test_an_absent_wheel_is_a_clear_error(tmp_path, monkeypatch):
    """Offline with no wheel in the cache, or a path that is not a wheel: a message that says
    what to fetch, never a traceback. (Run where the APIs are not imported yet.)"""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    for name in [name for name in sys.modules if name.split(".")[0] == "bfcl_eval"]:
        monkeypatch.delitem(sys.modules, name)
    with pytest.raises(LabError, match="which is not in the cache; fetch it once"):
        api_classes(None, ["GorillaFileSystem"])
    with pytest.raises(LabError, match="no such file"):
        api_classes(tmp_path / "missing.whl", ["GorillaFileSystem"])
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(LabError, match="not a wheel"):
        api_classes(tmp_path / "notes.txt", ["GorillaFileSystem"])


def test_answer_strings_are_parsed_never_evaluated():
    assert parse_call("sort('final_report.pdf')") == ("sort", ["final_report.pdf"], {})
    assert parse_call("tail(file_name='log.txt',lines=20)") == ("tail", [], {"file_name": "log.txt", "lines": 20})
    for hostile in ("cd(folder=__import__('os').getcwd())", "os.system('ls')", "cd(folder=x)", "1 + 1", "cd("):
        with pytest.raises(ValueError, match="not a call with literal arguments"):
            parse_call(hostile)


def test_only_public_methods_of_the_cases_classes_can_be_reached(base):
    suite, classes = base
    world = World(one_api(suite), classes)
    assert world.run(Call("pwd", {})) .startswith('{"current_working_directory"')
    for name in ("_load_scenario", "__init__", "post_tweet", "system"):  # private; another class's; none
        assert world.run(Call(name, {})) == f"Error during execution: name {name!r} is not defined"
    assert world.run(Call("cd", {"no_such": 1})).startswith("Error during execution:")
    assert world.bind("sort", ["a.txt"]) == Call("sort", {"file_name": "a.txt"})


def test_the_models_arguments_are_checked_against_bfcls_document_before_anything_runs(base):
    suite, classes = base
    case = one_api(suite)
    world = World(case, classes)
    tools = toolset(world, case.functions)
    before = world.state()
    with pytest.raises(ToolArgumentsError, match="folder"):
        tools.get("cd").invoke({"folder": 3})
    with pytest.raises(ToolArgumentsError, match="required"):
        tools.get("mkdir").invoke({})
    assert world.state() == before
    assert tools.get("mkdir").invoke({"dir_name": "new"}) == "None"
    assert world.state() != before


# ---------------------------------------------------------------- the judge

def answer_as_calls(world, case):
    return [[[world.bind(*parse_call(text)) for text in turn]] if turn else [] for turn in case.ground_truth]


def test_the_answer_passes_every_turn(base):
    suite, classes = base
    case = suite.cases[0]
    verdict = judge_conversation(case, answer_as_calls(World(case, classes), case), classes)
    assert verdict.valid and verdict.turn_credit == 1.0 and verdict.reason is None


def test_a_misplaced_file_fails_that_turn_with_the_difference_in_words(base):
    suite, classes = base
    case = suite.cases[0]  # turn 1: cd document, mkdir temp, mv final_report.pdf temp
    world = World(case, classes)
    made = answer_as_calls(world, case)
    made[0] = [[call for call in made[0][0] if call.name != "mv"]]
    verdict = judge_conversation(case, made, classes)
    assert not verdict.valid and verdict.failed_turn == 0
    assert verdict.error_type == "multi_turn:instance_state_mismatch"
    assert "the file `final_report.pdf` is missing from `/workspace/document/temp`" in verdict.reason
    assert verdict.reason.startswith("after turn 1 ")
    assert not verdict.turns[0].ok and verdict.turns_right < len(case.ground_truth)


def test_a_call_on_a_turn_that_should_abstain_costs_that_turn_only(miss_func):
    suite, classes = miss_func
    case = suite.cases[0]
    world = World(case, classes)
    made = answer_as_calls(world, case)
    abstain = case.abstain_turns[0]
    made[abstain] = [[world.bind("ls", [], {})]]  # a harmless read where the function is missing
    verdict = judge_conversation(case, made, classes)
    assert verdict.valid  # BFCL's verdict does not look at abstain turns
    assert not verdict.turns[abstain].ok and "should make no call" in verdict.turns[abstain].reason
    assert verdict.turns_right == len(case.ground_truth) - 1


def test_a_run_stopped_by_the_step_limit_fails_and_the_rest_is_not_reached(base):
    suite, classes = base
    case = suite.cases[0]
    made = answer_as_calls(World(case, classes), case)[:2]
    verdict = judge_conversation(case, made, classes)
    assert not verdict.valid and verdict.error_type == "multi_turn:force_terminated"
    assert [turn.reached for turn in verdict.turns] == [True, True] + [False] * (len(case.ground_truth) - 2)
    assert verdict.turns[0].ok and verdict.turns[1].ok


def test_differences_name_plain_attributes_too(wheel):
    suite = import_multi_turn(wheel, "multi_turn_base")
    case = next(case for case in suite.cases if case.classes == ("VehicleControlAPI",))
    classes = api_classes(suite.apis, suite.docs)
    model, truth = World(case, classes), World(case, classes)
    truth.run(Call("lockDoors", {"unlock": True, "door": ["driver"]}))
    assert differences(model, truth) == [
        "VehicleControlAPI.remainingUnlockedDoors is 0, where it should be 1",
        "VehicleControlAPI.doorStatus['driver'] is 'locked', where it should be 'unlocked'"]


def test_pass_hat_k_is_taus_estimate():
    assert pass_hat_k(4, 4, 3) == 1.0
    assert pass_hat_k(2, 4, 2) == pytest.approx(1 / 6)
    assert pass_hat_k(3, 4, 1) == 0.75
    assert pass_hat_k(1, 4, 2) == 0.0
    with pytest.raises(ValueError, match="between 1 and the number of tries"):
        pass_hat_k(1, 4, 5)


def test_the_judge_and_bfcls_own_checker_agree(wheel):
    """BFCL's multi_turn_checker, run from the wheel, on the answers and on mutated answers of all
    800 cases: at least 99.5% the same verdicts, and no difference data/README.md does not explain."""
    import importlib.util
    path = Path(__file__).parent.parent / "benchmarks" / "bfcl_multi_turn_agreement.py"
    spec = importlib.util.spec_from_file_location("bfcl_multi_turn_agreement", path)
    agreement = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(agreement)
    result = agreement.compare(wheel, MULTI_TURN_CATEGORIES, agreement.load_bfcl_checker(wheel))
    counts = result["counts"]
    assert counts["verdicts"] > 3000 and counts["answer"] == 800
    assert counts["both pass"] > 1000 and counts["both fail"] > 1000  # both verdicts occur often
    assert (counts["both pass"] + counts["both fail"]) / counts["verdicts"] >= 0.995
    assert set(result["kinds"]) <= set(agreement.EXPLAINED), {k: v[:2] for k, v in result["kinds"].items()}


# ---------------------------------------------------------------- conversations on a scripted model

def scripted_answer(case, world):
    """Replies that make the answer's calls at each turn, then say they are done."""
    replies = []
    for turn in case.ground_truth:
        if turn:
            replies.append(calls(*[call(c.name, c.arguments) for c in (world.bind(*parse_call(t)) for t in turn)]))
        replies.append(text("Done."))
    return replies


def test_a_conversation_is_run_turn_after_turn_and_judged_right(base):
    suite, classes = base
    case = one_api(suite)
    model = ScriptedModel(scripted_answer(case, World(case, classes)))
    run = run_case(model.backend(), case, classes, settings={"temperature": 0})
    assert [turn.stop_reason for turn in run.turns] == ["answered"] * len(case.turns)
    assert judge_conversation(case, trajectory(run), classes).valid
    # each turn's request carries the conversation so far: the user's earlier words included
    last = model.requests[-1]["messages"]
    assert [m["content"] for m in last if m["role"] == "user"] == [m[0]["content"] for m in case.turns]


def test_the_held_back_function_is_offered_only_from_its_turn(miss_func):
    suite, classes = miss_func
    case = miss_func[0].cases[0]
    (turn, arriving), = case.held_back.items()
    model = ScriptedModel([text("I cannot do that yet.")] * len(case.turns))
    run = run_case(model.backend(), case, classes)
    offered = [[tool["function"]["name"] for tool in request["tools"]] for request in model.requests]
    name = arriving[0]["name"]
    assert [name in names for names in offered] == [index >= turn for index in range(len(case.turns))]
    assert run.turns[turn].user == [{"role": "user", "content": NEW_FUNCTIONS_PROMPT}]


def test_bad_calls_come_back_to_the_model_as_tool_errors(base):
    suite, classes = base
    case = one_api(suite)
    model = ScriptedModel([calls(call("_load_scenario", {"scenario": {}}), call("cd", {"folder": 7}),
                                 call("post_tweet", {"content": "hi"})), text("Sorry.")]
                          + [text("Ok.")] * (len(case.turns) - 1))
    run = run_case(model.backend(), case, classes)
    step = run.turns[0].steps[0]
    assert [each["error"] for each in step] == ["unknown_tool", "invalid_arguments", "unknown_tool"]
    sent_back = [m["content"] for m in model.requests[1]["messages"] if m["role"] == "tool"]
    assert len(sent_back) == 3 and all(sent_back)
    assert trajectory(run)[0] == [[]]  # nothing ran, so nothing is replayed


def test_a_model_that_never_stops_calling_is_stopped_and_the_case_fails(base):
    suite, classes = base
    case = one_api(suite)
    model = ScriptedModel([calls(call("pwd"))] * 4)
    run = run_case(model.backend(), case, classes, max_steps=3)
    assert len(run.turns) == 1 and run.turns[0].stop_reason == "max_rounds"
    verdict = judge_conversation(case, trajectory(run), classes)
    assert not verdict.valid and verdict.error_type == "multi_turn:force_terminated"


class Overflowing:
    """A backend whose every request is too long for the model, or that cannot be reached."""

    def __init__(self, message):
        self.message, self.model, self.api_key = message, "small", None

    def chat(self, **request):
        raise LabError(self.message)


def test_a_prompt_too_long_for_the_context_skips_the_case_and_an_unreachable_endpoint_stops(base, tmp_path):
    suite, classes = base
    case = one_api(suite)
    run = run_case(Overflowing("the prompt has 5000 tokens; the embedded model's context holds 4096"), case, classes)
    assert run.skipped.startswith("turn 1: the prompt does not fit the model's context") and not run.turns
    with pytest.raises(LabError, match="Cannot reach"):
        run_case(Overflowing("Cannot reach http://localhost:1"), case, classes)


def test_a_run_file_keeps_each_finished_case_and_a_second_run_resumes(base, tmp_path):
    suite, classes = base
    cases = [case for case in suite.cases if case.classes == ("GorillaFileSystem",)][:2]
    first = ScriptedModel(scripted_answer(cases[0], World(cases[0], classes)))  # the second case: no replies left
    path = tmp_path / "run.jsonl"
    with pytest.raises(Exception):
        run_cases(first.backend(), cases, classes, path)
    kept = read_runs(path)
    assert [run.case_id for run in kept] == [cases[0].id] and kept[0].verdict["valid"]
    with path.open("a", encoding="utf-8") as file:
        file.write('{"case_id": "cut off')  # a crash while writing the next line
    second = ScriptedModel(scripted_answer(cases[1], World(cases[1], classes)))
    runs = run_cases(second.backend(), cases, classes, path)
    assert [run.case_id for run in runs] == [case.id for case in cases]
    assert len(second.requests) == sum(bool(t) for t in cases[1].ground_truth) + len(cases[1].turns)
    table = summary(runs)
    assert "2 cases, 2 runs: 2 judged, 0 skipped" in table and "2/2" in table


@pytest.fixture(scope="module", autouse=True)
def wheel_modules_unmounted():
    """The APIs' packages, mounted from the wheel by these tests, are taken out afterwards, so a
    later test that loads other parts of BFCL from elsewhere never meets them."""
    yield
    for name in [name for name in sys.modules if name.split(".")[0] == "bfcl_eval"]:
        del sys.modules[name]


def judged_run(case_id, valid, turns_ok, repeat=0):
    from toolkit.bench.multi_turn_run import CaseRun

    turns = [{"index": i, "expected": ["x()"], "made": [], "ok": ok, "reason": None, "state": [], "reached": True}
             for i, ok in enumerate(turns_ok)]
    return CaseRun(case_id, "multi_turn_base", {"repeat": repeat},
                   verdict={"valid": valid, "error_type": None, "reason": None, "failed_turn": None, "turns": turns})


def test_two_runs_of_the_same_conversations_are_compared_as_pairs():
    from toolkit.bench.multi_turn_run import CaseRun, compare_runs

    first = [judged_run(f"c{i}", False, [False, False]) for i in range(12)]
    second = [judged_run(f"c{i}", i < 10, [i < 10, i < 10]) for i in range(12)]
    second.append(CaseRun("c99", "multi_turn_base", {"repeat": 0}, skipped="too long"))
    first.append(judged_run("c98", True, [True]))  # not in the second run: left out, counted
    whole, each = compare_runs(first, second, "base", "tuned")
    assert (whole.pairs, whole.only_second, whole.only_first, whole.left_out) == (12, 10, 0, 1)
    assert whole.real and whole.method == "McNemar" and "whole conversation right" in whole.sentence().lower()
    assert each.pairs == 24 and each.method == "clustered" and each.cases == 12
    same = compare_runs(first, first)[0]
    assert not same.real and same.p == 1.0


def test_the_slice_table_in_the_data_readme_is_what_the_recorded_runs_hold():
    """Every row of the multi-turn slice table is recomputed from its committed run file."""
    import re

    from toolkit.bench.multi_turn_run import rate_rows

    root = Path(__file__).parent.parent / "data"
    readme = (root / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (lab|peer) \| (\S+) \| (base|miss_func|miss_param) \| (\d+) \((\d+)\) \| (\d+/\d+) \| "
                      r"(\d+/\d+) \| (\d+/\d+|–) \| ([\d.]+) min \|$", readme, flags=re.MULTILINE)
    assert len(rows) >= 6
    for server, model, category, judged, skipped, whole, turns, abstain, minutes in rows:
        runs = read_runs(root / "recorded_runs" / "multi_turn" / f"{server}-{model}-multi_turn_{category}.jsonl")
        rates = {row["measure"]: f"{row['right']}/{row['of']}" for row in rate_rows(runs)}
        assert int(judged) == sum(run.verdict is not None for run in runs)
        assert int(skipped) == sum(run.skipped is not None for run in runs)
        assert (whole, turns) == (rates["whole conversation (BFCL)"], rates["turns, each on its own"])
        assert abstain == rates.get("abstain turns kept", "–")
        assert float(minutes) == round(sum(run.seconds for run in runs) / 60, 1)


def test_descriptions_can_be_shortened_or_left_out(base):
    from toolkit.bench.multi_turn_apis import describe

    suite, classes = base
    case = one_api(suite)
    document = case.functions[0]
    assert describe(document) == document["description"]
    assert "This tool belongs to" not in describe(document, "short")
    assert document["description"].endswith(describe(document, "short"))
    assert describe(document, "none") == ""
    with pytest.raises(ValueError, match="descriptions must be one of full, short, none"):
        describe(document, "vague")
    model = ScriptedModel([text("Ok.")] * len(case.turns))
    run = run_case(model.backend(), case, classes, settings={"descriptions": "short"})
    sent = [tool["function"]["description"] for tool in model.requests[0]["tools"]]
    assert sent and not any("This tool belongs to" in each for each in sent)
    assert run.settings["descriptions"] == "short"
