"""Writing one reply, step by step: decide, open a call, let the model fill it in, decide again.

The model never writes a whole reply in one go under one grammar. A small model left to do
that opens no call at all under "auto", and under "required" repeats its call until
``max_tokens`` runs out (see ``decide`` for why). Instead:

1. **Call or text.** ``tool_choice="none"`` means text, ``"required"`` or a named function
   means calls; under ``"auto"`` the engine asks the model how likely it is to open a call
   (``decide.opens_call``).
2. **Each call.** The engine writes ``<tool_call>\\n`` itself; the model writes the call's JSON
   and the closing tag under the tools' grammar (``grammar.build_call_gbnf``).
3. **After each call**, when parallel calls are allowed, the engine asks the model whether
   another call is likelier than the end of the reply (``decide.opens_another_call``).

What bounds a reply of calls: the decision in step 3; a call that repeats an earlier one in
the same reply (same name, JSON-equal arguments), or that carries no value from the user's
message that earlier calls left out (``decide.adds_something_asked``), which is dropped and
ends the reply; and ``max_tokens``, where a call cut off keeps what was written
(``finish_reason`` "length").

Every piece comes out as soon as it is known, so a streamed reply and a whole one are the
same text. Only a second or later call is held back until it is complete, since it may turn
out to be a repeat that is dropped.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Callable, Iterator

from toolkit.engine import decide, model_thread
from toolkit.engine.grammar import grammar_for, response_grammar
from toolkit.engine.parser import parse_reply
from toolkit.engine.request import ChatRequest
from toolkit.engine.template import CALL_OPEN, content_text

StopCheck = Callable[[], bool]


@dataclass
class Piece:
    """A piece of the reply's text. ``kind`` is "content" or "calls" (the call blocks)."""

    kind: str
    text: str
    tokens: int = 0  # tokens it took, for usage.completion_tokens
    finish: str | None = None  # set on the last piece only: "stop" or "length"


def dropped(pieces: list[Piece]) -> int:
    """The tokens a dropped call took: it is not sent, but its tokens were generated (usage)."""
    return sum(piece.tokens for piece in pieces)


def _call_key(block: str) -> tuple[str, str] | None:
    """(name, canonical arguments) of a complete call block, for spotting repeats."""
    _, calls = parse_reply(block)
    if len(calls) != 1:
        return None
    try:
        arguments = json.dumps(json.loads(calls[0].arguments), sort_keys=True)
    except json.JSONDecodeError:
        return None
    return calls[0].name, arguments


class ReplyWriter:
    """Writes replies with one wrapped ``llama_cpp.Llama`` (see ``model_thread``)."""

    def __init__(self, llm, thresholds: decide.Thresholds = decide.Thresholds()):
        self.llm = llm
        self.thresholds = thresholds
        # What the last reply's decisions were, as (decision, score): lesson 13 and the
        # calibration script read it. "call" is log P(opening a call); "another" is the margin
        # log P(another call) - log P(end of reply).
        self.decisions: list[tuple[str, float]] = []

    def tokens(self, text: str) -> list[int]:
        return self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)

    def _generate(self, kind: str, request: ChatRequest, prompt: list[int], max_tokens: int, grammar,
                  step: int, should_stop: StopCheck | None) -> Iterator[Piece]:
        """The model's own text for one step, a token a piece."""
        from llama_cpp import StoppingCriteriaList

        stream = self.llm.create_completion(
            prompt=prompt,
            max_tokens=max_tokens,
            temperature=request.temperature,
            top_p=request.top_p,
            # OpenAI samples differently each time unless a seed is given; so do we. Each step
            # gets a seed of its own derived from the request's, so a seeded reply repeats.
            seed=request.seed + step if request.seed is not None else random.randrange(2**31),
            stop=(request.stop or None) if kind == "content" else None,
            grammar=grammar,
            stream=True,
            # Checked after every token: the server passes "has the client gone away?", so a
            # caller that timed out does not keep the model busy for the requests queued behind it.
            stopping_criteria=StoppingCriteriaList([lambda _ids, _logits: should_stop()]) if should_stop else None,
        )
        for chunk in stream:
            choice = chunk["choices"][0]
            # llama-cpp-python streams one chunk a token, then an empty one with the finish reason.
            finish = choice.get("finish_reason")
            yield Piece(kind, choice["text"], 0 if finish else 1, finish)

    def write(self, request: ChatRequest, prompt: list[int], budget: int,
              should_stop: StopCheck | None = None) -> Iterator[Piece]:
        """The reply to ``prompt`` in at most ``budget`` tokens; the last piece has ``finish``."""
        opener = self.tokens(CALL_OPEN + "\n")
        self.decisions = []
        calls = request.mode == "required"
        if request.mode == "auto":
            calls, score = model_thread.run(decide.opens_call, self.llm.raw, prompt, opener,
                                             self.thresholds.call)
            self.decisions.append(("call", score))
        if calls:
            yield from self._calls(request, prompt, opener, budget, should_stop)
            return
        finish = "stop"
        for piece in self._generate("content", request, prompt, budget, response_grammar(request.response_format),
                                    0, should_stop):
            finish = piece.finish or finish
            yield Piece(piece.kind, piece.text, piece.tokens)
        yield Piece("content", "", 0, finish)

    def _calls(self, request: ChatRequest, prompt: list[int], opener: list[int], budget: int,
               should_stop: StopCheck | None) -> Iterator[Piece]:
        grammar = grammar_for(request.tools, "call")
        separator = self.tokens("\n")
        context, seen, blocks, used = list(prompt), set(), [], 0
        asked = next((content_text(m.get("content")) for m in reversed(request.messages) if m["role"] == "user"), "")
        while True:
            room = budget - used - len(opener)
            if room < 1:  # not even the opening fits
                yield Piece("calls", "", 0, "length")
                return
            first = not seen  # the first call streams as it is written; later ones wait (see above)
            written = [Piece("calls", CALL_OPEN + "\n", len(opener))]
            if first:
                yield written[0]
            finish = None
            for piece in self._generate("calls", request, context + opener, room, grammar, len(seen) + 1, should_stop):
                finish = piece.finish or finish
                written.append(Piece("calls", piece.text, piece.tokens))
                if first:
                    yield written[-1]
            used += sum(p.tokens for p in written)
            block = "".join(p.text for p in written)
            key = _call_key(block)
            if finish == "length" or key is None:  # cut off, or the caller left: keep what was written,
                # unless it is a repeat in the making (all it wrote so far is an earlier call's start)
                if first or any(earlier.startswith(block) for earlier in blocks):
                    yield Piece("calls", "", 0 if first else dropped(written), finish or "stop")
                else:
                    yield from written
                    yield Piece("calls", "", 0, finish or "stop")
                return
            if key in seen:  # the model started over: drop the repeat, end the reply
                yield Piece("calls", "", dropped(written), "stop")
                return
            if not first:
                new = decide.adds_something_asked(json.loads(key[1]), [json.loads(k[1]) for k in seen], asked)
                self.decisions.append(("new", float(new)))
                if not new:  # nothing the user asked for that earlier calls left out: drop it, end
                    yield Piece("calls", "", dropped(written), "stop")
                    return
            yield from ([] if first else written)
            seen.add(key)
            blocks.append(block)
            context += opener + self.tokens(block[len(CALL_OPEN) + 1:])
            if not request.parallel or used + len(separator) + len(opener) >= budget:
                yield Piece("calls", "", 0, "stop")
                return
            another, margin = model_thread.run(decide.opens_another_call, self.llm.raw, context,
                                               separator + opener, self.llm.token_eos(),
                                               self.thresholds.another_call)
            self.decisions.append(("another", margin))
            if not another:
                yield Piece("calls", "", 0, "stop")
                return
            yield Piece("calls", "\n", len(separator))
            used += len(separator)
            context += separator
