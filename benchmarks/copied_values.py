"""Does each embedded model copy a name from the question into its call exactly?

    python benchmarks/copied_values.py                       # every embedded model
    python benchmarks/copied_values.py --model SmolLM2-135M-Instruct --show

SmolLM2's tokenizer holds many place and person names as one token after a space (" Havana",
as the question writes it) but splits them when they stand alone ("Hav" + "ana", as after a
JSON quote). A model that copies the spaced token into its arguments writes a stray piece
before the name: ``"H Havana"``. The second training recipe adds values of that kind
(``training.synthetic.SPLIT_CITIES`` and ``SPLIT_PEOPLE``); this measures them on
``HELD_OUT_SPLIT_NAMES``, 26 names of the same kind that no training conversation contains,
asked in English and in Chinese through two tools written here (neither is in the training
bank). One forced call per question, temperature 0, seed 0. For each reply:

- **exact**: the argument is the name as the question writes it (or its English form, for a
  Chinese question), nothing more;
- **stray piece**: the argument holds the name with something glued on (``"H Havana"``,
  ``"Havana Havana"``): the split-token slip this measures;
- **other**: anything else (another value, a missing argument, another tool).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from the repository root, like the others here

from toolkit.bench.rates import wilson_interval  # noqa: E402
from toolkit.engine import Engine, embedded_models  # noqa: E402
from training.synthetic import HELD_OUT_SPLIT_NAMES  # noqa: E402

CITIES = {"Havana", "Madrid", "Vienna", "Prague", "Lisbon", "Seattle", "Denver", "Houston", "Manila", "Tehran",
          "Glasgow", "Brisbane", "Dubai", "Helsinki"}


def _tool(name: str, description: str, parameter: str, about: str) -> dict:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": {parameter: {"type": "string", "description": about}},
        "required": [parameter]}}}


WEATHER = _tool("current_weather", "Current weather in a city", "city", "The city")
PHONE = _tool("phone_number_of", "Look up a person's phone number in the address book", "person", "The person's name")
TOOLS = [WEATHER, PHONE]

ASK = {("city", "en"): "What is the weather like in {} right now?",
       ("city", "zh"): "{}现在天气怎么样？",
       ("person", "en"): "What is {}'s phone number?",
       ("person", "zh"): "{}的电话号码是多少？"}


def questions() -> list[dict]:
    """Every held-out name, asked in both languages, with the tool and value a right call has."""
    items = []
    for english, chinese, value in HELD_OUT_SPLIT_NAMES:
        kind = "city" if english in CITIES else "person"
        for language, written in (("en", english), ("zh", chinese)):
            items.append({"question": ASK[kind, language].format(written), "language": language,
                          "tool": WEATHER["function"]["name"] if kind == "city" else PHONE["function"]["name"],
                          "parameter": kind, "accepted": {written, value}})
    return items


def judge(item: dict, message: dict) -> str:
    """'exact', 'stray piece' or 'other' for one reply (an OpenAI assistant message as a dict)."""
    calls = message.get("tool_calls") or []
    if len(calls) != 1 or calls[0]["function"]["name"] != item["tool"]:
        return "other"
    try:
        value = json.loads(calls[0]["function"]["arguments"]).get(item["parameter"])
    except (json.JSONDecodeError, AttributeError):
        return "other"
    if not isinstance(value, str):
        return "other"
    if value.strip() in item["accepted"]:
        return "exact"
    if any(name in value for name in item["accepted"]):
        return "stray piece"
    return "other"


def rate(rows: list[str], outcome: str) -> str:
    k, n = rows.count(outcome), len(rows)
    low, high = wilson_interval(k, n)
    return f"{k}/{n} = {k / n:.0%} [{low:.0%}, {high:.0%}]"


def run(engine: Engine, model: str, show: bool) -> dict[str, list[str]]:
    outcomes: dict[str, list[str]] = {"en": [], "zh": []}
    for item in questions():
        reply = engine.complete({"model": model, "messages": [{"role": "user", "content": item["question"]}],
                                 "tools": TOOLS, "tool_choice": "required", "parallel_tool_calls": False,
                                 "temperature": 0, "seed": 0, "max_tokens": 60})
        message = reply["choices"][0]["message"]
        outcome = judge(item, message)
        outcomes[item["language"]].append(outcome)
        if show:
            said = [(c["function"]["name"], c["function"]["arguments"]) for c in message.get("tool_calls") or []]
            print(f"  {outcome:11} {item['question']!r} -> {json.dumps(said, ensure_ascii=False)}"[:200])
    return outcomes


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="append", help="an embedded model (default: all of them)")
    parser.add_argument("--show", action="store_true", help="print every reply")
    args = parser.parse_args(argv)
    engine = Engine()
    print("| model | language | exact | stray piece | other |")
    print("|---|---|---|---|---|")
    for model in args.model or list(embedded_models()):
        started = time.perf_counter()
        outcomes = run(engine, model, args.show)
        for language, rows in [*outcomes.items(), ("both", outcomes["en"] + outcomes["zh"])]:
            print(f"| {model} | {language} | {rate(rows, 'exact')} | {rate(rows, 'stray piece')} | {rate(rows, 'other')} |")
        print(f"({model}: {time.perf_counter() - started:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
