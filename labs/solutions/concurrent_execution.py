"""Reference solution for labs/08_concurrent_execution.py."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any, Callable

from toolkit.errors_for_model import sanitize, tool_error_text, unknown_tool_text
from toolkit.messages import ToolCall, tool_result
from toolkit.tools import render_result


def execute_concurrently(calls: list[ToolCall], tools_by_name: dict[str, Callable[..., Any]],
                         on_result: Callable[[dict], None], max_workers: int = 4) -> list[dict]:
    """Run the calls in a thread pool; hand each message to ``on_result`` as its tool finishes;
    return one tool message per call, in the calls' order."""

    def run_one(call: ToolCall) -> dict:
        function = tools_by_name.get(call.name)
        if function is None:
            return tool_result(call.id, unknown_tool_text(call.name, list(tools_by_name)))
        try:
            return tool_result(call.id, render_result(function(**call.parsed_arguments())))
        except Exception as error:  # one failing call must not lose the others' results
            # the raw message may hold paths or keys (lesson 9): word it the toolkit's way, cleaned
            return tool_result(call.id, sanitize(tool_error_text(error, call.name)))

    if not calls:
        return []
    by_id: dict[str, dict] = {}
    with ThreadPoolExecutor(max_workers=max(1, min(max_workers, len(calls)))) as pool:
        futures = {pool.submit(run_one, call): call for call in calls}
        for future in as_completed(futures):  # in the order the tools finish
            message = future.result()
            on_result(message)
            by_id[futures[future].id] = message  # the future says which call it was
    return [by_id[call.id] for call in calls]
