"""Reference solution for labs/08_concurrent_execution.py."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

from toolkit.errors import sanitize
from toolkit.messages import ToolCall, tool_result
from toolkit.tools import render_result


def execute_concurrently(calls: list[ToolCall], tools_by_name: dict[str, Callable[..., Any]],
                         max_workers: int = 4) -> list[dict]:
    """Run the calls in a thread pool; one tool message per call, in the calls' order."""

    def run_one(call: ToolCall) -> str:
        function = tools_by_name.get(call.name)
        if function is None:
            return f"Error: there is no tool named {call.name!r}."
        try:
            return render_result(function(**call.parsed_arguments()))
        except Exception as error:  # one failing call must not lose the others' results
            # the raw message may hold paths or keys (lesson 9): never send it as is
            return f"Error: {call.name} failed ({sanitize(f'{type(error).__name__}: {error}')})."

    if not calls:
        return []
    with ThreadPoolExecutor(max_workers=max(1, min(max_workers, len(calls)))) as pool:
        texts = list(pool.map(run_one, calls))  # map keeps the calls' order
    return [tool_result(call.id, text) for call, text in zip(calls, texts)]
