"""How often the lab's multi-turn judge and BFCL's own ``multi_turn_checker`` give the same verdict.

For every case of BFCL's four multi-turn categories this writes trajectories a model could
leave: the answer key's calls as they are, then the answer with one call dropped, with one
argument changed, with a call added on a turn where the right move is none, and with one
turn's calls in reverse order. Each trajectory is judged by ``toolkit.bench.multi_turn_check``
(which replays calls by name on the simulated APIs) and by BFCL's ``multi_turn_checker``
(which ``eval``s the same calls as strings), both loaded from the ``bfcl-eval`` wheel, and the
verdicts are compared. A disagreement of a kind data/README.md does not explain makes the run
exit with 1.

    python benchmarks/bfcl_multi_turn_agreement.py
    python benchmarks/bfcl_multi_turn_agreement.py --categories multi_turn_base --show 5

The trajectories are made from BFCL's answers, which are data: only BFCL's own checker
evaluates them, as it does when BFCL scores a model.
"""
from __future__ import annotations

import argparse
import importlib
import random
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from toolkit.bench.multi_turn_apis import Call, World, api_classes, cached_wheel, parse_call  # noqa: E402
from toolkit.bench.multi_turn_check import judge_conversation  # noqa: E402
from toolkit.bench.multi_turn_data import MULTI_TURN_CATEGORIES, MultiTurnCase, import_multi_turn  # noqa: E402

# Why the two judges part, where they do on purpose (data/README.md, "Multi-turn: where the
# judge differs from BFCL"). Nothing is listed yet: every difference found would be new.
EXPLAINED: dict[str, str] = {}

Turns = list[list[str]]  # per turn, BFCL's call strings


def load_bfcl_checker(wheel: Path) -> Callable[[MultiTurnCase, list[list[list[str]]]], bool]:
    """BFCL's ``multi_turn_checker`` from the wheel, as a verdict on (case, per turn per step calls).

    BFCL keeps each case's instances in its module's globals under a name made of the model's
    name and the case id, so every verdict gets a name of its own, and its instances are
    dropped afterwards: each judgement starts from fresh instances, as in a real BFCL run."""
    api_classes(wheel, ["GorillaFileSystem"])  # mounts the wheel's packages
    checker = importlib.import_module("bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker")
    utils = importlib.import_module("bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils")
    counter = iter(range(10**9))

    def verdict(case: MultiTurnCase, trajectory: list[list[list[str]]]) -> bool:
        model = f"lab{next(counter)}"
        entry = {"id": case.id, "initial_config": case.initial_config,
                 "involved_classes": list(case.classes)}
        try:
            return bool(checker.multi_turn_checker(trajectory, [list(t) for t in case.ground_truth],
                                                   entry, case.category, model)["valid"])
        finally:
            for name in [name for name in vars(utils) if name.startswith(model + "_")]:
                del vars(utils)[name]

    return verdict


# ---------------------------------------------------------------- trajectories

def variants(case: MultiTurnCase, world: World) -> list[tuple[str, Turns]]:
    """The answer and its mutations, each a list of turns of call strings. A mutation that the
    case cannot have (no argument to change, no turn to abstain on) is left out."""
    rng = random.Random(case.id)
    truth = [list(turn) for turn in case.ground_truth]
    made = [("answer", truth)]
    calls = [(t, i) for t, turn in enumerate(truth) for i in range(len(turn))]
    if calls:
        t, i = rng.choice(calls)
        made.append(("a call dropped", _with(truth, t, truth[t][:i] + truth[t][i + 1:])))
    with_arguments = [(t, i) for t, i in calls if world.bind(*parse_call(truth[t][i])).arguments]
    if with_arguments:
        t, i = rng.choice(with_arguments)
        call = world.bind(*parse_call(truth[t][i]))
        key = rng.choice(sorted(call.arguments))
        changed = Call(call.name, {**call.arguments, key: _changed(call.arguments[key])})
        made.append(("an argument changed", _with(truth, t, truth[t][:i] + [changed.text()] + truth[t][i + 1:])))
    if case.abstain_turns:
        t = case.abstain_turns[0]
        later = next((turn for turn in truth[t + 1:] if turn), None) or next(turn for turn in truth if turn)
        made.append(("a call on an abstain turn", _with(truth, t, [later[0]])))
    several = [t for t, turn in enumerate(truth) if len(turn) > 1]
    if several:
        t = rng.choice(several)
        made.append(("calls reordered", _with(truth, t, truth[t][::-1])))
    return made


def _with(turns: Turns, index: int, calls: list[str]) -> Turns:
    return [calls if t == index else list(turn) for t, turn in enumerate(turns)]


def _changed(value):
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return value + "_2"
    if isinstance(value, list):
        return value[:-1] if value else ["extra"]
    if isinstance(value, dict):
        return {**value, "extra": 1}
    return None


def as_steps(turns: Turns) -> list[list[list[str]]]:
    """BFCL's shape for a model's result: per turn, per step, calls; one step per turn here."""
    return [[list(turn)] if turn else [] for turn in turns]


def as_calls(world: World, turns: Turns) -> list[list[list[Call]]]:
    """The same trajectory as the lab's calls: names and keyword arguments."""
    return [[[world.bind(*parse_call(text)) for text in turn]] if turn else [] for turn in turns]


# ---------------------------------------------------------------- the run

def compare(wheel: Path, categories: tuple[str, ...], bfcl_verdict: Callable,
            limit: int | None = None) -> dict:
    counts: Counter = Counter()
    kinds: dict[str, list] = defaultdict(list)
    for category in categories:
        suite = import_multi_turn(wheel, category)
        classes = api_classes(suite.apis, suite.docs)
        for case in suite.cases[:limit]:
            binder = World(case, classes)
            for what, turns in variants(case, binder):
                lab = judge_conversation(case, as_calls(binder, turns), classes)
                bfcl = bfcl_verdict(case, as_steps(turns))
                counts["verdicts"] += 1
                counts[what] += 1
                counts["both pass" if lab.valid and bfcl else "both fail" if not (lab.valid or bfcl)
                       else "only BFCL passes" if bfcl else "only the lab passes"] += 1
                if lab.valid != bfcl:
                    kinds["unexplained"].append((case.id, what, "BFCL" if bfcl else "lab", lab.reason))
    return {"counts": counts, "kinds": kinds}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheel", type=Path, default=cached_wheel())
    parser.add_argument("--categories", nargs="+", default=list(MULTI_TURN_CATEGORIES),
                        choices=MULTI_TURN_CATEGORIES)
    parser.add_argument("--limit", type=int, help="first cases of each category only")
    parser.add_argument("--show", type=int, default=3, help="examples printed per kind")
    args = parser.parse_args(argv)
    if args.wheel is None or not args.wheel.is_file():
        print("no BFCL wheel in the cache: python -m pip download bfcl-eval==2026.3.23 --no-deps "
              "-d ~/.cache/tool-calling-lab/bfcl", file=sys.stderr)
        return 2
    started = time.perf_counter()
    result = compare(args.wheel, tuple(args.categories), load_bfcl_checker(args.wheel), args.limit)
    counts, kinds = result["counts"], result["kinds"]
    total = counts["verdicts"]
    same = counts["both pass"] + counts["both fail"]
    print(f"{total} verdicts over {', '.join(args.categories)} in {time.perf_counter() - started:.0f} s")
    print("trajectories: " + ", ".join(f"{what} {counts[what]}" for what in
                                       ("answer", "a call dropped", "an argument changed",
                                        "a call on an abstain turn", "calls reordered")))
    print(f"same verdict: {same} ({same / total:.2%}); both pass {counts['both pass']}, "
          f"both fail {counts['both fail']}")
    print(f"only BFCL passes: {counts['only BFCL passes']}; only the lab passes: "
          f"{counts['only the lab passes']}")
    for kind, items in sorted(kinds.items(), key=lambda kv: -len(kv[1])):
        print(f"\n{kind}: {len(items)} ({EXPLAINED.get(kind, 'NOT EXPLAINED in data/README.md')})")
        for case_id, what, passes, reason in items[:args.show]:
            print(f"  {case_id}: {what}; passes in {passes}; the lab says: {reason}")
    return 1 if "unexplained" in kinds else 0


if __name__ == "__main__":
    raise SystemExit(main())
