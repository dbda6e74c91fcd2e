"""The line in front of the embedded model: one request at a time, fair across clients.

A room shares one endpoint, and the model can answer only one request at a time. Requests wait
here for their turn:

* **fair across clients**: each client (a browser's run, a script) has a lane of its own, and
  the lanes take turns, one request each, in the order the clients first got in line. A client
  that sends many requests at once delays its own, not everyone else's; with one request per
  client, as the app's runs send them, that is plain arrival order.
* **nothing is refused or dropped**, except a request whose client hung up while it waited:
  nobody is left to read its reply.
* **the line is visible**: ``status(client)`` says how many requests are ahead of that client's
  own, which the endpoint serves at ``GET /v1/queue`` for the app to show.

    line = RequestQueue()
    with line.visit("browser-1") as ticket:   # known to status() from now on
        with line.turn(ticket):               # waits until it is this ticket's turn
            ...                               # the model is ours alone here
"""

from __future__ import annotations

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
    # Set while this request waits for another one's identical computation (see shared_replies).
    following: Ticket | None = field(default=None, repr=False)


class RequestQueue:
    # How often a waiting request looks whether its client is still there.
    CHECK_EVERY_S = 0.5

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._lanes: dict[str, deque[Ticket]] = {}
        self._turns: deque[str] = deque()  # clients with a waiting request, whose turn comes first
        self._serving: Ticket | None = None
        self._visitors: list[Ticket] = []
        self._numbers = 0
        self.served: list[int] = []  # ticket numbers in the order they were served, the last 1,000

    @contextmanager
    def visit(self, client: str) -> Iterator[Ticket]:
        """A ticket for one request, known to ``status`` until the request is answered."""
        with self._condition:
            self._numbers += 1
            ticket = Ticket(client, self._numbers)
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

    def _pass_on(self) -> None:
        """If the model is free, give it to the next lane's first request."""
        if self._serving is not None or not self._turns:
            return
        client = self._turns.popleft()
        lane = self._lanes[client]
        self._serving = lane.popleft()
        self._serving.state = "serving"
        if lane:
            self._turns.append(client)  # its next request waits for the other lanes' turns
        else:
            del self._lanes[client]
        self._condition.notify_all()

    def _order(self) -> list[Ticket]:
        """The waiting requests in the order they will be served if no one else arrives."""
        lanes = [list(self._lanes[client]) for client in self._turns]
        return [lane[i] for i in range(max(map(len, lanes), default=0)) for lane in lanes if i < len(lane)]

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
