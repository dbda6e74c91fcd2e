"""The loop: run one conversation turn to the end, calling tools until the model answers.

    ask the model -> it asks for tools -> run them -> send the results back -> ask again ...

until the model writes an answer, a tool's result is returned directly, or the round limit is
reached. The same loop serves both protocols on any backend:

- ``"native"``: tools go in the request's ``tools`` field, calls come back as ``tool_calls``,
  results go back as ``role: tool`` messages matched by ``tool_call_id``;
- ``"string"``: tools are described in the system prompt, calls are found in the reply text
  by ``toolkit.protocol``, results go back as user text.

What the frameworks add on top of a bare loop lives here too: a round limit (LangChain4j's
``maxSequentialToolsInvocations``), return behaviour, hidden context, tools offered per turn,
sequential or concurrent execution, tool time-outs, errors turned into short, sanitised text
for the model (full detail to the log and the trace) and truncated results (both worded in
``toolkit.errors``), and a record of everything (``toolkit.trace``).

Model-call time-outs and retries are not the loop's business: they are the client's settings
(``connect(timeout=..., max_retries=...)``, with exponential back-off). A ``LabError`` from the
backend propagates; the loop never hides a failed model call.
"""

from __future__ import annotations

import contextvars
import copy
import json
import logging
import threading
import time
import traceback
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Literal

from toolkit.client import Backend
from toolkit.errors import ErrorPolicy, sanitize, truncate
from toolkit.messages import ToolCall, assistant_from_reply, calls_of, tool_result
from toolkit.protocol import extract_calls, render_system_prompt, render_tool_result
from toolkit.schema import InvocationContext, ToolArgumentsError
from toolkit.tools import Tool, ToolProvider, ToolRequest, ToolSet, render_result, tools_for_turn
from toolkit.trace import Round, ToolExecution, TurnResult, append_trace, format_trace

__all__ = ["run_turn", "ErrorPolicy", "sanitize", "truncate", "format_trace",
           "TurnResult", "Round", "ToolExecution"]

Protocol = Literal["native", "string"]
_LOOP_KEYS = {"messages", "tools", "tool_choice", "parallel_tool_calls", "stream", "n"}


# --- Running one call ---------------------------------------------------------------------------


class _ToolTimedOut(Exception):
    pass


def _call_with_timeout(function: Callable[[], Any], seconds: float | None, name: str) -> Any:
    """Run ``function`` in a worker thread and stop waiting for it after ``seconds``.

    Python cannot kill a thread: a tool that overruns keeps running in the background until it
    returns by itself, and its result is thrown away. The thread is a daemon, so it does not
    keep the program alive. Tools that can be cancelled properly (an HTTP client's own
    time-out, a database statement time-out) should use that as well.
    """
    if seconds is None:
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


@dataclass
class _Runner:
    """Everything needed to run the calls of one turn."""

    offered: ToolSet
    registry: set[str]
    context: InvocationContext | None
    errors: ErrorPolicy
    result_limit: int | None
    log: logging.Logger
    secrets: tuple[str, ...]

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
            kind = "not_offered" if call.name in self.registry else "unknown_tool"
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
            record.value = _call_with_timeout(
                lambda: tool.run(record.arguments, self.context), tool.timeout, tool.name)
            text = render_result(record.value)
        except _ToolTimedOut:
            self.fail(record, "timeout", self.errors.timeout(tool.name, tool.timeout),
                      f"{tool.name} still running after {tool.timeout} s; left in the background")
            return
        except Exception as error:
            detail = "".join(traceback.format_exception(error))
            self.fail(record, "tool_error", self.errors.tool_error(error, tool.name), detail)
            return
        # A result such as "No order 123 found." is not an error: it is an answer the model can
        # act on. Saying clearly that nothing exists (rather than returning "" or raising) is
        # what stops a model from calling the same tool again and again with the same question.
        record.result_text, record.truncated_chars = truncate(text, self.result_limit)

    def fail(self, record: ToolExecution, kind: str, text: str, detail: str) -> None:
        record.error, record.error_detail = kind, detail
        record.result_text = self.safe(text)
        # A model's slip (a wrong name, bad arguments) is routine with small models: INFO. A
        # failing tool, a hung tool or a call to a withheld tool is worth someone's attention.
        level = logging.INFO if kind in ("unknown_tool", "invalid_arguments") else logging.WARNING
        self.log.log(level, "tool call %s (%s) failed: %s\n%s", record.call_id, record.name, kind, detail)

    def run_all(self, calls: list[ToolCall], concurrent: bool, max_workers: int) -> list[ToolExecution]:
        """Run the calls of one reply; the records come back in the calls' order, whatever
        order the tools finish in, so each result is sent back under its own call id."""
        if not concurrent or len(calls) < 2:
            return [self.run(call) for call in calls]  # one call: no thread to switch to
        with ThreadPoolExecutor(max_workers=min(max_workers, len(calls)),
                                thread_name_prefix="tool-call") as pool:
            # Each call gets a copy of the caller's context variables, as it would sequentially.
            futures = [pool.submit(contextvars.copy_context().run, self.run, call) for call in calls]
            return [future.result() for future in futures]


def returns_directly(calls_behavior: list[str], executions: list[ToolExecution]) -> bool:
    """LangChain4j's rule for ending a turn with a tool's own result.

    Never when a call failed (the model should see the error and try again); yes when the last
    call's tool is ``immediate_if_last``; otherwise only when every call's tool is
    ``immediate`` or ``immediate_if_last``. A round that mixes an ``immediate`` tool with a
    ``to_model`` one goes back to the model, which needs the other result.
    """
    if not executions or any(not each.ok for each in executions):
        return False
    if calls_behavior[-1] == "immediate_if_last":
        return True
    return all(each in ("immediate", "immediate_if_last") for each in calls_behavior)


# --- The turn -----------------------------------------------------------------------------------


def run_turn(
    backend: Backend,
    messages: list[dict],
    tools: ToolSet | Iterable[Tool],
    *,
    protocol: Protocol = "native",
    tool_choice: str | dict | None = None,
    parallel_tool_calls: bool | None = None,
    max_rounds: int = 5,
    concurrent: bool = False,
    max_workers: int = 4,
    result_limit: int | None = 2000,
    context: InvocationContext | None = None,
    providers: Iterable[ToolProvider] = (),
    registry: ToolSet | Iterable[Tool] | None = None,
    errors: ErrorPolicy | None = None,
    request_options: dict | None = None,
    trace_path: str | None = None,
    log: logging.Logger | None = None,
) -> TurnResult:
    """Run one turn: from the user's message (last in ``messages``) to the answer.

    ``max_rounds`` is the number of rounds of tool calls allowed; a reply asking for more is
    not executed, and the turn stops with ``"max_rounds"``. ``tool_choice`` holds for the first
    request (native: sent as is; string protocol: asked for in words in the system prompt);
    when it forces a call (``"required"`` or a named function) later requests use ``"auto"``,
    or the model could never answer. ``parallel_tool_calls`` is sent (native) when not None.

    ``registry`` (optional) is every tool that exists anywhere; it is used only to label a
    refused call ``"not_offered"`` rather than ``"unknown_tool"``, never to run anything.
    ``trace_path`` appends one JSON line per round; ``log`` receives full error details.
    """
    if protocol not in ("native", "string"):
        raise ValueError(f"protocol must be 'native' or 'string', not {protocol!r}")
    if not isinstance(max_rounds, int) or max_rounds < 0:
        raise ValueError(f"max_rounds must be a whole number >= 0, not {max_rounds!r}")
    if not isinstance(max_workers, int) or max_workers < 1:
        raise ValueError(f"max_workers must be a whole number >= 1, not {max_workers!r}")
    if clash := _LOOP_KEYS & set(request_options or {}):
        raise ValueError(f"request_options may not set {sorted(clash)}: use run_turn's own arguments")
    errors = errors or ErrorPolicy()
    log = log or logging.getLogger("toolkit.loop")
    history = copy.deepcopy(list(messages))
    static = tools if isinstance(tools, ToolSet) else ToolSet(tools)
    memory_id = context.memory_id if context else None
    offered = tools_for_turn(static, providers, ToolRequest(_last_user_text(history), memory_id, context))
    runner = _Runner(offered, {each.name for each in registry or ()} | set(offered.names), context,
                     errors, result_limit, log, _secrets_of(backend))
    turn_id = uuid.uuid4().hex[:12]
    rounds: list[Round] = []
    tool_rounds = 0

    while True:
        started = time.perf_counter()
        request = _request(backend, history, offered, protocol, request_options,
                           tool_choice if not rounds else _later_choice(tool_choice),
                           parallel_tool_calls)
        this = Round(index=len(rounds) + 1, request=copy.deepcopy(request), tools_offered=offered.names)
        rounds.append(this)
        completion = backend.chat(**request)  # a LabError propagates to the caller
        this.model_seconds = time.perf_counter() - started
        choice = completion.choices[0] if completion.choices else None
        usage = getattr(completion, "usage", None)
        this.usage = usage.model_dump(exclude_none=True) if usage is not None else None
        this.finish_reason = choice.finish_reason if choice else None
        message = choice.message if choice else None
        this.reply_text = message.content if message else None

        if protocol == "native":
            this.calls = calls_of(message) if message else []
            assistant = assistant_from_reply(message) if message else None
        else:
            this.calls, this.corrections = _read_string_reply(this.reply_text or "", this.index)
            assistant = {"role": "assistant", "content": this.reply_text or ""}

        stop, final_text, immediate = None, None, None
        if not this.calls and not this.corrections:
            if this.reply_text and this.reply_text.strip():
                history.append(assistant)
                stop, final_text = "answered", this.reply_text
            else:
                stop = "no_reply"
        elif tool_rounds >= max_rounds:
            # Not appended to the history: a tool_calls message without its results would
            # make the history invalid for the next turn.
            stop, this.note = "max_rounds", f"limit of {max_rounds} tool round(s) reached; calls not executed"
        else:
            tool_rounds += 1
            history.append(assistant)
            this.executions = runner.run_all(this.calls, concurrent, max_workers)
            history.extend(_result_messages(protocol, this.executions, this.corrections))
            behaviors = [each.return_behavior for each in this.executions]
            if not this.corrections and returns_directly(behaviors, this.executions):
                stop, immediate = "immediate", this.executions[-1].value
        this.seconds = time.perf_counter() - started
        log.debug("round %d: %d call(s), stop=%s", this.index, len(this.calls), stop)
        if trace_path:
            append_trace(trace_path, this, turn_id=turn_id, protocol=protocol,
                         stop_reason=stop, final_text=final_text)
        if stop:
            return TurnResult(final_text=final_text, stop_reason=stop, immediate_result=immediate,
                              rounds=rounds, messages=history, protocol=protocol)


def _request(backend: Backend, history: list[dict], offered: ToolSet, protocol: str,
             options: dict | None, tool_choice: Any, parallel_tool_calls: bool | None) -> dict:
    request: dict[str, Any] = {"model": backend.model, **(options or {})}
    if protocol == "string":
        # No tools field and no tool_choice here: the prompt is all there is.
        request["messages"] = _with_tool_prompt(history, offered, tool_choice)
        return request
    request["messages"] = history
    if len(offered):  # APIs reject tool_choice and parallel_tool_calls without tools
        request["tools"] = offered.specs()
        if tool_choice is not None:
            request["tool_choice"] = tool_choice
        if parallel_tool_calls is not None:
            request["parallel_tool_calls"] = parallel_tool_calls
    return request


def _later_choice(tool_choice: Any) -> Any:
    forced = tool_choice == "required" or isinstance(tool_choice, dict)
    return "auto" if forced else tool_choice


def _with_tool_prompt(history: list[dict], offered: ToolSet, tool_choice: Any) -> list[dict]:
    """The caller's system message (if any) becomes the preamble of the tool prompt. The
    history itself keeps the caller's message, so the next turn does not render it twice."""
    preamble, rest = None, history
    if history and history[0].get("role") == "system":
        preamble, rest = str(history[0].get("content") or ""), history[1:]
    prompt = render_system_prompt(offered.specs(), preamble)
    if len(offered) and (hint := _choice_in_words(tool_choice)):
        prompt += "\n" + hint
    return [{"role": "system", "content": prompt}, *rest]


def _choice_in_words(tool_choice: Any) -> str | None:
    """tool_choice for the string protocol: a request in words, which nothing enforces. (The
    native protocol can enforce it: the embedded engine constrains decoding with a grammar.)"""
    if tool_choice == "required":
        return "In this reply you must call at least one tool."
    if tool_choice == "none":
        return "In this reply do not call any tool; answer in plain text."
    if isinstance(tool_choice, dict):
        name = (tool_choice.get("function") or {}).get("name")
        return f"In this reply you must call the tool {name}." if name else None
    return None


def _read_string_reply(text: str, round_index: int) -> tuple[list[ToolCall], list[str]]:
    """Calls found in the text (given ids, which the protocol lacks) and corrections for the
    calls that could not be read. Unknown names are left for the runner to refuse."""
    extraction = extract_calls(text)
    calls = [ToolCall(f"text_{round_index}_{n}", each.name, json.dumps(each.arguments, ensure_ascii=False))
             for n, each in enumerate(extraction.calls, 1)]
    corrections = [
        f"Your tool call could not be read: {sanitize(failure.detail, limit=200)} Write each call as "
        '<tool>{"name": "TOOL_NAME", "arguments": {...}}</tool>, or answer in plain text.'
        for failure in extraction.failures if failure.reason != "no_call_found"]
    return calls, corrections


def _result_messages(protocol: str, executions: list[ToolExecution], corrections: list[str]) -> list[dict]:
    if protocol == "native":
        return [tool_result(each.call_id, each.result_text) for each in executions]
    # One user message for the whole round: chat templates expect user and assistant to alternate.
    parts = [render_tool_result(each.name[:64], each.result_text) for each in executions] + corrections
    return [{"role": "user", "content": "\n\n".join(parts)}]


def _last_user_text(history: list[dict]) -> str:
    for message in reversed(history):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):  # content parts: keep the text ones
                return " ".join(part.get("text", "") for part in content if isinstance(part, dict))
            return str(content or "")
    return ""


def _secrets_of(backend: Backend) -> tuple[str, ...]:
    key = getattr(backend.client, "api_key", None)
    return (key,) if isinstance(key, str) and key else ()
