"""Fit the engine's decision thresholds on synthetic questions, and show how well they split.

    python -m scripts.calibrate_decisions --count 240
    python -m scripts.calibrate_decisions --count 240 --model SmolLM2-135M-Instruct+tools
    python -m scripts.calibrate_decisions --after-results --count 200 [--model ...]
    python -m scripts.calibrate_decisions --count 160 --model SmolLM2-135M-Instruct+tools2 \
        --adapter training/runs/<run>/adapter-800.gguf       # an adapter not (yet) shipped

The engine opens a call under tool_choice "auto" when log P(``<tool_call>``) clears
``CALL_THRESHOLD``, and writes another call when log P(another call) - log P(end of reply)
clears ``ANOTHER_CALL_THRESHOLD`` (see ``toolkit/engine/decide.py``). This script asks the
embedded model about questions from ``training/synthetic.py`` (invented tools and questions,
never the scenario suite or BFCL), records both scores, and prints, for each decision, the
threshold that best separates the two kinds of question (balanced accuracy), how often each
kind lands on the right side, and the area under the ROC curve.

``--after-results`` fits the third decision instead: conversations that end with tool results
(``training.synthetic.after_result_turns``), where a result that makes a next call necessary
should open a call, and a result that answers, says "not found" or reports an error should not.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from toolkit.engine import BASE_MODEL, Engine, decide, model_thread
from toolkit.engine.model import TUNED_MODELS, with_adapter
from toolkit.engine.request import parse_request
from toolkit.engine.template import CALL_OPEN
from training.synthetic import after_result_turns, examples


def best_threshold(positive: list[float], negative: list[float]) -> tuple[float, float]:
    """(threshold, balanced accuracy) for "score > threshold means positive"."""
    candidates = sorted(set(positive + negative))
    best = (candidates[0] - 1, 0.0)
    for low, high in zip(candidates, candidates[1:] + [candidates[-1] + 2]):
        threshold = (low + high) / 2
        accuracy = (sum(s > threshold for s in positive) / len(positive)
                    + sum(s <= threshold for s in negative) / len(negative)) / 2
        if accuracy > best[1]:
            best = (threshold, accuracy)
    return best


def auc(positive: list[float], negative: list[float]) -> float:
    pairs = [(p > n) + 0.5 * (p == n) for p in positive for n in negative]
    return sum(pairs) / len(pairs)


def report(name: str, positive: list[float], negative: list[float], current: float, labels: tuple[str, str]) -> None:
    threshold, accuracy = best_threshold(positive, negative)
    print(f"\n{name}: {labels[0]} n={len(positive)}, {labels[1]} n={len(negative)}, AUC {auc(positive, negative):.3f}")
    print(f"  median score: {labels[0]} {statistics.median(positive):.2f}, {labels[1]} {statistics.median(negative):.2f}")
    for label, value in (("best", threshold), ("engine's", current)):
        right_pos = sum(s > value for s in positive) / len(positive)
        right_neg = sum(s <= value for s in negative) / len(negative)
        print(f"  {label} threshold {value:7.2f}: {labels[0]} right {right_pos:.0%}, {labels[1]} right {right_neg:.0%}, "
              f"balanced {(right_pos + right_neg) / 2:.0%}")
    print(f"  best balanced accuracy {accuracy:.0%}")


def calibrate_after_results(engine: Engine, count: int, seed: int) -> None:
    """log P(<tool_call>) at the start of the reply after tool results, by what the results call for."""
    writer = engine.writer
    opener = writer.tokens(CALL_OPEN + "\n")
    scores: dict[str, list[float]] = {"next_call": [], "answers": [], "not_found": [], "error": []}
    started = time.perf_counter()
    for number, turn in enumerate(after_result_turns(count, seed=seed), 1):
        request = parse_request({"messages": turn.conversation.messages, "tools": turn.conversation.tools})
        prompt = engine.prompt_tokens(request)
        _, score = model_thread.run(decide.opens_call, writer.llm.raw, prompt, opener, float("-inf"))
        scores[turn.outcome].append(score)
        if number % 20 == 0:
            print(f"{number}/{count} turns, {time.perf_counter() - started:.0f} s", flush=True)
    answer = scores["answers"] + scores["not_found"] + scores["error"]
    report("after results: call again or answer (log P(<tool_call>))", scores["next_call"], answer,
           writer.thresholds.after_results, ("needs a next call", "answer from the results"))
    for outcome in ("answers", "not_found", "error"):
        if scores[outcome]:
            print(f"  {outcome}: n={len(scores[outcome])}, AUC against next call "
                  f"{auc(scores['next_call'], scores[outcome]):.3f}, median {statistics.median(scores[outcome]):.2f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=240)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--model", default=BASE_MODEL, help="which embedded model to calibrate")
    parser.add_argument("--after-results", action="store_true", help="fit the after-result decision instead")
    parser.add_argument("--adapter", type=Path,
                        help="serve this GGUF adapter as --model (default: the file the lab ships)")
    args = parser.parse_args(argv)
    tuned = {model.name: model for model in TUNED_MODELS}
    if args.model != BASE_MODEL:  # the base model needs no adapter
        if args.model not in tuned:
            parser.error(f"no embedded model is called {args.model!r}; there are {', '.join([BASE_MODEL, *tuned])}")
        served = with_adapter(args.model, args.adapter)
        adapter = next(model.adapter for model in served if model.name == args.model)
        if not Path(adapter).is_file():
            parser.error(f"no adapter file at {adapter}")
        engine = Engine(model=args.model, tuned=served)
    else:
        engine = Engine(model=args.model)
    if args.after_results:
        calibrate_after_results(engine, args.count, args.seed)
        return
    writer = engine.writer
    saved = writer.thresholds.call, writer.thresholds.another_call
    # Always open a first call and try a second: every example then yields every score.
    writer.thresholds = decide.Thresholds(float("-inf"), float("-inf"))
    scores: dict[str, list[float]] = {"call": [], "no_call": [], "another": [], "enough": []}
    # (margin, was the second call new) per question that needs one call or several
    second: dict[str, list[tuple[float, bool]]] = {"another": [], "enough": []}
    started = time.perf_counter()
    try:
        for number, example in enumerate(examples(args.count, seed=args.seed), 1):
            engine.complete({"messages": [{"role": "user", "content": example.question}], "tools": example.tools,
                             "temperature": 0, "seed": 0, "max_tokens": 90})
            found = writer.decisions
            scores["call" if example.calls else "no_call"].append(found[0][1])
            if example.calls and len(found) > 1 and found[1][0] == "another":
                kind = "another" if len(example.calls) > 1 else "enough"
                scores[kind].append(found[1][1])
                # no "new" entry: the second call was a repeat, or cut off
                second[kind].append((found[1][1], len(found) > 2 and found[2] == ("new", 1.0)))
            if number % 20 == 0:
                print(f"{number}/{args.count} examples, {time.perf_counter() - started:.0f} s", flush=True)
    finally:
        writer.thresholds = decide.Thresholds(*saved)
    report("call or text (log P(<tool_call>))", scores["call"], scores["no_call"], saved[0], ("needs a tool", "needs none"))
    report("another call (log-prob margin over ending)", scores["another"], scores["enough"], saved[1],
           ("parallel question", "one-call question"))
    print("\nanother call, kept only if it is new and carries a value the user wrote (the engine's rule):")
    for threshold in (float("-inf"), -4.0, -3.0, -2.0, -1.0, saved[1]):
        right = {kind: sum((margin > threshold and new) == (kind == "another") for margin, new in pairs) / max(len(pairs), 1)
                 for kind, pairs in second.items()}
        print(f"  threshold {threshold:6.1f}: parallel question right {right['another']:.0%}, "
              f"one-call question right {right['enough']:.0%}, balanced {(right['another'] + right['enough']) / 2:.0%}")


if __name__ == "__main__":
    main()
