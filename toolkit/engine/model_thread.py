"""Run every llama.cpp call on one long-lived thread.

Why: llama.cpp spreads each forward pass over the CPU cores with OpenMP, and an OpenMP worker
team belongs to the thread that called in. When two live threads both call the model (the
notebook's own thread and the HTTP server's request thread, say), every call gets about 2.5
times slower on two cores: the teams fight over the same cores. Funnelling all calls through
one thread keeps a single team, whoever asks.

``on_model_thread(llm)`` wraps a ``llama_cpp.Llama`` so that it reads like the original: every
method call (``tokenize``, ``create_completion``, ``reset``...) runs on the model thread and the
caller waits for its result. A streamed completion is a generator; each ``next()`` on it runs
on the model thread too.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterator

_model_thread_ident: int | None = None
_END = object()


def _remember_ident() -> None:
    global _model_thread_ident
    _model_thread_ident = threading.get_ident()


# The thread starts with the first call and lives as long as the process.
_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="model", initializer=_remember_ident)


def run(function: Callable, *args, **kwargs) -> Any:
    """Call ``function`` on the model thread and return (or raise) what it does."""
    if threading.get_ident() == _model_thread_ident:  # already there: calling through would deadlock
        return function(*args, **kwargs)
    return _executor.submit(function, *args, **kwargs).result()


def _pieces(generator: Iterator) -> Iterator:
    try:
        while (piece := run(next, generator, _END)) is not _END:
            yield piece
    finally:  # a reader that stops early (the client went away) ends generation there too
        run(generator.close)


class on_model_thread:  # noqa: N801 - reads as a function: on_model_thread(llm)
    """A stand-in for ``llm`` whose method calls run on the model thread."""

    def __init__(self, target: Any):
        object.__setattr__(self, "_target", target)

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if not callable(value):
            return value

        def call(*args, **kwargs):
            result = run(value, *args, **kwargs)
            return _pieces(result) if isinstance(result, Iterator) else result

        call.__name__ = name
        return call

    @property
    def raw(self) -> Any:
        """The wrapped object itself, for code that is already running on the model thread."""
        return self._target

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._target, name, value)

    def __repr__(self) -> str:
        return f"on_model_thread({self._target!r})"
