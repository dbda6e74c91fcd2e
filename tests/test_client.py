"""The client factory: settings, capture with redaction, and one clear error per failure."""

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from toolkit.client import connect
from toolkit.lab_error import LabError

SECRET = "sk-test-secret-123456"
OK_REPLY = {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


class QuietHandler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(handler: type[BaseHTTPRequestHandler]) -> tuple[ThreadingHTTPServer, str]:
    """Serve ``handler`` on a free loopback port in a background thread; return it and its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/v1"


class StubEndpoint:
    """A local endpoint that answers every request with a fixed status and body."""

    def __init__(self):
        self.status, self.body, self.hits = 200, OK_REPLY, 0
        stub = self

        class Handler(QuietHandler):
            def do_POST(self):
                stub.hits += 1
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                data = json.dumps(stub.body).encode()
                self.send_response(stub.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server, self.url = serve(Handler)


@pytest.fixture
def stub():
    endpoint = StubEndpoint()
    yield endpoint
    endpoint.server.shutdown()


def ask(backend):
    return backend.chat(messages=[{"role": "user", "content": "hi"}])


def test_remote_backend_from_arguments_and_capture_redacts_the_key(stub):
    backend = connect(stub.url, "m", SECRET, capture=True, max_retries=0)
    assert ask(backend).choices[0].message.content == "hi"
    exchange = backend.last_exchange()
    assert exchange.request["messages"][0]["content"] == "hi" and exchange.request["model"] == "m"
    assert exchange.response["choices"][0]["message"]["content"] == "hi"
    assert exchange.status == 200
    assert SECRET not in json.dumps(exchange.__dict__, default=str)


def test_settings_come_from_the_environment(stub, monkeypatch):
    monkeypatch.setenv("LAB_BASE_URL", stub.url)
    monkeypatch.setenv("LAB_MODEL", "env-model")
    monkeypatch.setenv("LAB_API_KEY", SECRET)
    backend = connect(max_retries=0)
    assert (backend.base_url, backend.model, backend.embedded) == (stub.url, "env-model", False)
    assert "env-model" in backend.label


def test_missing_model_name_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("LAB_MODEL", raising=False)
    with pytest.raises(LabError, match="LAB_MODEL"):
        connect("http://127.0.0.1:9/v1")


def test_unreachable_endpoint_names_it():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    backend = connect(f"http://127.0.0.1:{port}/v1", "m", "k", max_retries=0, timeout=5)
    with pytest.raises(LabError) as caught:
        ask(backend)
    assert f"127.0.0.1:{port}" in str(caught.value) and "Cannot reach" in str(caught.value)
    assert "Traceback" not in str(caught.value)


@pytest.mark.parametrize("status, words", [
    (401, "refused the API key"),
    (404, "does not know the model"),
    (429, "rate-limiting"),
    (500, "server error"),
    (400, "rejected the request"),
    (403, "may not use m (403)"),
    (418, "answered with HTTP 418: upstream says no"),
    (503, "server error (503)"),
])
def test_http_failures_become_one_clear_error(stub, status, words):
    stub.status, stub.body = status, {"error": {"message": "upstream says no", "type": "x"}}
    backend = connect(stub.url, "m", SECRET, max_retries=0)
    with pytest.raises(LabError) as caught:
        ask(backend)
    message = str(caught.value)
    assert words in message and stub.url in message
    assert SECRET not in message


def test_retries_are_a_setting(stub):
    stub.status, stub.body = 500, {"error": {"message": "boom"}}
    backend = connect(stub.url, "m", "k", max_retries=2)
    with pytest.raises(LabError):
        ask(backend)
    assert stub.hits == 3  # the first try and two retries


class SlowStream:
    """A local endpoint that streams two server-sent events with a pause between them."""

    def __init__(self):
        self.second_may_go = threading.Event()
        stream = self

        class Handler(QuietHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                for text, finish in (("Hel", None), ("lo", "stop")):
                    chunk = {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "m",
                             "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": finish}]}
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                    stream.second_may_go.wait(10)
                self.wfile.write(b"data: [DONE]\n\n")

        self.server, self.url = serve(Handler)


def test_capture_passes_a_stream_on_as_it_arrives_and_records_it_at_the_end():
    endpoint = SlowStream()
    try:
        backend = connect(endpoint.url, "m", SECRET, capture=True, max_retries=0, timeout=20)
        stream = backend.chat(messages=[{"role": "user", "content": "hi"}], stream=True)
        # The first chunk arrives while the server is still holding back the second.
        assert next(iter(stream)).choices[0].delta.content == "Hel"
        assert backend.last_exchange().response is None
        endpoint.second_may_go.set()
        assert [c.choices[0].delta.content for c in stream] == ["lo"]
        recorded = backend.last_exchange().response
        assert isinstance(recorded, str) and recorded.count("data: ") == 3 and recorded.endswith("[DONE]\n\n")
    finally:
        endpoint.second_may_go.set()
        endpoint.server.shutdown()


def test_hide_key_blanks_every_copy_of_a_real_key_only():
    from toolkit.client import hide_key

    assert hide_key('{"k": "sk-abc123", "again": "sk-abc123"}', "sk-abc123") == '{"k": "***", "again": "***"}'
    assert hide_key("the sun", "sun") == "the sun"  # a placeholder key would blank ordinary words
    assert hide_key("text", None) == "text"
