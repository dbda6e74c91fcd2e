"""The two decisions that shape a reply, taken by likelihood instead of token by token.

A reply with tools on offer has two forks:

- **call or text?** At the start, under ``tool_choice="auto"``.
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

The two thresholds were fitted on the lab's synthetic questions (``training/synthetic.py``,
invented tools and questions that appear neither in the scenario suite nor in BFCL), with
``python -m scripts.calibrate_decisions``, never on the data the lab measures itself with.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

# Fitted by scripts/calibrate_decisions.py on training/synthetic.py examples; see that script.
CALL_THRESHOLD = -8.5
ANOTHER_CALL_THRESHOLD = 0.0


def _last_log_probs(llm: Any) -> np.ndarray:
    """Log-softmax of the logits after the last evaluated token."""
    logits = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),)).astype(np.float64)
    top = logits.max()
    return logits - top - math.log(np.exp(logits - top).sum())


def _evaluate(llm: Any, tokens: Sequence[int]) -> np.ndarray:
    """Bring the model's state to exactly ``tokens``, reusing the cached prefix; next-token log-probs."""
    cached = llm.longest_token_prefix(llm._input_ids, tokens)
    llm.n_tokens = min(cached, len(tokens) - 1)  # evaluate at least one token, for fresh logits
    llm.eval(list(tokens[llm.n_tokens:]))
    return _last_log_probs(llm)


def continuation_log_prob(llm: Any, prefix: Sequence[int], continuation: Sequence[int]) -> float:
    """log P(continuation | prefix) under the model. Runs on the raw ``llama_cpp.Llama``.

    It leaves the model's state at prefix + continuation, so a generation that starts from
    there reuses all of it.
    """
    log_probs = _evaluate(llm, prefix)
    total = 0.0
    for position, token in enumerate(continuation):
        total += float(log_probs[token])
        if position + 1 < len(continuation):
            llm.eval([token])
            log_probs = _last_log_probs(llm)
    if continuation:
        llm.eval([continuation[-1]])
    return total


def opens_call(llm: Any, prompt: Sequence[int], opener: Sequence[int]) -> tuple[bool, float]:
    """(open a call?, the log-probability that decided it)."""
    score = continuation_log_prob(llm, prompt, opener)
    return score > CALL_THRESHOLD, score


def opens_another_call(llm: Any, so_far: Sequence[int], another: Sequence[int], end: int) -> tuple[bool, float]:
    """(open another call?, log P(another) - log P(end), the margin that decided it)."""
    end_score = float(_evaluate(llm, so_far)[end])
    margin = continuation_log_prob(llm, so_far, another) - end_score
    return margin > ANOTHER_CALL_THRESHOLD, margin
