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
# # Lab 06a — The loop, with results matched by id
#
# Goes with lesson 6 (`lessons/06_the_loop.py`).
#
# Write `run_turn_safely(client, messages, tools_by_name, max_rounds)`, the heart of every
# tool-calling framework:
#
# 1. Ask the model: `client.chat(messages=history, tools=[...])`, with every tool's spec
#    (`tool.spec()`). `client` is a toolkit `Backend` (`connect()` or a scripted fake's
#    `.backend()`); the reply is an `openai` `ChatCompletion`, its message in
#    `reply.choices[0].message`.
# 2. If the message has no `tool_calls`, append it to the history and return
#    `(history, "answered")`.
# 3. Otherwise append the assistant message (with its `tool_calls`), run **every** call, and
#    append one `{"role": "tool", "tool_call_id": ..., "content": ...}` message per call, in the
#    calls' order, each under **the id of the call it answers**. Then ask again.
# 4. Errors never crash the loop; they go back to the model as the call's result, and the model
#    is asked again. The rule for error texts, the same in every lab and in the toolkit
#    (`toolkit/errors_for_model.py`): the text starts with `"Error: "` (capital E, colon, space), says what
#    failed and what to do next, and is never raw exception text or a traceback.
#    - A call to a name that is not in `tools_by_name`: say that there is no tool by the name the
#      model asked for (name it) and name the ones that exist (the keys of `tools_by_name`:
#      the grader offers a different set of tools in that case, and makes up the name).
#    - A tool that raises (or whose arguments are wrong): say which tool failed, in one short
#      line cleaned by `toolkit.errors_for_model.sanitize` (lesson 9), at most 300 characters.
#      `toolkit.errors_for_model.tool_error_text(error, name)` words it the toolkit's way. The exception's
#      details (paths, hosts, keys) belong in your log, not in the model's context.
# 5. `max_rounds` is the number of rounds of tool calls you may run. When the model asks for
#    tools once more after that, do **not** run them, do **not** append that reply (a history
#    ending in calls without results is refused by the next request), and return
#    `(history, "max_rounds")`. So the model is asked at most `max_rounds + 1` times.
#
# `tools_by_name` maps names to toolkit `Tool`s: `tool.invoke(arguments)` validates the raw JSON
# arguments and runs the function; `toolkit.tools.render_result(value)` turns the value into
# text. `toolkit.messages` has `calls_of(message)`, `assistant_from_reply(message)` and
# `tool_result(id, text)`. Start `history` as a copy of `messages`.
#
# The grader runs your loop against the **scripted fake model**: its replies are written by
# hand so that each case is exact (two calls in one reply, ids in no order, a made-up tool,
# arguments that are wrong, a model that never stops). The made-up tool and the wrong arguments
# are drawn as it grades; the report shows the seed, and `grade(run_turn_safely, seed=...)`
# draws the same ones again. The fake also records every request, so the grader checks what your
# loop *sent back*, not only what it returned.

# %%
import json

from labs.grading import NotDoneYet
from toolkit import fake
from toolkit.demo_tools import demo_toolset
from toolkit.errors_for_model import sanitize, tool_error_text
from toolkit.messages import assistant_from_reply, calls_of, tool_result
from toolkit.tools import render_result

tools = demo_toolset(["get_weather", "calculate"])  # the demo tools of toolkit/demo_tools.py
tools_by_name = {each.name: each for each in tools}
print("tools:", list(tools_by_name))

# %% tags=["exercise"]
def run_turn_safely(client, messages: list[dict], tools_by_name: dict,
                    max_rounds: int) -> tuple[list[dict], str]:
    """Run one turn to its end; return (history, "answered" or "max_rounds")."""
    raise NotDoneYet

# %% [markdown]
# Try it on a two-round script (scripted, so you know exactly what the model "says"): first a
# square root, then an addition with the root's result, then an answer. Both are `calculate`
# calls: the scripted model takes the question in two steps.

# %%
script = fake.ScriptedModel([
    fake.calls(fake.call("calculate", {"expression": "sqrt(144)"}, id="call_1")),
    fake.calls(fake.call("calculate", {"expression": "12 + 5"}, id="call_2")),
    fake.text("√144 + 5 = 17"),
])
try:
    # the Chinese: What is the square root of 144, plus 5?
    history, stop = run_turn_safely(script.backend(), [{"role": "user", "content": "144的平方根加5等于多少？"}],
                                    tools_by_name, 3)
    print("stop:", stop, "| requests sent:", len(script.requests))
    for message in history:
        print(json.dumps(message, ensure_ascii=False) if isinstance(message, dict) else message)
except NotDoneYet:
    print("not done yet: write run_turn_safely above, then run this cell again")

# %% [markdown]
# ## Grade

# %%
from labs.graders.loop_with_ids import grade, hints

report = grade(run_turn_safely)
report

# %% [markdown]
# When it passes, compare your loop with `toolkit.loop.run_turn`: it does the same, plus return
# behaviour, hidden context, concurrent execution, error wording and a trace (lesson 6).
#
# ## Hints

# %%
hints.next()

# %%
hints.next()

# %%
hints.next()
