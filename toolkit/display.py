"""``show``: print a value as the JSON that travels over the wire.

Lessons and labs print requests, replies and schemas all the time; one helper keeps them
printed the same way everywhere. Pydantic models and the ``openai`` client's reply objects are
turned into plain dicts first, so what you see is what was (or will be) sent.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["show"]


def _plain(value: Any) -> Any:
    # The openai client's replies and our own pydantic models both have model_dump().
    if hasattr(value, "model_dump"):
        return value.model_dump(exclude_none=True)
    return value


def show(value: Any, limit: int | None = 2000) -> None:
    """Print ``value`` as indented JSON (non-ASCII kept readable), cut after ``limit``
    characters so that one long schema does not bury the rest of the page."""
    text = json.dumps(_plain(value), indent=2, ensure_ascii=False, default=str)
    if limit is not None and len(text) > limit:
        text = text[:limit] + f"\n... (cut: {len(text) - limit} more characters)"
    print(text)
