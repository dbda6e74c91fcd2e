"""Writing one reply, step by step: decide, open a call, let the model fill it in, decide again.

The model never writes a whole reply in one go under one grammar. A small model left to do
that opens no call at all under "auto", and under "required" repeats its call until
``max_tokens`` runs out (see ``decide`` for why). Instead:

1. **Call or text.** ``tool_choice="none"`` means text, ``"required"`` or a named function
   means calls; under ``"auto"`` the engine asks the model how likely it is to open a call
   (``decide.opens_call``), with a threshold of its own when the messages end with tool
   results (answer from them, or call again?).
2. **Each call.** The engine writes ``<tool_call>\\n`` itself; the model writes the call's JSON
   and the closing tag under the tools' grammar (``grammar.build_call_gbnf``).
3. **After each call**, when parallel calls are allowed, the engine asks the model whether
   another call is likelier than the end of the reply (``decide.opens_another_call``).

What bounds a reply of calls: the decision in step 3; a call that repeats an earlier one in
the same reply or one already answered in this turn (same name, JSON-equal arguments once
the schema's defaults are filled in), or that carries no value from the user's message that
earlier calls left out (``decide.adds_something_asked``), which is dropped and ends the
reply; and ``max_tokens``, where a call cut off keeps what was written (``finish_reason``
"length"). When the reply's
*first* call repeats one already answered, under ``"auto"``, the engine writes text instead:
the model has its result and only needs to say it.

Text is written under ``markup.MarkupBan``: it can never hold ``<tool_call>``, the
``<tool_response>`` block the model was just shown, or ChatML's role markers, unless the
request brought a ``grammar`` of its own: then that grammar alone says what the text may be.

Every piece comes out as soon as it is known, so a streamed reply and a whole one are the
same text. Only a call that may turn out to be a repeat that is dropped is held back until it
is complete: a second or later call, and the first one when calls of this turn already have
results.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Callable, Iterator

from toolkit.engine import decide, model_thread
from toolkit.engine.markup import MarkupBan
from toolkit.engine.grammar import grammar_for, response_grammar, text_grammar
from toolkit.engine.parser import parse_reply
from toolkit.engine.request import ChatRequest
from toolkit.engine.template import CALL_CLOSE, CALL_OPEN, content_text

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


def _call_key(block: str, tools: list[dict]) -> tuple[str, str] | None:
    """(name, canonical arguments) of a complete call block, for spotting repeats."""
    _, calls = parse_reply(block)
    if len(calls) != 1:
        return None
    return decide.call_key(calls[0].name, calls[0].arguments, tools)


class CallDone:
    """A stopping criterion: true once the model has written a whole call's JSON.

    All the call grammar allows after that JSON is optional white space and the closing tag
    ``\n</tool_call>``: six tokens that say nothing, yet each cost the model a full step (about
    12 ms on two cores, a seventh of a short call). So the engine stops the model there and
    writes the tag itself (``ReplyWriter._close_call``). Everything the model wrote up to the
    JSON's end is what it wrote before, token for token, seeded or not.

    llama-cpp-python asks after each token it samples, showing the tokens evaluated so far
    (``ids``): the JSON's last token has been evaluated, the token sampled after it (white space
    or the tag's first) is dropped unevaluated.
    """

    def __init__(self, llm, prompt_length: int):
        self.llm, self.prompt_length, self.done = llm, prompt_length, False

    def __call__(self, ids, _logits) -> bool:
        text = self.llm.detokenize(list(ids[self.prompt_length:])).decode("utf-8", errors="replace")
        if text.rstrip().endswith("}"):  # a JSON object can only end there: parse only then
            try:
                json.loads(text)
                self.done = True
            except json.JSONDecodeError:
                pass
        return self.done


class ReplyWriter:
    """Writes replies with one wrapped ``llama_cpp.Llama`` (see ``model_thread``)."""

    def __init__(self, llm, thresholds: decide.Thresholds = decide.Thresholds(),
                 answer_prompt: Callable[[list[dict]], str] | None = None):
        self.llm = llm
        self.thresholds = thresholds
        # How this model is asked for its answer after tool results, when the chat template's
        # own rendering of them does not get one (``template.render_answer_prompt``); None: as is.
        self.answer_prompt = answer_prompt
        # What the last reply's decisions were, as (decision, score): lesson 13 and the
        # calibration script read it. "call" is log P(opening a call), "after_results" the same
        # when the messages end with tool results; "another" is the margin log P(another call)
        # - log P(end of reply); "new" and "answered_again" are 1.0 or 0.0 (see ``_calls``).
        self.decisions: list[tuple[str, float]] = []
        self._markup_ban: MarkupBan | None = None

    def markup_ban(self, prompt_length: int) -> MarkupBan:
        if self._markup_ban is None:  # reads the whole vocabulary once, on the first text reply
            self._markup_ban = model_thread.run(MarkupBan, self.llm.raw)
        return self._markup_ban.for_prompt(prompt_length)

    def tokens(self, text: str) -> list[int]:
        return self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)

    def _generate(self, kind: str, request: ChatRequest, prompt: list[int], max_tokens: int, grammar,
                  step: int, should_stop: StopCheck | None, stop: list[str] | None = None) -> Iterator[Piece]:
        """The model's own text for one step, a token a piece."""
        from llama_cpp import LogitsProcessorList, StoppingCriteriaList

        stops = [lambda _ids, _logits: should_stop()] if should_stop else []
        call_done = CallDone(self.llm.raw, len(prompt)) if kind == "calls" else None
        if call_done:
            stops.append(call_done)
        stream = self.llm.create_completion(
            prompt=prompt,
            max_tokens=max_tokens,
            temperature=request.temperature,
            top_p=request.top_p,
            # OpenAI samples differently each time unless a seed is given; so do we. Each step
            # gets a seed of its own derived from the request's, so a seeded reply repeats.
            seed=request.seed + step if request.seed is not None else random.randrange(2**31),
            stop=([*request.stop, *(stop or [])] or None) if kind == "content" else None,
            grammar=grammar,
            # Text never carries the template's markup (see markup.py); calls are held by their
            # grammar, and so is text under a request's own grammar, which says all it may be.
            logits_processor=(LogitsProcessorList([self.markup_ban(len(prompt))])
                              if kind == "content" and request.grammar is None else None),
            stream=True,
            # Checked after every token: the server passes "has the client gone away?", so a
            # caller that timed out does not keep the model busy for the requests queued behind it.
            stopping_criteria=StoppingCriteriaList(stops) if stops else None,
        )
        written, text = 0, ""
        for chunk in stream:
            choice = chunk["choices"][0]
            # llama-cpp-python streams one chunk a token, then an empty one with the finish reason.
            finish = choice.get("finish_reason")
            if finish and call_done and call_done.done:
                # llama-cpp-python puts the model's state in the engine's cache of states only
                # after its last chunk, when asked for one more: without it no call would be kept,
                # and a prompt that comes back after another one (a conversation's tool prompt
                # after an answer, a browser's next turn in a room) would be evaluated again.
                next(stream, None)
                yield Piece(kind, choice["text"], 0)
                yield from self._close_call(text + choice["text"], max_tokens - written)
                return
            written += 0 if finish else 1
            text += choice["text"]
            yield Piece(kind, choice["text"], 0 if finish else 1, finish)

    def _close_call(self, text: str, room: int) -> Iterator[Piece]:
        """The closing tag after a call's JSON, written by the engine (see ``CallDone``), and the
        last piece: as much of the tag as ``room`` tokens hold, as if the model had written it."""
        closing = self.tokens(("" if text.endswith("\n") else "\n") + CALL_CLOSE)
        kept = closing[:max(room, 0)]
        if kept:
            yield Piece("calls", self.llm.detokenize(kept).decode("utf-8"), len(kept))
        yield Piece("calls", "", 0, "stop" if len(kept) == len(closing) else "length")

    def write(self, request: ChatRequest, prompt: list[int], budget: int,
              should_stop: StopCheck | None = None) -> Iterator[Piece]:
        """The reply to ``prompt`` in at most ``budget`` tokens; the last piece has ``finish``."""
        opener = self.tokens(CALL_OPEN + "\n")
        self.decisions = []
        calls = request.mode == "required"
        if request.mode == "auto":
            after = decide.ends_with_results(request.messages)
            threshold = self.thresholds.after_results if after else self.thresholds.call
            calls, score = model_thread.run(decide.opens_call, self.llm.raw, prompt, opener, threshold)
            self.decisions.append(("after_results" if after else "call", score))
        if calls:
            yield from self._calls(request, prompt, opener, budget, should_stop)
            return
        yield from self._text(request, prompt, budget, should_stop)

    def _text(self, request: ChatRequest, prompt: list[int], budget: int,
              should_stop: StopCheck | None) -> Iterator[Piece]:
        if budget < 1:  # llama.cpp reads max_tokens 0 as "no limit"
            yield Piece("content", "", 0, "length")
            return
        stop = None
        shaped = request.response_format is not None or request.grammar is not None
        if self.answer_prompt and not shaped and decide.ends_with_results(request.messages):
            # The answer from tool results, from the model's answer prompt: a blank line ends it
            # (left to go on, the small model repeats the note paragraph after paragraph).
            prompt, stop = self.tokens(self.answer_prompt(request.messages)), ["\n\n"]
        finish = "stop"
        grammar = text_grammar(request.grammar, self.llm.raw) or response_grammar(request.response_format)
        for piece in self._generate("content", request, prompt, budget, grammar, 0, should_stop, stop):
            finish = piece.finish or finish
            yield Piece(piece.kind, piece.text, piece.tokens)
        yield Piece("content", "", 0, finish)

    def _calls(self, request: ChatRequest, prompt: list[int], opener: list[int], budget: int,
               should_stop: StopCheck | None) -> Iterator[Piece]:
        grammar = grammar_for(request.tools, "call")
        separator = self.tokens("\n")
        context, seen, blocks, used = list(prompt), set(), [], 0
        asked = next((content_text(m.get("content")) for m in reversed(request.messages) if m["role"] == "user"), "")
        answered = decide.answered_calls(request.messages, request.tools)
        while True:
            room = budget - used - len(opener)
            if room < 1:  # not even the opening fits
                yield Piece("calls", "", 0, "length")
                return
            first = not seen
            # The first call streams as it is written, unless it may repeat an answered one (see above).
            streams = first and not answered
            written = [Piece("calls", CALL_OPEN + "\n", len(opener))]
            if streams:
                yield written[0]
            finish = None
            for piece in self._generate("calls", request, context + opener, room, grammar, len(seen) + 1, should_stop):
                finish = piece.finish or finish
                written.append(Piece("calls", piece.text, piece.tokens))
                if streams:
                    yield written[-1]
            used += sum(p.tokens for p in written)
            block = "".join(p.text for p in written)
            key = _call_key(block, request.tools)
            if finish == "length" or key is None:  # cut off, or the caller left: keep what was written,
                # unless it is a repeat in the making (all it wrote so far is an earlier call's start)
                if streams or any(earlier.startswith(block) for earlier in blocks):
                    yield Piece("calls", "", 0 if streams else dropped(written), finish or "stop")
                else:
                    yield from written
                    yield Piece("calls", "", 0, finish or "stop")
                return
            if first and key in answered:  # asked and answered already in this turn
                self.decisions.append(("answered_again", 1.0))
                if request.mode == "auto":  # the model has the result: it writes the answer instead,
                    # with the whole of max_tokens: the dropped call was the engine's detour, not the
                    # answer's (its tokens were generated, so usage still counts them)
                    yield Piece("content", "", dropped(written))
                    yield from self._text(request, prompt, budget, should_stop)
                    return
            elif key in seen or key in answered:  # the model started over: drop the repeat, end the reply
                yield Piece("calls", "", dropped(written), "stop")
                return
            if not first:
                earlier = [json.loads(k[1]) for k in seen | answered]
                new = decide.adds_something_asked(json.loads(key[1]), earlier, asked)
                self.decisions.append(("new", float(new)))
                if not new:  # nothing the user asked for that earlier calls left out: drop it, end
                    yield Piece("calls", "", dropped(written), "stop")
                    return
            yield from ([] if streams else written)
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
