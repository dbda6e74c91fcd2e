"""Every llama.cpp call goes through one thread, whichever thread asks (no model needed here)."""

import threading

import pytest

from toolkit.engine import model_thread
from toolkit.engine.model_thread import on_model_thread


def current_thread_name():
    return threading.current_thread().name


def test_calls_from_different_threads_all_run_on_the_same_model_thread():
    names = [model_thread.run(current_thread_name)]
    worker = threading.Thread(target=lambda: names.append(model_thread.run(current_thread_name)))
    worker.start()
    worker.join()
    assert len(set(names)) == 1
    assert names[0] != threading.current_thread().name


def test_an_exception_comes_back_to_the_caller():
    with pytest.raises(ZeroDivisionError):
        model_thread.run(lambda: 1 / 0)


def test_a_call_made_from_the_model_thread_itself_does_not_deadlock():
    assert model_thread.run(lambda: model_thread.run(lambda: 42)) == 42


class FakeLlama:
    n_vocab = 49152

    def __init__(self):
        self.closed = False
        self.threads = []

    def tokenize(self, text):
        self.threads.append(current_thread_name())
        return list(text)

    def create_completion(self, count):
        def pieces():
            try:
                for i in range(count):
                    self.threads.append(current_thread_name())
                    yield i
            finally:
                self.closed = True
        return pieces()


def test_the_wrapper_reads_like_the_object_and_runs_its_methods_on_the_model_thread():
    target = FakeLlama()
    llm = on_model_thread(target)
    assert llm.n_vocab == 49152
    assert llm.tokenize("ab") == ["a", "b"]
    assert list(llm.create_completion(3)) == [0, 1, 2]
    assert set(target.threads) == {model_thread.run(current_thread_name)}
    llm.extra = "set through the wrapper"
    assert target.extra == "set through the wrapper"


def test_a_stream_left_early_is_closed_so_generation_ends_there():
    target = FakeLlama()
    stream = on_model_thread(target).create_completion(100)
    assert next(stream) == 0
    stream.close()
    assert target.closed
    assert len(target.threads) == 1
