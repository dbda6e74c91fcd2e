"""Identical deterministic requests are computed once: a room's sixteen runs of the same
experiment send the same requests, and the model needs to answer each only one time.

A request is shared only when its reply cannot differ from one computation to the next:

* ``temperature`` 0: the model picks its most likely token at every step, so the seed plays
  no part, and requests that differ only in their seed are one request (a room where every
  browser picks its own seed still computes each greedy request once);
* or a ``seed`` given: the engine seeds every step's sampling from it, so the same seed draws
  the same tokens (the experiment store already reads such trials back on that ground).

A request with a temperature above 0 (or none: OpenAI's default is 1) and no seed is sampled
afresh each time, as a client asking twice expects; it is never shared. Neither is a streamed
request: its reply is written token by token to one connection.

Two ways to share, keyed by the whole request body (and the API it was sent to), so a request
that differs in any field, the model included, is computed on its own:

* **joined**: a request identical to one being computed (or waiting its turn) waits for that
  computation instead of queueing a second one;
* **cached**: a request identical to one answered lately gets the same reply at once. The
  cache keeps the last ``size`` replies (``LAB_SHARED_REPLIES``, default 512; 0 turns sharing off).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections import OrderedDict
from typing import Callable

COMPUTED, JOINED, CACHED = "computed", "joined", "cached"


def sharing_key(api: str, request: dict) -> str | None:
    """The key two identical deterministic requests share; None for a request never shared."""
    if request.get("stream"):
        return None
    seed, temperature = request.get("seed"), request.get("temperature", 1)
    seeded = isinstance(seed, int) and not isinstance(seed, bool)
    if not (seeded or (isinstance(temperature, (int, float)) and temperature == 0)):
        return None
    if not seeded or temperature == 0:
        request = {name: value for name, value in request.items() if name != "seed"}  # it changes nothing
    text = json.dumps({"api": api, "request": request}, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class _Computation:
    def __init__(self, ticket):
        self.ticket = ticket  # where the computing request stands in line, for those joining it
        self.done = threading.Event()
        self.reply: dict | None = None  # None: it failed or was cut short; joiners compute their own


class SharedReplies:
    def __init__(self, size: int | None = None):
        self.size = int(os.environ.get("LAB_SHARED_REPLIES", 512)) if size is None else size
        self._lock = threading.Lock()
        self._replies: OrderedDict[str, dict] = OrderedDict()
        self._computing: dict[str, _Computation] = {}

    def answer(self, key: str | None, ticket, compute: Callable[[], dict | None]) -> tuple[dict, str]:
        """(the reply, how it was had: computed, joined or cached).

        ``compute()`` returns the reply, or None when it must not be shared (its client left and
        generation was cut short); it may raise, and the error goes to its own caller only."""
        while True:
            if key is None or self.size <= 0:
                return compute(), COMPUTED
            with self._lock:
                if key in self._replies:
                    self._replies.move_to_end(key)
                    return self._replies[key], CACHED
                running = self._computing.get(key)
                if running is None:
                    running = self._computing[key] = _Computation(ticket)
                    break
            ticket.following = running.ticket
            running.done.wait()
            ticket.following = None
            if running.reply is not None:
                return running.reply, JOINED
            # The computation failed or was cut short: try again, maybe computing it ourselves.
        try:
            running.reply = reply = compute()
        finally:
            with self._lock:
                del self._computing[key]
                if running.reply is not None:
                    self._replies[key] = running.reply
                    while len(self._replies) > self.size:
                        self._replies.popitem(last=False)
            running.done.set()
        return reply, COMPUTED

    def forget(self) -> None:
        """Drop every remembered reply (a benchmark starts each room afresh)."""
        with self._lock:
            self._replies.clear()

    def __len__(self) -> int:
        return len(self._replies)
