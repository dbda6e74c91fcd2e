"""The loop: run one conversation turn to the end, calling tools until the model answers.

    ask the model -> it asks for tools -> run them -> send the results back -> ask again ...

until the model writes an answer, a tool's result is returned directly, or the round limit is
reached. The same loop serves both protocols (``"native"`` and ``"string"``) on any backend.

What the frameworks add on top of a bare loop is decided here: a round limit (LangChain4j's
``maxSequentialToolsInvocations``), return behaviour, hidden context and tools offered per
turn. The rest is done by the modules the loop hands work to, so this one reads as the loop:

- ``toolkit.round_trip``  what each protocol sends and reads: request, reply, results;
- ``toolkit.execution``   running a reply's calls: sequential or concurrent, time-outs, failures
  turned into short, sanitised text for the model (worded and truncated by ``toolkit.errors_for_model``);
- ``toolkit.trace``       the record of everything: rounds, executions, the JSON-lines trace.

Model-call time-outs and retries are not the loop's business: they are the client's settings
(``connect(timeout=..., max_retries=...)``, with exponential back-off). A ``LabError`` from the
backend propagates; the loop never hides a failed model call.
"""

from __future__ import annotations

import copy
import time
import uuid
from typing import Any, Iterable

from toolkit.client import Backend
from toolkit.execution import CallRunner
from toolkit.messages import usage_of
from toolkit.round_trip import (
    call_in_text,
    choice_after_first_round,
    correction_for,
    read_reply,
    request_for_round,
    result_messages,
)
from toolkit.tools import Tool, ToolRequest, ToolSet, tools_for_turn
from toolkit.trace import Round, ToolExecution, TurnResult, append_trace
from toolkit.turn_options import TurnOptions

__all__ = ["run_turn"]



# --- The turn -----------------------------------------------------------------------------------


def run_turn(
    backend: Backend,
    messages: list[dict],
    tools: ToolSet | Iterable[Tool],
    options: TurnOptions | None = None,
    **option_values: Any,
) -> TurnResult:
    """Run one turn: from the user's message (last in ``messages``) to the answer.

    How the turn runs is a ``TurnOptions`` (``toolkit.turn_options``, where every option is
    described with its default), given whole as ``options``, as keyword arguments
    (``max_rounds=3, tool_choice="required"``), or both: the keywords then change the object.

    ``max_rounds`` is the number of rounds of tool calls allowed; a reply asking for more is
    not executed, and the turn stops with ``"max_rounds"``. ``tool_choice`` holds for the first
    request (native: sent as is; string protocol: asked for in words in the system prompt);
    when it forces a call (``"required"`` or a named function) later requests use ``"auto"``,
    or the model could never answer.
    """
    options = TurnOptions.of(options, **option_values)
    protocol, tool_choice, log = options.protocol, options.tool_choice, options.log
    history = copy.deepcopy(list(messages))
    static = tools if isinstance(tools, ToolSet) else ToolSet(tools)
    context = options.context
    memory_id = context.memory_id if context else None
    offered = tools_for_turn(static, options.providers, ToolRequest(_last_user_text(history), memory_id, context))
    runner = CallRunner(offered, options, secrets=(backend.api_key,) if backend.api_key else ())
    turn_id = uuid.uuid4().hex[:12]
    rounds: list[Round] = []
    tool_rounds = 0

    while True:
        started = time.perf_counter()
        request = request_for_round(backend.model, history, offered, protocol, options.request_options,
                                    tool_choice if not rounds else choice_after_first_round(tool_choice),
                                    options.parallel_tool_calls)
        this = Round(index=len(rounds) + 1, request=copy.deepcopy(request), tools_offered=offered.names)
        rounds.append(this)
        completion = backend.chat(**request)  # a LabError propagates to the caller
        this.model_seconds = time.perf_counter() - started
        choice = completion.choices[0] if completion.choices else None
        this.usage = usage_of(completion)
        this.finish_reason = choice.finish_reason if choice else None
        message = choice.message if choice else None
        this.reply_text = message.content if message else None
        reply = read_reply(protocol, message, this.index)
        this.calls, assistant = reply.calls, reply.keep
        # Only text can carry a correction back; a native call with no function is not one to run.
        this.corrections = [correction_for(detail) for detail in reply.unreadable] if protocol == "string" else []

        stop, final_text, immediate = None, None, None
        if not this.calls and not this.corrections:
            if protocol == "native" and call_in_text(this.reply_text):
                stop, this.note = "call_in_text", ("the reply's text is a <tool_call> block, not an answer; "
                                                   "the endpoint did not return it as tool_calls")
            elif this.reply_text and this.reply_text.strip():
                history.append(assistant)
                stop, final_text = "answered", this.reply_text
            else:
                stop = "no_reply"
        elif tool_rounds >= options.max_rounds:
            # Not appended to the history: a tool_calls message without its results would
            # make the history invalid for the next turn.
            stop, this.note = "max_rounds", f"limit of {options.max_rounds} tool round(s) reached; calls not executed"
        else:
            tool_rounds += 1
            history.append(assistant)
            this.executions = runner.run_all(this.calls)
            history.extend(result_messages(protocol, this.executions, this.corrections))
            behaviors = [each.return_behavior for each in this.executions]
            if not this.corrections and returns_directly(behaviors, this.executions):
                stop, immediate = "immediate", this.executions[-1].value
        this.seconds = time.perf_counter() - started
        log.debug("round %d: %d call(s), stop=%s", this.index, len(this.calls), stop)
        if options.trace_path:
            append_trace(options.trace_path, this, turn_id=turn_id, protocol=protocol,
                         stop_reason=stop, final_text=final_text)
        if stop:
            return TurnResult(final_text=final_text, stop_reason=stop, immediate_result=immediate,
                              rounds=rounds, messages=history, protocol=protocol)


def returns_directly(calls_behavior: list[str], executions: list[ToolExecution]) -> bool:
    """LangChain4j's rule for ending a turn with a tool's own result.

    Never when a call failed (the model should see the error and try again); yes when the last
    call's tool is ``immediate_if_last``; otherwise only when every call's tool is
    ``immediate`` or ``immediate_if_last``. So a round that mixes an ``immediate`` tool with a
    ``to_model`` one goes back to the model, which needs the other result; an
    ``immediate_if_last`` call in last place returns directly even then.
    """
    if not executions or any(not each.ok for each in executions):
        return False
    if calls_behavior[-1] == "immediate_if_last":
        return True
    return all(each in ("immediate", "immediate_if_last") for each in calls_behavior)


def _last_user_text(history: list[dict]) -> str:
    """The question tool providers look at to choose this turn's tools."""
    for message in reversed(history):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):  # content parts: keep the text ones
                return " ".join(part.get("text", "") for part in content if isinstance(part, dict))
            return str(content or "")
    return ""
