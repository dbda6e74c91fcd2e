"""Text replies never carry the template's own markup.

When the engine has decided that a reply is text, the model may still start writing what it
has seen in the prompt: a ``<tool_call>`` block (a call in disguise, which a client would show
as an answer), the ``<tool_response ...>`` block it was just given (an echo instead of an
answer), or ChatML's role markers. ``MarkupBan`` is a logits processor that makes each of these
impossible while the reply is being written:

- a token whose text holds a marker (``<tool_call``, ``<tool_response``, their closing
  tags, ``<|im``), in any mix of capitals (a tuned model was seen writing ``<tool_Call>``
  as text), is never sampled;
- a token that would complete a marker begun by the text so far (``<tool`` then ``_call``)
  is never sampled either, so a marker split over several tokens cannot appear.

Only the template's own markers are banned. Everything else stays possible: ``<`` on its own
("3 < 5"), and other tags, such as the ``<tool>`` of the string protocol that lessons 2 and 3
build, which a model asked for it in its prompt must be able to write. The reply's end token
is never banned: it is how the model stops.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

MARKERS = ("<tool_call", "</tool_call", "<tool_response", "</tool_response", "<|im")
# The starts of a marker that text may end with: "<", "<t", ..., "</tool", "<|im".
_STARTS = sorted({marker[:n] for marker in MARKERS for n in range(1, len(marker))}, key=len, reverse=True)


def _holds_marker(text: str) -> bool:
    text = text.lower()  # "<tool_Call>" is the same call in disguise
    return any(marker in text for marker in MARKERS)


class MarkupBan:
    """A llama-cpp-python logits processor for one model's vocabulary (built once per model)."""

    def __init__(self, llm: Any):
        self.llm = llm
        self.texts = [self._text([token]) for token in range(llm.n_vocab())]
        self.end = llm.token_eos()
        self.always = self._where(_holds_marker)
        self._after: dict[str, np.ndarray] = {}  # banned tokens once the text ends with a marker's start
        self.prompt_length = 0

    def _text(self, tokens: Sequence[int]) -> str:
        return self.llm.detokenize(list(tokens), special=True).decode("utf-8", errors="ignore")

    def banned_after(self, start: str) -> np.ndarray:
        """Tokens that would complete a marker when the text so far ends with ``start``."""
        if start not in self._after:
            self._after[start] = self._where(lambda text: _holds_marker(start + text))
        return self._after[start]

    def _where(self, banned) -> np.ndarray:
        return np.array([t for t, text in enumerate(self.texts) if t != self.end and banned(text)], dtype=np.int64)

    def start_at_end(self, tokens: Sequence[int]) -> str | None:
        """The longest start of a marker that the generated text ends with, if any."""
        tail = self._text(tokens[-8:])[-16:].lower()  # long enough for the longest start, "</tool_respons"
        return next((start for start in _STARTS if tail.endswith(start)), None)

    def for_prompt(self, prompt_length: int) -> "MarkupBan":
        """Set where the prompt ends, so that only the reply's own text is read."""
        self.prompt_length = prompt_length
        return self

    def __call__(self, input_ids: np.ndarray, scores: np.ndarray) -> np.ndarray:
        scores[self.always] = -np.inf
        generated = list(input_ids[self.prompt_length:])
        if generated and (start := self.start_at_end(generated)):
            scores[self.banned_after(start)] = -np.inf
        return scores
