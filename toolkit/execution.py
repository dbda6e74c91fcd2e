"""Running the calls of one reply: each call checked, run and recorded, one after another or at
the same time, each with its own time-out. A tool may be a plain function or an ``async def``.

A call never raises into the loop. Whatever goes wrong (a tool that was not offered, arguments
that do not fit the schema, a tool that fails or hangs) becomes a short, sanitised result the
model can read (worded by ``toolkit.errors_for_model``), while the full detail goes to the log and into
the call's ``ToolExecution`` record (``toolkit.trace``). ``toolkit.loop`` builds one
``CallRunner`` per turn and hands it every reply's calls.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import logging
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable

from toolkit.errors_for_model import ErrorPolicy, truncate
from toolkit.messages import ToolCall
from toolkit.schema import ToolArgumentsError
from toolkit.tools import Tool, ToolSet, render_result
from toolkit.trace import ToolExecution
from toolkit.turn_options import TurnOptions

__all__ = ["CallRunner"]


class _ToolTimedOut(Exception):
    pass


def _call_with_timeout(function: Callable[[], Any], seconds: float | None, name: str,
                       in_thread: bool = False) -> Any:
    """Run ``function`` in a worker thread and stop waiting for it after ``seconds``.

    Python cannot kill a thread: a tool that overruns keeps running in the background until it
    returns by itself, and its result is thrown away. The thread is a daemon, so it does not
    keep the program alive. Tools that can be cancelled properly (an HTTP client's own
    time-out, a database statement time-out, an ``async def`` tool) should use that as well.
    Without ``seconds`` the function runs in the caller's thread, unless ``in_thread`` asks for one.
    """
    if seconds is None and not in_thread:
        return function()
    outcome: dict[str, Any] = {}
    finished = threading.Event()

    def work() -> None:
        try:
            outcome["value"] = function()
        except BaseException as error:  # handed to the waiting thread, which decides
            outcome["error"] = error
        finally:
            finished.set()

    context = contextvars.copy_context()
    threading.Thread(target=context.run, args=(work,), daemon=True, name=f"tool-{name}").start()
    if not finished.wait(seconds):
        raise _ToolTimedOut
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


CANCEL_GRACE = 1.0
"""Seconds an ``async`` tool is given, once cancelled at its time-out, to run its ``finally``
blocks; one that ignores the cancellation is then left in the background like a thread."""


async def _cancelled_after(awaitable: Any, seconds: float | None) -> Any:
    """Await ``awaitable``; past ``seconds``, cancel it and raise ``_ToolTimedOut``.

    Not ``asyncio.wait_for``: its ``TimeoutError`` could not be told apart from a
    ``TimeoutError`` the tool raised itself (an HTTP client's, say), which is the tool's error."""
    task = asyncio.ensure_future(awaitable)
    done, _ = await asyncio.wait({task}, timeout=seconds)
    if task in done:
        return task.result()
    task.cancel()
    await asyncio.wait({task}, timeout=CANCEL_GRACE)  # let its ``finally`` blocks run
    raise _ToolTimedOut


def _call_async(start: Callable[[], Any], seconds: float | None, name: str) -> Any:
    """Run an ``async`` tool to its end on an event loop of its own, in a worker thread.

    A thread, because the caller's thread may be running a loop already (Jupyter's is), and
    ``asyncio.run`` refuses to start a second one there. Unlike a plain function, a coroutine
    can be stopped: at its time-out it is cancelled, so its ``finally`` blocks run."""
    limit = None if seconds is None else seconds + 2 * CANCEL_GRACE  # the loop's own limit comes first
    return _call_with_timeout(lambda: asyncio.run(_cancelled_after(start(), seconds)), limit, name,
                              in_thread=True)


def _not_awaitable(value: Any, name: str) -> Any:
    if inspect.isawaitable(value):
        if inspect.iscoroutine(value):
            value.close()  # never awaited: close it so Python does not warn about it later
        raise TypeError(f"{name} returned an awaitable without being an async def function; "
                        "declare it async def so the lab awaits it")
    return value


@dataclass
class CallRunner:
    """Everything needed to run the calls of one turn: the tools offered, the turn's options
    (context, error wording, result limit, log, concurrency) and the secrets no text may repeat."""

    offered: ToolSet
    options: TurnOptions = field(default_factory=TurnOptions)
    secrets: tuple[str, ...] = ()

    @property
    def errors(self) -> ErrorPolicy:
        return self.options.errors

    @property
    def log(self) -> logging.Logger:
        return self.options.log

    def safe(self, text: str) -> str:
        return self.errors.sanitize(text, self.secrets) if self.errors.sanitize else text

    def run(self, call: ToolCall) -> ToolExecution:
        """Run one call. Never raises: every failure becomes a result the model can read."""
        started = time.perf_counter()
        record = ToolExecution(call_id=call.id, name=call.name, arguments_raw=call.arguments)
        tool = self.offered.get(call.name)
        if tool is None:
            # Refused here whatever the model wrote: only tools offered this turn can run,
            # even if a tool of that name exists elsewhere (a provider withheld it).
            kind = "not_offered" if call.name in self.options.registry else "unknown_tool"
            self.fail(record, kind, self.errors.unknown_tool(call.name, self.offered.names),
                      f"{kind}: {call.name!r} is not among the tools offered this turn "
                      f"({', '.join(self.offered.names) or 'none'})")
        else:
            record.return_behavior = tool.return_behavior
            self.execute(tool, call, record)
        record.seconds = time.perf_counter() - started
        return record

    def execute(self, tool: Tool, call: ToolCall, record: ToolExecution) -> None:
        try:
            record.arguments = tool.validate(call.arguments)
        except ToolArgumentsError as error:
            self.fail(record, "invalid_arguments", self.errors.invalid_arguments(error), str(error))
            return
        try:
            # ``run`` and not ``invoke``: the arguments are validated already, and validating
            # twice could run a transforming validator twice. The hidden parameters are filled
            # here from the context, which never enters a request.
            start = lambda: tool.run(record.arguments, self.options.context)  # noqa: E731
            if tool.is_async:
                record.value = _call_async(start, tool.timeout, tool.name)
            else:
                record.value = _not_awaitable(_call_with_timeout(start, tool.timeout, tool.name), tool.name)
            text = render_result(record.value)
        except _ToolTimedOut:
            left = "cancelled" if tool.is_async else "left in the background"
            self.fail(record, "timeout", self.errors.timeout(tool.name, tool.timeout),
                      f"{tool.name} still running after {tool.timeout} s; {left}")
            return
        except Exception as error:
            detail = "".join(traceback.format_exception(error))
            self.fail(record, "tool_error", self.errors.tool_error(error, tool.name), detail)
            return
        # A result such as "No order 123 found." is not an error: it is an answer the model can
        # act on. Saying clearly that nothing exists (rather than returning "" or raising) is
        # what stops a model from calling the same tool again and again with the same question.
        record.result_text, record.truncated_chars = truncate(text, self.options.result_limit)

    def fail(self, record: ToolExecution, kind: str, text: str, detail: str) -> None:
        record.error, record.error_detail = kind, detail
        record.result_text = self.safe(text)
        # A model's slip (a wrong name, bad arguments) is routine with small models: INFO. A
        # failing tool, a hung tool or a call to a withheld tool is worth someone's attention.
        level = logging.INFO if kind in ("unknown_tool", "invalid_arguments") else logging.WARNING
        self.log.log(level, "tool call %s (%s) failed: %s\n%s", record.call_id, record.name, kind, detail)

    def run_all(self, calls: list[ToolCall]) -> list[ToolExecution]:
        """Run the calls of one reply (at once with ``options.concurrent``); the records come
        back in the calls' order, whatever order the tools finish in, so each result is sent
        back under its own call id."""
        if not self.options.concurrent or len(calls) < 2:
            return [self.run(call) for call in calls]  # one call: no thread to switch to
        with ThreadPoolExecutor(max_workers=min(self.options.max_workers, len(calls)),
                                thread_name_prefix="tool-call") as pool:
            # Each call gets a copy of the caller's context variables, as it would sequentially.
            futures = [pool.submit(contextvars.copy_context().run, self.run, call) for call in calls]
            return [future.result() for future in futures]
