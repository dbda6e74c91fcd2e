"""The engine's cache of recent model states: a prompt resumes from the saved state that shares
the longest prefix with it, when that is longer than what the model holds now."""
from types import SimpleNamespace

import numpy as np
import pytest
from llama_cpp import Llama, LlamaRAMCache

from toolkit.engine.decide import restore_longest_prefix


class Model:
    """What ``restore_longest_prefix`` touches on a llama_cpp.Llama: the tokens it holds now,
    its cache of saved states, and loading one."""

    longest_token_prefix = staticmethod(Llama.longest_token_prefix)

    def __init__(self, holds, saved=()):
        self._input_ids = list(holds)
        self.cache = LlamaRAMCache(capacity_bytes=1 << 20)
        for tokens in saved:
            self.cache[tokens] = SimpleNamespace(input_ids=np.array(tokens), llama_state_size=10)
        self.loaded = None

    def load_state(self, state):
        self.loaded = list(state.input_ids)
        self._input_ids = list(state.input_ids)


TOOL_PROMPT = list(range(100))               # system prompt and tools: long
ANSWER_PROMPT = [900, 901, 902]              # the answer prompt, which shares nothing with it


def test_after_an_answer_from_another_prompt_the_tool_prompt_comes_back_from_the_cache():
    model = Model(holds=ANSWER_PROMPT, saved=[TOOL_PROMPT + [500, 501], ANSWER_PROMPT])
    restore_longest_prefix(model, TOOL_PROMPT + [500, 777])   # the next step of the conversation
    assert model.loaded == TOOL_PROMPT + [500, 501]


def test_the_state_held_is_kept_when_it_shares_as_much_or_more():
    model = Model(holds=TOOL_PROMPT + [500], saved=[TOOL_PROMPT[:50]])
    restore_longest_prefix(model, TOOL_PROMPT + [500, 600])
    assert model.loaded is None


def test_nothing_saved_or_no_cache_changes_nothing():
    model = Model(holds=ANSWER_PROMPT)
    restore_longest_prefix(model, TOOL_PROMPT)
    assert model.loaded is None
    model.cache = None
    restore_longest_prefix(model, TOOL_PROMPT)
    assert model.loaded is None


@pytest.mark.embedded
def test_the_engine_keeps_states_unless_told_not_to():
    from toolkit.engine import Engine

    assert isinstance(Engine().llm.raw.cache, LlamaRAMCache)
    assert Engine(state_cache_mib=0).llm.raw.cache is None
    assert Engine(reuse_prefix=False).llm.raw.cache is None  # a benchmark of no reuse at all
