"""Best-first grammar sampling writes exactly what llama.cpp's own grammar sampler writes.

``toolkit.engine.grammar_sampling`` checks only the tokens the later samplers could keep. The
promise is that nothing changes but the time: the same token at every step, seeded or greedy.
So each test here writes the same reply twice, once with llama-cpp-python's stock ``Llama`` and
once with the engine's, and compares them token for token.
"""

import math
import re

import llama_cpp
import pytest

from toolkit.engine import grammar_sampling
from toolkit.engine.grammar import grammar_for, response_grammar

pytestmark = pytest.mark.embedded

TOOLS = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "The weather in a city",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "days": {"type": "integer", "minimum": 1, "maximum": 7}},
            "required": ["city"]}}},
    {"type": "function", "function": {
        "name": "find_flights", "description": "Flights between two cities",
        "parameters": {"type": "object", "properties": {
            "origin": {"type": "string"}, "destination": {"type": "string"},
            "passengers": {"type": "number"}},
            "required": ["origin", "destination"]}}},
]
# Tokens the model would hardly pick on its own: the valid ones lie far down the ranking, so
# the sampler has to look past its first few dozen candidates.
UNLIKELY = llama_cpp.LlamaGrammar.from_string('root ::= "Zq" [xjq]+ "7" [~^]', verbose=False)


@pytest.fixture(scope="module")
def models():
    from toolkit.engine.llama import Llama
    from toolkit.engine.model import model_path

    settings = dict(model_path=model_path(), n_ctx=1024, n_threads=2, verbose=False)
    return llama_cpp.Llama(**settings), Llama(**settings)


def prompt(llm, question: str, opening: str = "") -> list[int]:
    text = f"<|im_start|>user\n{question}<|im_end|>\n<|im_start|>assistant\n{opening}"
    return llm.tokenize(text.encode(), special=True)


def write(llm, tokens: list[int], grammar, temperature: float, seed: int, **settings) -> str:
    llm.reset()
    reply = llm.create_completion(prompt=tokens, max_tokens=40, temperature=temperature, seed=seed,
                                  grammar=grammar, **{"top_p": 1.0, **settings})
    return reply["choices"][0]["text"]


@pytest.fixture
def looks(monkeypatch):
    """How many steps the best-first sampler decided (it is not used when this stays 0)."""
    counted = []
    best_valid = grammar_sampling.BestFirstGrammar._best_valid

    def counting(self, data, logits):
        kept = best_valid(self, data, logits)
        counted.append(kept is not None)
        return kept

    monkeypatch.setattr(grammar_sampling.BestFirstGrammar, "_best_valid", counting)
    return counted


CASES = [
    ("call", "What's the weather in Lyon, in fahrenheit, for 3 days?", "<tool_call>\n"),
    ("call", "Find flights from Oslo to Rome for two people", "<tool_call>\n"),
    ("schema", "Rate this answer from 1 to 5 and say why.", ""),
    ("unlikely", "Say hello.", ""),
]


def grammar_of(kind: str):
    return {"call": grammar_for(TOOLS, "call"),
            "schema": response_grammar({"type": "object", "required": ["score", "why"], "properties": {
                "score": {"type": "integer"}, "why": {"type": "string"}}}),
            "unlikely": UNLIKELY}[kind]


@pytest.mark.parametrize("kind, question, opening", CASES)
def test_the_same_reply_as_llama_cpps_grammar_sampler_greedy_and_seeded(models, looks, kind, question, opening):
    stock, best_first = models
    tokens, grammar = prompt(stock, question, opening), grammar_of(kind)
    for temperature, seed in [(0.0, 0), (0.8, 1), (1.0, 2), (1.0, 3), (1.7, 4)]:
        expected = write(stock, tokens, grammar, temperature, seed)
        assert write(best_first, tokens, grammar, temperature, seed) == expected, (temperature, seed)
    assert looks and all(looks)  # the best-first path wrote them, not llama.cpp's full check


def test_valid_tokens_far_down_the_ranking_are_found(models, looks, monkeypatch):
    stock, best_first = models
    searched = []
    valid_between = grammar_sampling.BestFirstGrammar._valid_between
    monkeypatch.setattr(grammar_sampling.BestFirstGrammar, "_valid_between",
                        lambda self, *args: searched.append(args[-2:]) or valid_between(self, *args))
    reply = write(best_first, prompt(stock, "Say hello."), UNLIKELY, 0.0, 0)
    assert re.fullmatch(r"Zq[xjq]*(7[~^])?", reply)
    # greedy looks further than its first group only when that group holds no valid token
    assert any(high < math.inf for _low, high in searched)


def test_settings_that_read_the_whole_distribution_check_every_token(models, looks):
    stock, best_first = models
    tokens, grammar = prompt(stock, *CASES[0][1:]), grammar_of("call")
    for settings in [{"top_p": 0.9}, {"min_p": 0.0}, {"typical_p": 0.5}]:
        assert write(best_first, tokens, grammar, 1.0, 5, **settings) == write(stock, tokens, grammar, 1.0, 5, **settings)
    assert looks == []  # llama.cpp's own grammar sampler wrote these


def test_a_failure_inside_the_sampler_falls_back_to_the_full_check(models, monkeypatch):
    """An exception in a ctypes callback is printed and lost: left alone, the token would be
    sampled with no grammar at all. The sampler checks every token instead."""
    stock, best_first = models

    def broken(self, data, logits):
        raise RuntimeError("a bug in the best-first search")

    monkeypatch.setattr(grammar_sampling.BestFirstGrammar, "_best_valid", broken)
    tokens, grammar = prompt(stock, *CASES[0][1:]), grammar_of("call")
    for temperature, seed in [(0.0, 0), (1.0, 2)]:
        assert write(best_first, tokens, grammar, temperature, seed) == write(stock, tokens, grammar, temperature, seed)


@pytest.mark.parametrize("settings, expected", [
    (dict(temp=0.0, top_p=0.5, min_p=0.0, typical_p=0.5, mirostat_mode=2), None),  # greedy: the best
    (dict(temp=1.0, top_p=1.0, min_p=0.05, typical_p=1.0, mirostat_mode=0), math.log(0.05)),
    (dict(temp=0.7, top_p=0.95, min_p=0.05, typical_p=1.0, mirostat_mode=0), False),
    (dict(temp=0.7, top_p=1.0, min_p=0.0, typical_p=1.0, mirostat_mode=0), False),
    (dict(temp=0.7, top_p=1.0, min_p=0.05, typical_p=0.9, mirostat_mode=0), False),
    (dict(temp=0.7, top_p=1.0, min_p=0.05, typical_p=1.0, mirostat_mode=1), False),
    (dict(temp=-1.0, top_p=1.0, min_p=0.05, typical_p=1.0, mirostat_mode=0), False),
])
def test_how_far_down_a_token_may_still_be_picked(settings, expected):
    assert grammar_sampling.keep_within(**settings) == expected
