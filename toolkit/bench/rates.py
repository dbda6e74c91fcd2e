"""What many verdicts add up to: a success rate for selection and for arguments, each with a
Wilson score interval, and a count per failure reason.

A rate from a few dozen cases is rough: 18 of 20 and 15 of 20 may well come from the same
model. The interval says how rough. (Two settings run on the same cases are compared pair by
pair, in ``toolkit.bench.paired``: their two intervals overlap long after the pairs have told
them apart.) Wilson's interval is used rather than the textbook p ± 1.96·sqrt(p(1-p)/n)
because it stays inside 0..1 and does not shrink to nothing at 0 of n or n of n, which small
suites hit all the time.
"""
from __future__ import annotations

import math
from collections import Counter
from typing import TYPE_CHECKING, Any, Iterable

from toolkit.bench.verdict import REASONS, Verdict

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["wilson_interval", "summarise", "rate_table", "RATE_COLUMNS", "p_text"]


def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion; (0.0, 1.0) when there is no data."""
    if n == 0:
        return (0.0, 1.0)
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got {successes} of {n}")
    p = successes / n
    spread = z * z / n
    centre = (p + spread / 2) / (1 + spread)
    half = z * math.sqrt(p * (1 - p) / n + spread / (4 * n)) / (1 + spread)
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return (low, high)


def summarise(verdicts: Iterable[Verdict], z: float = 1.96) -> dict:
    """n, both rates (None when n is 0), their Wilson intervals, and a count per reason."""
    verdicts = list(verdicts)
    n = len(verdicts)
    summary: dict[str, Any] = {"n": n}
    for aspect in ("selection", "arguments"):
        successes = sum(getattr(v, f"{aspect}_ok") for v in verdicts)
        summary[f"{aspect}_successes"] = successes
        summary[f"{aspect}_rate"] = successes / n if n else None
        summary[f"{aspect}_interval"] = wilson_interval(successes, n, z)
    # Every reason gets a count, zeros too, so tables built from summaries line up.
    counts = Counter(v.reason for v in verdicts if v.reason)
    summary["reasons"] = {reason: counts.get(reason, 0) for reason in REASONS}
    return summary


RATE_COLUMNS = ("n", "selection_successes", "selection_rate", "selection_low", "selection_high",
                "arguments_successes", "arguments_rate", "arguments_low", "arguments_high")


def rate_table(trials: pd.DataFrame, by: list[str] | str | None = None, z: float = 1.96) -> pd.DataFrame:
    """A table of trials (one row each, with ``selection_ok`` and ``arguments_ok``) as rates: n,
    selection rate and argument rate with their Wilson intervals, per group of ``by``
    (groups in order of first appearance; no ``by``: one row for all trials)."""
    import pandas as pd  # loaded here: the page uses this module's helpers without pandas

    by = [by] if isinstance(by, str) else list(by or [])
    missing = [column for column in by if column not in trials.columns]
    if missing:
        raise KeyError(f"no column {', '.join(missing)} in the trials table")
    groups = trials.groupby(by, sort=False, dropna=False) if by else [((), trials)]
    rows = []
    for key, group in groups:
        key = key if isinstance(key, tuple) else (key,)
        row: dict[str, Any] = dict(zip(by, key))
        n = len(group)
        row["n"] = n
        for aspect in ("selection", "arguments"):
            successes = int(group[f"{aspect}_ok"].sum())
            low, high = wilson_interval(successes, n, z)
            row.update({f"{aspect}_successes": successes,
                        f"{aspect}_rate": successes / n if n else float("nan"),
                        f"{aspect}_low": low, f"{aspect}_high": high})
        rows.append(row)
    return pd.DataFrame(rows, columns=[*by, *RATE_COLUMNS])


def p_text(p: float) -> str:
    """p as the lab writes it: "0.039", "1", "< 0.001"."""
    return "1" if p >= 0.9995 else f"{p:.3f}" if p >= 0.001 else "< 0.001"
