"""What the embedded models write after tool results, on a held-out set of conversations.

    python benchmarks/after_results.py                       # every embedded model
    python benchmarks/after_results.py --model SmolLM2-135M-Instruct --show
    python benchmarks/after_results.py --model SmolLM2-135M-Instruct+tools \
        --adapter training/runs/second/adapter-800.gguf      # a candidate adapter, under a tuned model's name

``data/after_results.json`` holds 44 conversations (half Chinese) that end with tool results:
one result, two results, "not found", an error, and results that make a second call necessary.
It was written by hand for measuring and is never used to fit anything. Each conversation is
sent as OpenAI's API is usually called (tools offered, tool_choice left out, so "auto"), at
temperature 0 with seed 0, and the next assistant turn is read:

- **text** or **call**;
- **states a fact**: the text holds a value of a result (its number, name, "not found"...) and
  is not an echo; with two results, "both facts" counts replies that state one of each;
- **echo**: the text holds JSON or markup (``{"``, ``<tag``): the result copied, not answered;
- **repeat**: a call the conversation already has a result for;
- **second call**: where a second call is needed, the reply calls the tool that needs the
  first result, with the value the first result gave.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from the repository root, like the others here

from toolkit.bench.rates import wilson_interval  # noqa: E402
from toolkit.engine import Engine, embedded_models  # noqa: E402
from toolkit.engine.decide import call_key  # noqa: E402
from toolkit.engine.model import with_adapter  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data" / "after_results.json"
ONE_STEP = ("one_tool", "two_tools", "not_found", "error")


def load() -> list[dict]:
    return json.loads(DATA.read_text(encoding="utf-8"))["conversations"]


def states(text: str, alternatives: list[str]) -> bool:
    lowered = text.lower()
    return any(alternative.lower() in lowered for alternative in alternatives)


def judge(conversation: dict, message: dict) -> dict:
    """The measures of one reply (an OpenAI assistant message as a dict)."""
    text = message.get("content") or ""
    calls = [(c["function"]["name"], c["function"]["arguments"]) for c in message.get("tool_calls") or []]
    earlier = {call_key(c["function"]["name"], c["function"]["arguments"])
               for m in conversation["messages"] for c in m.get("tool_calls") or []}
    facts = [states(text, group) for group in conversation["facts"]]
    wanted = conversation.get("next_call")
    echo = bool(re.search(r'\{"|<[A-Za-z_/]', text))
    answer = bool(text.strip()) and not echo
    return {
        "text": bool(text.strip()) and not calls,
        "call": bool(calls),
        "echo": echo,
        "fact": answer and any(facts),
        "all_facts": answer and all(facts),
        "repeat": any(call_key(*call) in earlier for call in calls),
        "second_call": bool(wanted) and any(call_key(*call) == call_key(wanted["name"], json.dumps(wanted["arguments"]))
                                            for call in calls),
        "second_tool": bool(wanted) and any(name == wanted["name"] for name, _ in calls),
    }


def rate(rows: list[dict], key: str) -> str:
    k, n = sum(r[key] for r in rows), len(rows)
    low, high = wilson_interval(k, n)
    return f"{k}/{n} [{low:.0%}, {high:.0%}]"


def run(engine: Engine, model: str, show: bool) -> list[dict]:
    rows = []
    for conversation in load():
        reply = engine.complete({"model": model, "messages": conversation["messages"], "tools": conversation["tools"],
                                 "temperature": 0, "seed": 0, "max_tokens": 120})
        message = reply["choices"][0]["message"]
        row = {"id": conversation["id"], "kind": conversation["kind"], "language": conversation["language"],
               **judge(conversation, message)}
        rows.append(row)
        if show:
            said = message.get("content") or json.dumps([(c["function"]["name"], c["function"]["arguments"])
                                                         for c in message.get("tool_calls") or []], ensure_ascii=False)
            print(f"  {row['id']:6} {'fact' if row['fact'] else '    '} {'REPEAT' if row['repeat'] else ''} {said!r}"[:200])
    return rows


def report(model: str, rows: list[dict], seconds: float) -> None:
    one_step = [r for r in rows if r["kind"] in ONE_STEP]
    needs_second = [r for r in rows if r["kind"] == "needs_second"]
    print(f"\n{model}: {len(rows)} conversations in {seconds:.0f} s")
    print(f"  one-step ({len(one_step)}): text {rate(one_step, 'text')}, states a fact {rate(one_step, 'fact')}, "
          f"echo {rate(one_step, 'echo')}, repeated call {rate(one_step, 'repeat')}")
    for language in ("en", "zh"):
        part = [r for r in one_step if r["language"] == language]
        print(f"    {language}: text {rate(part, 'text')}, states a fact {rate(part, 'fact')}, repeat {rate(part, 'repeat')}")
    for kind in ONE_STEP:
        part = [r for r in one_step if r["kind"] == kind]
        extra = f", both facts {rate(part, 'all_facts')}" if kind == "two_tools" else ""
        print(f"    {kind:10}: text {rate(part, 'text')}, states a fact {rate(part, 'fact')}{extra}, repeat {rate(part, 'repeat')}")
    print(f"  needs a second call ({len(needs_second)}): second call right {rate(needs_second, 'second_call')}, "
          f"right tool {rate(needs_second, 'second_tool')}, text {rate(needs_second, 'text')}, "
          f"repeat {rate(needs_second, 'repeat')}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="append", help="an embedded model (default: all of them)")
    parser.add_argument("--show", action="store_true", help="print every reply")
    parser.add_argument("--adapter", type=Path,
                        help="a GGUF adapter to serve as the (one) tuned --model (default: the shipped file)")
    args = parser.parse_args(argv)
    if args.adapter:
        if not args.model or len(args.model) != 1:
            parser.error("--adapter needs one --model: the tuned model it is served as")
        if not args.adapter.is_file():
            parser.error(f"no adapter file at {args.adapter}")
        engine = Engine(tuned=with_adapter(args.model[0], args.adapter))
    else:
        engine = Engine()
    for model in args.model or list(embedded_models()):
        started = time.perf_counter()
        rows = run(engine, model, args.show)
        report(model, rows, time.perf_counter() - started)


if __name__ == "__main__":
    main()
