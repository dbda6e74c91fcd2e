"""Reference solution for labs/09_sanitize_error.py."""

import re

LIMIT = 300
_TRACEBACK = re.compile(r"Traceback \(most recent call last\):.*", re.DOTALL)
_WINDOWS_PATH = re.compile(r"[A-Za-z]:\\[^\s'\"]*")
_UNIX_PATH = re.compile(r"(?<![\w:/])(?:/[\w.@+-]+)+/?")


def _last_line(found: re.Match) -> str:
    """A traceback's last unindented line ("TimeoutError: ...") says what happened; keep it."""
    lines = [line for line in found.group().splitlines()[1:] if line.strip() and not line[0].isspace()]
    return lines[-1] if lines else ""


def sanitize(exc: BaseException, secrets: list[str]) -> str:
    """One line, at most 300 characters: the exception's type and message, without tracebacks,
    file paths or any of the given secrets."""
    message = str(exc)
    text = f"{type(exc).__name__}: {message}" if message.strip() else type(exc).__name__
    for secret in secrets:
        if secret:
            text = text.replace(secret, "<redacted>")
    text = _TRACEBACK.sub(_last_line, text)
    text = _WINDOWS_PATH.sub("<path>", text)
    text = _UNIX_PATH.sub("<path>", text)
    text = " ".join(text.split()).rstrip(" :")
    return text if len(text) <= LIMIT else text[: LIMIT - 1] + "…"
