"""A corpus of real replies under the string protocol, and how much of it each parser recovers.

    python scripts/protocol_corpus.py generate   # asks the model; writes tests/data/protocol_corpus.jsonl
    python scripts/protocol_corpus.py report     # prints the three shares below

Every case of the scenario suite is asked under the ``<tool>{json}</tool>`` string protocol
(no grammar: the model writes whatever it writes), after one worked example exchange, at temperatures 0 and 1, and the first
16 cases once more at 0.7: 200 replies. The report counts,
among the replies that attempt a call (they contain a ``<tool`` tag or a ``{``):

  * the share that the regex alone extracts (``repair="none"``);
  * the share recovered once the hand-written repair is allowed (``repair="hand"``);
  * the share recovered with the ``json_repair`` library (``repair="library"``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from toolkit.bench.suite import load_suite
from toolkit.protocol import extract_calls, render_system_prompt

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "data" / "protocol_corpus.jsonl"
TEMPERATURES = (0.0, 1.0)
EXTRA_TEMPERATURE, EXTRA_CASES = 0.7, 16
MAX_TOKENS = 56
# One worked exchange before the question: without it a 135M model seldom writes a tag at all,
# and the corpus would say little about parsing. The example tool is not in any case's list.
EXAMPLE = [
    {"role": "user", "content": "What time is it in Paris?"},
    {"role": "assistant", "content": '<tool>{"name": "get_time", "arguments": {"city": "Paris"}}</tool>'},
]


def generate(path: Path, base_url: str | None, model: str | None) -> None:
    from toolkit.client import connect

    backend = connect(base_url, model)
    suite = load_suite()
    jobs = [(case, temperature) for temperature in TEMPERATURES for case in suite.cases]
    jobs += [(case, EXTRA_TEMPERATURE) for case in suite.cases[:EXTRA_CASES]]
    path.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with path.open("w", encoding="utf-8") as out:
        for done, (case, temperature) in enumerate(jobs, 1):
            tools = [suite.tool_spec(name) for name in case.tools]
            messages = [{"role": "system", "content": render_system_prompt(tools)}, *EXAMPLE,
                        *[m.model_dump(exclude_none=True) for m in case.messages]]
            reply = backend.chat(messages=messages, temperature=temperature, seed=done, max_tokens=MAX_TOKENS)
            record = {"case_id": case.id, "language": case.language, "temperature": temperature, "seed": done,
                      "model": backend.model, "tools": case.tools, "text": reply.choices[0].message.content or ""}
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            bar = "#" * (30 * done // len(jobs))
            print(f"\r[{bar:<30}] {done}/{len(jobs)}  {time.perf_counter() - started:5.0f} s", end="", flush=True)
    print(f"\nwrote {len(jobs)} replies to {path}")


def shares(records: list[dict]) -> dict:
    """Counts for the report; a reply counts as recovered when at least one call comes out
    and no call attempt in it was left unparsable."""
    attempted = [r for r in records if "<tool" in r["text"] or "{" in r["text"]]

    def recovered(repair: str) -> int:
        count = 0
        for record in attempted:
            result = extract_calls(record["text"], repair=repair)
            if result.calls and not any(f.reason == "json_unrepairable" for f in result.failures):
                count += 1
        return count

    return {"replies": len(records), "attempted": len(attempted),
            "regex": recovered("none"), "hand": recovered("hand"), "library": recovered("library")}


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def report(path: Path) -> None:
    figures = shares(load(path))
    n = figures["attempted"]
    print(f"{figures['replies']} replies in {path.name}; {n} attempt a call")
    for key, label in (("regex", "regex + json.loads only"), ("hand", "with the hand-written repair"),
                       ("library", "with the json_repair library")):
        print(f"  {label:<32} {figures[key]:4d}/{n}  {figures[key] / n:6.1%}" if n else f"  {label}: no attempts")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["generate", "report"])
    parser.add_argument("--path", type=Path, default=CORPUS)
    parser.add_argument("--base-url")
    parser.add_argument("--model")
    args = parser.parse_args(argv)
    if args.command == "generate":
        generate(args.path, args.base_url, args.model)
    if not args.path.exists():
        print(f"no corpus at {args.path}: run 'generate' first", file=sys.stderr)
        return 2
    report(args.path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
