"""The line in front of the embedded model: one request at a time, fair across clients.

A room shares one endpoint, and the model can answer only one request at a time. Requests wait
here for their turn:

* **fair across clients**: each client (a browser's run, a script) has a lane of its own, and
  only the first request of each lane is ever a candidate. A client that sends many requests at
  once delays its own, not everyone else's.
* **cheap to compute next**: the model keeps the last prompt it evaluated, and a prompt that
  starts the same way is evaluated only from where they part. So among the lanes' first
  requests, the one whose prompt shares the longest beginning with the last one served goes
  next (a room's browsers asking the same question with different seeds follow one another);
  with nothing shared, the lanes take turns in the order they got in line.
* **no one waits for ever**: a request overtaken by ``overtake_bound`` later arrivals is served
  before any request that arrived after it, so arrival order holds within that bound.
* **nothing is refused or dropped**, except a request whose client hung up while it waited:
  nobody is left to read its reply.
* **the line is visible**: ``status(client)`` says how many requests are ahead of that client's
  own, which the endpoint serves at ``GET /v1/queue`` for the app to show.

    line = RequestQueue()
    with line.visit("browser-1", prompt) as ticket:   # known to status() from now on
        with line.turn(ticket):               # waits until it is this ticket's turn
            ...                               # the model is ours alone here
"""

from __future__ import annotations

import json
import threading
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable, Iterator


class ClientGone(Exception):
    """The client hung up while its request waited; it left the line."""


@dataclass(eq=False)
class Ticket:
    client: str
    number: int
    state: str = "arrived"  # arrived | waiting | serving | done
    # What the request's prompt starts with (``prompt_text``); "" when unknown.
    prompt: str = field(default="", repr=False)
    arrival: int = 0  # when it got in line, counted across all clients
    overtaken: int = 0  # later arrivals served while it waited first in its lane
    # Set while this request waits for another one's identical computation (see shared_replies).
    following: Ticket | None = field(default=None, repr=False)


def prompt_text(request: dict) -> str:
    """A stand-in for a request's prompt, in the order the template writes one: the model, the
    tools (the system prompt lists them first), then the instructions and the messages (or a
    Responses request's input). Two requests whose stand-ins start alike have prompts that do."""
    conversation = request.get("messages", request.get("input"))
    return json.dumps([request.get("model"), request.get("tools"), request.get("instructions"), conversation],
                      ensure_ascii=False, sort_keys=True, default=str)


def shared_length(first: str, second: str) -> int:
    """How many characters two texts share at the start (by halving: each step one C-level
    comparison of slices, so long prompts cost a dozen comparisons, not a loop per character)."""
    low, high = 0, min(len(first), len(second))
    while low < high:
        middle = (low + high + 1) // 2
        if first[:middle] == second[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


class RequestQueue:
    # How often a waiting request looks whether its client is still there.
    CHECK_EVERY_S = 0.5
    # How many later arrivals may be served before a waiting request: one room of sixteen
    # browsers, so a request never waits more than a round of them beyond its turn.
    OVERTAKE_BOUND = 16

    def __init__(self, overtake_bound: int | None = None) -> None:
        self.overtake_bound = self.OVERTAKE_BOUND if overtake_bound is None else overtake_bound
        self._condition = threading.Condition()
        self._lanes: dict[str, deque[Ticket]] = {}
        self._turns: deque[str] = deque()  # clients with a waiting request, whose turn comes first
        self._serving: Ticket | None = None
        self._visitors: list[Ticket] = []
        self._numbers = 0
        self._arrivals = 0
        self._evaluated = ""  # the prompt of the request served last: what the model holds
        self.served: list[int] = []  # ticket numbers in the order they were served, the last 1,000

    @contextmanager
    def visit(self, client: str, prompt: str = "") -> Iterator[Ticket]:
        """A ticket for one request, known to ``status`` until the request is answered."""
        with self._condition:
            self._numbers += 1
            ticket = Ticket(client, self._numbers, prompt=prompt)
            self._visitors.append(ticket)
        try:
            yield ticket
        finally:
            with self._condition:
                self._visitors.remove(ticket)
                ticket.state = "done"

    @contextmanager
    def turn(self, ticket: Ticket, gone: Callable[[], bool] = lambda: False) -> Iterator[None]:
        """Wait in the ticket's lane until its turn, hold the model, then pass it on.

        Raises ``ClientGone`` (and leaves the line) if ``gone()`` turns true while waiting."""
        with self._condition:
            self._line_up(ticket)
            self._pass_on()
            while self._serving is not ticket:
                self._condition.wait(self.CHECK_EVERY_S)
                if self._serving is not ticket and gone():
                    self._leave(ticket)
                    raise ClientGone
        try:
            yield
        finally:
            with self._condition:
                self._serving = None
                self.served = self.served[-999:] + [ticket.number]
                self._pass_on()

    def _line_up(self, ticket: Ticket) -> None:
        ticket.state = "waiting"
        self._arrivals += 1
        ticket.arrival, ticket.overtaken = self._arrivals, 0
        lane = self._lanes.setdefault(ticket.client, deque())
        if not lane:
            self._turns.append(ticket.client)
        lane.append(ticket)

    def _leave(self, ticket: Ticket) -> None:
        lane = self._lanes[ticket.client]
        lane.remove(ticket)
        if not lane:
            del self._lanes[ticket.client]
            self._turns.remove(ticket.client)
        ticket.state = "done"

    def _pick(self, heads: list[Ticket], overtaken: dict[Ticket, int], evaluated: str) -> Ticket:
        """Which of the lanes' first requests (in the lanes' turn order) goes next: the oldest
        one overtaken ``overtake_bound`` times if any, else the one that shares the longest
        beginning with what the model evaluated last; on a tie, the first lane in turn."""
        overdue = [ticket for ticket in heads if overtaken[ticket] >= self.overtake_bound]
        if overdue:
            return min(overdue, key=lambda ticket: ticket.arrival)
        return max(heads, key=lambda ticket: shared_length(ticket.prompt, evaluated))

    def _pass_on(self) -> None:
        """If the model is free, give it to the request ``_pick`` chooses."""
        if self._serving is not None or not self._turns:
            return
        heads = [self._lanes[client][0] for client in self._turns]
        chosen = self._pick(heads, {ticket: ticket.overtaken for ticket in heads}, self._evaluated)
        for ticket in heads:
            if ticket.arrival < chosen.arrival:
                ticket.overtaken += 1
        client = chosen.client
        self._turns.remove(client)
        lane = self._lanes[client]
        self._serving = lane.popleft()
        self._serving.state = "serving"
        self._evaluated = chosen.prompt or self._evaluated
        if lane:
            self._turns.append(client)  # its next request waits for the other lanes' turns
        else:
            del self._lanes[client]
        self._condition.notify_all()

    def _order(self) -> list[Ticket]:
        """The waiting requests in the order they will be served if no one else arrives: the
        choice ``_pass_on`` makes, played forward on a copy of the line."""
        lanes = {client: list(self._lanes[client]) for client in self._turns}
        turns = list(self._turns)
        overtaken = {ticket: ticket.overtaken for lane in lanes.values() for ticket in lane}
        evaluated, order = self._evaluated, []
        while turns:
            heads = [lanes[client][0] for client in turns]
            chosen = self._pick(heads, overtaken, evaluated)
            for ticket in heads:
                if ticket.arrival < chosen.arrival:
                    overtaken[ticket] += 1
            turns.remove(chosen.client)
            lanes[chosen.client].pop(0)
            if lanes[chosen.client]:
                turns.append(chosen.client)
            order.append(chosen)
            evaluated = chosen.prompt or evaluated
        return order

    def status(self, client: str | None = None) -> dict:
        """How long the line is; with ``client``, how many requests are ahead of its first one.

        ``ahead`` is None when the client has no request in line, 0 when the model is answering
        it. A request waiting for an identical one's computation stands where that one stands."""
        with self._condition:
            order = self._order()
            body = {"object": "queue", "serving": int(self._serving is not None), "waiting": len(order),
                    "clients": len(self._turns)}
            if client is not None:
                body["client"] = client
                body["ahead"] = self._ahead(client, order)
            return body

    def _ahead(self, client: str, order: list[Ticket]) -> int | None:
        places = []
        for ticket in self._visitors:
            if ticket.client != client:
                continue
            stand = ticket.following or ticket
            if stand.state == "serving":
                places.append(0)
            elif stand in order:
                places.append(order.index(stand) + (self._serving is not None))
        return min(places, default=None)
