"""Shared mode: the app served to a room, on the instructor's endpoint.

    LAB_SHARED=1 streamlit run app.py                       # the embedded model for everyone
    LAB_SHARED=1 LAB_BASE_URL=... LAB_MODEL=... LAB_API_KEY=... streamlit run app.py

A page served to a room is open to everyone in it. In shared mode nothing an attendee types
reaches beyond the lab: the endpoint, the model, the API and the key are the ones the app was
started with, the same for every browser (no attendee can point the serving machine at another
address, and none sees the key), and the Playground offers the demo tools only, with no MCP
command box. Without ``LAB_SHARED`` the app is the single-user lab it always was.

Each browser of the room lists its own runs and the instructor's recorded ones, never another
attendee's. A browser is known by a random id the app puts in the page's address
(``?browser=...``): a reload or a bookmark keeps it, a new tab opened without it gets a new one.
The address is the only place Streamlit lets a page keep something of its own in the browser:
``st.context.cookies`` can be read and not set, and ``st.login`` needs an identity provider.
The id keeps runs apart, not secret: whoever is given the address sees its runs.
"""

from __future__ import annotations

import os
import re
import secrets
from urllib.parse import urlsplit

from toolkit.app.backends import API_LABELS, BackendChoice
from toolkit.engine import BASE_MODEL

ENV = "LAB_SHARED"
BROWSER_PARAM = "browser"  # the query parameter that holds a browser's id
_BROWSER_ID = re.compile(r"[A-Za-z0-9_-]{16}")  # what new_browser_id makes


def shared_mode(environ: dict[str, str] | None = None) -> bool:
    value = (environ if environ is not None else os.environ).get(ENV, "")
    return value.strip().lower() in {"1", "true", "yes", "on"}


def shared_choice(environ: dict[str, str] | None = None) -> BackendChoice:
    """The instructor's backend, from the variables the app was started with."""
    environ = environ if environ is not None else os.environ
    api = (environ.get("LAB_API") or "chat").strip().lower()
    api = api if api in API_LABELS else "chat"
    if base_url := environ.get("LAB_BASE_URL", "").strip():
        return BackendChoice("remote", base_url, environ.get("LAB_MODEL", "").strip(),
                             environ.get("LAB_API_KEY", ""), api=api)
    return BackendChoice("embedded", model=environ.get("LAB_MODEL", "").strip(), api=api)


def describe(choice: BackendChoice) -> str:
    """One sentence for the sidebar: which model everyone uses, without the key or the URL's path."""
    if choice.kind == "embedded":
        return (f"Shared mode: every browser asks the embedded {choice.model or BASE_MODEL}, "
                "chosen by whoever runs the app.")
    host = urlsplit(choice.base_url).netloc or choice.base_url
    return (f"Shared mode: every browser asks {choice.model or 'the model'} at {host}, chosen by whoever "
            "runs the app; its key stays on the serving machine.")


def new_browser_id() -> str:
    """A fresh id for a browser of the room: 96 random bits, too many to guess a neighbour's."""
    return secrets.token_urlsafe(12)


def is_browser_id(value: object) -> bool:
    """Whether a query parameter's value is an id the app made (and not one typed by hand)."""
    return isinstance(value, str) and _BROWSER_ID.fullmatch(value) is not None
