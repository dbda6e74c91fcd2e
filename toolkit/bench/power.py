"""How large a difference a paired plan can show, before it runs and after.

The exact McNemar test decides on the discordant cases only, so what a plan can show depends
on two numbers: how many cases it pairs, and how often a knob makes the two values disagree
at all (the *discordance*: 2 cases in 42 for descriptions on the embedded model, 12 in 30 for
temperature on the arguments). The power is computed exactly, for the exact test: the number
of discordant cases is binomial over the cases, and the split of those between the two
directions is binomial again, so the chance that the test rejects is a finite sum (scipy's
binomial distribution does the arithmetic). Connor's normal approximation (1987) gives nearly
the same numbers for large plans; the tests hold the two against each other, and both against
a simulation through statsmodels' McNemar test.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import stats

__all__ = ["mcnemar_power", "smallest_detectable", "cases_needed", "connor_cases", "before_run", "after_run",
           "POWER", "ALPHA"]

POWER, ALPHA = 0.8, 0.05


def _critical_counts(m: np.ndarray, alpha: float) -> np.ndarray:
    """For each number of discordant pairs m, the largest count k in the smaller direction at
    which the exact two-sided test (p = 2 · P(X ≤ k), X ~ Bin(m, 1/2)) rejects; -1 if none."""
    k = stats.binom.ppf(alpha / 2, m, 0.5)  # the smallest k whose lower tail reaches alpha / 2
    k = np.where(stats.binom.cdf(k, m, 0.5) <= alpha / 2, k, k - 1)
    return np.where(m > 0, k, -1).astype(int)


def mcnemar_power(pairs: int, discordance: float, difference: float, alpha: float = ALPHA) -> float:
    """The chance that the exact McNemar test on ``pairs`` cases rejects at ``alpha``, when a
    share ``discordance`` of cases disagree between the two values and the rates differ by
    ``difference`` (a share; its sign does not matter)."""
    difference = abs(difference)
    if pairs <= 0 or discordance <= 0:
        return 0.0
    if difference > discordance + 1e-12:
        raise ValueError(f"a difference of {difference:.2f} needs at least that share of discordant cases, "
                         f"not {discordance:.2f}")
    m = np.arange(pairs + 1)
    weights = stats.binom.pmf(m, pairs, min(discordance, 1.0))
    q = min(1.0, (discordance + difference) / (2 * discordance))  # share of discordant cases going one way
    k = _critical_counts(m, alpha)
    reject = np.where(k >= 0, stats.binom.cdf(k, m, q) + stats.binom.sf(m - k - 1, m, q), 0.0)
    return float(np.sum(weights * reject))


def smallest_detectable(pairs: int, discordance: float, power: float = POWER, alpha: float = ALPHA) -> float | None:
    """The smallest difference (a share) that ``pairs`` cases show with the given ``power``,
    or None when even a knob that moves every discordant case one way would go unseen."""
    if mcnemar_power(pairs, discordance, discordance, alpha) < power:
        return None
    low, high = 0.0, discordance
    for _ in range(30):  # power grows with the difference: bisect to well under a point
        middle = (low + high) / 2
        low, high = (middle, high) if mcnemar_power(pairs, discordance, middle, alpha) < power else (low, middle)
    return high


def cases_needed(difference: float, discordance: float, power: float = POWER, alpha: float = ALPHA,
                 most: int = 20000) -> int | None:
    """About how many paired cases show ``difference`` with the given ``power``; None past
    ``most`` or when the difference is larger than the discordance allows."""
    difference = abs(difference)
    if difference == 0 or discordance <= 0 or difference > discordance:
        return None
    if mcnemar_power(most, discordance, difference, alpha) < power:
        return None
    low, high = 1, most
    while low < high:  # the exact test's power saws up and down a little with n: "about"
        middle = (low + high) // 2
        low, high = (middle + 1, high) if mcnemar_power(middle, discordance, difference, alpha) < power else (low, middle)
    return low


def connor_cases(difference: float, discordance: float, power: float = POWER, alpha: float = ALPHA) -> int:
    """Connor's (1987) sample size for McNemar's test, the normal approximation, as a cross-check."""
    z_alpha, z_beta = stats.norm.ppf(1 - alpha / 2), stats.norm.ppf(power)
    root = z_alpha * math.sqrt(discordance) + z_beta * math.sqrt(discordance - difference ** 2)
    return math.ceil(root ** 2 / difference ** 2)


# ---------------------------------------------------------------- in words, before and after a run

def before_run(pairs: int, discordance: float, where: str, goal: float = 0.10) -> str:
    """What a plan of ``pairs`` paired cases can show, for a setting that changed a share
    ``discordance`` of the answers ``where`` it was measured (a phrase: "on SmolLM2 ...")."""
    if discordance <= 0:
        return (f"Power: {where} this setting changed no answer at all, so no plan can show a difference "
                "unless the model does something else here.")
    smallest = smallest_detectable(pairs, discordance)
    needed = cases_needed(min(goal, discordance), discordance)
    share = f"{where} it changed {discordance:.0%} of the answers"
    reach = (f"{pairs} paired cases show a difference of about {100 * smallest:.0f} points or more "
             f"(80% of the time, at p < 0.05)" if smallest is not None else
             f"{pairs} paired cases are too few to show any difference it can make")
    goal_text = (f"; a {100 * min(goal, discordance):.0f}-point difference takes about {needed} cases"
                 if needed else "")
    return f"Power: {share}; {reach}{goal_text}."


def after_run(low: float, high: float, discordance: float, real: bool, clustered: bool = False,
              goal: float = 0.10) -> str:
    """What a finished run rules out, and, where it showed nothing, how many cases a difference
    the size of ``goal`` would take at the discordance it saw. (Not the power at the difference
    it saw: that is below one half whenever p is above 0.05, so it would call every plan that
    found nothing too small.)"""
    if real:
        return "The plan was large enough: the paired test shows the difference."
    ruled_out = (f"The paired interval puts the difference between {100 * low:+.0f} and {100 * high:+.0f} points"
                 if high - low < 2 else "Too few cases to bound the difference")
    if clustered or discordance <= 0:
        return ruled_out + "."
    needed = cases_needed(min(goal, discordance), discordance)
    return (ruled_out + f"; with {discordance:.0%} of the answers changing, a "
            f"{100 * min(goal, discordance):.0f}-point difference takes about {needed} cases to show "
            "80% of the time." if needed else ruled_out + ".")
