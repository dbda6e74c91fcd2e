"""The rule that decides whether an adapter trained at scale ships, on made-up measurements."""
import dataclasses

import pytest

from toolkit.bench.paired import compare_outcomes
from training.ship_rule import Measured, decide


def paired(vague_right: int, clear_right: int, cases: int = 40, **names):
    """Outcomes on ``cases`` shared cases: the first value right on the first ``vague_right``,
    the second right on the first ``clear_right`` (so the discordant cases all go one way)."""
    first = [i < vague_right for i in range(cases)]
    second = [i < clear_right for i in range(cases)]
    return compare_outcomes(first, second, list(range(cases)), factor="description", first=names.get("first", "vague"),
                            second=names.get("second", "clear"), aspect="selection")


BASE = Measured("base", paired(12, 13), real_names=0.80, irrelevance=0.60, facts_stated=0.50, tokens_per_second=100)
TOOLS = dataclasses.replace(BASE, name="+tools", descriptions=paired(9, 12))
TOOLS2 = dataclasses.replace(BASE, name="+tools2", descriptions=paired(9, 13))
GOOD = Measured("+scale", paired(10, 30), real_names=0.78, irrelevance=0.65, facts_stated=0.80, tokens_per_second=90)
ENUMS_GAINED = paired(4, 16, first="base", second="+scale")


def test_every_check_met_makes_it_the_default():
    verdict = decide(BASE, [TOOLS, TOOLS2], GOOD, ENUMS_GAINED)
    assert verdict.branch == "default"
    assert len(verdict.checks) == 6 and all(check.met for check in verdict.checks)
    assert "Branch: **default**" in verdict.table()


@pytest.mark.parametrize("change, failing", [
    (dict(descriptions=paired(40, 55, cases=100)), "clear beats vague"),  # real (p < 0.001), but 15 points
    (dict(descriptions=paired(2, 5, cases=10)), "clear beats vague"),     # 30 points, but p 0.25
    (dict(real_names=0.74), "real names"),
    (dict(irrelevance=0.59), "irrelevance"),
    (dict(facts_stated=0.74), "after results"),
    (dict(facts_stated=None), "after results"),
    (dict(tokens_per_second=79), "speed"),
])
def test_one_check_short_and_it_is_not_the_default(change, failing):
    new = dataclasses.replace(GOOD, **change)
    verdict = decide(BASE, [TOOLS, TOOLS2], new, ENUMS_GAINED)
    assert verdict.branch != "default"
    short = [check.what for check in verdict.checks[:6] if not check.met]
    assert len(short) == 1 and failing in short[0]


def test_enum_values_must_gain_by_a_real_paired_difference():
    slight = paired(10, 12, first="base", second="+scale")  # 2 gained, 0 lost: p 0.5, not real
    verdict = decide(BASE, [TOOLS, TOOLS2], GOOD, slight)
    assert verdict.branch == "another model"
    assert [check.met for check in verdict.checks[:6]] == [True, True, True, True, False, True]


def test_short_of_the_default_it_ships_beside_the_others_only_if_it_reads_descriptions_better():
    weaker = dataclasses.replace(GOOD, irrelevance=0.1)
    assert decide(BASE, [TOOLS, TOOLS2], weaker, ENUMS_GAINED).branch == "another model"
    reads_like_tools2 = dataclasses.replace(weaker, descriptions=paired(9, 13))
    verdict = decide(BASE, [TOOLS, TOOLS2], reads_like_tools2, ENUMS_GAINED)
    assert verdict.branch == "not shipped"
    assert verdict.checks[-1].what.startswith("reads descriptions better") and not verdict.checks[-1].met
    assert "+tools2 +10 points" in verdict.checks[-1].shown
