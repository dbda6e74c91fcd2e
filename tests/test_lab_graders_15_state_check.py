"""The grader of lab 15 (the state check): it passes the reference on many made-up worlds,
reports the stub as not done, and fails typical wrong answers, naming the failing case."""

import pytest

from labs.grading import NotDoneYet
from labs.graders.state_check import grade
from labs.solutions.state_check import state_differences


def stub(made, wanted):
    raise NotDoneYet


def public(instance):
    return {key: value for key, value in vars(instance).items() if not key.startswith("_")}


def by_identity(made, wanted):
    """Compares with ``is``: two equal lists built apart look different."""
    return sorted(f"{name}.{key}" for name, instance in wanted.items()
                  for key, value in public(instance).items() if getattr(made[name], key, None) is not value)


def private_too(made, wanted):
    return sorted(f"{name}.{key}" for name, instance in wanted.items()
                  for key, value in vars(instance).items() if getattr(made[name], key, None) != value)


def answer_side_only(made, wanted):
    """Misses attributes that only the model's world has."""
    return sorted(f"{name}.{key}" for name, instance in wanted.items()
                  for key, value in public(instance).items() if getattr(made[name], key, None) != value)


def unsorted(made, wanted):
    return list(reversed(state_differences(made, wanted)))


@pytest.mark.parametrize("seed", range(20))
def test_the_reference_passes_on_every_made_up_world(seed):
    report = grade(state_differences, seed=seed)
    assert report.passed, str(report)


def test_the_stub_is_not_done_yet():
    report = grade(stub, seed=1)
    assert not report.passed and "not done yet" in str(report)


@pytest.mark.parametrize("wrong, case, words", [
    (by_identity, "equal lists built apart are equal", "reported but the same"),
    (private_too, "a private attribute differs: not reported", "Lamp._switched"),
    (answer_side_only, "an attribute only the model's world has", "not reported: Lamp.colour"),
])
def test_typical_wrong_answers_fail_with_the_case_named(wrong, case, words):
    report = grade(wrong, seed=7)
    failed = {outcome.case: outcome.note for outcome in report.failures}
    assert any(name.startswith(case) and words in note for name, note in failed.items()), failed


def test_an_unsorted_list_is_asked_to_be_sorted():
    report = grade(unsorted, seed=3)
    assert any("sort the list" in outcome.note for outcome in report.failures)


def test_made_up_worlds_change_with_the_seed_and_repeat_with_it():
    from labs.graders.state_check import made_up_cases

    names = lambda seed: [case[0] for case in made_up_cases(seed)]  # noqa: E731
    assert names(11) == names(11) and names(11) != names(12)
