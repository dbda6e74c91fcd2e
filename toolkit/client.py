"""One factory for every backend.

The embedded model and a remote endpoint (OpenAI, DeepSeek, DashScope, Ollama, vLLM, ...) go
through the very same code: the official ``openai`` client pointed at a base URL. Only the
settings differ, and they come from arguments or from the environment:

    LAB_BASE_URL    e.g. https://api.deepseek.com/v1   (unset: the embedded model)
    LAB_MODEL       e.g. deepseek-chat
    LAB_API_KEY     the key (OPENAI_API_KEY is read too)
    LAB_TIMEOUT     seconds per request (default 120)
    LAB_MAX_RETRIES retries on 429, 5xx and time-outs, with exponential back-off (default 2)

Nothing else in the lab retries a model request (experiments and the loop leave it to the
client), so one is sent at most LAB_MAX_RETRIES + 1 times.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
import openai

EMBEDDED_MODEL = "SmolLM2-135M-Instruct"


class LabError(Exception):
    """An error a learner can act on: what went wrong, where, and what to do."""


@dataclass
class Exchange:
    """One HTTP round trip as it was on the wire (the key and Authorization header redacted)."""

    method: str
    url: str
    request: Any
    status: int | None = None
    response: Any = None
    seconds: float = 0.0


class _CapturingTransport(httpx.BaseTransport):
    """Records request and reply bodies, so lessons and the app can show the real JSON."""

    def __init__(self, inner: httpx.BaseTransport, log: list[Exchange], secret: str | None):
        self.inner, self.log, self.secret = inner, log, secret

    def _redact(self, text: str) -> str:
        return text.replace(self.secret, "***") if self.secret and len(self.secret) > 3 else text

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


@dataclass
class Backend:
    """A ready client and the model to ask. ``exchanges`` fills only when capture is on."""

    client: Any
    model: str
    base_url: str
    embedded: bool = False
    exchanges: list[Exchange] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"embedded {self.model}" if self.embedded else f"{self.model} at {self.base_url}"

    def chat(self, **request: Any):
        """``chat.completions.create`` with this backend's model; failures become ``LabError``."""
        request.setdefault("model", self.model)
        try:
            return self.client.chat.completions.create(**request)
        except openai.OpenAIError as error:
            raise explain(error, self) from error

    def last_exchange(self) -> Exchange | None:
        return self.exchanges[-1] if self.exchanges else None


def connect(
    base_url: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
    *,
    timeout: float | None = None,
    max_retries: int | None = None,
    capture: bool = False,
) -> Backend:
    """Make the client for a backend: arguments first, then ``LAB_*`` variables, then the
    embedded model (started on first use, once per process)."""
    base_url = base_url or os.environ.get("LAB_BASE_URL") or None
    timeout = float(timeout if timeout is not None else os.environ.get("LAB_TIMEOUT", 120))
    max_retries = int(max_retries if max_retries is not None else os.environ.get("LAB_MAX_RETRIES", 2))
    embedded = base_url is None
    if embedded:
        from toolkit.serve import ensure_server

        from toolkit.engine import embedded_models

        model = model or EMBEDDED_MODEL
        if model not in (served := embedded_models()):
            raise LabError(f"The embedded endpoint serves {' and '.join(served)}, not {model!r}.")
        base_url, api_key = ensure_server(), "no-key-needed"
    else:
        model = model or os.environ.get("LAB_MODEL")
        api_key = api_key or os.environ.get("LAB_API_KEY") or os.environ.get("OPENAI_API_KEY")
        if not model:
            raise LabError(f"No model name for {base_url}: set LAB_MODEL or pass model=... .")
        if not api_key:
            # Local servers (Ollama, vLLM, llama.cpp) accept any key; the client insists on one.
            api_key = "no-key-given"
    exchanges: list[Exchange] = []
    http_client = None
    if capture:
        http_client = httpx.Client(transport=_CapturingTransport(httpx.HTTPTransport(), exchanges, api_key))
    client = openai.OpenAI(
        base_url=base_url, api_key=api_key, timeout=timeout, max_retries=max_retries, http_client=http_client
    )
    return Backend(client=client, model=model, base_url=base_url, embedded=embedded, exchanges=exchanges)


def explain(error: Exception, backend: Backend | None = None) -> LabError:
    """Turn an ``openai`` exception into one sentence that names the endpoint and what to do."""
    where = backend.base_url if backend else "the endpoint"
    model = backend.model if backend else "the model"
    detail = _server_message(error)
    if isinstance(error, openai.APITimeoutError):
        text = f"{where} did not answer in time. Raise the time-out (LAB_TIMEOUT) or try a smaller request."
    elif isinstance(error, openai.APIConnectionError):
        text = f"Cannot reach {where}. Check the base URL and that the server is running."
    elif isinstance(error, openai.AuthenticationError):
        text = f"{where} refused the API key (401). Check LAB_API_KEY or the key field."
    elif isinstance(error, openai.PermissionDeniedError):
        text = f"{where} says this key may not use {model} (403)."
    elif isinstance(error, openai.NotFoundError):
        text = f"{where} does not know the model {model!r} or the path (404). Check LAB_MODEL and the base URL (it usually ends in /v1)."
    elif isinstance(error, openai.RateLimitError):
        text = f"{where} is rate-limiting this key (429). Wait a little, or lower the number of requests at once."
    elif isinstance(error, openai.BadRequestError):
        text = f"{where} rejected the request (400): {detail or 'no reason given'}"
    elif isinstance(error, openai.InternalServerError):
        text = f"{where} failed with a server error ({getattr(error, 'status_code', '5xx')}). Try again later."
    elif isinstance(error, openai.APIStatusError):
        text = f"{where} answered with HTTP {error.status_code}: {detail or 'no reason given'}"
    else:
        text = f"The request to {where} failed: {error}"
    if detail and "rejected" not in text and "answered" not in text:
        text += f" (server said: {detail})"
    return LabError(text)


def _server_message(error: Exception) -> str:
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            return str(inner.get("message") or "")[:300]
        return str(inner)[:300]
    return ""
