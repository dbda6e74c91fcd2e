"""One endpoint for a room: the fair line in front of the model, shared replies for identical
deterministic requests, the line's status as the app shows it, and time-outs that fail a run
cleanly and leave it resumable. A fake engine whose replies wait on a gate stands in for the
model, so no test depends on how long anything takes."""
import json
import threading
import time
from types import SimpleNamespace

import httpx
import openai
import pytest

from toolkit.app.jobs import Job
from toolkit.bench.experiment import run_experiment
from toolkit.bench.store import Store
from toolkit.bench.suite import load_suite
from toolkit.bench.trials import Settings, plan
from toolkit.client import Backend, connect, explain
from toolkit.engine.request_queue import ClientGone, RequestQueue, prompt_text, shared_length
from toolkit.engine.serve import base_url_of, make_server
from toolkit.engine.shared_replies import (
    CACHED,
    COMPUTED,
    JOINED,
    SharedReplies,
    sharing_key,
)
from toolkit.lab_error import LabError

SUITE = load_suite()


def until(condition, what: str) -> None:
    """Wait for another thread to get somewhere (a safety limit, not a measurement)."""
    deadline = time.monotonic() + 10
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened: {what}")
        time.sleep(0.005)


# ---------------------------------------------------------------- the line

class Visitor:
    """A request in its own thread: gets in line as ``client`` and holds the model until released."""

    def __init__(self, line: RequestQueue, client: str, gone=lambda: False, prompt: str = ""):
        self.line, self.client, self.gone, self.prompt = line, client, gone, prompt
        self.release, self.outcome = threading.Event(), None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        try:
            with self.line.visit(self.client, self.prompt) as self.ticket, self.line.turn(self.ticket, self.gone):
                self.release.wait()
            self.outcome = "served"
        except ClientGone:
            self.outcome = "gone"

    def start(self, waiting_after: int | None = None):
        self.thread.start()
        if waiting_after is not None:  # arrivals in a known order
            until(lambda: self.line.status()["waiting"] == waiting_after, f"{self.client} in line")
        return self


def test_lanes_take_turns_so_one_client_with_many_requests_does_not_delay_the_others():
    line = RequestQueue()
    first = Visitor(line, "a").start()
    until(lambda: line.status()["serving"] == 1, "a served")
    many = [Visitor(line, "b").start(waiting_after=n) for n in (1, 2, 3)]
    other = Visitor(line, "c").start(waiting_after=4)
    assert line.status("c")["ahead"] == 2  # a's request, then b's first; b's others come after c
    assert line.status("b")["ahead"] == 1
    assert line.status("a")["ahead"] == 0
    assert line.status("nobody")["ahead"] is None
    for visitor in [first, many[0], other, many[1], many[2]]:
        visitor.release.set()
    for visitor in [first, *many, other]:
        visitor.thread.join(10)
    numbers = {id(v): v.ticket.number for v in [first, *many, other]}
    assert line.served == [numbers[id(first)], numbers[id(many[0])], numbers[id(other)],
                           numbers[id(many[1])], numbers[id(many[2])]]
    assert line.status() == {"object": "queue", "serving": 0, "waiting": 0, "clients": 0}


def test_with_one_request_per_client_the_line_is_arrival_order():
    line = RequestQueue()
    holder = Visitor(line, "holder").start()
    until(lambda: line.status()["serving"] == 1, "holder served")
    visitors = [Visitor(line, f"browser {n}").start(waiting_after=n + 1) for n in range(5)]
    holder.release.set()
    for visitor in visitors:
        visitor.release.set()
        visitor.thread.join(10)
    assert line.served[1:] == [v.ticket.number for v in visitors]


def serve_all(line: RequestQueue, holder: Visitor, visitors: list[Visitor]) -> list[str]:
    """Let every request through, in whatever order the line chooses; their prompts, in that order."""
    for visitor in visitors:
        visitor.release.set()
    holder.release.set()
    for visitor in visitors:
        visitor.thread.join(10)
    by_number = {v.ticket.number: v.prompt for v in [holder, *visitors]}
    return [by_number[number] for number in line.served]


def test_the_request_sharing_the_longest_beginning_with_the_last_one_goes_next():
    line = RequestQueue()
    holder = Visitor(line, "holder", prompt="weather tools | Paris?").start()
    until(lambda: line.status()["serving"] == 1, "holder served")
    prompts = ["stock tools | AAPL?", "weather tools | London?", "weather tools | Paris? (seed 2)"]
    visitors = [Visitor(line, f"browser {n}", prompt=text).start(waiting_after=n + 1)
                for n, text in enumerate(prompts)]
    # The line says where each stands in the order it will really serve them.
    assert [line.status(f"browser {n}")["ahead"] for n in range(3)] == [3, 2, 1]
    assert serve_all(line, holder, visitors) == ["weather tools | Paris?", "weather tools | Paris? (seed 2)",
                                                 "weather tools | London?", "stock tools | AAPL?"]


def test_no_request_is_overtaken_by_more_later_arrivals_than_the_bound():
    line = RequestQueue(overtake_bound=2)
    holder = Visitor(line, "holder", prompt="x").start()
    until(lambda: line.status()["serving"] == 1, "holder served")
    lonely = Visitor(line, "lonely", prompt="nothing in common").start(waiting_after=1)
    alike = [Visitor(line, f"browser {n}", prompt=f"x{n}").start(waiting_after=n + 2) for n in range(4)]
    assert line.status("lonely")["ahead"] == 3  # the holder, then two that start like it
    assert serve_all(line, holder, [lonely, *alike]) == ["x", "x0", "x1", "nothing in common", "x2", "x3"]
    assert lonely.ticket.overtaken == 2


def test_with_a_bound_of_0_the_line_is_arrival_order_whatever_the_prompts():
    line = RequestQueue(overtake_bound=0)  # a bound of 0: nobody may be overtaken at all
    holder = Visitor(line, "holder", prompt="a").start()
    until(lambda: line.status()["serving"] == 1, "holder served")
    visitors = [Visitor(line, f"browser {n}", prompt=text).start(waiting_after=n + 1)
                for n, text in enumerate(["b", "a2", "a"])]
    assert serve_all(line, holder, visitors) == ["a", "b", "a2", "a"]


@pytest.mark.parametrize("first, second", [("", "abc"), ("abc", "abd"), ("abc", "abc"), ("abcdef", "abc"),
                                           ("x" * 5000 + "a", "x" * 5000 + "b")])
def test_shared_length_is_the_common_beginning(first, second):
    import os.path

    assert shared_length(first, second) == len(os.path.commonprefix([first, second]))


def test_prompt_texts_share_more_where_tools_and_messages_do():
    question = {"model": "m", "tools": [{"name": "get_weather"}], "messages": [{"role": "user", "content": "Paris?"}]}
    reseeded = {**question, "seed": 7}
    other_tools = {**question, "tools": [{"name": "get_stock"}]}
    base = prompt_text(question)
    assert prompt_text(reseeded) == base  # the seed is not part of the prompt
    assert shared_length(base, prompt_text({**question, "messages": [{"role": "user", "content": "Rome?"}]})) \
        > shared_length(base, prompt_text(other_tools))


def test_a_request_whose_client_hung_up_leaves_the_line_and_the_next_is_served():
    line = RequestQueue()
    line.CHECK_EVERY_S = 0.01
    holder = Visitor(line, "a").start()
    until(lambda: line.status()["serving"] == 1, "a served")
    hung_up = threading.Event()
    leaver = Visitor(line, "b", gone=hung_up.is_set).start(waiting_after=1)
    stayer = Visitor(line, "c").start(waiting_after=2)
    hung_up.set()
    leaver.thread.join(10)
    assert leaver.outcome == "gone"
    assert line.status("b")["ahead"] is None and line.status("c")["ahead"] == 1
    holder.release.set(), stayer.release.set()
    stayer.thread.join(10)
    assert stayer.outcome == "served"
    assert leaver.ticket.number not in line.served


# ---------------------------------------------------------------- shared replies

BODY = {"model": "m", "messages": [{"role": "user", "content": "Weather in Beijing?"}],
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}],
        "temperature": 0, "seed": 0, "max_tokens": 32}


@pytest.mark.parametrize("change", [
    {"model": "other"}, {"messages": [{"role": "user", "content": "Weather in Paris?"}]}, {"tools": []},
    {"temperature": 0.0001, "seed": 0}, {"temperature": 0.5, "seed": 1}, {"max_tokens": 33},
    {"tool_choice": "required"},
])
def test_a_request_differing_in_any_field_has_a_key_of_its_own(change):
    assert sharing_key("chat", {**BODY, **change}) != sharing_key("chat", BODY)


@pytest.mark.parametrize("seed", [1, 12345, None])
def test_at_temperature_0_the_seed_is_not_part_of_the_key(seed):
    # Greedy decoding takes the likeliest token whatever the seed: one computation serves all.
    body = {name: value for name, value in BODY.items() if name != "seed"}
    assert sharing_key("chat", {**body, **({"seed": seed} if seed is not None else {})}) == sharing_key("chat", BODY)


def test_above_temperature_0_each_seed_is_a_request_of_its_own():
    sampled = {**BODY, "temperature": 0.7}
    assert sharing_key("chat", {**sampled, "seed": 1}) != sharing_key("chat", {**sampled, "seed": 2})


def test_the_key_is_the_whole_request_and_its_api():
    same = json.loads(json.dumps(BODY))  # an equal body, built anew, fields in another order
    assert sharing_key("chat", dict(reversed(list(same.items())))) == sharing_key("chat", BODY)
    assert sharing_key("responses", BODY) != sharing_key("chat", BODY)


@pytest.mark.parametrize("body, shared", [
    ({"temperature": 0}, True),                   # greedy: the seed plays no part
    ({"temperature": 0.7, "seed": 3}, True),      # sampled, but every step's seed comes from it
    ({"seed": 3}, True),
    ({"temperature": 0.7}, False),                # sampled afresh each time
    ({}, False),                                  # OpenAI's default temperature is 1
    ({"temperature": 0.7, "seed": True}, False),  # a flag, not a seed
    ({"temperature": 0, "stream": True}, False),  # a stream belongs to its connection
])
def test_only_deterministic_whole_replies_are_shared(body, shared):
    assert (sharing_key("chat", {"messages": [], **body}) is not None) is shared


def ticket():
    return SimpleNamespace(following=None)


def test_a_second_identical_request_joins_the_first_ones_computation_and_a_third_is_cached():
    shared, gate, calls = SharedReplies(), threading.Event(), []

    def compute():
        calls.append(1)
        gate.wait()
        return {"answer": len(calls)}

    results = []
    first = threading.Thread(target=lambda: results.append(shared.answer("k", ticket(), compute)))
    first.start()
    until(lambda: calls, "the first computation started")
    second_ticket = ticket()
    second = threading.Thread(target=lambda: results.append(shared.answer("k", second_ticket, compute)))
    second.start()
    until(lambda: second_ticket.following is not None, "the second joined")
    gate.set()
    first.join(10), second.join(10)
    assert sorted(how for _, how in results) == [COMPUTED, JOINED]
    assert [reply for reply, _ in results] == [{"answer": 1}, {"answer": 1}]
    assert shared.answer("k", ticket(), compute) == ({"answer": 1}, CACHED)
    assert shared.answer("other", ticket(), compute) == ({"answer": 2}, COMPUTED)
    assert len(calls) == 2


def test_requests_never_shared_are_all_computed():
    shared, calls = SharedReplies(), []
    for _ in range(3):
        assert shared.answer(None, ticket(), lambda: calls.append(1) or {"n": len(calls)})[1] == COMPUTED
    assert len(calls) == 3 and len(shared) == 0


def test_the_cache_keeps_only_the_last_replies():
    shared, calls = SharedReplies(size=2), []
    compute = lambda: calls.append(1) or {"n": len(calls)}  # noqa: E731
    for key in ["a", "b", "c", "a"]:
        shared.answer(key, ticket(), compute)
    assert len(calls) == 4 and len(shared) == 2  # "a" was the oldest when "c" came in
    assert shared.answer("c", ticket(), compute)[1] == CACHED


def test_a_computation_cut_short_or_failed_is_not_shared_and_joiners_compute_their_own():
    shared, gate, started = SharedReplies(), threading.Event(), threading.Event()

    def cut_short():
        started.set()
        gate.wait()
        return None  # its client left: the reply is incomplete

    first = threading.Thread(target=lambda: shared.answer("k", ticket(), cut_short))
    first.start()
    started.wait(10)
    joiner, result = ticket(), []
    second = threading.Thread(target=lambda: result.append(shared.answer("k", joiner, lambda: {"whole": True})))
    second.start()
    until(lambda: joiner.following is not None, "the second joined")
    gate.set()
    first.join(10), second.join(10)
    assert result == [({"whole": True}, COMPUTED)]

    def fail():
        raise ValueError("bad request")

    with pytest.raises(ValueError):
        shared.answer("bad", ticket(), fail)
    assert shared.answer("bad", ticket(), lambda: {"fine": True}) == ({"fine": True}, COMPUTED)


# ---------------------------------------------------------------- the endpoint, with a fake engine

class GatedEngine:
    """Stands in for ``Engine``: answers in text once ``gate`` is open, and counts its work."""

    models = ["fake"]

    def __init__(self, open_: bool = True):
        self.gate, self.computed = threading.Event(), []
        if open_:
            self.gate.set()

    def complete(self, request, should_stop=None):
        self.computed.append(request)
        self.gate.wait(30)
        return {"id": f"chatcmpl-{len(self.computed)}", "object": "chat.completion", "created": 0, "model": "fake",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "no tool"},
                             "finish_reason": "stop", "logprobs": None}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}

    def stream(self, request, should_stop=None):
        raise AssertionError("no test here streams")


@pytest.fixture
def endpoint():
    engine = GatedEngine()
    server = make_server(engine=engine)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield SimpleNamespace(url=base_url_of(server), engine=engine, server=server)
    engine.gate.set()
    server.shutdown()


def post(url, body, client="me"):
    return httpx.post(f"{url}/chat/completions", json=body, headers={"X-Lab-Client": client}, timeout=30)


def test_an_identical_deterministic_request_is_answered_from_the_first_computation(endpoint):
    body = {**BODY, "model": "fake"}
    first, second = post(endpoint.url, body), post(endpoint.url, body, client="someone else")
    assert (first.headers["X-Lab-Reply"], second.headers["X-Lab-Reply"]) == (COMPUTED, CACHED)
    assert first.json() == second.json() and len(endpoint.engine.computed) == 1
    assert post(endpoint.url, {**body, "seed": 1}).headers["X-Lab-Reply"] == CACHED  # greedy: seed or not
    assert post(endpoint.url, {**body, "max_tokens": 33}).headers["X-Lab-Reply"] == COMPUTED
    sampled = {**body, "temperature": 0.8}
    sampled.pop("seed")
    assert [post(endpoint.url, sampled).headers["X-Lab-Reply"] for _ in range(2)] == [COMPUTED, COMPUTED]
    assert len(endpoint.engine.computed) == 4


def test_the_queue_route_says_how_many_requests_are_ahead_of_a_client(endpoint):
    endpoint.engine.gate.clear()
    bodies = [{**BODY, "model": "fake", "max_tokens": 32 + n} for n in range(3)]
    threads = [threading.Thread(target=post, args=(endpoint.url, body, f"browser {n}"), daemon=True)
               for n, body in enumerate(bodies)]
    for n, thread in enumerate(threads):
        thread.start()
        until(lambda: len(endpoint.engine.computed) == 1 and
              httpx.get(f"{endpoint.url}/queue").json()["waiting"] == n, f"browser {n} in line")
    status = httpx.get(f"{endpoint.url}/queue", params={"client": "browser 2"}).json()
    assert status == {"object": "queue", "serving": 1, "waiting": 2, "clients": 2, "client": "browser 2", "ahead": 2}
    backend = Backend(client=None, model="fake", base_url=endpoint.url, embedded=True, client_id="browser 1")
    assert backend.queue()["ahead"] == 1
    endpoint.engine.gate.set()
    for thread in threads:
        thread.join(10)
    assert backend.queue()["ahead"] is None


def test_a_remote_backend_or_a_silent_endpoint_reports_no_line():
    assert Backend(client=None, model="m", base_url="http://127.0.0.1:9/v1").queue() is None
    assert Backend(client=None, model="m", base_url="http://127.0.0.1:9/v1", embedded=True, client_id="x").queue() is None


class FakeQueueBackend:
    embedded = True

    def __init__(self, answer):
        self.answer = answer

    def queue(self):
        return self.answer


@pytest.mark.parametrize("answer, text", [
    ({"ahead": 5, "waiting": 8, "serving": 1}, "waiting: 5 requests ahead of this run's on the shared endpoint (9 in line)"),
    ({"ahead": 1, "waiting": 1, "serving": 1}, "waiting: 1 request ahead of this run's on the shared endpoint (2 in line)"),
    ({"ahead": 0, "waiting": 3, "serving": 1}, None),     # being answered now
    ({"ahead": None, "waiting": 0, "serving": 0}, None),  # between two requests
    (None, None),                                         # an endpoint with no line
])
def test_a_running_job_says_where_its_run_stands_in_line(answer, text):
    job = Job(id="j", total=12, backend=FakeQueueBackend(answer))
    assert job.waiting_text() == text
    job.ended = job.started
    assert job.waiting_text() is None  # an ended run waits for nothing


# ---------------------------------------------------------------- time-outs, and resuming

def test_a_time_out_error_names_the_time_out_and_how_to_raise_it():
    backend = Backend(client=SimpleNamespace(timeout=httpx.Timeout(42.0)), model="m", base_url="http://h/v1",
                      embedded=True)
    error = explain(openai.APITimeoutError(request=httpx.Request("POST", "http://h/v1")), backend)
    assert "time-out of 42 s" in str(error) and "LAB_TIMEOUT" in str(error) and "LAB_TIMEOUT=84" in str(error)
    assert "busy answering other requests" in str(error)


def test_a_run_whose_request_outwaits_the_time_out_fails_cleanly_and_resumes(endpoint, tmp_path):
    trials = plan(SUITE, Settings(), "description", ["clear"], cases=3)
    engine = endpoint.engine
    store = Store(tmp_path / "runs.sqlite")

    original = engine.complete

    def slow_third(request, should_stop=None):
        if len(engine.computed) == 2:
            engine.gate.clear()
        return original(request, should_stop)

    engine.complete = slow_third
    impatient = connect(endpoint.url, "fake", timeout=0.5, max_retries=0)
    run_id = run_experiment(trials, impatient, store)
    run = store.run(run_id)
    assert run["status"] == "failed"
    assert "time-out of 0.5 s" in run["error"] and "LAB_TIMEOUT" in run["error"]
    kept = store.trials(run_id, full=True)
    assert len(kept) == 2 and all(json.loads(reply)["choices"] for reply in kept["reply"])  # whole rows only
    engine.gate.set()
    resumed = store.run(run_experiment(trials, connect(endpoint.url, "fake", max_retries=0), store))
    rows = store.trials(resumed["id"])
    assert resumed["status"] == "finished" and len(rows) == 3
    assert sorted(rows["cached"].astype(bool)) == [False, True, True]  # the two done trials were read back
    with pytest.raises(LabError, match="time-out of 0.5 s"):
        engine.gate.clear()
        impatient.chat(messages=[{"role": "user", "content": "again"}], seed=99)


# ---------------------------------------------------------------- a burst of connections

def test_a_room_sending_at_once_is_held_by_the_kernel_until_the_server_accepts():
    """Sixteen browsers that send their next request at the same moment while the server is busy
    elsewhere: every connection is held until it is accepted. The server here never accepts, so
    what completes is what its listen queue holds (socketserver's default, 5, held 6 of 32)."""
    import socket

    server = make_server(engine=SimpleNamespace(models={}))
    try:
        host, port = server.server_address[:2]
        connections, held = [], 0
        for _ in range(32):
            client = socket.socket()
            client.settimeout(2)
            try:
                client.connect((host, port))
                held += 1
            except OSError:  # timed out: the kernel dropped the connection attempt
                pass
            connections.append(client)
        assert held == 32
    finally:
        for client in connections:
            client.close()
        server.server_close()
