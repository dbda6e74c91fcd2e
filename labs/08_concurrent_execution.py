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
# # Lab 08 — A concurrent executor that answers by id
#
# Goes with lesson 8 (`lessons/08_parallel_calls.py`).
#
# A model asked for several tools in one reply. Write
# `execute_concurrently(calls, tools_by_name, on_result, max_workers=4)` that:
#
# 1. runs the calls **at the same time**, in a thread pool of at most `max_workers` threads;
# 2. hands each call's tool message, `{"role": "tool", "tool_call_id": call.id, "content":
#    text}` (`toolkit.messages.tool_result` builds it), to `on_result(message)` **as soon as
#    that call's tool finishes** — before the slower ones are done: that is how a chat window
#    shows progress, or a log records each result;
# 3. returns all the tool messages, one per call, **in the order of the calls**, whatever order
#    the tools finished in;
# 4. turns each tool's return value into text with `toolkit.tools.render_result` (`None`
#    becomes `"success"`, a string stays as it is, anything else becomes JSON);
# 5. never lets one call sink the others: a name that is not in `tools_by_name`, or a tool that
#    raises, gives that call an error message, and the other calls still answer. Error texts
#    for the model follow one rule in every lab and in the toolkit (`toolkit/errors_for_model.py`): the
#    content starts with `"Error: "` (capital E, colon, space), says what failed and what to do
#    next, and never carries raw exception text (`toolkit.errors_for_model.sanitize` and
#    `tool_error_text` word and clean it, lesson 9).
#
# `calls` is a list of `toolkit.messages.ToolCall` (`.id`, `.name`, `.arguments` as raw JSON
# text, `.parsed_arguments()` for a dict). `tools_by_name` maps names to plain Python functions,
# called with the arguments as keywords.
#
# Rules 2 and 3 together are the point: results come back in the order the tools finish, so
# each finished result must be matched to *its call* (and its id), not to a position. The
# grader's tools are four lookups of the same tool with different cities, whose ids are in no
# sorted order. In the first case they finish in an order the grader fixes — each one waits
# until the results of the ones before it have reached `on_result` — so an executor that holds
# results back until all are done makes them wait in vain, and the grader says so. The tools
# also count how many of them run at the same moment: that count (not a stopwatch) tells the
# grader whether your executor is concurrent and whether it respects `max_workers`. After its
# public cases the grader makes up more as it grades: other cities and ids, other call and
# finishing orders, other pool sizes, one city asked for twice, failing calls in other places.
# The report shows their seed; `grade(execute_concurrently, seed=...)` gives the same ones again.

# %%
import json
import time
from concurrent.futures import ThreadPoolExecutor, as_completed

from labs.grading import NotDoneYet
from labs.graders.concurrent_execution import Overlap, make_tools, weather_call
from toolkit.messages import ToolCall, tool_result
from toolkit.tools import render_result

# %% tags=["exercise"]
def execute_concurrently(calls: list[ToolCall], tools_by_name: dict, on_result, max_workers: int = 4) -> list[dict]:
    """Run the calls in a thread pool; hand each message to ``on_result`` as its tool finishes;
    return one tool message per call, in the calls' order."""
    raise NotDoneYet

# %% [markdown]
# Try it on four weather lookups whose ids are not in order; compare the time with the sum of
# the sleeps (0.5 + 0.1 + 0.3 + 0.2 = 1.1 s). `on_result` here prints each message with the
# time it arrived. Times on a busy machine wobble; the order of the returned messages must not.

# %%
calls = [weather_call("call_9", "Beijing"), weather_call("call_2", "Shanghai"),
         weather_call("call_5", "Guangzhou"), weather_call("call_7", "Shenzhen")]
overlap = Overlap()
started = time.perf_counter()


def show_progress(message: dict) -> None:
    print(f"  {time.perf_counter() - started:.2f} s  on_result: {message}")


try:
    messages = execute_concurrently(calls, make_tools(overlap), show_progress, 4)
    print(f"{time.perf_counter() - started:.2f} s, at most {overlap.peak} tool(s) running at once; returned:")
    for message in messages:
        print(" ", message)
except NotDoneYet:
    print("not done yet: write execute_concurrently above, then run this cell again")

# %% [markdown]
# ## Grade

# %%
from labs.graders.concurrent_execution import grade, hints

report = grade(execute_concurrently)
report

# %% [markdown]
# When it passes: `toolkit.loop.run_turn(..., concurrent=True)` runs a reply's calls the same
# way inside the loop (`CallRunner.run_all` in `toolkit/execution.py`), without the progress
# callback. Compare it with yours: what does it do differently with a single call, and why?
#
# ## Hints

# %%
hints.next()

# %%
hints.next()

# %%
hints.next()
