"""Reference solution for labs/06_return_behaviour.py."""

from __future__ import annotations

from typing import Any

from labs.graders.return_behaviour import execute
from toolkit.messages import ToolCall, tool_result

DIRECT = ("immediate", "immediate_if_last")


def run_round(calls: list[ToolCall], tools_by_name: dict) -> tuple[list[dict], bool, Any]:
    """Run one reply's calls; return (tool messages, whether the turn ends here, the user's value)."""
    executions = [execute(call, tools_by_name) for call in calls]
    messages = [tool_result(each.call_id, each.result_text) for each in executions]
    behaviours = [each.return_behavior for each in executions]
    if not executions or not all(each.ok for each in executions):
        direct = False  # the model reads the error and can try again; the user never sees it
    elif behaviours[-1] == "immediate_if_last":
        direct = True
    else:
        direct = all(each in DIRECT for each in behaviours)
    return messages, direct, executions[-1].value if direct else None
