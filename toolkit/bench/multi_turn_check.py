"""Judging a multi-turn conversation by the state it leaves, as BFCL does, and turn by turn.

A model's trajectory is what it called, per turn and per step (one step is one reply's calls).
``judge_conversation`` replays it on fresh API instances beside the answer key's calls on other fresh
instances, and after every turn whose answer makes calls it checks, in BFCL's order:

1. the model made at least one call in that turn;
2. every stateful instance has the same public attributes as the answer's (the file system's
   tree, the car's doors, the account's orders...): *what the world looks like*, not which
   calls made it so;
3. every result the answer's calls of that turn produced is among the results of the model's
   calls so far (as a multiset: a read the model did a turn earlier still counts).

A conversation passes only if every such turn does (``valid``: BFCL's verdict). A trajectory
with fewer turns than the answer was stopped (BFCL's step limit) and fails. On a turn whose
answer is empty (a function or a value is missing) BFCL checks nothing, though the calls still
run so later states are right.

Beyond BFCL's single verdict: each turn is also judged on its own (``TurnVerdict``), an empty
answer turn passing only when the model made no call, so a model that goes wrong in turn 3 of
4 gets credit for the other three; the first failing turn is said in words ("after turn 2 the
file `report.txt` is missing from `/workspace/docs`"); and ``pass_hat_k`` gives the chance
that k tries all pass, as tau-bench reports it.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from math import comb
from typing import Any, Sequence

from toolkit.bench.multi_turn_apis import Call, World
from toolkit.bench.multi_turn_data import MultiTurnCase

__all__ = ["CaseVerdict", "Trajectory", "TurnVerdict", "differences", "judge_conversation", "pass_hat_k"]

Trajectory = Sequence[Sequence[Sequence[Call]]]
"""Per turn, per step, the calls of one reply."""


@dataclass
class TurnVerdict:
    index: int
    expected: tuple[str, ...]            # the answer's calls, as BFCL writes them
    made: list[str]                      # the model's calls, written the same way
    ok: bool
    reason: str | None = None            # why not, in words
    state: list[str] = field(default_factory=list)  # how the world differs, in words
    reached: bool = True                 # False after the run was stopped

    @property
    def abstain(self) -> bool:
        """Whether the right move at this turn was to make no call."""
        return not self.expected


@dataclass
class CaseVerdict:
    valid: bool                          # BFCL's verdict on the whole conversation
    error_type: str | None               # BFCL's name for the first failure
    reason: str | None                   # the first failure in words
    failed_turn: int | None              # where BFCL's verdict failed
    turns: list[TurnVerdict]

    @property
    def turns_right(self) -> int:
        return sum(turn.ok for turn in self.turns)

    @property
    def turn_credit(self) -> float:
        """The share of turns judged right on their own."""
        return self.turns_right / len(self.turns) if self.turns else 0.0


def judge_conversation(case: MultiTurnCase, trajectory: Trajectory, classes: dict[str, type]) -> CaseVerdict:
    """BFCL's verdict on ``trajectory`` and a verdict per turn, with reasons in words."""
    truth_turns = case.ground_truth
    model, truth = World(case, classes), World(case, classes)
    results: list[str] = []              # every result of the model's calls so far
    turns: list[TurnVerdict] = []
    first: tuple[int, str, str] | None = None  # (turn, error_type, reason) of BFCL's failure
    if len(trajectory) != len(truth_turns):
        first = (len(trajectory) - 1, "multi_turn:force_terminated",
                 f"the run was stopped in turn {len(trajectory)} of {len(truth_turns)} (too many "
                 f"steps): BFCL fails the whole conversation")
    for index, expected in enumerate(truth_turns):
        if index >= len(trajectory):
            turns.append(TurnVerdict(index, expected, [], False, "not reached: the run was stopped",
                                     reached=False))
            continue
        steps = [list(step) for step in trajectory[index] if step]
        made = [call for step in steps for call in step]
        results.extend(model.run(call) for call in made)
        expected_results = [truth.run_text(text) for text in expected]
        verdict = TurnVerdict(index, tuple(expected), [call.text() for call in made], True)
        turns.append(verdict)
        if not expected:
            if made:
                verdict.ok, verdict.reason = False, (
                    f"turn {index + 1} should make no call (a function or a value is missing) but "
                    f"called {', '.join(call.name for call in made)}")
            continue
        if not made:
            verdict.ok, verdict.reason = False, (
                f"turn {index + 1}: no call made; the answer calls "
                f"{', '.join(dict.fromkeys(_name(text) for text in expected))}")
            first = first or (index, "multi_turn:empty_turn_model_response", verdict.reason)
            continue
        if not _same_state(model, truth):
            verdict.state = differences(model, truth)
            verdict.ok, verdict.reason = False, f"after turn {index + 1} " + "; ".join(verdict.state)
            first = first or (index, "multi_turn:instance_state_mismatch", verdict.reason)
            continue
        if missing := _missing(expected_results, results):
            verdict.ok, verdict.reason = False, (
                f"turn {index + 1}: no call of the model's returned {_short(missing[0])}, which "
                f"the answer's calls did" + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))
            first = first or (index, "multi_turn:execution_response_mismatch", verdict.reason)
    if first is None:
        return CaseVerdict(True, None, None, None, turns)
    return CaseVerdict(False, first[1], first[2], first[0], turns)


def pass_hat_k(successes: int, tries: int, k: int) -> float:
    """The chance that ``k`` tries drawn from ``tries`` (of which ``successes`` passed) all pass:
    C(successes, k) / C(tries, k), tau-bench's unbiased pass^k for one task."""
    if not 1 <= k <= tries:
        raise ValueError(f"k must be between 1 and the number of tries ({tries}), not {k}")
    return comb(successes, k) / comb(tries, k)


# ---------------------------------------------------------------- BFCL's comparisons

def _same_state(model: World, truth: World) -> bool:
    """BFCL's state check: every public attribute of each answer instance equals the model's."""
    for name, instance in truth.instances.items():
        other = model.instances[name]
        for key, value in vars(instance).items():
            if not key.startswith("_") and getattr(other, key) != value:
                return False
    return True


def _missing(expected: list[str], made: list[str]) -> list[str]:
    """The expected results not among ``made``, each matched once (a multiset, in any order)."""
    left = Counter(made)
    missing = []
    for result in expected:
        if left[result]:
            left[result] -= 1
        else:
            missing.append(result)
    return missing


def _brief(value: Any, width: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= width else text[:width - 1] + "…"


def _name(text: str) -> str:
    return text.split("(", 1)[0].strip()


def _short(text: str, width: int = 90) -> str:
    return repr(text if len(text) <= width else text[:width - 1] + "…")


# ---------------------------------------------------------------- differences in words

def differences(model: World, truth: World, limit: int = 4) -> list[str]:
    """How the model's world differs from the answer's, in a few sentences."""
    found: list[str] = []
    for name, instance in truth.instances.items():
        other = model.instances[name]
        for key, value in vars(instance).items():
            if key.startswith("_") or getattr(other, key) == value:
                continue
            _differ(getattr(other, key), value, f"{name}.{key}", found)
    return found[:limit] + ([f"and {len(found) - limit} more differences"] if len(found) > limit else [])


def _differ(made: Any, wanted: Any, where: str, found: list[str]) -> None:
    if _is_directory(made) and _is_directory(wanted):
        _differ_tree(made, wanted, "/" + wanted.name, found)
    elif isinstance(made, dict) and isinstance(wanted, dict):
        for key in wanted:
            if key not in made:
                found.append(f"{where} has no {key!r}, which it should have")
            elif made[key] != wanted[key]:
                _differ(made[key], wanted[key], f"{where}[{key!r}]", found)
        found.extend(f"{where} has {key!r}, which it should not" for key in made if key not in wanted)
    else:
        found.append(f"{where} is {_brief(made)}, where it should be {_brief(wanted)}")


def _is_directory(value: Any) -> bool:
    return isinstance(getattr(value, "contents", None), dict) and hasattr(value, "name")


def _differ_tree(made: Any, wanted: Any, path: str, found: list[str]) -> None:
    """A file system's trees, entry by entry: missing, extra, or holding other text."""
    for name, entry in wanted.contents.items():
        there = made.contents.get(name)
        kind = "folder" if _is_directory(entry) else "file"
        if there is None:
            found.append(f"the {kind} `{name}` is missing from `{path}`")
        elif _is_directory(entry) != _is_directory(there):
            found.append(f"`{path}/{name}` is a {'file' if kind == 'folder' else 'folder'}, where it "
                         f"should be a {kind}")
        elif kind == "folder":
            _differ_tree(there, entry, f"{path}/{name}", found)
        elif there != entry:
            found.append(f"the file `{path}/{name}` holds other text than it should")
    found.extend(f"the {'folder' if _is_directory(entry) else 'file'} `{name}` is in `{path}`, where "
                 f"it should not be" for name, entry in made.contents.items() if name not in wanted.contents)
