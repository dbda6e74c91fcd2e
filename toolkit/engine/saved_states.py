"""Saved model states that leave out the logits table.

The engine keeps recent model states (``LlamaRAMCache``) so that a prompt that starts like an
earlier one resumes from it instead of being evaluated again. ``Llama.save_state`` copies two
things: the model's own state (its key/value cache: about 18 MB for a 900-token prompt of
SmolLM2-135M) and a table of logits, one row per batch position and one column per token of the
vocabulary: 512 x 49,152 floats, 100 MB. Without ``logits_all`` nothing reads that table back:
sampling reads the context's own logits, and a resumed prompt evaluates its last token again to
get fresh ones. Yet copying it made each save take about 120 ms and each load 100 ms, several
times the model state's own cost, and ``LlamaRAMCache`` counts only the model state against its
capacity, so 512 MiB of states held about three more gigabytes of these tables.

``SavedStatesWithoutLogitsTable`` makes a ``Llama`` save and load the model state alone when
``logits_all`` is off (the engine never turns it on); it behaves as llama-cpp-python's otherwise.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import llama_cpp


class SavedStatesWithoutLogitsTable:
    """For a ``llama_cpp.Llama`` subclass: ``save_state``/``load_state`` skip the unread logits table."""

    @contextmanager
    def _without_logits_table(self) -> Iterator[None]:
        if self._logits_all:  # the table is read (log-probabilities of every position): keep it
            yield
            return
        table, self.scores = self.scores, self.scores[:0]  # no rows: copies of it cost nothing
        try:
            yield
        finally:
            self.scores = table

    def save_state(self) -> llama_cpp.LlamaState:
        with self._without_logits_table():
            return super().save_state()

    def load_state(self, state: llama_cpp.LlamaState) -> None:
        with self._without_logits_table():
            super().load_state(state)
