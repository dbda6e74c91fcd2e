"""``LabError``: an error worded for the learner, not for the model.

Every part of the lab raises it for a problem the person at the keyboard can fix: a wrong key,
an endpoint that cannot be reached, a run database that cannot be opened, an MCP server that
would not start. The app and the command lines show its text as it is, with no traceback.

It lives on its own so that raising it imports nothing: the run database and the MCP adapter
need the class, not the HTTP client. (What a *model* is told when a tool call fails is worded
in ``toolkit.errors_for_model``.)
"""

from __future__ import annotations

__all__ = ["LabError"]


class LabError(Exception):
    """An error a learner can act on: what went wrong, where, and what to do."""
