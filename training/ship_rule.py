"""Whether an adapter trained at scale ships, and how: a rule fixed before its numbers are read.

A rule chosen after looking at the results bends towards them. This one was written, and
tested on made-up numbers, before any adapter trained at scale had been measured. It reads only
held-out measurements (the scenario suite, BFCL, the after-results set kept outside the
project; never the synthetic conversations it was trained on) and gives one of three branches:

- **default**: the new adapter becomes the lab's default model, when every check below holds;
- **another model**: otherwise, it ships beside the others when it reads descriptions better
  than both current adapters (its clear-minus-vague difference, names hidden, is larger than
  each of theirs);
- **not shipped**: otherwise; the run is recorded and nothing changes.

The checks for the default, each against the base model measured the same way:

1. names hidden, clear descriptions beat vague ones by at least 20 points, and the paired
   difference is real (exact McNemar on the same cases, p < 0.05);
2. with real names, the right tool no more than 5 points below the base's rate;
3. irrelevance (no call where no tool fits) at least the base's rate;
4. after a tool result, facts of the result stated in at least 75% of answers;
5. enum values right more often than the base's, by a real paired difference (same cases);
6. at least 0.8 times the base's speed.
"""

from __future__ import annotations

from dataclasses import dataclass

from toolkit.bench.paired import PairedDifference

DESCRIPTION_POINTS = 0.20
REAL_NAMES_SLACK = 0.05
FACTS_STATED = 0.75
SPEED_RATIO = 0.8


@dataclass(frozen=True)
class Measured:
    """One model, measured on held-out data."""
    name: str
    descriptions: PairedDifference  # names hidden, right tool: vague (first) against clear (second)
    real_names: float  # right tool with real names, as a share
    irrelevance: float  # no call where no offered tool fits, as a share
    facts_stated: float | None  # after a tool result, answers stating its facts (None: not measured)
    tokens_per_second: float


@dataclass(frozen=True)
class Check:
    what: str
    met: bool
    shown: str


@dataclass(frozen=True)
class Verdict:
    branch: str  # "default" | "another model" | "not shipped"
    checks: list[Check]

    def table(self) -> str:
        rows = ["| check | met | measured |", "|---|---|---|"]
        rows += [f"| {c.what} | {'yes' if c.met else 'no'} | {c.shown} |" for c in self.checks]
        return "\n".join(rows) + f"\n\nBranch: **{self.branch}**."


def _points(share: float) -> str:
    return f"{100 * share:+.0f} points"


def checks(base: Measured, new: Measured, enums: PairedDifference) -> list[Check]:
    """The six checks for the default. ``enums`` is the paired comparison of enum values right,
    base (first) against the new adapter (second), on the same cases."""
    described = new.descriptions
    speed = new.tokens_per_second / base.tokens_per_second
    return [
        Check("names hidden: clear beats vague by >= 20 points, a real paired difference",
              described.difference >= DESCRIPTION_POINTS and described.real,
              f"{_points(described.difference)} [{100 * described.low:+.0f}, {100 * described.high:+.0f}], "
              f"p {described.p:.3g}"),
        Check("real names: right tool no more than 5 points below the base",
              new.real_names >= base.real_names - REAL_NAMES_SLACK,
              f"{new.real_names:.0%} against {base.real_names:.0%}"),
        Check("irrelevance: at least the base's rate", new.irrelevance >= base.irrelevance,
              f"{new.irrelevance:.0%} against {base.irrelevance:.0%}"),
        Check("after results: facts stated in at least 75%",
              new.facts_stated is not None and new.facts_stated >= FACTS_STATED,
              "not measured" if new.facts_stated is None else f"{new.facts_stated:.0%}"),
        Check("enum values right: above the base, a real paired difference",
              enums.difference > 0 and enums.real,
              f"{_points(enums.difference)} ({enums.only_second} cases gained, {enums.only_first} lost), "
              f"p {enums.p:.3g}"),
        Check("speed: at least 0.8 times the base", speed >= SPEED_RATIO, f"{speed:.2f}x"),
    ]


def decide(base: Measured, current: list[Measured], new: Measured, enums: PairedDifference) -> Verdict:
    """The branch for ``new``, given the base, the adapters shipped now, and the enum comparison."""
    found = checks(base, new, enums)
    if all(check.met for check in found):
        return Verdict("default", found)
    beats = all(new.descriptions.difference > other.descriptions.difference for other in current)
    shown = ", ".join(f"{other.name} {_points(other.descriptions.difference)}" for other in current)
    found.append(Check("reads descriptions better than every current adapter", beats,
                       f"{_points(new.descriptions.difference)} against {shown}"))
    return Verdict("another model" if beats else "not shipped", found)
