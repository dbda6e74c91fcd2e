"""The grader of lab 06c (return behaviour): it passes the reference solution, reports a stub as
not done, agrees with the toolkit's own loop on every case, and fails plausible wrong answers
with feedback that names the failing case."""

import pytest

from labs.grading import NotDoneYet
from labs.graders import return_behaviour as grader
from labs.graders.return_behaviour import CASES, TOOLS_BY_NAME, USER, execute, grade
from labs.solutions.return_behaviour import run_round
from toolkit import fake
from toolkit.loop import run_turn
from toolkit.messages import tool_result


def stub(*args, **kwargs):
    raise NotDoneYet


def failing_cases(report) -> str:
    return "\n".join(f"{o.case}: {o.note} | expected {o.expected!r} | got {o.got!r}" for o in report.failures)


def failed(report) -> set[str]:
    return {o.case for o in report.failures}


def round_with(decide):
    """A run_round that runs and records every call properly and leaves the decision to ``decide``."""
    def run(calls, tools_by_name):
        executions = [execute(call, tools_by_name) for call in calls]
        messages = [tool_result(e.call_id, e.result_text) for e in executions]
        direct = decide(executions)
        return messages, direct, executions[-1].value if direct else None
    return run


DIRECT = ("immediate", "immediate_if_last")
MIXED = "immediate, then to_model in one reply: back to the model (it needs the weather)"
IMMEDIATE_LAST = "to_model, then immediate in last place: still back to the model"
IF_LAST = "to_model, then immediate_if_last in last place: straight to the user"
FAILS = "an immediate tool that fails: back to the model, never the error to the user"
ALONE = "an immediate call alone goes straight to the user"
OWN_VALUE = "the user gets the tool's own value, not the text for the model"


def test_solution_passes():
    report = grade(run_round)
    assert report.passed, str(report)
    assert len(report.outcomes) == len(CASES) + 6  # and six rounds made up while grading


def test_solution_passes_whatever_the_seed():
    for seed in range(10):
        report = grade(run_round, seed=seed)
        assert report.passed, str(report)


def test_a_table_of_the_public_rounds_fails_the_made_up_ones():
    # (name, arguments) of each call, in order -> the public round's answer; "back to the model" otherwise
    table = {tuple(call[1:] for call in calls): stop == "immediate" for _, calls, stop, _ in CASES}
    look_up = round_with(lambda executions: table.get(tuple((e.name, e.arguments_raw) for e in executions), False))
    report = grade(look_up, seed=5)
    assert report.failures and all(case.startswith("made-up case") for case in failed(report)), failing_cases(report)
    assert "this round's result goes straight to the user" in failing_cases(report)


def test_stub_is_not_done():
    report = grade(stub)
    assert not report.passed and "not done yet" in str(report)
    assert len(report.outcomes) == 1  # one "not done yet", not a failure per case


@pytest.mark.parametrize("case, calls, stop, shown", CASES, ids=[c[0] for c in CASES])
def test_every_case_is_what_the_toolkit_loop_does(case, calls, stop, shown):
    """The grader's expectations are not a second opinion: toolkit.loop.run_turn decides the same."""
    model = fake.ScriptedModel([fake.calls(*calls), fake.text(grader.ANSWER)])
    result = run_turn(model.backend(), [dict(USER)], list(TOOLS_BY_NAME.values()))
    assert result.stop_reason == stop
    if stop == "immediate":
        assert result.immediate_result == shown and len(model.requests) == 1
    else:
        assert result.final_text == shown and len(model.requests) == 2


def test_always_returning_directly_is_rejected():
    report = grade(round_with(lambda executions: True))
    text = failing_cases(report)
    assert "a to_model call alone goes back to the model: this round must go back to the model" in text
    assert {MIXED, IMMEDIATE_LAST, FAILS} <= failed(report)
    assert ALONE not in failed(report)


def test_returning_directly_when_only_one_of_several_calls_is_direct_is_rejected():
    report = grade(round_with(lambda executions: any(e.return_behavior in DIRECT for e in executions)))
    assert {MIXED, IMMEDIATE_LAST, "immediate_if_last, then to_model: back to the model"} <= failed(report)
    assert "not every call returns directly" in failing_cases(report)
    assert IF_LAST not in failed(report)


def test_letting_the_last_call_decide_alone_is_rejected():
    report = grade(round_with(lambda executions: executions[-1].return_behavior in DIRECT))
    assert IMMEDIATE_LAST in failed(report)
    assert MIXED not in failed(report)


def test_requiring_every_call_to_be_direct_misses_immediate_if_last_in_last_place():
    report = grade(round_with(lambda executions: all(e.ok and e.return_behavior in DIRECT for e in executions)), seed=0)
    assert {case for case in failed(report) if not case.startswith("made-up case")} == {IF_LAST}
    assert "return direct=True" in failing_cases(report)


def test_ignoring_failed_calls_is_rejected():
    def no_failure_check(executions):
        if executions[-1].return_behavior == "immediate_if_last":
            return True
        return all(e.return_behavior in DIRECT for e in executions)

    report = grade(round_with(no_failure_check))
    assert FAILS in failed(report)
    assert "the user must not get an error" in failing_cases(report)
    assert "a failed call, then immediate_if_last in last place: back to the model" in failed(report)


def test_rendered_text_instead_of_the_tools_own_value_is_rejected():
    def as_text(calls, tools_by_name):
        messages, direct, _ = run_round(calls, tools_by_name)
        return messages, direct, messages[-1]["content"] if direct else None

    report = grade(as_text)
    assert OWN_VALUE in failed(report)
    assert ALONE not in failed(report)  # a link is a string either way
    assert "execution.value" in failing_cases(report)


def test_raw_error_detail_sent_to_the_model_is_rejected():
    def raw_errors(calls, tools_by_name):
        messages, direct, value = run_round(calls, tools_by_name)
        executions = [execute(call, tools_by_name) for call in calls]
        messages = [tool_result(e.call_id, e.result_text if e.ok else e.error_detail) for e in executions]
        return messages, direct, value

    report = grade(raw_errors)
    assert FAILS in failed(report)
    assert "carries the raw error" in failing_cases(report)


def test_dropping_the_results_when_returning_directly_is_rejected():
    def no_results_when_direct(calls, tools_by_name):
        messages, direct, value = run_round(calls, tools_by_name)
        return ([] if direct else messages), direct, value

    report = grade(no_results_when_direct)
    assert ALONE in failed(report)
    assert "every call needs its own tool message" in failing_cases(report)


def test_a_wrong_return_shape_is_reported_not_crashed():
    report = grade(lambda calls, tools_by_name: True)
    assert not report.passed
    assert "return a tuple (results, direct, value)" in failing_cases(report)
