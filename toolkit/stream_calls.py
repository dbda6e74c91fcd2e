"""Start each tool while the reply is still streaming, and keep a timeline of what happened when.

With ``stream=True`` the calls of a reply arrive as ``delta.tool_calls`` pieces, each with the
``index`` of the call it belongs to: the first piece of a call carries its ``id`` and name,
later pieces append fragments of ``arguments``. Nothing in a piece says "this call is done".
What does say it: a piece for a *later* index (servers stream one call after another: OpenAI
does, and so does the embedded endpoint), or the end of the stream. At that moment the call's
arguments are final, and its tool can start in a thread pool while the rest of the reply is
still arriving.

The next request cannot go before every result is in, so whatever the early start saves, the
turn still waits after the stream for the tools started last: the last call is complete only
when the stream ends. ``StreamedReply.timeline`` records each moment (first chunk, each call
complete, each tool started and finished, stream ended, all results ready) so that the wait
can be seen.

Each call is run by ``toolkit.execution.CallRunner``, as in the loop: a tool that raises, a
call to a tool that was not offered, or arguments that are not valid JSON (a stream cut off in
the middle of a call) become a short "Error: ..." result for the model, never an exception.
Results come back in the calls' order, each under its own call id.
"""

from __future__ import annotations

import contextvars
import logging
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Iterable, Literal

from openai.types.chat import ChatCompletionChunk

from toolkit.errors_for_model import ErrorPolicy
from toolkit.execution import CallRunner
from toolkit.messages import ToolCall, assistant, tool_result, usage_of
from toolkit.schema import InvocationContext
from toolkit.tools import Tool, ToolSet
from toolkit.trace import ToolExecution
from toolkit.turn_options import TurnOptions

__all__ = ["run_streamed_calls", "StreamedReply", "Moment", "StreamOrderError"]

Start = Literal["as_complete", "after_stream"]
_STEPS = (0.05, 0.1, 0.2, 0.25, 0.5, 1.0, 2.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0)  # seconds a character


class StreamOrderError(ValueError):
    """A piece arrived for a call whose tool had already started: the server interleaves calls,
    and starting tools early is not safe on it (use ``start="after_stream"``)."""


@dataclass(frozen=True)
class Moment:
    """One event of a streamed turn, ``seconds`` after the executor started reading."""

    seconds: float
    event: Literal["first chunk", "call complete", "tool started", "tool finished",
                   "stream ended", "all results ready"]
    index: int | None = None  # the call's index, for the call and tool events
    detail: str = ""


@dataclass
class StreamedReply:
    """The reply assembled from the stream, the calls' executions and the timeline."""

    content: str | None
    calls: list[ToolCall]  # by index
    finish_reason: str | None
    executions: list[ToolExecution]  # one per call, in the calls' order
    timeline: list[Moment] = field(default_factory=list)  # in time order
    usage: dict | None = None

    def assistant_message(self) -> dict:
        """The assistant message to append to the history before the results."""
        return assistant(self.content, self.calls)

    def result_messages(self) -> list[dict]:
        """One ``role: tool`` message per call, in the calls' order, each under its call's id."""
        return [tool_result(each.call_id, each.result_text) for each in self.executions]

    def _at(self, event: str) -> float | None:
        return next((moment.seconds for moment in self.timeline if moment.event == event), None)

    @property
    def stream_seconds(self) -> float | None:
        """When the stream ended."""
        return self._at("stream ended")

    @property
    def ready_seconds(self) -> float | None:
        """When the last result was in: the earliest the next request could be sent."""
        return self._at("all results ready")

    @property
    def wait_after_stream(self) -> float | None:
        """How long the turn waited for tools after the stream had ended."""
        if self.stream_seconds is None or self.ready_seconds is None:
            return None
        return self.ready_seconds - self.stream_seconds

    def format_timeline(self) -> str:
        """The timeline, one line per moment, for people."""
        lines = []
        for moment in self.timeline:
            what = moment.event if moment.index is None else f"call {moment.index} {moment.event.removeprefix('call ')}"
            lines.append(f"t={moment.seconds:5.2f} s  {what:<22}{moment.detail}".rstrip())
        return "\n".join(lines)

    def format_chart(self, width: int = 60) -> str:
        """A text chart of the same timeline: the stream on top, each call's tool below it,
        so that what overlaps what can be seen. At most about ``width`` characters wide."""
        end = self.ready_seconds or max((m.seconds for m in self.timeline), default=0.0)
        step = next((s for s in _STEPS if end / s <= width), end / width or 0.1)

        def span(begin: float, stop: float, mark: str) -> str:
            first = round(begin / step)
            return " " * first + mark * max(1, round(stop / step) - first)

        rows = [("stream", span(0.0, self.stream_seconds or 0.0, "="))]
        for index in sorted({m.index for m in self.timeline if m.index is not None}):
            times = {m.event: m.seconds for m in self.timeline if m.index == index}
            if "tool started" in times:
                rows.append((f"call {index} tool", span(times["tool started"],
                                                        times.get("tool finished", times["tool started"]), "#")))
        ticks = "".join(f"{'|' + format(i * 10 * step, 'g') + ' s':<10}" for i in range(int(end / step / 10) + 1))
        return "\n".join([f"{'':12}{ticks}".rstrip()] + [f"{name:<12}{bar}" for name, bar in rows])


def run_streamed_calls(
    chunks: Iterable[ChatCompletionChunk | dict],
    tools: ToolSet | Iterable[Tool],
    *,
    start: Start = "as_complete",
    max_workers: int = 4,
    context: InvocationContext | None = None,
    errors: ErrorPolicy | None = None,
    result_limit: int | None = 2000,
    log: logging.Logger | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> StreamedReply:
    """Read a streamed reply and run its calls; return once every call has a result.

    ``start="as_complete"`` starts each call's tool the moment the call is complete (a later
    index begins, or the stream ends); ``"after_stream"`` waits for the whole reply and then
    starts them all at once, which is what code that reads the reply first does. Either way
    the tools run in a pool of ``max_workers`` threads.

    An exception from the stream itself (a dropped connection) propagates, once the tools
    already running have finished: Python cannot stop a thread.
    """
    if start not in ("as_complete", "after_stream"):
        raise ValueError(f"start must be 'as_complete' or 'after_stream', not {start!r}")
    if not isinstance(max_workers, int) or max_workers < 1:
        raise ValueError(f"max_workers must be a whole number >= 1, not {max_workers!r}")
    offered = tools if isinstance(tools, ToolSet) else ToolSet(tools)
    runner = CallRunner(offered, TurnOptions(context=context, errors=errors, result_limit=result_limit,
                                             log=log or logging.getLogger("toolkit.stream_calls")))
    started = clock()
    timeline: list[Moment] = []
    lock = threading.Lock()

    def note(event: str, index: int | None = None, detail: str = "") -> None:
        with lock:  # tool threads note their events too
            timeline.append(Moment(clock() - started, event, index, detail))

    def run(index: int, call: ToolCall) -> ToolExecution:
        note("tool started", index, call.name)
        record = runner.run(call)
        note("tool finished", index, f"after {record.seconds:.2f} s" + (f", {record.error}" if record.error else ""))
        return record

    pieces: dict[int, dict[str, str]] = {}  # index -> id, name, arguments so far
    complete: dict[int, ToolCall] = {}
    futures: dict[int, Future] = {}
    text: list[str] = []
    finish, usage, first = None, None, True
    pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="streamed-call")

    def completed(index: int) -> None:
        part = pieces[index]
        call = complete[index] = ToolCall(part["id"], part["name"], part["arguments"])
        note("call complete", index, f"{call.name}({call.arguments})")
        if start == "as_complete":
            # Each tool gets a copy of the caller's context variables, as it would sequentially.
            futures[index] = pool.submit(contextvars.copy_context().run, run, index, call)

    try:
        for chunk in chunks:
            if isinstance(chunk, dict):
                chunk = ChatCompletionChunk.model_validate(chunk)
            if first:
                note("first chunk")
                first = False
            if chunk.usage is not None:
                usage = usage_of(chunk)
            if not chunk.choices:
                continue  # the usage chunk that ends a stream with include_usage
            choice = chunk.choices[0]
            finish = choice.finish_reason or finish
            if choice.delta.content:
                text.append(choice.delta.content)
            for piece in choice.delta.tool_calls or []:
                if start == "as_complete":
                    if piece.index in complete:
                        raise StreamOrderError(
                            f"a piece of call {piece.index} arrived after a later call had begun, "
                            "so its tool may have started on incomplete arguments; this server "
                            "interleaves calls: use start='after_stream'")
                    for earlier in sorted(i for i in pieces if i < piece.index and i not in complete):
                        completed(earlier)
                part = pieces.setdefault(piece.index, {"id": "", "name": "", "arguments": ""})
                part["id"] = piece.id or part["id"]
                if piece.function is not None:
                    part["name"] += piece.function.name or ""
                    part["arguments"] += piece.function.arguments or ""
        note("stream ended", detail=f"finish_reason={finish}")
        for index in sorted(i for i in pieces if i not in complete):
            completed(index)
        if start == "after_stream":
            futures = {index: pool.submit(contextvars.copy_context().run, run, index, call)
                       for index, call in complete.items()}
        executions = [futures[index].result() for index in sorted(complete)]
        note("all results ready", detail=f"{len(executions)} result(s)")
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return StreamedReply(content="".join(text) or None, calls=[complete[i] for i in sorted(complete)],
                         finish_reason=finish, executions=executions, timeline=timeline, usage=usage)
