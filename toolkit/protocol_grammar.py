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

import json
from typing import TYPE_CHECKING, NamedTuple

# The engine's converter settings (property order, JSON strings without raw control
# characters) are what a well-formed call needs here too, so its rules are reused as they are.
from toolkit.engine.grammar import call_rules

if TYPE_CHECKING:
    from toolkit.client import Backend

__all__ = ["protocol_gbnf", "generate_call", "Generated"]

OPEN_TAG, CLOSE_TAG = "<tool>", "</tool>"


def protocol_gbnf(specs: list[dict]) -> str:
    """GBNF for a reply that is exactly one ``<tool>{json}</tool>`` call of one of ``specs``.

    ``specs`` are OpenAI tool dicts. Raises ``ValueError`` when there is no tool to call.
    """
    if not specs:
        raise ValueError("a grammar of calls needs at least one tool; with none, do not constrain the reply")
    rules, call_rule = call_rules(specs)
    return f"{rules}\nroot ::= {json.dumps(OPEN_TAG)} {call_rule} {json.dumps(CLOSE_TAG)}"


class Generated(NamedTuple):
    text: str  # exactly what the model wrote
    finish_reason: str  # "stop": the grammar's call is complete; "length": max_tokens cut it off


def generate_call(messages: list[dict], specs: list[dict], *, max_tokens: int = 60, temperature: float = 0.0,
                  seed: int = 0, backend: Backend | None = None) -> Generated:
    """The reply to ``messages`` under ``protocol_gbnf(specs)``, from an endpoint that takes a
    ``grammar`` field (the embedded one, or llama.cpp's server).

    The request has no ``tools``: the model knows the tools only from the messages (a system
    prompt such as ``toolkit.protocol.render_system_prompt``), and the grammar travels as
    ``extra_body={"grammar": ...}``, a field OpenAI's client passes on as it is. ``backend``
    defaults to the embedded endpoint, where the request waits its turn like any other.
    The grammar bounds the shape, not the length (a string may run on), so a reply cut off
    by ``max_tokens`` is unfinished: its ``finish_reason`` is then ``"length"``.
    """
    if backend is None:
        from toolkit.client import connect_embedded  # the lab's client, only when it is needed

        backend = connect_embedded(api="chat")  # the grammar field is a chat-completions extension
    reply = backend.chat(messages=messages, max_tokens=max_tokens, temperature=temperature, seed=seed,
                         extra_body={"grammar": protocol_gbnf(specs)})
    choice = reply.choices[0]
    return Generated(choice.message.content or "", choice.finish_reason)
