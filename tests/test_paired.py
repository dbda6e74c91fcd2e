"""Paired comparisons and power, held against published examples and statsmodels."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.regression.linear_model import OLS
from statsmodels.stats.contingency_tables import mcnemar

from toolkit.bench.paired import (
    clustered_difference,
    newcombe_paired_interval,
    paired_differences,
    paired_frame,
)
from toolkit.bench.power import (
    cases_needed,
    connor_cases,
    mcnemar_power,
    smallest_detectable,
)

# ---------------------------------------------------------------- the interval and the test

def test_newcombe_interval_reproduces_the_published_worked_example():
    # Fagerland, Lydersen and Laake, Statistical Analysis of Contingency Tables (2017), ch. 8:
    # the table [[59, 6], [16, 80]] gives -0.0621 (95% CI -0.1186 to -0.0046) for p1 - p2.
    # Here p1 is "second" (59 + 6 right) and p2 "first" (59 + 16 right).
    low, high = newcombe_paired_interval(both=59, only_first=16, only_second=6, neither=80)
    assert (round(low, 4), round(high, 4)) == (-0.1186, -0.0046)


def test_newcombe_interval_keeps_a_width_when_no_case_changed():
    low, high = newcombe_paired_interval(both=20, only_first=0, only_second=0, neither=10)
    assert low < 0 < high and high - low > 0.05
    assert newcombe_paired_interval(0, 0, 0, 0) == (-1.0, 1.0)


def _trials(first: list[bool], second: list[bool], values=("0.0", "1.0"), repeats=1, factor="temperature"):
    """A run's trials table: case i under each value, each repeat alike unless lists say else."""
    rows = []
    n = len(first) // repeats
    for value, outcomes in zip(values, (first, second)):
        for index, ok in enumerate(outcomes):
            rows.append({"case_id": f"case-{index % n}", "repeat": index // n, "seed": 0,
                         "selection_ok": ok, "arguments_ok": ok, factor: value})
    return pd.DataFrame(rows)


def test_the_worked_example_is_real_by_mcnemar_though_the_intervals_overlap():
    # 30 cases: 16 right at temperature 0, 8 at 1.0; 10 lost and 2 gained.
    first = [True] * 16 + [False] * 14                              # 16 right
    second = [True] * 6 + [False] * 10 + [True] * 2 + [False] * 12  # 8 right: 10 lost, 2 gained
    result = paired_differences(_trials(first, second), "temperature", aspects=("arguments",))[0]
    assert (result.only_first, result.only_second, result.pairs) == (10, 2, 30)
    assert result.p == pytest.approx(mcnemar([[6, 10], [2, 12]], exact=True).pvalue)
    assert round(result.p, 3) == 0.039 and result.real
    assert result.points == -27 and result.high < 0
    assert "1.0 got the arguments wrong in 10 cases that 0.0 got right, and right in 2" in result.sentence()
    assert "a real difference" in result.sentence()


def test_no_discordant_pair_gives_p_one_and_still_an_interval():
    same = [True] * 10 + [False] * 5
    result = paired_differences(_trials(same, same), "temperature")[0]
    assert result.p == 1 and not result.real and result.low < 0 < result.high
    assert "no case changed" in result.sentence()


def test_a_factor_with_one_value_has_nothing_to_compare():
    table = _trials([True, False], [True, False])
    assert paired_differences(table[table["temperature"] == "0.0"], "temperature") == []


def test_trials_without_a_partner_are_left_out_and_counted():
    table = _trials([True, True, False, False], [False, True, False, True])
    stopped = table.drop(index=[7])  # the last trial of the second value never ran
    result = paired_differences(stopped, "temperature")[0]
    assert result.pairs == 3 and result.left_out == 1
    assert "1 trial(s) had no partner" in result.sentence()
    frame, left_out = paired_frame(stopped, "temperature", "0.0", "1.0")
    assert len(frame) == 3 and left_out == 1


def test_identical_repeats_count_each_case_once():
    first = [True, False, True, True] * 3   # 4 cases, 3 repeats, every repeat the same
    second = [False, False, True, True] * 3
    result = paired_differences(_trials(first, second, repeats=3), "temperature")[0]
    assert result.repeats_identical and result.pairs == 4 and result.method == "McNemar"
    assert "each case counts once" in result.sentence()


def test_repeats_that_differ_are_clustered_on_the_case():
    rng = np.random.default_rng(0)
    first = list(rng.random(60) < 0.7)
    second = list(rng.random(60) < 0.5)
    result = paired_differences(_trials(first, second, repeats=3), "temperature")[0]
    assert result.method == "clustered" and result.pairs == 60 and result.cases == 20
    # Against statsmodels directly: the clustered standard error of the mean difference.
    table = _trials(first, second, repeats=3)
    d = np.array(second, float) - np.array(first, float)
    groups = pd.factorize(table["case_id"].iloc[:60])[0]
    se = OLS(d, np.ones((60, 1))).fit(cov_type="cluster", cov_kwds={"groups": groups}).bse[0]
    t = stats.t.ppf(0.975, 20 - 1)  # Student's t on one degree of freedom fewer than cases
    assert result.high - result.low == pytest.approx(2 * t * se)
    # ...which is Miller's (2024) clustered formula times statsmodels' small-sample factor G/(G-1)
    # (its other factor, (N-1)/(N-K), is 1 for a regression on one constant)
    residual = d - d.mean()
    per_case = pd.Series(residual).groupby(groups).sum()
    hand = np.sqrt((per_case ** 2).sum() * 20 / 19) / 60
    assert se == pytest.approx(hand)


def test_clustered_difference_counts_the_cases_where_they_cannot_estimate_an_error():
    assert clustered_difference(np.zeros(6), np.array([1, 1, 2, 2, 3, 3])) == (-1.0, 1.0, 1.0)
    # one case: no crash, nothing judged
    assert clustered_difference(np.array([0.0, -1.0, -1.0]), np.array([1, 1, 1])) == (-1.0, 1.0, 1.0)
    # every case loses exactly one of three repeats: no spread between cases, so a sign test on
    # the 5 cases (all one way: p = 2 / 2^5), never "p = 0"
    low, high, p = clustered_difference(np.tile([0.0, 0.0, -1.0], 5), np.repeat(np.arange(5), 3))
    assert (low, high) == (-1.0, 1.0) and p == pytest.approx(0.0625)


def test_a_tiny_clustered_plan_is_not_called_real_on_a_normal_approximation():
    # 4 cases x 3 repeats with a little spread: t on 3 degrees of freedom, not the normal curve
    first = [True] * 12
    second = [False, True, True, False, False, True, False, True, True, False, False, True]
    result = paired_differences(_trials(first, second, repeats=3), "temperature", aspects=("selection",))[0]
    assert result.method == "clustered" and result.cases == 4
    se = (result.high - result.low) / (2 * stats.t.ppf(0.975, 3))
    normal_p = 2 * stats.norm.sf(abs(result.difference) / se)
    assert result.p == pytest.approx(2 * stats.t.sf(abs(result.difference) / se, 3))
    assert result.p > 10 * normal_p


def test_a_grid_compares_within_each_value_of_the_second_factor():
    table = pd.concat([_trials([True, True, False], [False, False, False]).assign(enums=True),
                       _trials([True, False, False], [True, False, False]).assign(enums=False)])
    results = paired_differences(table, "temperature", within="enums", aspects=("selection",))
    assert [(r.within, r.only_first) for r in results] == [("on", 2), ("off", 0)]


def test_seeds_compared_as_the_factor_pair_on_the_case_and_repeat():
    table = _trials([True, True, False], [True, False, False], values=("0", "1"), factor="seed")
    table["seed"] = table["seed"].astype(int)
    result = paired_differences(table, "seed", aspects=("selection",))[0]
    assert (result.pairs, result.only_first, result.left_out) == (3, 1, 0)


def test_missing_columns_are_named():
    with pytest.raises(KeyError, match="seed"):
        paired_differences(_trials([True], [True]).drop(columns="seed"), "temperature")


# ---------------------------------------------------------------- power

def test_exact_power_is_close_to_connors_approximation_for_large_plans():
    for difference, discordance in ((0.10, 0.2), (0.15, 0.3), (0.05, 0.1)):
        exact = cases_needed(difference, discordance)
        assert abs(exact - connor_cases(difference, discordance)) / exact < 0.12


def test_connor_reproduces_the_textbook_formula():
    # n = (z_a/2 sqrt(psi) + z_b sqrt(psi - delta^2))^2 / delta^2 at psi 0.2, delta 0.1: 154.6
    assert connor_cases(0.10, 0.2) == 155


def test_exact_power_matches_a_simulation_through_statsmodels_mcnemar():
    rng = np.random.default_rng(7)
    pairs, discordance, difference = 60, 0.3, 0.15
    p_one_way = (discordance + difference) / 2  # right under second only
    p_other = (discordance - difference) / 2
    rejected = 0
    runs = 1500
    for _ in range(runs):
        draws = rng.choice(3, size=pairs, p=[p_one_way, p_other, 1 - discordance])
        b, c = int((draws == 0).sum()), int((draws == 1).sum())
        rejected += mcnemar([[0, b], [c, pairs - b - c]], exact=True).pvalue < 0.05
    assert mcnemar_power(pairs, discordance, difference) == pytest.approx(rejected / runs, abs=0.04)


def test_smallest_detectable_difference_shrinks_with_more_cases_and_can_be_out_of_reach():
    assert smallest_detectable(42, 2 / 42) is None  # descriptions on the embedded model: 2 of 42 changed
    small, large = smallest_detectable(30, 0.4), smallest_detectable(200, 0.4)
    assert 0 < large < small <= 0.4
    assert mcnemar_power(200, 0.4, large) >= 0.8 > mcnemar_power(200, 0.4, large - 0.01)


def test_power_refuses_a_difference_larger_than_the_discordance():
    with pytest.raises(ValueError, match="discordant"):
        mcnemar_power(30, 0.1, 0.2)
    assert cases_needed(0.2, 0.1) is None and mcnemar_power(30, 0.0, 0.0) == 0.0
