"""Experiments over real HTTP: a local fake endpoint (rate limits, outages, keys) through the
openai client (whose retries are the only ones), the command line end to end, and three
trials on the embedded model."""
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pandas as pd
import pytest

from toolkit.bench.experiment import run_experiment, send
from toolkit.bench.experiment_cli import main
from toolkit.bench.store import Store
from toolkit.bench.suite import load_suite
from toolkit.bench.trials import Settings, plan
from toolkit.client import connect
from toolkit.lab_error import LabError

SUITE = load_suite()
SECRET = "sk-test-do-not-store-4242"


class FakeEndpoint:
    """``/v1/chat/completions`` on 127.0.0.1 that calls the first offered tool with no
    arguments (or answers in text), after ``delay`` seconds; the first ``refuse`` requests
    get HTTP 429."""

    def __init__(self, refuse: int = 0, delay: float = 0.0):
        self.refuse, self.delay = refuse, delay
        self.bodies: list[dict] = []
        self.headers: list[dict] = []
        self.lock = threading.Lock()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with endpoint.lock:
                    endpoint.bodies.append(body)
                    endpoint.headers.append({k.lower(): v for k, v in self.headers.items()})
                    refused = len(endpoint.bodies) <= endpoint.refuse
                if refused:
                    self._send(429, {"error": {"message": "slow down", "type": "rate_limit"}},
                               {"Retry-After": "0"})
                    return
                time.sleep(endpoint.delay)
                self._send(200, endpoint.reply(body))

            def _send(self, status, payload, headers=None):
                data = json.dumps(payload).encode()
                self.send_response(status)
                for name, value in {"Content-Type": "application/json", **(headers or {})}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @staticmethod
    def reply(body: dict) -> dict:
        message = {"role": "assistant", "content": "No tool fits."}
        if body.get("tools"):
            name = body["tools"][0]["function"]["name"]
            message = {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": name, "arguments": "{}"}}]}
        return {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body["model"],
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def endpoint():
    started = []

    def start(**options):
        started.append(FakeEndpoint(**options))
        return started[-1]
    yield start
    for server in started:
        server.stop()


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "lab.sqlite") as opened:
        yield opened


def test_concurrent_run_backs_off_on_429_and_completes(endpoint, store):
    server = endpoint(refuse=1, delay=0.05)
    backend = connect(server.url, "fake-model", SECRET, max_retries=2)
    trials = plan(SUITE, Settings(), cases=8)
    run_id = run_experiment(trials, backend, store, concurrency=4)
    assert store.run(run_id)["status"] == "finished"
    assert len(store.trials(run_id)) == 8 and len(server.bodies) == 9
    assert {body["model"] for body in server.bodies} == {"fake-model"}


def test_a_429_is_retried_once_by_the_client_and_the_trial_succeeds(endpoint, store):
    server = endpoint(refuse=1)
    backend = connect(server.url, "fake-model", SECRET, max_retries=2)
    run_id = run_experiment(plan(SUITE, Settings(), cases=1), backend, store)
    assert store.run(run_id)["status"] == "finished" and len(store.trials(run_id)) == 1
    assert len(server.bodies) == 2  # the refused request and its one retry, nothing more


def test_a_429_that_outlasts_the_client_retries_is_a_lab_error(endpoint):
    server = endpoint(refuse=1_000)
    backend = connect(server.url, "fake-model", SECRET, max_retries=2)
    body = {"model": "fake-model", "messages": [{"role": "user", "content": "Weather in Oslo?"}]}
    with pytest.raises(LabError, match="429"):
        send(backend, body)
    assert len(server.bodies) == 2 + 1  # max_retries + 1: no second layer of retries


def test_without_retries_a_429_fails_the_run_with_a_readable_error(endpoint, store):
    server = endpoint(refuse=1)
    backend = connect(server.url, "fake-model", SECRET, max_retries=0)
    run_id = run_experiment(plan(SUITE, Settings(), cases=3), backend, store)
    run = store.run(run_id)
    assert run["status"] == "failed" and "429" in run["error"]
    assert len(server.bodies) == 1


def test_an_endpoint_that_goes_away_fails_the_run_and_keeps_what_finished(endpoint, store):
    server = endpoint()
    backend = connect(server.url, "fake-model", SECRET, max_retries=0, timeout=5)

    def progress(done, total, row):
        if done == 2:
            server.stop()
    run_id = run_experiment(plan(SUITE, Settings(), cases=5), backend, store, progress=progress)
    run = store.run(run_id)
    assert run["status"] == "failed" and "Cannot reach" in run["error"]
    assert len(store.trials(run_id)) == 2


def test_the_key_and_headers_never_reach_the_database(endpoint, store):
    server = endpoint()
    backend = connect(server.url, "fake-model", SECRET)
    run_id = run_experiment(plan(SUITE, Settings(), cases=2), backend, store)
    assert server.headers[0]["authorization"] == f"Bearer {SECRET}"  # it was sent...
    store.close()
    stored = b"".join(path.read_bytes() for path in store.path.parent.glob("lab.sqlite*"))
    assert SECRET.encode() not in stored and b"Bearer" not in stored  # ...and not kept
    with Store(store.path) as reopened:
        trial = reopened.trial(int(reopened.trials(run_id)["id"].iloc[0]))
    assert trial["request"] in server.bodies


def test_cli_runs_against_an_endpoint_and_writes_the_csv(endpoint, tmp_path, capsys, monkeypatch):
    server = endpoint()
    monkeypatch.setenv("LAB_API_KEY", SECRET)
    csv = tmp_path / "out.csv"
    code = main(["--factor", "description", "--values", "clear", "vague", "--cases", "3", "--repeats", "2",
                 "--db", str(tmp_path / "lab.sqlite"), "--csv", str(csv),
                 "--base-url", server.url, "--model", "fake-model", "--concurrency", "2"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert len(server.bodies) == 12 and "12/12" in err
    assert "finished" in out and "by description" in out and "clear" in out and "vague" in out
    assert len(pd.read_csv(csv)) == 12


@pytest.mark.embedded
def test_three_trials_on_the_embedded_model(tmp_path):
    backend = connect(timeout=600)  # slow only when the machine is busy
    trials = plan(SUITE, Settings(max_tokens=48), cases=3)
    with Store(tmp_path / "lab.sqlite") as store:
        run_id = run_experiment(trials, backend, store)
        frame = store.trials(run_id)
        assert store.run(run_id)["status"] == "finished"
        assert len(frame) == 3 and set(frame["case_id"]) == {t.case_id for t in trials}
        assert frame["latency_s"].gt(0).all() and frame["prompt_tokens"].gt(0).all()
        assert frame["chosen_tools"].map(lambda name: isinstance(name, str) and name != "").all()
        trial = store.trial(int(frame["id"].iloc[0]))
        assert trial["reply"]["model"] == "SmolLM2-135M-Instruct" and trial["request"]["tools"]
