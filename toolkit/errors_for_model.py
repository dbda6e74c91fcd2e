"""Errors for the model: short, safe text for the model; the full story goes to the log.

When a tool call fails, the model still gets a result to read, because a turn must never
crash on a model's slip or a broken tool. That text is worded by an ``ErrorPolicy`` and
cleaned by ``sanitize``: no traceback, no paths, URLs or secrets. Results that are too long
are cut by ``truncate``. ``toolkit.execution`` uses all three for every call it runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable

from toolkit.schema import ToolArgumentsError

__all__ = ["sanitize", "ErrorPolicy", "truncate",
           "unknown_tool_text", "invalid_arguments_text", "tool_error_text", "timeout_text"]

_TRACEBACK = re.compile(r"Traceback \(most recent call last\).*", re.DOTALL)
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)
_WINDOWS_PATH = re.compile(r"(?<![\w])(?:[A-Za-z]:|\\\\[\w.$-]+)\\[^\s\"'<>|]*")
_UNIX_PATH = re.compile(r"(?<![\w/.:~-])(?:~|\.{1,2})?/(?:[\w.@+-]+/)*[\w.@+-]+/?")
_RELATIVE_FILE = re.compile(r"(?<![\w/])[\w.-]+(?:/[\w.-]+)+\.[A-Za-z]\w{0,5}\b")  # app/conf/db.yaml
_SECRETS = [
    re.compile(r"\bsk-[A-Za-z0-9_-]{6,}"),  # OpenAI-style keys (DeepSeek and DashScope too)
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),  # AWS access key ids
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}\b"),  # GitHub tokens
    re.compile(r"\beyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]*"),  # JSON web tokens
    re.compile(r"(?i)\bbearer\s+[\w.~+/=-]+"),
    re.compile(r"\b(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{32,}\b"),  # long tokens
]
_NAMED_SECRET = re.compile(
    r"(?i)\b((?:api[_-]?key|access[_-]?token|token|secret|password|passwd|pwd)\s*[=:]\s*)"
    # A bare value runs to the next space, less the punctuation that closes the sentence around
    # it: "(api_key=abc)." keeps its ")." while "key=a,b" is still redacted whole.
    r"(\"[^\"]*\"|'[^']*'|\S+?(?=[.,;:)\]}]*(?:\s|$)))")


def sanitize(text: str, secrets: Iterable[str] = (), limit: int = 300) -> str:
    """Make error text safe to show a model: no traceback, no file paths or URLs, nothing that
    looks like a key or password, one line, at most ``limit`` characters.

    A model needs to know *that* something failed and roughly why, to retry or to tell the
    user. It must not learn the server's layout or its credentials: the text may be repeated
    to the user, stored in a provider's logs, or steered by a prompt injection.
    """
    text = _without_traceback(str(text))
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "<redacted>")
    text = _NAMED_SECRET.sub(r"\1<redacted>", text)
    for pattern in _SECRETS:
        text = pattern.sub("<redacted>", text)
    text = _URL.sub("<url>", text)
    text = _WINDOWS_PATH.sub("<path>", text)
    text = _UNIX_PATH.sub("<path>", text)
    text = _RELATIVE_FILE.sub("<path>", text)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _without_traceback(text: str) -> str:
    """Drop a traceback but keep its last line ("ValueError: ..."), which says what happened."""
    found = _TRACEBACK.search(text)
    if not found:
        return text
    unindented = [line for line in found.group().splitlines()[1:]
                  if line.strip() and not line[0].isspace()]
    return text[: found.start()] + (unindented[-1] if unindented else "")


def _first_line(error: BaseException, limit: int = 160) -> str:
    message = (str(error).strip().splitlines() or [""])[0]
    return message if len(message) <= limit else message[: limit - 1] + "…"


def unknown_tool_text(name: str, offered: list[str]) -> str:
    available = ", ".join(offered) or "none"
    return (f"Error: there is no tool named {name[:64]!r}. Available tools: {available}. "
            "Call one of them, or answer without a tool.")


def invalid_arguments_text(error: ToolArgumentsError) -> str:
    problems = "; ".join(error.problems[:5])
    return (f"Error: invalid arguments for {error.tool_name!r}: {problems}. "
            "Fix the arguments and call the tool again.")


def tool_error_text(error: BaseException, name: str) -> str:
    return (f"Error: the tool {name!r} failed ({type(error).__name__}: {_first_line(error)}). "
            "Try other arguments, or tell the user it did not work.")


def timeout_text(name: str, seconds: float) -> str:
    return (f"Error: the tool {name!r} did not finish within {seconds:g} seconds. "
            "Try again later, or answer without it.")


@dataclass
class ErrorPolicy:
    """How each kind of failure is worded for the model. Replace any strategy you like, e.g.
    ``ErrorPolicy(tool_error=lambda error, name: "Tool execution failed.")``.

    Whatever a strategy returns then goes through ``sanitize`` (with the backend's key among
    the secrets); set ``sanitize=None`` only to demonstrate why it exists. A call to a tool
    that is not offered this turn gets the same text as a tool that does not exist, so the
    model cannot learn which tools other users have.
    """

    unknown_tool: Callable[[str, list[str]], str] = unknown_tool_text
    invalid_arguments: Callable[[ToolArgumentsError], str] = invalid_arguments_text
    tool_error: Callable[[BaseException, str], str] = tool_error_text
    timeout: Callable[[str, float], str] = timeout_text
    sanitize: Callable[..., str] | None = sanitize


def truncate(text: str, limit: int | None) -> tuple[str, int]:
    """Cut a result to ``limit`` characters, saying how much was cut. Returns (text, cut).

    Every result is re-sent with every later request of the turn, so one huge result (a whole
    web page, a big query) costs tokens again and again, and can push the question itself out
    of a small context window.
    """
    if limit is None or len(text) <= limit:
        return text, 0
    cut = len(text) - limit
    return f"{text[:limit]}…[truncated {cut} characters]", cut
