"""Shared mode: the app served to a room, on the instructor's endpoint.

    LAB_SHARED=1 streamlit run app.py                       # the embedded model for everyone
    LAB_SHARED=1 LAB_BASE_URL=... LAB_MODEL=... LAB_API_KEY=... streamlit run app.py

A page served to a room is open to everyone in it. In shared mode nothing an attendee types
reaches beyond the lab: the endpoint, the model, the API and the key are the ones the app was
started with, the same for every browser (no attendee can point the serving machine at another
address, and none sees the key), and the Playground offers the demo tools only, with no MCP
command box. Without ``LAB_SHARED`` the app is the single-user lab it always was.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from toolkit.app.backends import BackendChoice
from toolkit.client import APIS, EMBEDDED_MODEL

ENV = "LAB_SHARED"


def shared_mode(environ: dict[str, str] | None = None) -> bool:
    value = (environ if environ is not None else os.environ).get(ENV, "")
    return value.strip().lower() in {"1", "true", "yes", "on"}


def shared_choice(environ: dict[str, str] | None = None) -> BackendChoice:
    """The instructor's backend, from the variables the app was started with."""
    environ = environ if environ is not None else os.environ
    api = (environ.get("LAB_API") or "chat").strip().lower()
    api = api if api in APIS else "chat"
    if base_url := environ.get("LAB_BASE_URL", "").strip():
        return BackendChoice("remote", base_url, environ.get("LAB_MODEL", "").strip(),
                             environ.get("LAB_API_KEY", ""), api=api)
    return BackendChoice("embedded", model=environ.get("LAB_MODEL", "").strip(), api=api)


def describe(choice: BackendChoice) -> str:
    """One sentence for the sidebar: which model everyone uses, without the key or the URL's path."""
    if choice.kind == "embedded":
        return (f"Shared mode: every browser asks the embedded {choice.model or EMBEDDED_MODEL}, "
                "chosen by whoever runs the app.")
    host = urlsplit(choice.base_url).netloc or choice.base_url
    return (f"Shared mode: every browser asks {choice.model or 'the model'} at {host}, chosen by whoever "
            "runs the app; its key stays on the serving machine.")
