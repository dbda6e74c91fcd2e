"""The engine's cache of recent model states: a prompt resumes from the saved state that shares
the longest prefix with it, when that is longer than what the model holds now."""
from types import SimpleNamespace

import numpy as np
import pytest
from llama_cpp import Llama, LlamaRAMCache

from toolkit.engine.decide import continuation_log_prob, restore_longest_prefix


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


@pytest.mark.embedded
def test_a_state_saved_without_the_logits_table_resumes_to_the_same_continuation():
    """The engine's saved states leave out the 100 MB logits table, which nothing reads; a state
    loaded back must still continue exactly as the model did from where it was saved."""
    from toolkit.engine.model import model_path
    from toolkit.engine.llama import Llama

    llm = Llama(model_path=model_path(), n_ctx=512, n_threads=2, verbose=False, seed=0)
    prompt = llm.tokenize(b"Tools can be called with arguments. The weather in Paris is")

    def greedy(steps: int) -> list[int]:
        tokens = []
        for _ in range(steps):
            token = int(np.argmax(np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),))))
            tokens.append(token)
            llm.eval([token])
        return tokens

    llm.set_cache(LlamaRAMCache(capacity_bytes=64 << 20))
    llm.eval(prompt)
    state = llm.save_state()
    assert state.scores.size == 0 and state.n_tokens == len(prompt)
    llm.cache[prompt] = state
    first = greedy(8)
    llm.n_tokens = 0  # the model moves on to a prompt that shares nothing with it
    llm.eval(llm.tokenize(b"Something else entirely, at some length."))
    continuation_log_prob(llm, prompt, [])  # as a decision does: resume from the cache, then evaluate
    # the last token again
    assert llm.scores.shape[0] == llm.n_batch  # the model's own table is back in place
    assert greedy(8) == first


@pytest.mark.embedded
def test_the_engine_serves_the_model_whose_states_leave_out_the_logits_table():
    from toolkit.engine import Engine
    from toolkit.engine.llama import Llama

    assert isinstance(Engine(state_cache_mib=0).llm.raw, Llama)


@pytest.mark.embedded
def test_a_reply_that_ends_in_a_call_is_kept_so_its_prompt_is_not_evaluated_again():
    """The engine stops the model at the end of a call's JSON and writes the closing tag itself;
    the state must still reach the cache, or a prompt that comes back after another one (a
    conversation's tool prompt after an answer, a room's browsers taking turns) is evaluated
    again from its first token."""
    import specs
    from toolkit.engine import Engine
    from toolkit.engine.request import parse_request

    engine = Engine(tuned=())
    llm = engine.llm.raw
    ask = {"messages": [{"role": "user", "content": "What is the weather in Paris?"}],
           "tools": [specs.weather_spec()], "tool_choice": "required", "parallel_tool_calls": False,
           "temperature": 0, "seed": 0}
    elsewhere = {"messages": [{"role": "user", "content": "Name three rivers of Europe."}], "max_tokens": 8}
    first = engine.complete(ask)
    assert first["choices"][0]["finish_reason"] == "tool_calls"
    prompt = engine.prompt_tokens(parse_request(ask))
    assert any(list(key[:len(prompt)]) == prompt for key in llm.cache.cache_state)

    engine.complete(elsewhere)  # the model now holds a prompt that shares nothing with the first
    evaluated: list[int] = []  # how many tokens each evaluation took at once
    evaluate = llm.eval

    def counted(tokens):
        evaluated.append(len(tokens))
        return evaluate(tokens)

    llm.eval = counted
    try:
        again = engine.complete(ask)
    finally:
        del llm.eval
    assert max(evaluated) == 1  # the prompt's last token again, for fresh logits; then one per token written
    call = lambda reply: reply["choices"][0]["message"]["tool_calls"][0]["function"]  # noqa: E731
    assert call(again) == call(first)
