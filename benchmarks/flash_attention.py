"""Tool prompts evaluated and calls written with flash attention and without.

    python benchmarks/flash_attention.py [--repeats 3]

The engine loads the model with flash attention. This measures what that gains: each
question's prompt (the system prompt with three tools, the question, the call's opening tag)
is evaluated from nothing and its call written under the call grammar at temperature 0, by
two copies of the engine's ``Llama``, one with flash attention and one without, in alternating
order. It prints the time per prompt token, the time per written token after the first, the
ratios, and how many calls came out identical: the two add up attention in a different order,
so the logits' last bits differ, and where two tokens are nearly tied the greedy choice can
flip. Neither order is the right one; the lessons' outputs were produced with flash attention.
"""

from __future__ import annotations

import argparse
import time

from grammar_sampling import QUESTIONS, TOOLS

from toolkit.engine.grammar import grammar_for
from toolkit.engine.llama import Llama
from toolkit.engine.model import model_path
from toolkit.engine.template import CALL_OPEN, render_prompt


def write(llm, prompt: list[int], grammar) -> tuple[str, float, float, int]:
    """The call's text, the seconds until its first token (the prompt's evaluation), the
    seconds its later tokens took, and how many those were."""
    llm.reset()
    text, tokens = "", 0
    started = time.perf_counter()
    first = None
    for chunk in llm.create_completion(prompt=prompt, max_tokens=80, temperature=0.0, seed=0,
                                       grammar=grammar, stream=True):
        text += chunk["choices"][0]["text"]
        tokens += 1
        if first is None:
            first = time.perf_counter()
    return text, first - started, time.perf_counter() - first, tokens - 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="times each question is asked of each")
    args = parser.parse_args()
    settings = dict(model_path=model_path(), n_ctx=2048, n_threads=2, verbose=False)
    models = {"without": Llama(**settings, flash_attn=False), "flash": Llama(**settings, flash_attn=True)}
    grammar = grammar_for(TOOLS, "call")
    # name -> [prompt seconds, prompt tokens, written seconds, written tokens]
    totals = {name: [0.0, 0, 0.0, 0] for name in models}
    identical = calls = 0
    for repeat in range(args.repeats):
        for number, question in enumerate(QUESTIONS):
            text = render_prompt([{"role": "user", "content": question}], TOOLS) + CALL_OPEN + "\n"
            prompt = models["without"].tokenize(text.encode("utf-8"), add_bos=False, special=True)
            order = list(models.items())[::1 if (number + repeat) % 2 else -1]
            replies = {}
            for name, llm in order:
                replies[name], prompt_s, written_s, written = write(llm, prompt, grammar)
                totals[name][0] += prompt_s
                totals[name][1] += len(prompt)
                totals[name][2] += written_s
                totals[name][3] += written
            identical += replies["without"] == replies["flash"]
            calls += 1
    per_token = {name: (1000 * t[0] / t[1], 1000 * t[2] / t[3]) for name, t in totals.items()}
    print(f"{len(QUESTIONS)} questions x {args.repeats}, prompts of {totals['flash'][1] // calls} tokens on average")
    print(f"{'':<10}{'prompt ms/token':>16}{'written ms/token':>18}")
    for name, (prompt_ms, written_ms) in per_token.items():
        print(f"{name:<10}{prompt_ms:>16.2f}{written_ms:>18.2f}")
    (slow_prompt, slow_written), (fast_prompt, fast_written) = per_token["without"], per_token["flash"]
    print(f"{'ratio':<10}{slow_prompt / fast_prompt:>15.2f}x{slow_written / fast_written:>17.2f}x")
    print(f"identical calls: {identical} of {calls}")


if __name__ == "__main__":
    main()
