"""An OpenAI-compatible HTTP endpoint for the embedded model.

    python -m toolkit.engine.serve --port 8765
    curl http://127.0.0.1:8765/v1/chat/completions -H 'Content-Type: application/json' \\
         -d '{"model": "SmolLM2-135M-Instruct", "messages": [{"role": "user", "content": "Hi"}]}'
    curl http://127.0.0.1:8765/v1/responses -H 'Content-Type: application/json' \\
         -d '{"model": "SmolLM2-135M-Instruct", "input": "Hi"}'

It answers chat completions (``POST /v1/chat/completions``) and OpenAI's Responses API
(``POST /v1/responses``, translated to the same engine by ``toolkit.engine.responses``).

The lab talks to the embedded model over HTTP like to any other endpoint, so every lesson can
show the real request body and reply. ``ensure_server()`` starts one server per process on a
free loopback port (in a background thread) and stops it at exit.

The model answers one request at a time. The others wait in a line that is fair across clients
(``toolkit.engine.request_queue``: each client's requests take turns with everyone else's, none
is refused or dropped), and ``GET /v1/queue?client=ID`` says how many requests are ahead of a
client's own; a client names itself in the ``X-Lab-Client`` header (the lab's backends do).
Identical deterministic requests are computed once (``toolkit.engine.shared_replies``); the
``X-Lab-Reply`` header says whether a reply was computed, joined or cached. A client that closes
its connection (it timed out, or the learner pressed stop) leaves the line, or ends its
generation at the next token, so it does not hold up the requests queued behind it.
"""

from __future__ import annotations

import argparse
import atexit
import json
import logging
import select
import socket
import threading
import time
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from toolkit.engine import Engine, RequestError, responses
from toolkit.engine.request_queue import ClientGone, RequestQueue, prompt_text
from toolkit.engine.shared_replies import SharedReplies, sharing_key

log = logging.getLogger("toolkit.engine.serve")

_server: ThreadingHTTPServer | None = None
_server_lock = threading.Lock()
CLIENT_HEADER = "X-Lab-Client"  # who sent a request, for the fair line and its status


def _error_body(message: str, kind: str, param: str | None = None, code: str | None = None) -> dict:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


class _Handler(BaseHTTPRequestHandler):
    server_version = "ToolCallingLab/1"
    engine: Engine  # set on the subclass made by make_server
    line: RequestQueue
    shared: SharedReplies

    def log_message(self, format, *args):  # quiet by default; the lab has its own trace
        log.debug("%s - " + format, self.address_string(), *args)

    def _send_json(self, status: int, body: dict, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _client_gone(self) -> bool:
        """True once the client has closed its end of the connection."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            # The request was read in full, so a readable socket with nothing in it means EOF.
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def _client(self) -> str:
        return self.headers.get(CLIENT_HEADER) or self.client_address[0]

    def do_GET(self):
        url = urlsplit(self.path)
        if url.path.rstrip("/") in ("/v1/queue", "/queue"):
            client = (parse_qs(url.query).get("client") or [None])[0]
            self._send_json(200, self.line.status(client))
        elif self.path.rstrip("/") in ("/v1/models", "/models"):
            models = [{"id": name, "object": "model", "created": 0, "owned_by": "toolkit"} for name in self.engine.models]
            self._send_json(200, {"object": "list", "data": models})
        else:
            self._send_json(404, _error_body(f"unknown path {self.path}", "not_found_error"))

    def do_POST(self):
        path = self.path.rstrip("/")
        if path in ("/v1/chat/completions", "/chat/completions"):
            api, answer, stream, frame = "chat", self.engine.complete, self.engine.stream, _chat_event
        elif path in ("/v1/responses", "/responses"):
            api, answer, stream = "responses", partial(responses.create, self.engine), partial(responses.stream, self.engine)
            frame = _responses_event
        else:
            self._send_json(404, _error_body(f"unknown path {self.path}", "not_found_error"))
            return
        try:
            length = int(self.headers.get("Content-Length") or 0)
            request = json.loads(self.rfile.read(length) or b"null")
            if not isinstance(request, dict):
                raise RequestError("the request body must be a JSON object")
            with self.line.visit(self._client(), prompt_text(request)) as ticket:
                if request.get("stream"):
                    with self.line.turn(ticket, self._client_gone):  # one generation at a time
                        self._stream(stream(request, self._client_gone), frame)
                    return

                def compute() -> dict | None:
                    with self.line.turn(ticket, self._client_gone):
                        reply = answer(request, self._client_gone)
                    return None if self._client_gone() else reply  # cut short: not to be shared

                reply, how = self.shared.answer(sharing_key(api, request), ticket, compute)
                if reply is not None:
                    self._send_json(200, reply, {"X-Lab-Reply": how})
        except ClientGone:
            log.info("client went away while its request waited in line")
        except (RequestError, json.JSONDecodeError, UnicodeDecodeError, ValueError) as error:
            param = getattr(error, "param", None)
            status = getattr(error, "status", 400)  # 404 for a model this endpoint does not serve
            self._send_json(status, _error_body(str(error), "invalid_request_error", param, getattr(error, "code", None)))
        except (BrokenPipeError, ConnectionResetError):
            log.info("client went away before the reply was sent")
        except Exception as error:  # the server must survive anything and serve the next request
            log.exception("internal error while answering a request")
            self._send_json(500, _error_body(f"internal error: {type(error).__name__}: {error}", "server_error"))

    def _stream(self, chunks, frame) -> None:
        first = next(chunks)  # validation errors surface here, before any header is sent
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for chunk in _chain(first, chunks):
            self.wfile.write(frame(chunk))
            self.wfile.flush()
        if frame is _chat_event:  # chat streams end with a sentinel; Responses streams with their last event
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
        self.close_connection = True


def _chat_event(chunk: dict) -> bytes:
    return f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n".encode("utf-8")


def _responses_event(event: dict) -> bytes:
    """Responses events name their type on the ``event:`` line too, as OpenAI sends them."""
    return f"event: {event['type']}\ndata: {json.dumps(event, ensure_ascii=False)}\n\n".encode("utf-8")


def _chain(first, rest):
    yield first
    yield from rest


class _RoomServer(ThreadingHTTPServer):
    daemon_threads = True
    # How many connections the kernel holds until the server accepts them. socketserver's
    # default is 5: when a room's browsers all send their next request at the same moment
    # while the accepting thread waits for the interpreter, the sixth connection on is dropped
    # and its client has to retry.
    request_queue_size = 128


def make_server(port: int = 0, host: str = "127.0.0.1", engine: Engine | None = None) -> ThreadingHTTPServer:
    """A server bound to ``host:port`` (port 0 = any free port), not yet serving."""
    handler = type("Handler", (_Handler,), {"engine": engine or Engine(), "line": RequestQueue(),
                                            "shared": SharedReplies()})
    return _RoomServer((host, port), handler)


def base_url_of(server: ThreadingHTTPServer) -> str:
    host, port = server.server_address[:2]
    return f"http://{host}:{port}/v1"


def ensure_server() -> str:
    """Start the embedded endpoint once per process; return its base URL."""
    global _server
    with _server_lock:
        if _server is None:
            server = make_server()
            threading.Thread(target=server.serve_forever, name="embedded-endpoint", daemon=True).start()
            atexit.register(server.shutdown)
            _server = server
        return base_url_of(_server)


def forget_shared_replies() -> None:
    """Forget the replies the embedded endpoint remembers, as if it had just started."""
    if _server is not None:
        _server.RequestHandlerClass.shared.forget()


def embedded_engine() -> Engine:
    """The engine behind the endpoint ``ensure_server()`` runs, for code that calls it directly."""
    ensure_server()
    return _server.RequestHandlerClass.engine


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve the embedded model as an OpenAI-compatible endpoint.")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    started = time.perf_counter()
    server = make_server(args.port, args.host)
    print(f"Embedded model loaded in {time.perf_counter() - started:.1f} s; serving {base_url_of(server)}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
