"""One factory for every backend.

The embedded model and a remote endpoint (OpenAI, DeepSeek, DashScope, Ollama, vLLM, ...) go
through the very same code: the official ``openai`` client pointed at a base URL. Only the
settings differ, and they come from arguments or from the environment:

    LAB_BASE_URL    e.g. https://api.deepseek.com/v1   (unset: the embedded model)
    LAB_MODEL       e.g. deepseek-chat
    LAB_API_KEY     the key (OPENAI_API_KEY is read too)
    LAB_TIMEOUT     seconds per request (default 120)
    LAB_MAX_RETRIES retries on 429, 5xx and time-outs, with exponential back-off (default 2)
    LAB_API         "chat" (default): POST /chat/completions; "responses": OpenAI's Responses
                    API, POST /responses (the embedded endpoint serves both; among remote
                    ones, OpenAI does, many compatible servers do not)

Whichever API is on the wire, the lab's code sees one shape: ``backend.chat(...)`` and
``backend.client.chat.completions.create(...)`` take chat-completions arguments and return a
chat completion. With ``api="responses"`` the client translates both ways
(``toolkit.responses_api``), and ``capture=True`` records the real /responses JSON.

Nothing else in the lab retries a model request (experiments and the loop leave it to the
client), so one is sent at most LAB_MAX_RETRIES + 1 times.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import httpx
import openai

from toolkit import responses_api
from toolkit.engine import BASE_MODEL
from toolkit.lab_error import LabError

EMBEDDED_MODEL = BASE_MODEL  # the model connect() asks for when none is named
APIS = ("chat", "responses")


@dataclass
class Exchange:
    """One HTTP round trip as it was on the wire (the key and Authorization header redacted)."""

    method: str
    url: str
    request: Any
    status: int | None = None
    response: Any = None
    seconds: float = 0.0


def hide_key(text: str, key: str | None) -> str:
    """``text`` with every copy of ``key`` blanked: the one place a key is hidden, in captured
    exchanges and in stored trials alike. Keys of three characters or fewer are placeholders
    (and would blank ordinary words), so they are left alone."""
    return text.replace(key, "***") if key and len(key) > 3 else text


class _CapturingTransport(httpx.BaseTransport):
    """Records request and reply bodies, so lessons and the app can show the real JSON."""

    def __init__(self, inner: httpx.BaseTransport, log: list[Exchange], secret: str | None):
        self.inner, self.log, self.secret = inner, log, secret

    def _redact(self, text: str) -> str:
        return hide_key(text, self.secret)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        started = time.perf_counter()
        body = self._redact(request.content.decode("utf-8", "replace"))
        exchange = Exchange(request.method, self._redact(str(request.url)), _json_or_text(body))
        self.log.append(exchange)
        response = self.inner.handle_request(request)
        exchange.status = response.status_code

        def record(content: bytes) -> None:
            exchange.response = _json_or_text(self._redact(content.decode("utf-8", "replace")))
            exchange.seconds = time.perf_counter() - started

        if response.headers.get("content-type", "").startswith("text/event-stream"):
            # A stream is passed on chunk by chunk as it arrives, and recorded (as the raw
            # server-sent-events text) once it ends: capture must not hold a stream back.
            return httpx.Response(response.status_code, headers=response.headers, request=request,
                                  extensions=response.extensions, stream=_Recorded(response.stream, record))
        # Reading the body here is safe: the openai client reads it again from memory.
        response.read()
        record(response.content)
        return response


class _Recorded(httpx.SyncByteStream):
    """Passes a byte stream through and hands all of it to ``done`` at the end, or whatever
    had arrived when the reader closed it early."""

    def __init__(self, inner: httpx.SyncByteStream, done):
        self.inner, self.done, self.parts, self.recorded = inner, done, [], False

    def _finish(self) -> None:
        if not self.recorded:
            self.recorded = True
            self.done(b"".join(self.parts))

    def __iter__(self):
        for part in self.inner:
            self.parts.append(part)
            yield part
        self._finish()

    def close(self) -> None:
        self._finish()
        self.inner.close()


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


class ResponsesClient:
    """An ``openai.OpenAI`` client whose ``chat.completions.create`` goes over the Responses API.

    It takes chat-completions arguments, sends ``POST /responses`` and returns a
    ``ChatCompletion`` (a stream of ``ChatCompletionChunk`` with ``stream=True``), so code
    written for chat completions runs unchanged. Everything else (``responses``, ``models``,
    ``api_key``, ...) is the wrapped client's own.
    """

    def __init__(self, client: openai.OpenAI, send_seed: bool = False):
        self.openai = client
        self.send_seed = send_seed  # only the embedded endpoint takes a seed on /responses
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self.create_chat))

    def __getattr__(self, name: str) -> Any:
        if name == "openai":  # not set yet (a copy being made): no wrapped client to ask
            raise AttributeError(name)
        return getattr(self.openai, name)

    def create_chat(self, **request: Any) -> Any:
        try:
            body = responses_api.responses_request(request, self.send_seed)
        except ValueError as error:
            raise LabError(f"Cannot send this request over the Responses API: {error}.") from None
        reply = self.openai.responses.create(**body)
        if request.get("stream"):
            return responses_api.chunks_from_events(
                reply, include_usage=bool((request.get("stream_options") or {}).get("include_usage")))
        return responses_api.completion_from_response(reply)


@dataclass
class Backend:
    """A ready client and the model to ask. ``exchanges`` fills only when capture is on.

    ``api`` is the wire API: "chat" or "responses" (then ``client`` is a ``ResponsesClient``).
    """

    client: Any
    model: str
    base_url: str
    embedded: bool = False
    exchanges: list[Exchange] = field(default_factory=list)
    api: str = "chat"
    client_id: str | None = None  # how the embedded endpoint tells this backend's requests apart

    @property
    def timeout_s(self) -> float | None:
        """The client's time-out per request, in seconds."""
        timeout = getattr(self.client, "timeout", None)
        timeout = getattr(timeout, "read", timeout)  # an httpx.Timeout holds one per phase
        return float(timeout) if isinstance(timeout, (int, float)) else None

    @property
    def label(self) -> str:
        where = f"embedded {self.model}" if self.embedded else f"{self.model} at {self.base_url}"
        return f"{where} (Responses API)" if self.api == "responses" else where

    @property
    def api_key(self) -> str | None:
        """The key this backend sends (None where its client has none)."""
        key = getattr(self.client, "api_key", None)
        return key if isinstance(key, str) and key else None

    def chat(self, **request: Any):
        """``chat.completions.create`` with this backend's model; failures become ``LabError``.

        The one place in the toolkit that sends a chat request: the loop, the bench and the app
        all come through here. Retries are the client's own (``connect(max_retries=...)``)."""
        request.setdefault("model", self.model)
        try:
            return self.client.chat.completions.create(**request)
        except openai.OpenAIError as error:
            raise explain(error, self) from error

    def last_exchange(self) -> Exchange | None:
        return self.exchanges[-1] if self.exchanges else None

    def queue(self) -> dict | None:
        """Where this backend's requests stand in the embedded endpoint's line (``GET /queue``):
        ``{"ahead": 5, "waiting": 9, ...}``; None for other endpoints, or if it cannot say."""
        if not self.embedded:
            return None
        try:
            answer = httpx.get(f"{self.base_url.rstrip('/')}/queue", params={"client": self.client_id}, timeout=2)
            return answer.json() if answer.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            return None


def connect(
    base_url: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
    *,
    timeout: float | None = None,
    max_retries: int | None = None,
    capture: bool = False,
    api: str | None = None,
) -> Backend:
    """Make the client for a backend: arguments first, then ``LAB_*`` variables, then the
    embedded model (started on first use, once per process).

    ``api="responses"`` (or ``LAB_API=responses``) sends every request to OpenAI's Responses
    API instead of chat completions; the embedded endpoint always serves it. A remote endpoint
    that does not answers 404, which becomes a ``LabError`` saying so."""
    base_url = base_url or os.environ.get("LAB_BASE_URL") or None
    if base_url is None:
        return connect_embedded(model, timeout=timeout, max_retries=max_retries, capture=capture, api=api)
    model = model or os.environ.get("LAB_MODEL")
    api_key = api_key or os.environ.get("LAB_API_KEY") or os.environ.get("OPENAI_API_KEY")
    if not model:
        raise LabError(f"No model name for {base_url}: set LAB_MODEL or pass model=... .")
    if not api_key:
        # Local servers (Ollama, vLLM, llama.cpp) accept any key; the client insists on one.
        api_key = "no-key-given"
    return _backend(base_url, model, api_key, embedded=False, timeout=timeout, max_retries=max_retries,
                    capture=capture, api=api)


def connect_embedded(model: str | None = None, *, timeout: float | None = None, max_retries: int | None = None,
                     capture: bool = False, api: str | None = None) -> Backend:
    """The embedded endpoint (started on first use), whatever ``LAB_BASE_URL`` says: for a page
    where the learner picked the embedded model while the app was started for another endpoint."""
    from toolkit.engine import embedded_models
    from toolkit.engine.serve import ensure_server

    model = model or EMBEDDED_MODEL
    if model not in (served := embedded_models()):
        raise LabError(f"The embedded endpoint serves {', '.join(served)}, not {model!r}.")
    return _backend(ensure_server(), model, "no-key-needed", embedded=True, timeout=timeout,
                    max_retries=max_retries, capture=capture, api=api)


def _backend(base_url: str, model: str, api_key: str, *, embedded: bool, timeout: float | None,
             max_retries: int | None, capture: bool, api: str | None) -> Backend:
    api = (api or os.environ.get("LAB_API") or "chat").strip().lower()
    if api not in APIS:
        raise LabError(f"Unknown API {api!r}: use 'chat' (chat completions) or 'responses' (the Responses API).")
    timeout = float(timeout if timeout is not None else os.environ.get("LAB_TIMEOUT", 120))
    max_retries = int(max_retries if max_retries is not None else os.environ.get("LAB_MAX_RETRIES", 2))
    exchanges: list[Exchange] = []
    http_client = None
    if capture:
        http_client = httpx.Client(transport=_CapturingTransport(httpx.HTTPTransport(), exchanges, api_key))
    # The embedded endpoint serves its clients in turn and says where each one's requests stand
    # in line (``toolkit.engine.request_queue``); it knows a client by this random id.
    client_id = uuid.uuid4().hex[:16] if embedded else None
    client = openai.OpenAI(
        base_url=base_url, api_key=api_key, timeout=timeout, max_retries=max_retries, http_client=http_client,
        default_headers={"X-Lab-Client": client_id} if client_id else None,
    )
    if api == "responses":
        client = ResponsesClient(client, send_seed=embedded)  # only the embedded endpoint takes a seed there
    return Backend(client=client, model=model, base_url=base_url, embedded=embedded, exchanges=exchanges, api=api,
                   client_id=client_id)


# What each refusal means, in one sentence with what to do; the first class that matches wins,
# so a subclass comes before its parent (every 4xx/5xx error is an APIStatusError).
_SENTENCES: tuple[tuple[type[Exception], str], ...] = (
    (openai.APIConnectionError, "Cannot reach {where}. Check the base URL and that the server is running."),
    (openai.AuthenticationError, "{where} refused the API key (401). Check LAB_API_KEY or the key field."),
    (openai.PermissionDeniedError, "{where} says this key may not use {model} (403)."),
    (openai.NotFoundError, "{where} does not know the model {model!r} or the path (404). Check LAB_MODEL and "
                           "the base URL (it usually ends in /v1)."),
    (openai.RateLimitError, "{where} is rate-limiting this key (429). Wait a little, or lower the number of "
                            "requests at once."),
    (openai.BadRequestError, "{where} rejected the request (400): {detail}"),
    (openai.InternalServerError, "{where} failed with a server error ({status}). Try again later."),
    (openai.APIStatusError, "{where} answered with HTTP {status}: {detail}"),
)


def explain(error: Exception, backend: Backend | None = None) -> LabError:
    """Turn an ``openai`` exception into one sentence that names the endpoint and what to do."""
    where = backend.base_url if backend else "the endpoint"
    model = backend.model if backend else "the model"
    detail = _server_message(error)
    if isinstance(error, openai.APITimeoutError):  # before APIConnectionError, its parent
        text = _timed_out(where, backend)
    elif isinstance(error, openai.NotFoundError) and getattr(backend, "api", "chat") == "responses" \
            and _server_code(error) != "model_not_found":
        text = (f"{where} does not serve the Responses API (POST {where.rstrip('/')}/responses answered 404), "
                f"or does not know the model {model!r}. Use chat completions instead (unset LAB_API, or "
                "api='chat'), or check LAB_MODEL and the base URL.")
    else:
        sentence = next((words for kind, words in _SENTENCES if isinstance(error, kind)),
                        "The request to {where} failed: {error}")
        text = sentence.format(where=where, model=model, detail=detail or "no reason given", error=error,
                               status=getattr(error, "status_code", "5xx"))
    if detail and "rejected" not in text and "answered" not in text:
        text += f" (server said: {detail})"
    return LabError(text)


def _timed_out(where: str, backend: Backend | None) -> str:
    limit = backend.timeout_s if backend else None
    text = f"{where} did not answer " + (f"within the client's time-out of {limit:g} s." if limit else "in time.")
    if getattr(backend, "embedded", False):
        text += " It may be busy answering other requests first."
    example = f", e.g. LAB_TIMEOUT={2 * limit:g}" if limit else ""
    return text + f" Raise the time-out with LAB_TIMEOUT (seconds{example}) or connect(timeout=...), or send a smaller request."


def _server_code(error: Exception) -> str | None:
    body = getattr(error, "body", None)
    inner = body.get("error", body) if isinstance(body, dict) else None
    return inner.get("code") if isinstance(inner, dict) else None


def _server_message(error: Exception) -> str:
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            return str(inner.get("message") or "")[:300]
        return str(inner)[:300]
    return ""
