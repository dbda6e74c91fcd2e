"""The parser: turning what the model wrote back into OpenAI's ``tool_calls``.

The grammar made the model write ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``
blocks. This module cuts them out again. ``arguments`` is kept as the exact text the model
wrote (a JSON object), which is what OpenAI's API returns too. A call cut off by ``max_tokens``
keeps its name and the arguments written so far, as OpenAI returns it with finish_reason
``length``: the caller sees that a call was attempted, and that its arguments are not JSON.

``CallStreamer`` does the same incrementally, for ``stream: true``: it sends each call's id and
name as soon as the name is complete, then the arguments in the fragments they arrive in.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from dataclasses import dataclass

from toolkit.engine.template import CALL_CLOSE, CALL_OPEN

_HEAD = re.compile(r'\s*\{\s*"name"\s*:\s*("(?:[^"\\]|\\.)*")\s*,\s*"arguments"\s*:\s*(?=\S)')
_decoder = json.JSONDecoder()


def new_call_id(basis: str | None = None, index: int = 0) -> str:
    """A call id: random, or, for a seeded request (``basis``: its prompt and seed), derived from
    it, so that the same seeded request gets the same ids. The ids are written into the next
    prompt (the template shows each result under its call's id), so random ones would make a
    seeded conversation take another path on every run."""
    if basis is None:
        return f"call_{uuid.uuid4().hex[:24]}"
    return f"call_{hashlib.sha256(f'{basis}#{index}'.encode()).hexdigest()[:24]}"


@dataclass
class GeneratedCall:
    """A call as the model wrote it inside ``<tool_call>`` tags, before it is given an id and
    becomes one of the reply's ``tool_calls`` (the string protocol's parsed calls are
    ``toolkit.protocol.ParsedCall``: their arguments are already a parsed dict)."""

    name: str
    arguments: str  # raw JSON text of the arguments object


def _arguments_end(text: str, start: int) -> int | None:
    """Where the arguments object that starts at ``start`` ends, or None if not closed yet."""
    try:
        _, end = _decoder.raw_decode(text, start)
        return end
    except json.JSONDecodeError:
        return None


def parse_reply(text: str) -> tuple[str | None, list[GeneratedCall]]:
    """(content, calls). Text that does not start with a call block is content."""
    if not text.lstrip().startswith(CALL_OPEN):
        return text, []
    calls, position = [], 0
    while (open_at := text.find(CALL_OPEN, position)) != -1:
        head = _HEAD.match(text, open_at + len(CALL_OPEN))
        if not head:
            break
        end = _arguments_end(text, head.end())
        if end is None:  # cut off by max_tokens: keep what was written
            calls.append(GeneratedCall(json.loads(head.group(1)), text[head.end():].rstrip()))
            break
        calls.append(GeneratedCall(json.loads(head.group(1)), text[head.end():end]))
        close = text.find(CALL_CLOSE, end)
        position = end if close == -1 else close + len(CALL_CLOSE)
    if not calls:
        return text, []
    return None, calls


class CallStreamer:
    """Feed it the growing reply text; it returns OpenAI-style ``tool_calls`` deltas."""

    def __init__(self, id_basis: str | None = None) -> None:
        self.id_basis = id_basis  # see new_call_id
        self.text = ""
        self.index = -1
        self.args_start: int | None = None  # where the current call's arguments begin
        self.sent = 0  # how much of the current arguments has been sent
        self.search_from = 0
        self.ids: list[str] = []

    def feed(self, piece: str) -> list[dict]:
        self.text += piece
        deltas = []
        while True:
            if self.args_start is None:
                open_at = self.text.find(CALL_OPEN, self.search_from)
                head = _HEAD.match(self.text, open_at + len(CALL_OPEN)) if open_at != -1 else None
                if not head:
                    return deltas
                self.index += 1
                self.ids.append(new_call_id(self.id_basis, self.index))
                self.args_start, self.sent = head.end(), head.end()
                deltas.append({"index": self.index, "id": self.ids[-1], "type": "function",
                               "function": {"name": json.loads(head.group(1)), "arguments": ""}})
            end = _arguments_end(self.text, self.args_start)
            # Until the arguments object closes, everything after its start belongs to it.
            upto = len(self.text) if end is None else end
            if upto > self.sent:
                deltas.append({"index": self.index, "function": {"arguments": self.text[self.sent:upto]}})
                self.sent = upto
            if end is None:
                return deltas
            self.args_start, self.search_from = None, end
