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
# # Lesson 8 — Parallel calls: several tools in one reply
#
# *The course's terms are defined, each with the lesson that teaches it, in the [glossary](../docs/glossary.md).*
#
# "北京和上海今天天气怎么样？" needs two weather lookups that do not depend on each other. A
# model can ask for both in **one** reply: its `tool_calls` list simply has two entries, each
# with its own `id`. The application then runs both, and sends back two `role: tool` messages,
# each carrying the `tool_call_id` of the call it answers. "Parallel" here means *in one
# reply*; whether your code then runs the two tools one after the other or at the same time is
# a separate decision, and yours.
#
# ## What you will learn
#
# - what a reply with several calls looks like on the wire, from the embedded model;
# - how to run the calls sequentially and concurrently (a thread pool), with measured times;
# - why results must be matched to calls by `tool_call_id`, never by position, and what the
#   model reads when they are not;
# - how `parallel_tool_calls=False` limits a reply to one call, and when you want that;
# - the toolkit's `run_turn(..., concurrent=True)`;
# - with a streamed reply, how to start each tool as soon as its call is complete, and why the
#   turn still waits for the last tools before it can send the next request;
# - `async def` tools: `asyncio.gather` instead of threads, and a time-out that cancels the tool.

# %%
import json
import time
from concurrent.futures import ThreadPoolExecutor, as_completed

from toolkit import fake
from toolkit.client import connect
from toolkit.demo_tools import get_weather
from toolkit.display import show
from toolkit.engine import TUNED_MODEL
from toolkit.engine.grammar import build_gbnf
from toolkit.engine.template import render_prompt
from toolkit.lab_error import LabError
from toolkit.loop import run_turn
from toolkit.messages import ToolCall, assistant, calls_of, tool_result
from toolkit.stream_calls import run_streamed_calls
from toolkit.tools import Tool, ToolSet, render_result
from toolkit.trace import format_trace

backend = connect(capture=True)

# %% [markdown]
# ## 1. Two cities, one reply
#
# The weather tool is the demo one (`toolkit.demo_tools.get_weather`), which answers at once
# from made-up data. A real weather service takes a while to answer, so this lesson wraps the
# demo tool: same name, same schema, same answers, and a sleep of its own for each city before
# it answers. The sleeps stand in for slow services; they make the timings below visible and
# are not a model of any real one.

# %%
SECONDS = {"Beijing": 1.0, "Shanghai": 0.5, "Guangzhou": 0.8, "Shenzhen": 0.6}  # made-up service times


def weather_after_a_wait(arguments: dict, context=None) -> dict:
    answer = get_weather.invoke(arguments)  # the demo tool's own answer ...
    time.sleep(SECONDS.get(answer["city"], 0.5))  # ... after the service has taken its time
    return answer


slow_weather = Tool.from_spec(get_weather.spec(), weather_after_a_wait)  # what the model sees is unchanged
tools = ToolSet([slow_weather])
specs = tools.specs()
tools_by_name = {"get_weather": slow_weather}
print(slow_weather, "->", slow_weather.invoke('{"city": "北京"}'))


# %% [markdown]
# The question goes to the embedded model with `tool_choice="required"` (lesson 7), so that the
# reply is calls. The engine's grammar allows one *or more* call blocks in a reply, so the model
# may ask for both cities at once, or for only one: SmolLM2-135M was not trained for this, and
# the reply below is whatever it wrote on this run. On this run it asked for one city, `上海`.
# The reply's `finish_reason` is `"length"`: `max_tokens` ran out before the reply ended, and
# the call written before that point is whole (lesson 4).

# %%
question = [{"role": "user", "content": "北京和上海今天天气怎么样？"}]  # How is the weather in Beijing and Shanghai today?
reply = backend.chat(messages=question, tools=specs, tool_choice="required",
                     max_tokens=64, temperature=0, seed=7)
model_calls = calls_of(reply.choices[0].message)
print(f"{len(model_calls)} call(s) in one reply:")
for call in model_calls:
    print(f"  id={call.id}  {call.name}({call.arguments})")
show(backend.last_exchange().response["choices"][0])

# %% [markdown]
# ## 2. Running the calls: one after the other, or at the same time
#
# To compare fairly, the rest of the lesson uses a fixed list of four calls (the same shape the
# model's reply has, with ids written out so you can follow them):

# %%
calls = [ToolCall("call_bj", "get_weather", '{"city": "Beijing"}'),
         ToolCall("call_sh", "get_weather", '{"city": "上海"}'),
         ToolCall("call_gz", "get_weather", '{"city": "Guangzhou"}'),
         ToolCall("call_sz", "get_weather", '{"city": "Shenzhen"}')]


def run_one_call(call: ToolCall) -> str:
    """Run one call and return the text for the model."""
    return render_result(tools_by_name[call.name].invoke(call.arguments))


started = time.perf_counter()
sequential = [tool_result(call.id, run_one_call(call)) for call in calls]
sequential_seconds = time.perf_counter() - started
print(f"sequential: {sequential_seconds:.2f} s (the sleeps add up to {sum(SECONDS.values()):.1f} s)")

# %% [markdown]
# The four lookups do not depend on one another, and each spends its time waiting. A thread
# pool runs them at the same time; `pool.submit` returns a *future* per call, and
# `as_completed` hands the futures back in the order they **finish**:

# %%
started = time.perf_counter()
finished_order, results_by_id = [], {}
with ThreadPoolExecutor(max_workers=4) as pool:
    future_to_call = {pool.submit(run_one_call, call): call for call in calls}
    for future in as_completed(future_to_call):
        call = future_to_call[future]
        finished_order.append(call.id)
        results_by_id[call.id] = future.result()
concurrent = [tool_result(call.id, results_by_id[call.id]) for call in calls]  # back in call order
concurrent_seconds = time.perf_counter() - started

print(f"concurrent: {concurrent_seconds:.2f} s, about the slowest single call ({max(SECONDS.values()):.1f} s)")
print("call order:    ", [call.id for call in calls])
print("finished order:", finished_order)
assert concurrent == sequential  # same messages, same ids, same order

# %% [markdown]
# These timings come from `time.sleep`, so they illustrate concurrency rather than measure any
# service; on a busy machine they wobble. Two caveats that the sleeps hide:
#
# - Threads help tools that *wait* (HTTP, databases, files). A tool that computes in pure Python
#   holds the interpreter lock, and threads will not make it faster.
# - Running at the same time is only right when the calls are independent and free of shared
#   side effects. "Book the cheapest flight" after "search flights" must wait for the search.
#
# ## 3. Matching results by `tool_call_id`
#
# The finish order above is not the call order. Code that forgets this, say by collecting
# results as they finish and pairing them with the calls by position, sends each result under
# the wrong id. Nothing crashes: the request is perfectly valid, just wrong.

# %%
finished_texts = [results_by_id[call_id] for call_id in finished_order]  # as a naive loop collects them
mismatched = [tool_result(call.id, text) for call, text in zip(calls, finished_texts)]
for message, call in zip(mismatched, calls):
    print(f"{message['tool_call_id']} asked for {json.loads(call.arguments)['city']:<10} "
          f"-> was sent {message['content']}")

# %% [markdown]
# What does the model make of it? The model never sees Python objects, only the prompt its
# server renders. Here is the embedded engine's rendering of that history (the same template
# that serves the model, `toolkit/engine/template.py`), cut to the tool results: under
# `call_bj`, the model reads the weather of whichever city finished first.

# %%
history = question + [assistant(None, calls)] + mismatched
prompt = render_prompt(history, specs)
print(prompt[prompt.index("<|im_start|>tool"):])

# %% [markdown]
# An id that matches *no* call is caught, at least: OpenAI's API, and the embedded endpoint
# which copies its checks, refuse the request with HTTP 400 before any model runs. A real
# request, computed:

# %%
typo = question + [assistant(None, calls[:1]), tool_result("call_beijing", sequential[0]["content"])]
try:
    backend.chat(messages=typo, tools=specs, max_tokens=8)
except LabError as error:
    print(error)

# %% [markdown]
# ### Ids out of order, through the toolkit's loop (scripted)
#
# `run_turn(..., concurrent=True)` runs a reply's calls in a thread pool and sends the results
# back in the calls' order, each under its own id. To check that on an *exact* case we need a
# reply whose ids are not in any sorted order and whose slowest call comes first, which the
# small model will not produce on demand. So this cell uses the **scripted fake model**: its
# two replies are written by hand, and only what the loop *sent* is of interest.

# %%
scripted = fake.ScriptedModel([
    fake.calls(fake.call("get_weather", {"city": "北京"}, id="call_9"),   # slowest, finishes last
               fake.call("get_weather", {"city": "上海"}, id="call_2"),   # fastest, finishes first
               fake.call("get_weather", {"city": "深圳"}, id="call_5")),
    fake.text("北京晴，24°C；上海多云，27°C；深圳雷阵雨，29°C。"),
])
result = run_turn(scripted.backend(), question, tools, concurrent=True)
second_request = scripted.requests[1]["messages"]
for message in second_request[2:]:
    print(message["tool_call_id"], "->", message["content"])
print()
print(format_trace(result))

# %%
arguments_sent = {call["id"]: call["function"]["arguments"] for call in second_request[1]["tool_calls"]}
for message in second_request[2:]:  # each result is the answer to the arguments of its own call
    assert json.loads(message["content"]) == get_weather.invoke(arguments_sent[message["tool_call_id"]])
print("every result is under the id of the call that asked for it")

# %% [markdown]
# ## 4. `parallel_tool_calls=False`: one call per reply
#
# Sometimes you want the model to go one step at a time: when the second call depends on the
# first one's result, or when tools have side effects that must happen in order. The request
# field `parallel_tool_calls: false` asks for at most one call per reply. In the embedded engine
# it removes the repetition from the grammar's `calls` rule (computed):

# %%
for parallel in (True, False):
    rule = next(line for line in build_gbnf(specs, "required", parallel).splitlines()
                if line.startswith("calls ::="))
    print(f"parallel_tool_calls={parallel!s:<5} {rule}")

# %% [markdown]
# The same question, with parallel calls allowed and not allowed (the first reply is the one
# from section 1, which was sent without the field; the default is `true`):

# %%
reply_single = backend.chat(messages=question, tools=specs, tool_choice="required",
                            parallel_tool_calls=False, max_tokens=64, temperature=0, seed=7)
print("sent parallel_tool_calls:", backend.last_exchange().request.get("parallel_tool_calls"))
print("default (true): ", [(c.name, c.arguments) for c in model_calls])
print("false:          ", [(c.name, c.arguments) for c in calls_of(reply_single.choices[0].message)])

# %% [markdown]
# On this run the two replies are identical: the model wrote one call, for `上海`, either way,
# so this run shows no difference. What guarantees one call with `false` is the grammar rule
# printed above: it admits exactly one call block, so the second city can only come in a later
# round, after the first result (a model that knows what it is doing asks for it then).
# Hosted APIs accept the same field; with `false` they return at most one call.
#
# ## 5. The toolkit: a real turn with concurrent execution
#
# `run_turn` does all of the above: it asks the model, runs the calls (sequentially by default,
# or in a thread pool with `concurrent=True, max_workers=...`; a single call runs in the
# calling thread), sends the results back by id, and asks again. One real
# turn on the embedded model, with the first request forced to call (the later ones are
# `"auto"`) and one round of tools allowed. The trace shows each execution's time next to the
# model's. The engine never sends a call that repeats one already answered (lesson 13); any
# other call goes out, and the turn then stops at the limit.

# %%
result = run_turn(backend, question, tools, tool_choice="required", concurrent=True,
                  max_rounds=1, request_options={"max_tokens": 64, "temperature": 0, "seed": 7})
print(format_trace(result))
first = result.rounds[0]
if first.executions:
    print(f"\nround 1: the tools took {first.seconds - first.model_seconds:.2f} s of wall time; "
          f"run one by one they would have taken {sum(e.seconds for e in first.executions):.2f} s")

# %% [markdown]
# On this run the model asked for one city, `上海`, so there was one call to run, in the
# calling thread, and the pool saved nothing (0.50 s either way). In round 2 it asked for
# `Shanghai`: the same city to the tool, but not the same arguments, so the engine sent the
# call, and the turn stopped at the limit without an answer.

# %% [markdown]
# ## 6. A streamed reply: start each tool as soon as its call is complete
#
# With `stream=True` (lesson 12) a reply's calls arrive as `delta.tool_calls` pieces, each
# with the `index` of the call it belongs to: the first piece of a call brings its `id` and
# name, later pieces append fragments of `arguments`. No piece says "this call is finished".
# Two things do:
#
# - a piece for the **next index** arrives: servers send one call after another (OpenAI does,
#   the embedded endpoint does), so the previous call's arguments are final;
# - the stream **ends** (the chunk with `finish_reason`): the last call is final too.
#
# Code that first assembles the whole reply and only then runs the tools leaves them idle
# while the model is still writing the later calls. `toolkit.stream_calls.run_streamed_calls`
# (read its source: it is short) starts each call's tool in a thread pool the moment the call
# is complete, runs every call the way `run_turn` does (a failing tool or unreadable arguments
# become `Error: ...` text, never an exception), and notes the time of each event.
#
# To get an exact timeline this part uses the **scripted fake model** again: the small model
# rarely writes four calls, and its speed wobbles with the machine's load. The fake streams a
# reply the way hosted APIs do (each call's id and name, then its arguments in 8-character
# fragments); `paced` hands on one chunk every 0.1 s, so each call takes 0.4 s to arrive. The
# four calls are the ones from section 2, and the tools sleep as before (1.0, 0.5, 0.8 and
# 0.6 s).

# %%
def paced(chunks, seconds_per_chunk: float = 0.1):
    """Hand the chunks on one at a time, as a model that writes slowly would send them."""
    for chunk in chunks:
        time.sleep(seconds_per_chunk)
        yield chunk


def four_calls_streamed():
    scripted = fake.ScriptedModel([fake.calls(*(fake.call(c.name, c.arguments, id=c.id) for c in calls))])
    return paced(scripted.chat.completions.create(model="scripted", messages=question, stream=True))


early = run_streamed_calls(four_calls_streamed(), tools, start="as_complete")
print(early.format_timeline())
print()
print(early.format_chart())

# %% [markdown]
# Read it from the top. Call 0 (Beijing) is complete when call 1's first piece arrives, and its
# tool starts right then, while calls 1, 2 and 3 are still on their way; so do the next two.
# Call 3 is complete only when the stream ends, so its tool can only start then. From
# `stream ended` to `all results ready` nothing new can happen: the next request needs every
# result, so the turn waits for the tools still running. That is the pause a user sees
# between a streamed reply and the answer after it.
#
# The same calls, the same tools, but the reply read whole before any tool starts (they still
# run at the same time, in the same pool):

# %%
late = run_streamed_calls(four_calls_streamed(), tools, start="after_stream")
print(late.format_chart())
print()
for label, run in (("start each as complete", early), ("read the whole reply first", late)):
    print(f"{label:27}: stream ended at {run.stream_seconds:.2f} s, all results at {run.ready_seconds:.2f} s, "
          f"waited {run.wait_after_stream:.2f} s after the stream")
assert early.result_messages() == late.result_messages()  # same results, same ids, same order

# %% [markdown]
# These times come from `time.sleep` and a paced fake, so they show the shape, not a
# measurement. The shape holds in general: starting early hides the tools of the *earlier*
# calls behind the stream, up to the time the model takes to write the calls after them. The
# last call's tool is never hidden, so the wait after the stream is at least that tool's time
# (here Shenzhen's 0.6 s, against Beijing's 1.0 s when everything waits for the end). A
# second caveat: a tool that starts early starts before the model has finished its reply; if
# the model's later calls could change what an earlier one should do, or the reply might be
# thrown away, starting early is wrong, for the same reasons as in section 2.
#
# Either way the results go back as before: the assistant message with every call, then one
# `role: tool` message per call, in the calls' order, under their ids:

# %%
next_request = question + [early.assistant_message()] + early.result_messages()
for message in next_request[2:]:
    print(message["tool_call_id"], "->", message["content"])

# %% [markdown]
# ### One live streamed turn
#
# On the embedded endpoint, with the tool-tuned model (`SmolLM2-135M-Instruct+tools`, lesson
# 13). It is one run at temperature 0 with a seed, and the number of calls below is whatever
# the model wrote on this run. On this run it asked for both cities, `上海` then `北京`, where
# the base model asked for one (section 1):

# %%
tuned = connect(model=TUNED_MODEL)
stream = tuned.chat(messages=question, tools=specs, tool_choice="required", max_tokens=96,
                    temperature=0, seed=7, stream=True)
live = run_streamed_calls(stream, tools)
print(f"{len(live.calls)} call(s), finish_reason={live.finish_reason}")
print(live.format_timeline())
print()
print(live.format_chart())
if live.executions:
    print(f"\nwait after the stream: {live.wait_after_stream:.2f} s; with every tool started at the end it "
          f"would be the slowest tool's time, {max(e.seconds for e in live.executions):.2f} s")

# %% [markdown]
# How much the tools can overlap the stream depends on the server as well as on the model. The
# embedded engine sends the first call as the model writes it, but holds a second or later
# call back until it is complete (it may turn out to be a repeat, which the engine drops; see
# lesson 13). So call 0 is known to be complete only when call 1 arrives, in one piece. After
# that the stream stays open while the engine asks the model whether another call follows (and,
# when the model starts one, until it is written or dropped): call 0's tool runs in that time,
# and the last call's tool is left for the wait after the stream. On this run the last call,
# `北京`, also has the slowest tool (1.0 s), so starting early saved nothing at all: the wait
# was that tool's time either way (1.00 s). The times are this machine's on this run, and
# the model's share of them grows with the machine's load.
#
# A server that streams every call as it is written gives the early start more to hide. Some
# code starts a call sooner still, as soon as its `arguments` parse as a complete JSON object;
# that trusts the server to add nothing after the closing brace.

# %% [markdown]
# ## 7. Async tools: waiting without threads, and a time-out that really stops the tool
#
# Tool code that waits on a network is often written `async def` (an async HTTP client, an
# async database driver). Two things change. Running several calls at once needs no threads:
# one event loop switches between the coroutines at every `await`, and `asyncio.gather` returns
# their results in the order it was given them, not the order they finish, so the ids line up
# by construction. And a coroutine can be *cancelled*: a thread that overruns its time-out
# (lesson 9) can only be abandoned.
#
# The same slow weather service, written async. A Jupyter cell already runs inside an event
# loop, so the cell awaits the coroutine directly (top-level `await`, which Jupyter allows);
# in a script you would call `asyncio.run(...)`.

# %%
import asyncio


async def weather_async(arguments: dict, context=None) -> dict:
    answer = get_weather.invoke(arguments)
    await asyncio.sleep(SECONDS.get(answer["city"], 0.5))  # stands in for `await client.get(...)`
    return answer


async def run_calls_async(calls: list[ToolCall]) -> list[dict]:
    answers = await asyncio.gather(*(weather_async(json.loads(call.arguments)) for call in calls))
    return [tool_result(call.id, render_result(answer)) for call, answer in zip(calls, answers)]


started = time.perf_counter()
gathered = await run_calls_async(calls)  # top-level await: Jupyter runs the cell in its own loop
print(f"gathered: {time.perf_counter() - started:.2f} s in one thread, about the slowest call "
      f"({max(SECONDS.values()):.1f} s)")
assert gathered == sequential  # the same messages, ids and order as the sequential run

pending = run_calls_async(calls)
try:
    asyncio.run(pending)  # what a script would do; in a notebook the kernel's loop is running
except RuntimeError as error:
    pending.close()  # never started: close it so Python does not warn about it later
    print("asyncio.run in a notebook:", error)

# %% [markdown]
# The toolkit takes `async def` tools as they are. `run_turn` (through its `CallRunner`) awaits
# each on an event loop of its own in a worker thread, so it works from a notebook cell, where
# `asyncio.run` just failed, and from a script alike. With `concurrent=True` the calls of one
# reply run at the same time, as before. The model is scripted here, so that the reply holds
# exactly the four calls above.

# %%
async_weather = Tool.from_spec(get_weather.spec(), weather_async)
print("async tool:", async_weather.is_async)
scripted = fake.ScriptedModel([fake.calls(*[fake.call(c.name, c.arguments, id=c.id) for c in calls]),
                               fake.text("Four cities, four answers.")])
started = time.perf_counter()
result = run_turn(scripted.backend(), question, [async_weather], concurrent=True)
print(f"run_turn with an async tool, concurrent: {time.perf_counter() - started:.2f} s")
assert [m for m in scripted.requests[1]["messages"] if m["role"] == "tool"] == sequential
print("the results sent back are the same messages as the sequential run's")

# %% [markdown]
# At its time-out an async tool is cancelled: `asyncio` raises `CancelledError` at the `await`
# it is waiting on, so its `finally` blocks run (a connection closed, a lock released) before
# the model reads the time-out message. A tool that swallows the cancellation gets a short grace
# and is then left behind, like a thread, so it still cannot hold the turn.

# %%
cleanups = []


async def stuck_lookup(arguments: dict, context=None) -> str:
    try:
        await asyncio.sleep(30)  # a service that never answers
        return "too late"
    finally:
        cleanups.append("connection closed")  # runs when the tool is cancelled


stuck = Tool.from_spec({"name": "lookup", "description": "Look something up.",
                        "parameters": {"type": "object", "properties": {}}}, stuck_lookup, timeout=0.5)
scripted = fake.ScriptedModel([fake.calls(fake.call("lookup", {}, id="call_1")), fake.text("It timed out.")])
started = time.perf_counter()
execution = run_turn(scripted.backend(), question, [stuck]).tool_executions[0]
print(f"after {time.perf_counter() - started:.2f} s: {execution.error}; the model reads: {execution.result_text}")
print("the log says:", execution.error_detail)
print("cleanup:", cleanups)

# %% [markdown]
# ## Other frameworks
#
# - **LangChain** (`ToolNode` in LangGraph) runs the calls of one message concurrently and
#   returns one `ToolMessage` per call, each with its `tool_call_id`; `bind_tools(...,
#   parallel_tool_calls=False)` sends the field.
# - The **OpenAI Agents SDK** sends it from `ModelSettings(parallel_tool_calls=False)` on the
#   `Agent`.
# - **LangChain4j** (Java) runs the calls of one reply sequentially unless the AI service is
#   built with `executeToolsConcurrently()`; with one call it stays in the calling thread. The
#   model builder's `parallelToolCalls(false)` sends the request field.

# %% [markdown]
# ## Summary
#
# - Several independent calls can come in one reply; each has an `id`, and each result goes
#   back as its own `role: tool` message with that `tool_call_id`.
# - Running them in a thread pool takes about as long as the slowest one instead of the sum;
#   right for tools that wait, wrong for calls that depend on each other.
# - Results finish in any order: keep them by id and send them in the calls' order. A result
#   under the wrong id is a valid request that tells the model something false; an unknown id is
#   refused with HTTP 400.
# - `parallel_tool_calls=False` limits a reply to one call; the embedded engine enforces it in
#   its grammar.
# - With a streamed reply, a call is complete when the next index starts or the stream ends;
#   starting its tool then hides the earlier tools behind the stream, but the turn still waits
#   after the stream for the last ones before it can send the next request.
# - An `async def` tool waits without a thread; `asyncio.gather` runs several at once and keeps
#   their order. At its time-out it is cancelled, so its cleanup runs. The toolkit awaits it on a
#   loop of its own, so it works from a notebook, where `asyncio.run` refuses to start.
#
# Lab: open `labs/08_concurrent_execution.py` and write a concurrent executor that hands each
# result on as soon as its tool finishes (so results arrive out of order, and only the
# `tool_call_id` says which call each answers), and still returns them in call order.
