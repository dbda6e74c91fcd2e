"""What many verdicts add up to: a success rate for selection and for arguments, each with a
Wilson score interval, and a count per failure reason.

A rate from a few dozen cases is rough: 18 of 20 and 15 of 20 may well come from the same
model. The interval says how rough; while two settings' intervals overlap, the suite has not
told them apart. Wilson's interval is used rather than the textbook p ± 1.96·sqrt(p(1-p)/n)
because it stays inside 0..1 and does not shrink to nothing at 0 of n or n of n, which small
suites hit all the time.
"""
from __future__ import annotations

import math
from collections import Counter
from typing import Any, Iterable

from .verdict import REASONS, Verdict

__all__ = ["wilson_interval", "summarise"]


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
