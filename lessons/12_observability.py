# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lesson 12 — Observability: see what happened in a turn
#
# *The course's terms are defined, each with the lesson that teaches it, in the [glossary](../docs/glossary.md).*
#
# When a tool-calling assistant misbehaves, the first question is always "what exactly
# happened?". Which tools did the model see? Which did it call, with what arguments? How long
# did each take, what came back, and what did the model finally say? Without a record, each of
# these is a guess.
#
# ## What you will learn
#
# - what to log for each turn: the tools sent, the calls made, each call's time and result,
#   and the final answer — first by hand, then from the loop's record;
# - the execution record, `TurnResult.tool_executions`;
# - the trace as JSON lines, one line per round, that survives a crash half-way;
# - token control: cutting long tool results (`result_limit`) and what it saves;
# - streaming with tool calls: assembling `tool_calls` from deltas by hand.

# %%
import json
import logging
import sys
import tempfile
import time
from pathlib import Path

from toolkit.client import connect
from toolkit.demo_tools import demo_toolset
from toolkit.display import show
from toolkit.loop import run_turn
from toolkit.messages import calls_of
from toolkit.tools import ToolSet, render_result, tool
from toolkit.trace import format_trace, read_trace

backend = connect(capture=True)

log = logging.getLogger("lesson12")
log.setLevel(logging.INFO)
if not log.handlers:
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s", "%H:%M:%S"))
    log.addHandler(handler)
log.propagate = False


tools = demo_toolset(["get_weather", "calculate"])  # the demo tools of toolkit/demo_tools.py
question = [{"role": "user", "content": "What is the weather in Beijing?"}]

# %% [markdown]
# ## 1. Logging one round by hand
#
# Five things are worth a log line: the tools sent, the calls the model made, how long each
# call took, what it returned, and the final answer. Here they are around one real request,
# sent with OpenAI's defaults: the endpoint decides whether to call.

# %%
log.info("tools sent: %s", tools.names)
started = time.perf_counter()
reply = backend.chat(messages=question, tools=tools.specs(), max_tokens=48, temperature=0, seed=0)
log.info("model answered in %.2f s, finish_reason=%s, usage=%s", time.perf_counter() - started,
         reply.choices[0].finish_reason, reply.usage.model_dump(exclude_none=True))
for call in calls_of(reply.choices[0].message):
    log.info("call %s %s(%s)", call.id, call.name, call.arguments)
    started = time.perf_counter()
    try:
        result = render_result(tools.get(call.name).invoke(call.arguments))
        log.info("  -> %s in %.3f s", result, time.perf_counter() - started)
    except Exception:  # logged in full here; lesson 9 covers what the model is told
        log.exception("  tool failed after %.3f s", time.perf_counter() - started)

# %% [markdown]
# Four of the five are there; the final answer needs a second request with the result, which
# the loop makes below. (On this run the model asks for `B Beijing`, the demo tool answers
# `"found": false`, and in the loop's turn below the model answers anyway: it says the weather
# tool gave Beijing "a continental climate, with a Mediterranean climate zone", which the tool
# never said, and `max_tokens` cuts the answer off. The record shows exactly that.) That is
# already more than most first prototypes keep. The loop keeps all of it, and more, for every
# round, without a single log statement in your code.
#
# ## 2. The execution record
#
# `run_turn` returns a `TurnResult`. Its `rounds` hold each request exactly as sent, the
# reply, the calls and their executions; `tool_executions` lists every execution of the turn
# in order. Each records the raw arguments
# (the model's text), the validated ones, the text the model was sent, the Python value the
# tool returned, the error kind if any, and the time taken.

# %%
trace_file = Path(tempfile.mkdtemp()) / "turns.jsonl"
result = run_turn(backend, question, tools, tool_choice="required", parallel_tool_calls=False, max_rounds=2,
                  request_options={"max_tokens": 48, "temperature": 0}, trace_path=str(trace_file))
print(format_trace(result))

# %%
for execution in result.tool_executions:
    show({key: execution.to_dict()[key] for key in
          ("call_id", "name", "arguments_raw", "arguments", "result_text", "error", "seconds")})
print("stop reason:", result.stop_reason, "| tokens over the turn:", result.usage)
assert result.tool_executions, "the first round was forced to call a tool"

# %% [markdown]
# `format_trace` is for people; `to_dict()` is for programs (the app's run history reads
# it). The round-by-round `usage` is what the endpoint counted, so token costs come from the
# server, not from an estimate.
#
# ## 3. The trace as JSON lines
#
# With `trace_path=...` the loop appends one JSON line per round as soon as the round ends. A
# turn that crashes half-way still leaves the rounds it finished, and JSON lines are easy to
# grep, load into pandas, or ship to a log system.

# %%
lines = read_trace(trace_file)
print(f"{len(lines)} line(s) in {trace_file.name}; keys of the first:\n{sorted(lines[0])}\n")
first = lines[0]
show({"turn_id": first["turn_id"], "index": first["index"], "tools_offered": first["tools_offered"],
      "calls": first["calls"], "usage": first["usage"],
      "model_seconds": first["model_seconds"], "stop_reason": first["stop_reason"]})


# %% [markdown]
# ## 4. Token control: cut long results
#
# Every tool result stays in the history and is sent again with every later request of the
# turn. A tool that returns every order it finds costs those tokens on every round after it, and
# can push the question out of a small context window. The fix the source articles recommend: return
# only what the model needs (the first few records and a total), and cap the length as a
# safety net. `run_turn(result_limit=...)` is that net: it cuts each result to so many
# characters and says how much was cut.

# %%
@tool
def list_orders(status: str) -> list[dict]:
    """List the current user's orders in one status.

    Args:
        status: pending, shipped or delivered.
    """
    return [{"order_id": f"A{1000 + n}", "status": status, "item": f"item number {n}", "price": 10 + n}
            for n in range(30)]


orders = ToolSet([list_orders])
ask = [{"role": "user", "content": "Which of my orders have shipped?"}]
force = {"type": "function", "function": {"name": "list_orders"}}
prompt_tokens = {}
for limit in (None, 300):
    turn = run_turn(backend, ask, orders, tool_choice=force, parallel_tool_calls=False, max_rounds=1, result_limit=limit,
                    request_options={"max_tokens": 48, "temperature": 0})
    execution = turn.tool_executions[0]
    second = turn.rounds[1]  # the request that carried the result back
    prompt_tokens[limit] = second.usage["prompt_tokens"]
    print(f"result_limit={limit!s:<5} result sent: {len(execution.result_text):>5} characters "
          f"({execution.truncated_chars} cut)   round 2 prompt_tokens={second.usage['prompt_tokens']}")
print(f"\ncutting the result saved {prompt_tokens[None] - prompt_tokens[300]} prompt tokens on the next request")
print("end of the cut result:", execution.result_text[-60:])

# %% [markdown]
# A cut in the middle of a JSON list is crude: the model sees where it stops and how much is
# missing, but not a total. A tool that returns `{"total": 30, "first_5": [...]}` does both
# jobs better; `result_limit` catches the tools that forget to.
#
# ## 5. Streaming with tool calls
#
# With `stream=True` the reply arrives as *chunks* (server-sent events). Text comes as
# `delta.content` pieces. Tool calls come as `delta.tool_calls` pieces, each with an `index`
# saying which call it belongs to: the first piece of a call carries its `id` and `name`,
# later pieces carry fragments of `arguments` to append. Nothing guarantees that a fragment is
# valid JSON on its own — only the concatenation is.
#
# A plain client is used here, so that what is timed is the stream alone (a capturing client
# passes the chunks on as they arrive too, and keeps the whole stream's text for later).

# %%
plain = connect()  # same embedded endpoint, no capture
request = dict(messages=question, tools=tools.specs(), tool_choice="required", parallel_tool_calls=False,
               max_tokens=48, temperature=0, seed=7)

started = time.perf_counter()
stream = plain.client.chat.completions.create(model=plain.model, stream=True,
                                              stream_options={"include_usage": True}, **request)
assembled: dict[int, dict] = {}  # index -> {"id", "name", "arguments"}
first_at, finish, usage = None, None, None
received = []  # every chunk, kept for the library's assembly below
for chunk in stream:
    received.append(chunk)
    if chunk.usage:
        usage = chunk.usage
    if not chunk.choices:
        continue
    choice = chunk.choices[0]
    finish = choice.finish_reason or finish
    for piece in choice.delta.tool_calls or []:
        first_at = first_at or time.perf_counter() - started
        call = assembled.setdefault(piece.index, {"id": None, "name": "", "arguments": ""})
        if piece.id:
            call["id"] = piece.id
        if piece.function and piece.function.name:
            call["name"] += piece.function.name
        if piece.function and piece.function.arguments:
            call["arguments"] += piece.function.arguments
        print(f"{time.perf_counter() - started:6.2f} s  index={piece.index} id={piece.id} "
              f"name={piece.function.name if piece.function else None!r} "
              f"arguments+={piece.function.arguments if piece.function else None!r}")
total = time.perf_counter() - started
print(f"\nfirst tool-call delta after {first_at:.2f} s, stream done after {total:.2f} s, finish_reason={finish}")
print("assembled:", json.dumps(assembled, ensure_ascii=False))
print("usage (last chunk):", usage.model_dump(exclude_none=True) if usage else None)
for call in assembled.values():
    json.loads(call["arguments"])  # the pieces add up to valid JSON

# %% [markdown]
# That loop is what you write when you consume a stream yourself (lab 12 asks for it). The
# `openai` package has the same bookkeeping built in: `ChatCompletionStreamState` takes the
# chunks one by one and builds the complete reply, as `client.chat.completions.stream(...)`
# does for you. Fed the chunks kept above, it must assemble the same calls:

# %%
from openai.lib.streaming.chat import ChatCompletionStreamState

state = ChatCompletionStreamState()
for chunk in received:
    state.handle_chunk(chunk)
final = state.get_final_completion().choices[0]
by_library = [{"id": c.id, "name": c.function.name, "arguments": c.function.arguments}
              for c in final.message.tool_calls or []]
print("assembled by the openai package:", json.dumps(by_library, ensure_ascii=False))
print("same as the loop above:", by_library == list(assembled.values()))
assert by_library == list(assembled.values())

# %% [markdown]
# The same request without streaming, for comparison. The ids differ (the server makes a new
# one per call); with the same seed and temperature 0 the name and arguments usually agree,
# and the cell prints whether they do.

# %%
whole = plain.chat(**request)
calls = [{"name": c.name, "arguments": c.arguments} for c in calls_of(whole.choices[0].message)]
print("non-streamed:", json.dumps(calls, ensure_ascii=False), "finish_reason:", whole.choices[0].finish_reason)
print("same calls as the assembled stream:",
      calls == [{"name": c["name"], "arguments": c["arguments"]} for c in assembled.values()])

# %% [markdown]
# Two practical points about streaming and tools:
#
# - a stream with tool calls does not end the turn: the client must run the tools and send
#   the results back, so the user sees nothing new while tools run (the stream "pauses"
#   between rounds);
# - the loop can only start a tool once its `arguments` are complete; the embedded server
#   (its parser is in lesson 13) streams the name first and the arguments in fragments,
#   exactly as hosted APIs do.

# %% [markdown]
# ## Other frameworks
#
# **LangChain** streams calls as `tool_call_chunks` on each `AIMessageChunk` and traces runs
# through callbacks (LangSmith). The **OpenAI Agents SDK** traces every run by default, and a
# run's `result.new_items` lists the tool calls and their outputs. In **pydantic-ai**,
# `result.all_messages()` holds each call and its return. **LangChain4j** (Java) gives the
# record as `Result.toolExecutions()` when an AI service method returns `Result<T>`.

# %% [markdown]
# ## Summary
#
# - Log five things per turn: tools sent, calls, execution time, results, final answer.
# - `run_turn` records them all: `result.rounds` (requests, replies, usage) and
#   `result.tool_executions`, `format_trace` for
#   people, `trace_path=` for one JSON line per round.
# - Tool results are re-sent every round: return less, and cap the rest with `result_limit`;
#   the server's `usage.prompt_tokens` shows the saving.
# - Streamed tool calls arrive as indexed deltas: id and name first, arguments in fragments,
#   valid JSON only once joined.
#
# Lab: open `labs/12_assemble_stream.py` and write the delta assembler yourself.
