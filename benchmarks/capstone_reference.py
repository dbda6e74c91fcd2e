"""How often the capstone lab's reference agent passes its grader on the embedded model.

Grades ``labs/solutions/capstone_agent.py`` on a range of seeds (each seed is a new shop and
seven new conversations) and counts, per kind of conversation, how many passed and at which step
the others failed, and how many of the model's slips each grading had: that count, on seeds the
reference was never tried on, says what a learner's grading will see. The reference was written
against seeds 1000-1019, the allowance of slips (``SLIPS_ALLOWED``) was set from seeds 0-19,
1000-1019 and 2000-2029, and the lab quotes seeds 3000-3039, which neither had seen.

    python benchmarks/capstone_reference.py --seeds 3000-3039
"""

from __future__ import annotations

import argparse
import collections
import re
import time

from labs.graders.capstone_agent import SLIPS_ALLOWED, grade, made_up_conversations
from labs.solutions.capstone_agent import shop_tools, run_agent
from toolkit.client import connect


def seed_range(text: str) -> range:
    first, _, last = text.partition("-")
    return range(int(first), int(last or first) + 1)


def step_of(note: str) -> str:
    found = re.match(r"step (\d)", note)
    return f"step {found.group(1)}" if found else "other"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=seed_range, default=seed_range("3000-3039"), help="e.g. 3000-3039")
    parser.add_argument("--show", action="store_true", help="print every failure's note")
    args = parser.parse_args()
    backend = connect()
    passed_gradings, started = 0, time.perf_counter()
    tally: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    slips_per_grading: collections.Counter = collections.Counter()
    faults = 0
    for seed in args.seeds:
        _, conversations = made_up_conversations(seed)
        report = grade(shop_tools, run_agent, seed=seed, backend=backend)
        passed_gradings += report.passed
        slips_per_grading[len(report.slips)] += 1
        faults += len(report.faults)
        for conversation, outcome in zip(conversations, report.outcomes):
            tally[conversation.kind]["passed" if outcome.passed else step_of(outcome.note)] += 1
            if args.show and not outcome.passed:
                print(f"seed {seed} {outcome.case}\n    {outcome.note}")
        print(f"seed {seed}: {sum(o.passed for o in report.outcomes)}/{len(report.outcomes)} "
              f"({len(report.slips)} slips) {'pass' if report.passed else 'FAIL'}", flush=True)
    count = len(args.seeds)
    print(f"\n{passed_gradings}/{count} gradings passed with up to {SLIPS_ALLOWED} slips allowed; "
          f"{faults} faults of the agent's own; {time.perf_counter() - started:.0f} s "
          f"({(time.perf_counter() - started) / count:.1f} s a grading)")
    print("slips in a grading: " + ", ".join(f"{n}: {slips_per_grading[n]}" for n in sorted(slips_per_grading)))
    within = 0
    for allowed in range(max(slips_per_grading) + 1):
        within += slips_per_grading[allowed]
        print(f"  up to {allowed} allowed: {within}/{count} gradings within the allowance")
    print()
    print(f"| kind | conversations | passed | step 1 (call) | step 2 (result) | step 3 (answer) | other |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for kind, counts in tally.items():
        print(f"| {kind} | {sum(counts.values())} | {counts['passed']} | {counts['step 1']} | {counts['step 2']} "
              f"| {counts['step 3']} | {counts['other']} |")


if __name__ == "__main__":
    main()
