"""Two settings run on the same cases, judged as a pair: the difference, its interval, its test.

An experiment runs every case under each value of the factor, so each case is its own control.
Two separate Wilson intervals throw that away: they ask whether two *independent* samples
differ, and overlap long after a paired test has seen a real difference. On 30 cases,
temperature 0 against 1.0 gave right arguments 16 against 8 (10 cases lost, 2 gained,
exact McNemar p 0.039) while the two intervals overlapped.

What carries the information is the *discordant* cases: right under one value and wrong under
the other. Cases both values got right, or both got wrong, say nothing about the difference.

- One trial per case and value: the exact McNemar test (``statsmodels``) on the discordant
  counts, and Newcombe's interval for a difference of paired proportions (his method 10,
  1998), which keeps a width when no case changed, where the textbook interval shrinks to 0.
- Repeats of a case: the trials of one case are not independent (same question, same tools),
  so the case is the unit: the interval and the test use a standard error clustered on the
  case (``statsmodels``' cluster-robust covariance; Evan Miller, "Adding Error Bars to Evals",
  2024). Repeats that all came out the same (temperature 0) are one observation per case, and
  are counted as one.

Trials are paired on (case, repeat, seed), and on the second factor's value in a grid; a trial
whose partner is missing (a stopped run) is left out and counted.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.regression.linear_model import OLS
from statsmodels.stats.contingency_tables import mcnemar

from toolkit.bench.rates import p_text, wilson_interval
from toolkit.bench.trials import show_value

__all__ = ["PairedDifference", "paired_differences", "compare_outcomes", "newcombe_paired_interval", "paired_frame",
           "PAIR_KEYS", "ASPECT_WORDS", "p_text"]

PAIR_KEYS = ("case_id", "repeat", "seed")
"""What makes two trials a pair: the same case, the same repeat, the same seed."""

ASPECT_WORDS = {"selection": "right tool", "arguments": "right tool and arguments",
                # BFCL's multi-turn conversations (toolkit.bench.multi_turn_run.compare_runs)
                "conversation": "whole conversation right", "turn": "turn right on its own"}
_WHAT_WENT_WRONG = {"selection": "the tool", "arguments": "the arguments", "conversation": "the conversation",
                    "turn": "the turn"}
REAL = 0.05  # a difference is called real when its two-sided p is below this


def newcombe_paired_interval(both: int, only_first: int, only_second: int, neither: int,
                             z: float = 1.959963984540054) -> tuple[float, float]:
    """Newcombe's 95% interval for p(second) - p(first) on paired data (1998, method 10).

    The Wilson interval of each marginal rate, combined with a correction for how strongly the
    two are correlated (phi, shrunk by n/2 towards 0 as Newcombe prescribes). Reproduces the
    worked example of Fagerland, Lydersen and Laake, *Statistical Analysis of Contingency Tables*
    (2017), section 8 (59, 6, 16, 80: -0.0621, [-0.1186, -0.0046]).
    """
    n = both + only_first + only_second + neither
    if n == 0:
        return (-1.0, 1.0)
    # In Newcombe's notation the first rate is the one subtracted from: here p1 is the second
    # value's rate (both + only_second) and p2 the first value's (both + only_first).
    p1, p2 = (both + only_second) / n, (both + only_first) / n
    l1, u1 = wilson_interval(both + only_second, n, z)
    l2, u2 = wilson_interval(both + only_first, n, z)
    a, b, c, d = both, only_second, only_first, neither
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    cross = a * d - b * c
    corrected = cross - n / 2 if cross > n / 2 else (cross if cross < 0 else 0.0)
    phi = corrected / math.sqrt(margins) if margins else 0.0
    difference = p1 - p2
    low = difference - math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    high = difference + math.sqrt(max(0.0, (p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2))
    return (max(-1.0, low), min(1.0, high))


@dataclass(frozen=True)
class PairedDifference:
    """One value of a factor against the first, on the trials they share, for one aspect."""

    factor: str
    first: str
    second: str
    aspect: str  # "selection" or "arguments"
    within: str | None  # the second factor's value this pair was taken under, in a grid
    pairs: int  # complete pairs counted (cases, when identical repeats were merged)
    cases: int
    left_out: int  # trials of either value with no partner in the other
    both: int
    only_first: int  # right under the first value, wrong under the second
    only_second: int
    neither: int
    first_rate: float
    second_rate: float
    difference: float  # second - first, as a share (0.1 = 10 points)
    low: float
    high: float
    p: float
    method: str  # "McNemar" (one trial per case) or "clustered" (repeats)
    repeats_identical: bool  # every case's repeats agreed, so they were counted once

    @property
    def real(self) -> bool:
        return self.pairs > 0 and self.p < REAL

    @property
    def points(self) -> int:
        return round(100 * self.difference)

    @property
    def unit(self) -> str:
        return "trial" if self.method == "clustered" else "case"

    def discordance(self) -> float:
        """The share of pairs on which the two values disagreed (what power depends on)."""
        return (self.only_first + self.only_second) / self.pairs if self.pairs else 0.0

    def changed_in_words(self) -> str:
        """The discordant counts as a learner reads them."""
        unit = self.unit + ("s" if self.only_first != 1 else "")
        wrong = _WHAT_WENT_WRONG[self.aspect]
        return (f"{self.second} got {wrong} wrong in {self.only_first} {unit} that {self.first} got right, "
                f"and right in {self.only_second} that {self.first} got wrong")

    def sentence(self) -> str:
        """The whole verdict: rates, difference with its interval, p, and whether it is real."""
        what = ASPECT_WORDS[self.aspect].capitalize()
        where = f" (with {self.within})" if self.within else ""
        if self.pairs == 0:
            return f"{what}{where}: no {self.first} and {self.second} trials share a case, so nothing can be compared."
        on = (f"the same {self.pairs} cases" if self.method == "McNemar" else
              f"{self.pairs} paired trials of {self.cases} cases, the case as the unit")
        test = ("exact McNemar" if self.method == "McNemar" else
                "clustered on the case" if self.high - self.low < 2 else "sign test over the cases")
        verdict = ("a real difference" if self.real else
                   "no difference this run can show" if self.only_first + self.only_second else
                   "no case changed, so no difference this run can show")
        text = (f"{what}{where}: {self.second} {self.second_rate:.0%} against {self.first} {self.first_rate:.0%} "
                f"on {on}, a difference of {self.points:+d} points [{100 * self.low:+.0f}, {100 * self.high:+.0f}]; "
                f"{self.changed_in_words()}; p {'' if self.p < 0.001 else '= '}{p_text(self.p)} ({test}): {verdict}.")
        if self.repeats_identical:
            text += " Every case's trials came out alike under each side (repeats at temperature 0 do), so each case counts once."
        if self.left_out:
            text += f" {self.left_out} trial(s) had no partner under the other value and were left out."
        return text


def paired_differences(trials: pd.DataFrame, factor: str, within: str | None = None,
                       aspects: tuple[str, ...] = ("selection", "arguments")) -> list[PairedDifference]:
    """Every value of ``factor`` against its first value (in plan order), per aspect; in a grid,
    separately under each value of ``within``. Empty when the factor has one value only."""
    missing = [c for c in (factor, *PAIR_KEYS, *([within] if within else [])) if c not in trials.columns]
    if missing:
        raise KeyError(f"no column {', '.join(missing)} in the trials table")
    data = trials.assign(**{factor: trials[factor].map(show_value)})
    if within:
        data[within] = data[within].map(show_value)
    values = list(dict.fromkeys(data[factor]))
    results = []
    for group_value, group in (data.groupby(within, sort=False) if within else [(None, data)]):
        for second in values[1:]:
            frame, left_out = paired_frame(group, factor, values[0], second)
            for aspect in aspects:
                results.append(compare_outcomes(
                    frame[f"{aspect}_ok_first"], frame[f"{aspect}_ok_second"], frame["case_id"], factor=factor,
                    first=values[0], second=second, aspect=aspect, within=group_value, left_out=left_out))
    return results


def paired_frame(trials: pd.DataFrame, factor: str, first: str, second: str) -> tuple[pd.DataFrame, int]:
    """The trials of ``first`` and ``second`` side by side, one row per complete pair, with the
    number of trials left out for want of a partner. Columns: the pair keys, then ``id``,
    ``selection_ok``, ``arguments_ok`` (and whatever else the trials carry) suffixed ``_first``
    and ``_second``. The factor's values are compared as the app shows them (``show_value``)."""
    keys = [key for key in PAIR_KEYS if key != factor]  # seeds compared as a factor pair on case and repeat
    shown = trials[factor].map(show_value)
    a = trials[shown == first].drop_duplicates(keys)
    b = trials[shown == second].drop_duplicates(keys)
    duplicates = int((shown == first).sum() + (shown == second).sum()) - len(a) - len(b)
    merged = a.merge(b, on=keys, how="inner", suffixes=("_first", "_second"))
    return merged, len(a) + len(b) - 2 * len(merged) + duplicates


def compare_outcomes(first_ok, second_ok, cases, *, factor: str, first: str, second: str, aspect: str,
                     within: str | None = None, left_out: int = 0, repeats: bool = True) -> PairedDifference:
    """The paired verdict on outcomes already lined up pair by pair: ``first_ok[i]`` and
    ``second_ok[i]`` are one pair's two outcomes, ``cases[i]`` its case. ``repeats``: pairs that
    share a case are repeats of one trial, so where they all agree they count once; False where
    they are different trials of the case (two runs of a grid), which are clustered instead."""
    x = np.asarray(first_ok, dtype=bool)
    y = np.asarray(second_ok, dtype=bool)
    cases = np.asarray(cases)
    repeated = len(set(cases)) < len(cases)
    identical = False
    if repeated and repeats and _repeats_agree(x, y, cases):
        # Temperature 0 repeats the same reply: the repeats add no evidence, one per case does.
        keep = ~pd.Series(cases).duplicated().to_numpy()
        x, y, cases, repeated, identical = x[keep], y[keep], cases[keep], False, True
    both, neither = int((x & y).sum()), int((~x & ~y).sum())
    only_first, only_second = int((x & ~y).sum()), int((~x & y).sum())
    n = len(x)
    shared = dict(factor=factor, first=first, second=second, aspect=aspect, within=within, pairs=n,
                  cases=len(set(cases)), left_out=left_out, both=both, only_first=only_first,
                  only_second=only_second, neither=neither, repeats_identical=identical,
                  first_rate=float(x.mean()) if n else float("nan"),
                  second_rate=float(y.mean()) if n else float("nan"))
    if n == 0:
        return PairedDifference(**shared, difference=0.0, low=-1.0, high=1.0, p=1.0, method="McNemar")
    difference = (only_second - only_first) / n
    if not repeated:
        low, high = newcombe_paired_interval(both, only_first, only_second, neither)
        p = float(mcnemar([[both, only_first], [only_second, neither]], exact=True).pvalue)
        return PairedDifference(**shared, difference=difference, low=low, high=high, p=min(p, 1.0),
                                method="McNemar")
    low, high, p = clustered_difference(y.astype(float) - x.astype(float), cases)
    return PairedDifference(**shared, difference=difference, low=low, high=high, p=p, method="clustered")


def _repeats_agree(x: np.ndarray, y: np.ndarray, cases: np.ndarray) -> bool:
    frame = pd.DataFrame({"x": x, "y": y, "case": cases})
    return bool((frame.groupby("case")[["x", "y"]].nunique() == 1).all().all())


def clustered_difference(differences: np.ndarray, clusters: np.ndarray) -> tuple[float, float, float]:
    """(low, high, p) for the mean of per-pair differences, with the standard error clustered on
    ``clusters`` (the case): the regression of the differences on a constant, with statsmodels'
    cluster-robust covariance (small-sample corrected) and Student's t on one degree of freedom
    fewer than there are cases, since a few cases estimate that error roughly.

    Where the cases cannot estimate it (a single case, or every case with the same mean
    difference), the cases themselves are counted instead: an exact sign test on how many went
    each way, and no interval (-1 to 1)."""
    codes = pd.factorize(pd.Series(clusters))[0]
    per_case = pd.Series(differences).groupby(codes).mean()
    if len(per_case) < 2 or np.allclose(per_case, per_case.iloc[0]):
        up, down = int((per_case > 0).sum()), int((per_case < 0).sum())
        p = float(stats.binomtest(up, up + down, 0.5).pvalue) if up + down else 1.0
        return -1.0, 1.0, p
    fit = OLS(differences, np.ones((len(differences), 1))).fit(cov_type="cluster", cov_kwds={"groups": codes},
                                                              use_t=True)
    low, high = fit.conf_int(alpha=0.05)[0]
    return max(-1.0, float(low)), min(1.0, float(high)), float(fit.pvalues[0])
