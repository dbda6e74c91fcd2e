"""The three decisions that shape a reply, taken by likelihood instead of token by token.

A reply with tools on offer has three forks:

- **call or text?** At the start, under ``tool_choice="auto"``.
- **after tool results: answer, or call again?** The same question when the messages end with
  the results of the latest calls. It has a threshold of its own (see below).
- **another call or stop?** After each complete call, when parallel calls are allowed.

Left to pick one token at a time, SmolLM2-135M gets both wrong in the same way. At the start,
its likeliest *first* token is nearly always a word ("The", "You"), so it never opens a call,
although once it has written ``<`` it continues with ``tool_call>`` almost surely. After a call,
its likeliest next token is a newline, and the grammar then allows nothing but another
``<tool_call>``, so it repeats calls until ``max_tokens`` runs out, although ending the reply
was likelier than opening another call.

So the engine asks the model about each option *as a whole*:

- **call or text:** open a call when log P(``<tool_call>\\n`` | prompt) > ``CALL_THRESHOLD``;
- **another call:** continue when log P(``\\n<tool_call>\\n``) - log P(end of reply)
  > ``ANOTHER_CALL_THRESHOLD``.

``CALL_THRESHOLD`` was fitted on the lab's synthetic questions (``training/synthetic.py``,
invented tools and questions that appear neither in the scenario suite nor in BFCL) with
``python -m scripts.calibrate_decisions``, never on the data the lab measures itself with:
it splits questions that need a tool from those that need none with an AUC of 0.86. The
"another call" margin splits parallel from one-call questions with an AUC of only 0.65, so
its threshold is left at 0 (the likelier option wins) and a later call must also pass
``adds_something_asked``: on those questions, every one-call question then keeps one call,
and few parallel ones get their second.

After tool results the base model's log P(``<tool_call>``) says nothing about whether another
call is needed: it has just seen a call in the conversation, and copying it is the likeliest
thing to do either way. Measured on synthetic after-result turns
(``training.synthetic.after_result_turns``: results that answer, results that make a next call
necessary, "not found" and errors; ``python -m scripts.calibrate_decisions --after-results
--count 120``), it separates the two with an AUC of 0.31, below chance: no threshold beats
"always" or "never" (balanced accuracy 50%). Scoring the call minus the answered call's own
probability did no better (AUC 0.39). So the base model's ``AFTER_RESULTS_THRESHOLD`` is minus
infinity: after results the engine lets the model write its call, and the rule below decides.
A call that repeats one already answered in this turn is never sent (``answered_calls``): the
engine writes text instead, as a model trained on tool use would have done by itself. A call
that is new (another tool, or a value the model corrected) goes out as a call. The tuned model
is calibrated apart (``model.TUNED_THRESHOLDS``).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numpy as np

# See the module's docstring and scripts/calibrate_decisions.py for where these come from.
CALL_THRESHOLD = -8.5
AFTER_RESULTS_THRESHOLD = float("-inf")  # no threshold separates (see above): the repeat rule decides
ANOTHER_CALL_THRESHOLD = 0.0


@dataclass(frozen=True)
class Thresholds:
    """The thresholds for one model: each model's likelihoods sit on a scale of their own,
    so a tuned model is calibrated apart (``scripts/calibrate_decisions.py --model``)."""

    call: float = CALL_THRESHOLD
    another_call: float = ANOTHER_CALL_THRESHOLD
    after_results: float = AFTER_RESULTS_THRESHOLD


def call_key(name: str, arguments: str, tools: list[dict] | None = None) -> tuple[str, str] | None:
    """(name, canonical arguments): two calls with the same key ask for the same thing.

    Arguments are compared as sorted JSON, so spacing and key order do not hide a repeat, and
    with the defaults of the tool's schema filled in (from ``tools``, the request's), so that
    ``{"city": "Oslo"}`` and ``{"city": "Oslo", "unit": "celsius"}`` are one call when
    ``unit`` defaults to celsius: the tool would run both the same way.
    """
    try:
        value = json.loads(arguments or "{}")
    except (json.JSONDecodeError, TypeError):
        return None
    if isinstance(value, dict):
        schema = next((t["function"].get("parameters") or {} for t in tools or []
                       if t["function"]["name"] == name), {})
        defaults = {key: spec["default"] for key, spec in (schema.get("properties") or {}).items()
                    if isinstance(spec, dict) and "default" in spec}
        value = {**defaults, **value}
    return name, json.dumps(value, sort_keys=True, ensure_ascii=False)


def ends_with_results(messages: list[dict]) -> bool:
    """Do the messages end with ``tool`` results (of the latest assistant calls)?"""
    return bool(messages) and messages[-1].get("role") == "tool"


def answered_calls(messages: list[dict], tools: list[dict] | None = None) -> set[tuple[str, str]]:
    """The calls made since the last user message that already have a result, as ``call_key``s.

    Asking for one of them again would only fetch the same result: the turn is going round in
    a circle, and the model should answer from what it has.
    """
    start = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    recent = messages[start + 1:]
    with_result = {m.get("tool_call_id") for m in recent if m.get("role") == "tool"}
    keys = set()
    for message in recent:
        for call in message.get("tool_calls") or [] if message.get("role") == "assistant" else []:
            function = call.get("function") or {}
            key = call_key(function.get("name", ""), function.get("arguments") or "{}", tools)
            if call.get("id") in with_result and key:
                keys.add(key)
    return keys


def _last_log_probs(llm: Any) -> np.ndarray:
    """Log-softmax of the logits after the last evaluated token."""
    logits = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),)).astype(np.float64)
    top = logits.max()
    return logits - top - math.log(np.exp(logits - top).sum())


def restore_longest_prefix(llm: Any, tokens: Sequence[int]) -> None:
    """Load the saved state that shares the longest prefix with ``tokens``, if it shares more
    than the model's current state does (llama-cpp-python's ``create_completion`` does the same
    for itself; the decisions evaluate the prompt before it, so they must look first)."""
    if getattr(llm, "cache", None) is None:
        return
    try:
        saved = llm.cache[tokens]
    except KeyError:
        return
    if llm.longest_token_prefix(saved.input_ids.tolist(), tokens) > llm.longest_token_prefix(llm._input_ids, tokens):
        llm.load_state(saved)


def _evaluate(llm: Any, tokens: Sequence[int]) -> np.ndarray:
    """Bring the model's state to exactly ``tokens``, reusing the cached prefix; next-token log-probs."""
    restore_longest_prefix(llm, tokens)
    cached = llm.longest_token_prefix(llm._input_ids, tokens)
    llm.n_tokens = min(cached, len(tokens) - 1)  # evaluate at least one token, for fresh logits
    llm.eval(list(tokens[llm.n_tokens:]))
    return _last_log_probs(llm)


def continuation_log_prob(llm: Any, prefix: Sequence[int], continuation: Sequence[int],
                          after_prefix: np.ndarray | None = None) -> float:
    """log P(continuation | prefix) under the model. Runs on the raw ``llama_cpp.Llama``.

    ``after_prefix`` is the next-token log-probs at the end of ``prefix``, when the caller has
    them already. The model's state is left at prefix + continuation, so a generation that
    starts from there reuses all of it.
    """
    log_probs = _evaluate(llm, prefix) if after_prefix is None else after_prefix
    total = 0.0
    for token in continuation:
        total += float(log_probs[token])
        llm.eval([token])
        log_probs = _last_log_probs(llm)
    return total


def opens_call(llm: Any, prompt: Sequence[int], opener: Sequence[int],
               threshold: float = CALL_THRESHOLD) -> tuple[bool, float]:
    """(open a call?, the log-probability that decided it)."""
    score = continuation_log_prob(llm, prompt, opener)
    return score > threshold, score


def opens_another_call(llm: Any, so_far: Sequence[int], another: Sequence[int], end: int,
                       threshold: float = ANOTHER_CALL_THRESHOLD) -> tuple[bool, float]:
    """(open another call?, log P(another) - log P(end), the margin that decided it)."""
    after = _evaluate(llm, so_far)
    margin = continuation_log_prob(llm, so_far, another, after) - float(after[end])
    return margin > threshold, margin


def _leaves(value: Any) -> Iterable[Any]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    elif value is not None and not isinstance(value, bool):
        yield value


def _normal(value: Any) -> str:
    """Case, spaces and punctuation removed, as answer keys are compared; 3.0 reads as 3."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return re.sub(r"[\W_]+", "", str(value)).lower()


def adds_something_asked(arguments: Any, earlier: list[Any], asked: str) -> bool:
    """Does a further call carry a value the user wrote that no earlier call carried?

    A second call is only worth making for something the question mentions and the calls
    before it did not cover: Shanghai after Beijing in "Beijing and Shanghai". A small model
    that starts over writes the same values again, or values the user never wrote.
    """
    covered = {_normal(leaf) for call in earlier for leaf in _leaves(call)}
    wanted = _normal(asked)
    numbers = set(re.findall(r"\d+(?:\.\d+)?", asked))  # a number must appear whole: 1 is not in 144

    def asked_for(leaf: Any) -> bool:
        if isinstance(leaf, (int, float)):
            return _normal(leaf) in {_normal(float(n)) for n in numbers}
        return bool(text := _normal(leaf)) and text in wanted

    return any(_normal(leaf) not in covered and asked_for(leaf) for leaf in _leaves(arguments))
