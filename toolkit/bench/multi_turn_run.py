"""Running a BFCL multi-turn case with the lab's loop, turn after turn, as BFCL runs it.

One conversation, one ``World`` of fresh API instances. At each turn the user's words are
added to the conversation (on a held-back function's turn: BFCL's fixed sentence, with the
function now offered), and ``run_turn`` calls tools until the model answers in text, with at
most ``max_steps`` rounds of calls (BFCL's limit is 20): a model that needs more is stopped,
and, as in BFCL, the rest of the conversation is not run. What the model called is replayed by
:func:`~toolkit.bench.multi_turn_check.judge_conversation` afterwards, on fresh instances.

``run_cases`` runs many and writes each finished case as one JSON line the moment it ends, so
a stopped run keeps what it did and a second run of the same file resumes after it. A case
whose prompt does not fit the model's context is skipped with that reason; a model that
cannot be reached stops the run with a ``LabError``, the finished cases kept.

    python -m toolkit.bench.multi_turn_run multi_turn_base --cases 20
    python -m toolkit.bench.multi_turn_run multi_turn_miss_func --cases 10 --temperature 0.7 --repeats 3
    python -m toolkit.bench.multi_turn_run multi_turn_base --cases 10 --one-api

runs the first cases of a category (the cached bfcl-eval wheel, or ``--wheel``) on the embedded
model or the ``LAB_*`` endpoint, writes ``runs/multi_turn/<category>-<model>.jsonl`` and prints
full-case and per-turn rates with Wilson intervals, and pass^k when there are repeats.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from toolkit.bench.multi_turn_apis import Call, World, toolset
from toolkit.bench.multi_turn_apis import DESCRIPTIONS, api_classes, cached_wheel
from toolkit.bench.multi_turn_check import judge_conversation, pass_hat_k
from toolkit.bench.multi_turn_data import MULTI_TURN_CATEGORIES, MultiTurnCase, import_multi_turn
from toolkit.bench.paired import PairedDifference, compare_outcomes
from toolkit.bench.rates import wilson_interval
from toolkit.bench.suite_checks import SuiteError
from toolkit.client import Backend, connect
from toolkit.lab_error import LabError
from toolkit.loop import run_turn

__all__ = ["CaseRun", "TurnRecord", "compare_runs", "parse_runs", "pass_hat_rows", "rate_rows", "read_runs", "run_case",
           "run_cases", "summary", "trajectory"]

MAX_STEPS = 20  # BFCL's step limit per turn

# How endpoints say a prompt is longer than the model's context (the embedded one, llama.cpp's
# server, OpenAI's): such a case is skipped, not a reason to stop the run.
_CONTEXT_WORDS = ("context holds", "context length", "context_length_exceeded", "exceeds the context",
                  "maximum context")


@dataclass
class TurnRecord:
    index: int
    user: list[dict]                     # what the user said this turn
    offered: list[str]                   # the functions offered
    steps: list[list[dict]]              # per round of calls: name, arguments, result, error
    stop_reason: str                     # the loop's: answered, max_rounds, no_reply...
    answer: str | None
    seconds: float
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass
class CaseRun:
    case_id: str
    category: str
    settings: dict
    turns: list[TurnRecord] = field(default_factory=list)
    skipped: str | None = None           # why the case was not run to the end, if it was skipped
    seconds: float = 0.0
    verdict: dict | None = None          # the judge's, filled by run_cases

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, default=str)


def trajectory(run: CaseRun) -> list[list[list[Call]]]:
    """What the model called that ran, per turn and per step: what the judge replays."""
    return [[[Call(call["name"], call["arguments"]) for call in step if call["arguments"] is not None]
             for step in turn.steps] for turn in run.turns]


def run_case(backend: Backend, case: MultiTurnCase, classes: dict[str, type], *,
             settings: dict | None = None, max_steps: int = MAX_STEPS) -> CaseRun:
    """Run ``case`` to its end (or until the model is stopped); ``settings`` are sent with every
    request (``temperature``, ``seed``, ``max_tokens``) except ``tool_choice``, which is the
    loop's own option, and ``descriptions`` ("full", "short" or "none": how much of BFCL's
    descriptions the model is shown, ``multi_turn_apis.DESCRIPTIONS``)."""
    settings = dict(settings or {})
    tool_choice = settings.pop("tool_choice", None)
    descriptions = settings.pop("descriptions", "full")
    run = CaseRun(case.id, case.category, {**settings, "tool_choice": tool_choice, "descriptions": descriptions})
    started = time.perf_counter()
    world = World(case, classes)
    documents = list(case.functions)
    messages: list[dict] = []
    for index in range(len(case.turns)):
        documents += case.held_back.get(index, ())
        tools = toolset(world, documents, descriptions)
        user = case.user_messages(index)
        messages += user
        turn_started = time.perf_counter()
        try:
            result = run_turn(backend, messages, tools, max_rounds=max_steps, tool_choice=tool_choice,
                              request_options=settings)
        except LabError as error:
            if any(words in str(error) for words in _CONTEXT_WORDS):
                run.skipped = f"turn {index + 1}: the prompt does not fit the model's context ({error})"
                break
            raise
        usage = result.usage
        run.turns.append(TurnRecord(
            index, user, tools.names,
            [[{"name": each.name, "arguments": each.arguments, "result": each.result_text,
               "error": each.error} for each in round_.executions] for round_ in result.rounds if round_.executions],
            result.stop_reason, result.final_text, time.perf_counter() - turn_started,
            usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)))
        messages = result.messages
        if result.stop_reason == "max_rounds":
            break  # BFCL stops the conversation here; the judge fails it
    run.seconds = time.perf_counter() - started
    return run


def read_runs(path: str | Path) -> list[CaseRun]:
    """The cases a run file holds (one JSON line each); a line cut off by a crash is ignored."""
    path = Path(path)
    return parse_runs(path.read_text(encoding="utf-8")) if path.exists() else []


def parse_runs(text: str) -> list[CaseRun]:
    """A run file's text as its cases. A line that is not JSON (the last line of a run killed
    while writing it) is ignored; a JSON line that is not a case is an error naming the line."""
    runs = []
    for number, line in enumerate(text.splitlines(), start=1):
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            continue
        try:
            data["turns"] = [TurnRecord(**turn) for turn in data.get("turns", [])]
            runs.append(CaseRun(**data))
        except (TypeError, AttributeError) as error:
            raise LabError(f"line {number} of the run file is not a conversation this lab wrote ({error})") from None
    return runs


def run_cases(backend: Backend, cases: Iterable[MultiTurnCase], classes: dict[str, type], path: str | Path, *,
              settings: dict | None = None, repeats: int = 1, max_steps: int = MAX_STEPS,
              progress: Callable[[CaseRun], Any] | None = None,
              should_stop: Callable[[], bool] | None = None) -> list[CaseRun]:
    """Run every case ``repeats`` times, appending each finished one to ``path`` (JSON lines)
    with the judge's verdict; cases already in the file for the same settings and repeat are
    read back, not run again. ``should_stop()`` is asked before each case: True ends the run
    there, what is done kept. Returns every case's run, in order."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    settings = dict(settings or {})
    stored = {**_comparable(settings), "model": backend.model}  # what a finished case is filed under
    done = {(run.case_id, run.settings.get("repeat", 0)): run for run in read_runs(path)
            if {k: v for k, v in run.settings.items() if k != "repeat"} == stored}
    runs = []
    for repeat in range(repeats):
        for case in cases:
            if (case.id, repeat) in done:
                runs.append(done[(case.id, repeat)])
                continue
            if should_stop and should_stop():
                return runs
            # A different seed per repeat: at a temperature above 0 each repeat is a new draw.
            sent = {**settings, "seed": settings.get("seed", 0) + repeat} if repeats > 1 else settings
            run = run_case(backend, case, classes, settings=sent, max_steps=max_steps)
            run.settings = {**stored, "repeat": repeat}
            if run.skipped is None:
                verdict = judge_conversation(case, trajectory(run), classes)
                run.verdict = {"valid": verdict.valid, "error_type": verdict.error_type,
                               "reason": verdict.reason, "failed_turn": verdict.failed_turn,
                               "turns": [asdict(turn) for turn in verdict.turns]}
            with path.open("a", encoding="utf-8") as file:
                file.write(run.to_json() + "\n")
            runs.append(run)
            if progress:
                progress(run)
    return runs


def _comparable(settings: dict) -> dict:
    """Settings as stored (JSON round trip), so a resumed run compares like with like. Full
    descriptions, the default, are not written, so files from before the choice still match."""
    stored = {**settings, "tool_choice": settings.get("tool_choice")}
    if stored.get("descriptions", "full") == "full":
        stored.pop("descriptions", None)
    return json.loads(json.dumps(stored))


# ---------------------------------------------------------------- the table

def rate_rows(runs: list[CaseRun]) -> list[dict]:
    """The rates a run adds up to, each with its count and 95% Wilson interval: the whole
    conversation (BFCL's verdict), turns judged on their own, and the turns where the right
    move was no call."""
    judged = [run for run in runs if run.verdict]
    turns = [turn for run in judged for turn in run.verdict["turns"]]
    rows = []
    for label, hits, total in (
            ("whole conversation (BFCL)", sum(run.verdict["valid"] for run in judged), len(judged)),
            ("turns, each on its own", sum(turn["ok"] for turn in turns), len(turns)),
            ("abstain turns kept", sum(turn["ok"] for turn in turns if not turn["expected"]),
             sum(not turn["expected"] for turn in turns))):
        if total:
            low, high = wilson_interval(hits, total)
            rows.append({"measure": label, "right": hits, "of": total, "rate": hits / total,
                         "low": low, "high": high})
    return rows


def pass_hat_rows(runs: list[CaseRun]) -> list[dict]:
    """pass^k for k = 1 .. the repeats every judged case has (empty with one repeat)."""
    by_case: dict[str, list[bool]] = {}
    for run in runs:
        if run.verdict:
            by_case.setdefault(run.case_id, []).append(run.verdict["valid"])
    tries = min((len(v) for v in by_case.values()), default=0)
    if tries < 2:
        return []
    return [{"k": k, "pass^k": sum(pass_hat_k(sum(v[:tries]), tries, k) for v in by_case.values()) / len(by_case)}
            for k in range(1, tries + 1)]


def compare_runs(first: list[CaseRun], second: list[CaseRun], first_label: str = "first",
                 second_label: str = "second", factor: str = "setting") -> list[PairedDifference]:
    """Two runs of the same conversations, judged as pairs (``toolkit.bench.paired``): whole
    conversations paired on (case, repeat), exact McNemar; turns paired on (case, repeat, turn),
    clustered on the case, since the turns of one conversation are not independent. A
    conversation skipped or missing in either run is left out and counted."""
    def judged(runs):
        return {(run.case_id, run.settings.get("repeat", 0)): run.verdict for run in runs if run.verdict}

    a, b = judged(first), judged(second)
    shared = sorted(a.keys() & b.keys())
    left_out = len(a.keys() ^ b.keys())
    labels = dict(factor=factor, first=first_label, second=second_label, left_out=left_out)
    whole = compare_outcomes([a[key]["valid"] for key in shared], [b[key]["valid"] for key in shared],
                             [key[0] for key in shared], aspect="conversation", **labels)
    turns = [(key, x["ok"], y["ok"]) for key in shared for x, y in zip(a[key]["turns"], b[key]["turns"])]
    each = compare_outcomes([x for _, x, _ in turns], [y for _, _, y in turns], [key[0] for key, _, _ in turns],
                            aspect="turn", repeats=False, **labels)
    return [whole, each]


def summary(runs: list[CaseRun]) -> str:
    """The rates of ``rate_rows`` and ``pass_hat_rows`` as lines of text, skipped cases counted."""
    judged = [run for run in runs if run.verdict]
    skipped = [run for run in runs if run.skipped]
    lines = [f"{len({run.case_id for run in runs})} cases, {len(runs)} runs: {len(judged)} judged, "
             f"{len(skipped)} skipped (the prompt does not fit the model's context)"]
    for row in rate_rows(runs):
        lines.append(f"  {row['measure']:28s} {row['right']:4d}/{row['of']:<4d} {row['rate']:6.1%}  "
                     f"[{row['low']:.0%}, {row['high']:.0%}]")
    if runs:
        seconds = sum(run.seconds for run in runs)
        lines.append(f"  model time {seconds:.0f} s, {seconds / len(runs):.1f} s a case")
    lines += [f"  pass^{row['k']} {row['pass^k']:.1%}" for row in pass_hat_rows(runs)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run BFCL multi-turn cases with the lab's loop.")
    parser.add_argument("category", nargs="?", help=f"one of {', '.join(MULTI_TURN_CATEGORIES)}, or a question file")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("FIRST", "SECOND"),
                        help="judge two run files of the same conversations as pairs, and run nothing")
    parser.add_argument("--wheel", type=Path, default=None, help="the bfcl-eval wheel or its unpacked folder")
    parser.add_argument("--cases", type=int, default=20, help="the first N cases (default 20)")
    parser.add_argument("--one-api", action="store_true",
                        help="only cases that use one API (two APIs' documents overflow a 4,096-token context)")
    parser.add_argument("--model", default=None, help="an embedded model, or the endpoint's (LAB_MODEL)")
    parser.add_argument("--temperature", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--tool-choice", default=None, choices=["auto", "required", "none"])
    parser.add_argument("--descriptions", default="full", choices=DESCRIPTIONS,
                        help="BFCL's descriptions as written, without the sentence each API repeats, or none")
    parser.add_argument("--repeats", type=int, default=1, help="runs per case, for pass^k")
    parser.add_argument("--out", type=Path, default=None, help="the run file (JSON lines)")
    args = parser.parse_args(argv)
    if args.compare:
        first, second = (read_runs(path) if path.exists() else None for path in args.compare)
        if first is None or second is None:
            print(f"error: no such run file: {args.compare[0] if first is None else args.compare[1]}", file=sys.stderr)
            return 2
        for difference in compare_runs(first, second, args.compare[0].stem, args.compare[1].stem, "run"):
            print(difference.sentence())
        return 0
    if args.category is None:
        parser.error("name a category or a question file, or give --compare FIRST SECOND")
    try:
        if args.category in MULTI_TURN_CATEGORIES:
            source = args.wheel or cached_wheel()
            if source is None:
                raise SuiteError(["the bfcl-eval wheel is not in the cache: python -m pip download "
                                  "bfcl-eval==2026.3.23 --no-deps -d ~/.cache/tool-calling-lab/bfcl"])
            suite = import_multi_turn(source, args.category)
        else:
            suite = import_multi_turn(args.category)
        classes = api_classes(suite.apis, suite.docs)
        backend = connect(model=args.model)
        out = args.out or Path("runs") / "multi_turn" / f"{suite.category}-{backend.model}.jsonl"
        settings = {"temperature": args.temperature, "seed": args.seed, "max_tokens": args.max_tokens,
                    "tool_choice": args.tool_choice, "descriptions": args.descriptions}
        cases = [case for case in suite.cases if len(case.classes) == 1 or not args.one_api][:args.cases]
        print(f"{len(cases)} cases of {suite.category} x {args.repeats} on {backend.model}; writing {out}",
              file=sys.stderr)

        def report(run: CaseRun) -> None:
            said = run.skipped or (f"pass" if run.verdict["valid"] else f"fail: {run.verdict['reason']}")
            print(f"  {run.case_id} ({run.seconds:.0f} s): {said[:160]}", file=sys.stderr)

        runs = run_cases(backend, cases, classes, out, settings=settings, repeats=args.repeats, progress=report)
    except (SuiteError, LabError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(summary(runs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
