"""Tool calls written under the call grammar: llama.cpp's grammar sampler against best-first.

    python benchmarks/grammar_sampling.py [--seeds 3]

Each question's call is written twice from the same prompt, with llama-cpp-python's stock
``Llama`` (every token of the vocabulary checked against the grammar at every step) and with
the engine's (``toolkit.engine.grammar_sampling``: only the tokens the samplers after the grammar
could keep), in alternating order. It prints the time per token after the first (the first
includes the prompt's evaluation), the ratio, and how many of the calls came out identical:
the promise is all of them.
"""

from __future__ import annotations

import argparse
import statistics
import time

import llama_cpp

from toolkit.engine.grammar import grammar_for
from toolkit.engine.llama import Llama
from toolkit.engine.model import model_path
from toolkit.engine.template import CALL_OPEN, render_prompt

TOOLS = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "Current weather of a city",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string", "description": "City name"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"]}}},
    {"type": "function", "function": {
        "name": "convert_currency", "description": "Convert an amount between currencies",
        "parameters": {"type": "object", "properties": {
            "amount": {"type": "number"}, "source": {"type": "string"}, "target": {"type": "string"}},
            "required": ["amount", "source", "target"]}}},
    {"type": "function", "function": {
        "name": "set_timer", "description": "Start a countdown timer",
        "parameters": {"type": "object", "properties": {
            "minutes": {"type": "integer", "minimum": 1, "maximum": 120}, "label": {"type": "string"}},
            "required": ["minutes"]}}},
]
QUESTIONS = [
    "How warm is it in Oslo, in fahrenheit?",
    "Convert 250 euros to Japanese yen.",
    "Set a timer for 12 minutes for the pasta.",
    "杭州今天天气如何？",
    "把100美元换成人民币",
    "Is it snowing in Montreal right now?",
]


def write(llm, prompt: list[int], grammar, temperature: float, seed: int) -> tuple[str, float, int]:
    """The call's text, the seconds its tokens after the first took, and how many those were."""
    llm.reset()
    text, tokens, started = "", 0, None
    for chunk in llm.create_completion(prompt=prompt, max_tokens=80, temperature=temperature, top_p=1.0,
                                       seed=seed, grammar=grammar, stream=True):
        text += chunk["choices"][0]["text"]
        tokens += 1
        if tokens == 1:
            started = time.perf_counter()
    return text, time.perf_counter() - started, tokens - 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3, help="seeds per question at temperature 1")
    args = parser.parse_args()
    settings = dict(model_path=model_path(), n_ctx=2048, n_threads=2, verbose=False)
    stock, best_first = llama_cpp.Llama(**settings), Llama(**settings)
    grammar = grammar_for(TOOLS, "call")
    print(f"{'temperature':<12}{'calls':>6}{'identical':>11}{'stock ms/token':>16}{'best-first':>12}{'ratio':>7}")
    for temperature, seeds in ((0.0, [0]), (1.0, range(args.seeds))):
        times = {"stock": [0.0, 0], "best-first": [0.0, 0]}
        ratios, identical, calls = [], 0, 0
        for number, question in enumerate(QUESTIONS):
            text = render_prompt([{"role": "user", "content": question}], TOOLS) + CALL_OPEN + "\n"
            prompt = stock.tokenize(text.encode("utf-8"), add_bos=False, special=True)
            for seed in seeds:
                order = [("stock", stock), ("best-first", best_first)][::1 if (number + seed) % 2 else -1]
                replies = {}
                for name, llm in order:
                    replies[name] = write(llm, prompt, grammar, temperature, seed)
                    times[name][0] += replies[name][1]
                    times[name][1] += replies[name][2]
                identical += replies["stock"][0] == replies["best-first"][0]
                calls += 1
                ratios.append((replies["stock"][1] / replies["stock"][2])
                              / (replies["best-first"][1] / replies["best-first"][2]))
        stock_ms = 1000 * times["stock"][0] / times["stock"][1]
        fast_ms = 1000 * times["best-first"][0] / times["best-first"][1]
        print(f"{temperature:<12}{calls:>6}{identical:>11}{stock_ms:>16.2f}{fast_ms:>12.2f}"
              f"{stock_ms / fast_ms:>6.2f}x   (median per call {statistics.median(ratios):.2f}x)")


if __name__ == "__main__":
    main()
