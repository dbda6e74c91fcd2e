"""Calls per reply and finish_reason for questions that each need exactly one call.

    python benchmarks/calls_per_reply.py

Asked as OpenAI's API is called: tool_choice "required" (and then left out, i.e. "auto"),
parallel_tool_calls left at its default, temperature 0, seed 0, max_tokens 300. A reply that
repeats its call until max_tokens runs out shows up as many calls and finish_reason "length".
"""

from __future__ import annotations

import json
import time

from toolkit.engine import Engine

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Get the current weather of a city",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string", "description": "City name, e.g. Beijing"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"]}}}
SQRT = {"type": "function", "function": {
    "name": "square_root", "description": "Square root of a number",
    "parameters": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}}}
QUESTIONS = [
    "How warm is it in Oslo, in fahrenheit?",
    "What's the weather like in Beijing right now?",
    "Is it raining in London?",
    "上海现在天气怎么样？",
    "What is the square root of 81?",
    "Compute the square root of 2.",
    "144的平方根是多少？",
    "Tell me the temperature in Paris in celsius.",
]


def main() -> None:
    engine = Engine()
    for choice in ("required", None):
        print(f"\ntool_choice={choice or 'left out (auto)'}, parallel_tool_calls left out, max_tokens 300")
        print(f"{'question':<46}{'calls':>6}  {'finish_reason':<14}{'tokens':>7}{'seconds':>9}")
        total_calls, started_all = 0, time.perf_counter()
        for question in QUESTIONS:
            request = {"messages": [{"role": "user", "content": question}], "tools": [WEATHER, SQRT],
                       "temperature": 0, "seed": 0, "max_tokens": 300}
            if choice:
                request["tool_choice"] = choice
            started = time.perf_counter()
            reply = engine.complete(request)
            seconds = time.perf_counter() - started
            choice_ = reply["choices"][0]
            calls = choice_["message"].get("tool_calls") or []
            total_calls += len(calls)
            print(f"{question:<46}{len(calls):>6}  {choice_['finish_reason']:<14}"
                  f"{reply['usage']['completion_tokens']:>7}{seconds:>9.1f}")
            for call in calls[:3]:
                print(f"    {call['function']['name']} {json.dumps(call['function']['arguments'], ensure_ascii=False)}")
        print(f"{'all':<46}{total_calls:>6}  {'':<14}{'':>7}{time.perf_counter() - started_all:>9.1f}")


if __name__ == "__main__":
    main()
