"""Reference solution for labs/06_loop_guard.py."""

from __future__ import annotations

import json

from toolkit.messages import ToolCall


def call_key(call: ToolCall) -> tuple[str, str]:
    """(tool name, canonical arguments): equal for the same call however its JSON is written."""
    try:
        canonical = json.dumps(json.loads(call.arguments or "{}"), sort_keys=True, ensure_ascii=False)
    except json.JSONDecodeError:
        canonical = (call.arguments or "").strip()
    return call.name, canonical


def guard_repeats(calls: list[ToolCall], counts: dict, limit: int) -> dict[str, str]:
    """Count the calls in ``counts``; return {call id: refusal} for each one beyond ``limit``."""
    refusals = {}
    for call in calls:
        key = call_key(call)
        counts[key] = counts.get(key, 0) + 1
        if counts[key] > limit:
            refusals[call.id] = (f"Error: repeated call. {call.name} was already called {limit} time(s) "
                                 "with these arguments in this turn, and its result is above. Use it to "
                                 "answer the user instead of calling again.")
    return refusals
