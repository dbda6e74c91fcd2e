"""The string protocol under a grammar: a reply that can only be one ``<tool>{...}</tool>`` call.

Lesson 2's protocol asks the model, in the prompt, to write ``<tool>{"name": ..., "arguments":
{...}}</tool>``, and hopes. A GBNF grammar removes the hoping: at every step llama.cpp masks
each token that would break the grammar, so the text that comes out is one tag holding a JSON
object whose ``name`` is an offered tool and whose ``arguments`` are that tool's parameters,
with their types and enums. The rules for the JSON come from the tools' schemas through the
same converter the embedded engine uses (``toolkit.engine.grammar``); the one rule added here
puts the tags around them.

A grammar needs the weights at hand: llama.cpp (and servers built on it) take one, hosted APIs
do not. Their nearest equivalent is a strict mode for function arguments or structured outputs.
What a grammar guarantees is the *shape*: which tool and which values are the model's choice.
"""

from __future__ import annotations

import functools
import json
from typing import Any, NamedTuple

from llama_cpp.llama_grammar import LlamaGrammar

# The engine's converter settings (property order, JSON strings without raw control
# characters) are what a well-formed call needs here too, so its rules are reused as they are.
from toolkit.engine.grammar import _call_rules
from toolkit.engine.template import render_prompt

__all__ = ["protocol_gbnf", "protocol_grammar", "generate_call", "Generated"]

OPEN_TAG, CLOSE_TAG = "<tool>", "</tool>"


def protocol_gbnf(specs: list[dict]) -> str:
    """GBNF for a reply that is exactly one ``<tool>{json}</tool>`` call of one of ``specs``.

    ``specs`` are OpenAI tool dicts. Raises ``ValueError`` when there is no tool to call.
    """
    if not specs:
        raise ValueError("a grammar of calls needs at least one tool; with none, do not constrain the reply")
    rules, call_rule = _call_rules(specs)
    return f"{rules}\nroot ::= {json.dumps(OPEN_TAG)} {call_rule} {json.dumps(CLOSE_TAG)}"


@functools.lru_cache(maxsize=32)
def _compiled(specs_json: str) -> LlamaGrammar:
    return LlamaGrammar.from_string(protocol_gbnf(json.loads(specs_json)), verbose=False)


def protocol_grammar(specs: list[dict]) -> LlamaGrammar:
    """``protocol_gbnf`` compiled for llama-cpp-python, built once per distinct set of tools."""
    return _compiled(json.dumps(specs, sort_keys=True, ensure_ascii=False))


class Generated(NamedTuple):
    text: str  # exactly what the model wrote
    finish_reason: str  # "stop": the grammar's call is complete; "length": max_tokens cut it off


def generate_call(messages: list[dict], specs: list[dict], *, max_tokens: int = 60,
                  temperature: float = 0.0, seed: int = 0, engine: Any = None) -> Generated:
    """The embedded model's reply to ``messages`` under ``protocol_grammar(specs)``.

    The prompt is rendered as the embedded endpoint renders a request without ``tools``, so the
    tools are known to the model only from the messages (a system prompt such as
    ``toolkit.protocol.render_system_prompt``). ``engine`` defaults to the one behind the
    endpoint that ``toolkit.client.connect()`` starts, so the two share the model and its cache.
    The grammar bounds the shape, not the length (a string may run on), so a reply cut off
    by ``max_tokens`` is unfinished: its ``finish_reason`` is then ``"length"``.
    """
    if engine is None:
        from toolkit.engine.serve import embedded_engine  # starts the endpoint only when it is needed

        engine = embedded_engine()
    tokens = engine.writer.tokens(render_prompt(messages, None))
    result = engine.llm.create_completion(prompt=tokens, grammar=protocol_grammar(specs), max_tokens=max_tokens,
                                          temperature=temperature, seed=seed)
    choice = result["choices"][0]
    return Generated(choice["text"], choice["finish_reason"])
