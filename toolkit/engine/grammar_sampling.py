"""Grammar sampling that checks the tokens best first, and stops once no other could be picked.

llama.cpp's grammar sampler checks every token of the vocabulary against the grammar at every
step: 49,152 tokens for SmolLM2, about 7 ms of a 17 ms step on two cores. Yet the samplers after
it keep only the best valid tokens:

- at temperature 0, greedy keeps one: the valid token with the highest logit;
- otherwise ``min_p`` keeps the valid tokens whose logit is at least the best valid logit plus
  ``log(min_p)`` (``min_p`` 0.05: within 3.0 of it), and ``top_k`` the best 40 of those.

So ``BestFirstGrammar`` asks the grammar about the likeliest token first (writing a call, it is
allowed four steps in five), then, if need be, about the tokens in order of logit, a few dozen at
a time, and stops as soon as no token further down could be kept. Every token it did not show the
grammar is masked as the grammar would mask a token it refuses. The samplers after it then see
the same candidates in the same order as after the full check: the same token comes out, seeded
or not. (The one exception is an exact tie of two logits where the full check's ordering and
this one's could differ: float logits of different tokens are practically never equal.)

Where the samplers after the grammar read more of the distribution (``top_p`` or
``typical_p`` below 1, ``min_p`` 0, mirostat, a negative temperature), every token is
checked, as llama.cpp does.
"""

from __future__ import annotations

import ctypes
import math

import llama_cpp
import numpy as np
from llama_cpp import _internals

_TOKEN_DATA = np.dtype([("id", np.intc), ("logit", np.single), ("p", np.single)], align=True)
# How many tokens the first look shows the grammar; if none of them is valid, the next look
# takes the next thousand, then the rest.
_LOOKS = (64, 1024)


def _token_data(cur_p) -> np.ndarray:
    """The candidates of a ``llama_token_data_array``, as a writable numpy view."""
    size = cur_p.contents.size
    address = ctypes.addressof(cur_p.contents.data.contents)
    return np.frombuffer((llama_cpp.llama_token_data * size).from_address(address), dtype=_TOKEN_DATA)


class BestFirstGrammar:
    """A llama.cpp sampler that masks the tokens a GBNF grammar refuses, checking only those
    the samplers after it could keep. ``keep_within`` is how far below the best valid logit a
    token may still be kept (``log(min_p)``); None means only the best valid token matters."""

    def __init__(self, model: _internals.LlamaModel, grammar: llama_cpp.LlamaGrammar,
                 keep_within: float | None):
        self.keep_within = keep_within
        self.grammar = llama_cpp.llama_sampler_init_grammar(
            model.vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8"))
        if not self.grammar:
            raise ValueError("llama.cpp could not parse the grammar")
        interface = llama_cpp.llama_sampler_i()
        # The callbacks are kept on self: ctypes frees a callback whose Python object is gone.
        self._callbacks = (llama_cpp.llama_sampler_i_apply(lambda _sampler, cur_p: self.apply(cur_p)),
                           llama_cpp.llama_sampler_i_accept(lambda _sampler, token: self.accept(token)),
                           llama_cpp.llama_sampler_i_reset(lambda _sampler: self.reset()))
        interface.apply, interface.accept, interface.reset = self._callbacks
        self._interface = interface
        self.sampler = llama_cpp.llama_sampler()
        self.sampler.iface = ctypes.pointer(interface)
        self.sampler.ctx = None

    def accept(self, token: int) -> None:
        """The token the chain picked: the grammar moves past it."""
        llama_cpp.llama_sampler_accept(self.grammar, token)

    def reset(self) -> None:
        llama_cpp.llama_sampler_reset(self.grammar)

    def close(self) -> None:
        if self.grammar:
            llama_cpp.llama_sampler_free(self.grammar)
            self.grammar = None

    def _valid(self, candidates: np.ndarray) -> np.ndarray:
        """Which of ``candidates`` (token data, copied) the grammar accepts next."""
        array = llama_cpp.llama_token_data_array(
            data=candidates.ctypes.data_as(llama_cpp.llama_token_data_p),
            size=len(candidates), selected=-1, sorted=False)
        llama_cpp.llama_sampler_apply(self.grammar, ctypes.byref(array))
        return np.isfinite(candidates["logit"])

    def apply(self, cur_p) -> None:
        """Mask every token but the valid ones the later samplers could keep."""
        try:
            data = _token_data(cur_p)
            logits = data["logit"]
            kept = self._best_valid(data, logits)
        except Exception:  # noqa: BLE001 - an error raised in a ctypes callback is printed and
            # lost, and the token would be sampled with no grammar at all: check every token instead
            kept = None
        if kept is None:  # no valid token at all, or the above failed: llama.cpp's own full check
            llama_cpp.llama_sampler_apply(self.grammar, cur_p)
            return
        mask = np.full(len(data), -np.inf, dtype=np.single)
        mask[kept] = logits[kept]
        logits[:] = mask

    def _best_valid(self, data: np.ndarray, logits: np.ndarray) -> np.ndarray | None:
        """The positions of the valid tokens the later samplers could keep, best first, or None
        when the grammar accepts none of the tokens (then the full check decides)."""
        top = int(np.argmax(logits))  # the first of equal logits, the one greedy takes
        if logits[top] > -np.inf and self._valid(data[top:top + 1])[0]:
            # most steps: the likeliest token is allowed (four in five, writing a call)
            if self.keep_within is None:
                return np.array([top])
            return self._valid_between(data, logits, self._cut(logits[top]), np.inf)
        valid, looked_down_to = self._first_valid(data, logits)
        if valid is None or self.keep_within is None:
            return None if valid is None else valid[:1]
        cut = self._cut(logits[valid[0]])
        if cut < looked_down_to:
            valid = np.concatenate([valid, self._valid_between(data, logits, cut, looked_down_to)])
        return valid

    def _cut(self, best: float) -> float:
        """The lowest logit the later samplers may keep when the best valid one is ``best``:
        min_p's cut-off as llama.cpp computes it, less a little for rounding (a token kept here
        a hair below the real cut-off is dropped by min_p all the same)."""
        return best + self.keep_within - 0.01

    def _first_valid(self, data: np.ndarray, logits: np.ndarray) -> tuple[np.ndarray | None, float]:
        """The valid tokens among the first group down the ranking that holds any, best first, and
        the lowest logit that group reached (None if the grammar accepts no token at all)."""
        finite = logits[logits > -np.inf]
        looked_down_to = np.inf
        for look in (*_LOOKS, None):
            # the next ``look`` tokens down, ties included (a threshold, not a count)
            floor = np.partition(finite, -look)[-look] if look is not None and look < len(finite) else -np.inf
            valid = self._valid_between(data, logits, floor, looked_down_to)
            looked_down_to = floor
            if len(valid):
                return valid, looked_down_to
        return None, looked_down_to

    def _valid_between(self, data: np.ndarray, logits: np.ndarray, low: float, high: float) -> np.ndarray:
        """The positions of the valid tokens with ``low <= logit < high``, best first; among
        equal logits the lower token id first, as greedy takes it."""
        chosen = np.flatnonzero((logits >= low) & (logits < high) & (logits > -np.inf))
        chosen = chosen[np.lexsort((data["id"][chosen], -logits[chosen]))]
        return chosen[self._valid(data[chosen])]  # (a copy: the grammar masks it)


def add_grammar(sampler: _internals.LlamaSampler, position: int, model: _internals.LlamaModel,
                grammar: llama_cpp.LlamaGrammar, keep_within: float | None) -> None:
    """Put a ``BestFirstGrammar`` into ``sampler``'s chain at ``position`` (where llama-cpp-python
    puts its grammar sampler: after the logits processors and penalties, before the rest)."""
    chain = sampler.sampler
    rest = [llama_cpp.llama_sampler_chain_remove(chain, position)
            for _ in range(llama_cpp.llama_sampler_chain_n(chain) - position)]
    best_first = BestFirstGrammar(model, grammar, keep_within)
    llama_cpp.llama_sampler_chain_add(chain, ctypes.pointer(best_first.sampler))
    for each in rest:
        llama_cpp.llama_sampler_chain_add(chain, each)
    # llama-cpp-python takes samplers of its own out of the chain before freeing it, so the
    # chain never frees memory Python owns; the grammar's own sampler is freed here, first.
    sampler.custom_samplers.append((position, best_first))
    sampler._exit_stack.callback(best_first.close)


def keep_within(temp: float, top_p: float, min_p: float, typical_p: float,
                mirostat_mode: int) -> float | None | bool:
    """How far below the best valid logit the samplers after the grammar may keep a token
    (None: only the best; False: they read the whole distribution, so check every token)."""
    if temp == 0:
        return None
    if temp < 0 or mirostat_mode or top_p < 1 or typical_p < 1 or min_p <= 0:
        return False
    return math.log(min_p)


class BestFirstGrammarSampling:
    """For a ``llama_cpp.Llama`` subclass: sampler chains with ``BestFirstGrammar`` where
    llama-cpp-python puts its grammar sampler."""

    def _init_sampler(self, grammar: llama_cpp.LlamaGrammar | None = None,
                      **settings) -> _internals.LlamaSampler:
        within = keep_within(settings["temp"], settings["top_p"], settings["min_p"],
                             settings["typical_p"], settings["mirostat_mode"])
        if grammar is None or within is False:
            return super()._init_sampler(grammar=grammar, **settings)
        sampler = super()._init_sampler(grammar=None, **settings)
        # the chain is [logits processors], penalties, then the samplers that pick: the grammar
        # goes right after the penalties
        position = 1 + len(sampler.custom_samplers)
        name = llama_cpp.llama_sampler_name(llama_cpp.llama_sampler_chain_get(sampler.sampler, position - 1))
        if name.lstrip(b"?") != b"penalties":  # ("?": a sampler its settings make do nothing)
            sampler.close()  # a layout this module does not know: llama.cpp's own full check
            return super()._init_sampler(grammar=grammar, **settings)
        add_grammar(sampler, position, self._model, grammar, within)
        return sampler
