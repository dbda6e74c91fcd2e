"""What every lab grader shares: cases, a report with specific feedback, and hints.

A grader runs the learner's function on named cases and says, for each failure, which case
it was, what was expected and what came back. Hints come one at a time, so a learner can
ask for a nudge without seeing the answer.
"""

from __future__ import annotations

import os
import random
import sysconfig
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable


class NotDoneYet(NotImplementedError):
    """Raised by a stub: the exercise has not been attempted yet."""


@dataclass
class Outcome:
    case: str
    passed: bool
    expected: Any = None
    got: Any = None
    note: str = ""


@dataclass
class Report:
    lab: str
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return bool(self.outcomes) and all(o.passed for o in self.outcomes)

    @property
    def failures(self) -> list[Outcome]:
        return [o for o in self.outcomes if not o.passed]

    def check(self, case: str, expected: Any, got: Any, note: str = "") -> bool:
        ok = expected == got
        self.outcomes.append(Outcome(case, ok, expected, got, "" if ok else note))
        return ok

    def fail(self, case: str, note: str, expected: Any = None, got: Any = None) -> None:
        self.outcomes.append(Outcome(case, False, expected, got, note))

    def ok(self, case: str) -> None:
        self.outcomes.append(Outcome(case, True))

    def __str__(self) -> str:
        done = sum(o.passed for o in self.outcomes)
        lines = [f"{self.lab}: {done}/{len(self.outcomes)} cases pass" + (" - well done!" if self.passed else "")]
        for outcome in self.failures:
            lines.append(f"  x {outcome.case}: {outcome.note}".rstrip(": "))
            if outcome.expected is not None or outcome.got is not None:
                lines.append(f"      expected: {outcome.expected!r}")
                lines.append(f"      got:      {outcome.got!r}")
        return "\n".join(lines)

    def _repr_pretty_(self, printer, cycle):  # so a notebook cell shows the readable text
        printer.text(str(self))


def attempt(report: Report, case: str, function: Callable, *args, **kwargs) -> tuple[bool, Any]:
    """Call the learner's function; a stub or an exception becomes a failed case, not a crash."""
    try:
        return True, function(*args, **kwargs)
    except NotDoneYet:
        report.fail(case, "not done yet: replace the `raise NotDoneYet` line with your code")
    except Exception as error:  # the learner's bug is feedback, not a crash of the grader
        where = _learners_frame(error)
        report.fail(case, f"raised {type(error).__name__}: {error} (line {where.lineno} of {where.name})")
    return False, None


def grade_text_cases(report: Report, cases, function: Callable, judge: Callable[[Any, Any], str | None]) -> Report:
    """Grade ``function`` on ``(case, text, expected)`` cases, where it turns one text into one
    value: a stub stops at the first case (one "not done yet" says it all), an exception is
    noted with the input, and ``judge(expected, got)`` returns what is wrong or None. Every
    failure shows the input, which is what a learner needs to reproduce it."""
    for case, text, expected in cases:
        done, got = attempt(report, case, function, text)
        if not done:
            if report.failures[-1].note.startswith("not done yet"):
                return report
            report.failures[-1].note += f"\n      input:    {text!r}"
            continue
        wrong = judge(expected, got)
        if wrong:
            report.fail(case, f"{wrong}\n      input:    {text!r}", expected, got)
        else:
            report.ok(case)
    return report


SEED_VARIABLE = "LAB_CASE_SEED"


def case_seed(seed: int | None = None) -> int:
    """The seed of the cases a grader makes up while it grades.

    Public cases can be answered by a table; cases drawn afresh at every grading cannot, so a
    grader adds some. ``seed`` repeats one grading exactly (tests pass one; a learner can pass
    the seed a report shows to see the same cases again). Without it, the environment variable
    ``LAB_CASE_SEED`` gives one to every grading of a run (a whole notebook graded the same way
    twice, in a workshop or in the tests); without that, a new seed is drawn.
    """
    if seed is None and os.environ.get(SEED_VARIABLE, "").strip():
        seed = os.environ[SEED_VARIABLE].strip()
        if not seed.isdigit():
            raise ValueError(f"{SEED_VARIABLE} must be a whole number such as 2000, not {seed!r}")
    return random.SystemRandom().randrange(2**32) if seed is None else int(seed)


ERROR_PREFIX = "Error: "
"""How every text that tells the model a call failed begins, in every lab and in the toolkit
(``toolkit.errors_for_model``): capital E, colon, space. A model, a log filter and a person all spot it."""


def follows_error_rule(text: Any) -> bool:
    """Does ``text`` begin as every error text for the model must?"""
    return isinstance(text, str) and text.startswith(ERROR_PREFIX)


def error_rule_note(text: Any) -> str:
    """Why ``text`` breaks the rule, in words a learner can act on."""
    if not isinstance(text, str):
        return f"return the error as text (a str), not {type(text).__name__}"
    if text[:len(ERROR_PREFIX)].lower() == ERROR_PREFIX.lower() or text[:5].lower() == "error":
        return (f"start the text with exactly {ERROR_PREFIX!r} (capital E, colon, space), "
                f"as every error text for the model does; this one starts {text[:len(ERROR_PREFIX)]!r}")
    return f"start the text with {ERROR_PREFIX!r}, so the model (and your logs) can tell it failed"


_LIBRARY_PATHS = tuple({sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})


def _course_paths() -> tuple[str, ...]:
    """Where the toolkit and the graders live: a frame there is not the learner's either."""
    import importlib.util

    toolkit = importlib.util.find_spec("toolkit")
    places = [str(Path(__file__).resolve().parent / "graders")]
    places += [str(Path(place).resolve()) for place in (toolkit.submodule_search_locations or [])] if toolkit else []
    return tuple(places)


def _learners_frame(error: Exception) -> traceback.FrameSummary:
    """The deepest frame of the learner's own code: "line 3 of extract_calls" helps,
    "line 353 of raw_decode" (inside json) or a line of the toolkit does not."""
    frames = traceback.extract_tb(error.__traceback__)
    others = _LIBRARY_PATHS + _course_paths()
    own = [frame for frame in frames if not str(Path(frame.filename).resolve()).startswith(others)]
    return (own or frames)[-1]


class _Text(str):
    """A string a notebook shows as plain text, not as a quoted repr with doubled backslashes."""

    def __repr__(self) -> str:
        return str(self)


class Hints:
    """``hints = Hints(["first nudge", "stronger nudge", "nearly the answer"])``; call
    ``hints.next()`` for one more each time."""

    def __init__(self, hints: list[str]):
        self.hints, self.shown = list(hints), 0

    def next(self) -> str:
        if self.shown >= len(self.hints):
            return _Text("No more hints: the reference solution is in labs/solutions/.")
        self.shown += 1
        return _Text(f"Hint {self.shown}/{len(self.hints)}: {self.hints[self.shown - 1]}")

    __call__ = next
