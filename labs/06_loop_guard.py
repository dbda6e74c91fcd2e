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
# # Lab 06b — A guard against repeated calls
#
# Goes with lesson 6 (`lessons/06_the_loop.py`).
#
# A round limit stops a runaway loop, but late and bluntly: the model that asks for Beijing's
# weather six times has wasted five requests before the limit ends the turn without an answer.
# A sharper guard notices the *repetition*: the same tool with the same arguments, again. The
# result is already in the history, so instead of running the tool again the loop sends back a
# short refusal that tells the model to use what it has.
#
# Write two functions:
#
# - `call_key(call)`: a hashable key that is equal for two calls exactly when they call the same
#   tool with the same arguments. The arguments are raw JSON text, so `{"city": "Beijing",
#   "unit": "celsius"}` and `{ "unit":"celsius", "city":"Beijing" }` must give the same key, and
#   so must `"\u5317\u4eac"` and `"北京"`. Arguments that are not valid JSON must not crash it,
#   and must still be told apart: the same broken text for the same tool is the same call, any
#   other text (or another tool) is not.
# - `guard_repeats(calls, counts, limit)`: the loop calls it once per round with the calls of
#   the reply and the same `counts` dict for the whole turn. Count every call in `counts`
#   (key → times seen), in order, and return `{call.id: refusal}` for each call seen more than
#   `limit` times. Return `{}` when nothing is refused.
#
# A refusal is the text the model reads instead of a result, so it follows the rule for every
# error text sent to a model (the same in every lab and in the toolkit's `toolkit/errors_for_model.py`):
# it starts with `"Error: "` (capital E, colon, space), says what failed and what to do next.
# Name the tool, say that the call is a repeat (it was already made), and tell the model to use
# the result it already has.

# %%
import json

from labs.grading import NotDoneYet
from toolkit import fake
from toolkit.demo_tools import get_weather
from toolkit.messages import ToolCall, assistant_from_reply, calls_of, tool_result
from toolkit.tools import render_result

# %% tags=["exercise"]
def call_key(call: ToolCall):
    """A hashable key, equal for two calls of the same tool with the same arguments."""
    raise NotDoneYet


def guard_repeats(calls: list[ToolCall], counts: dict, limit: int) -> dict[str, str]:
    """Count the calls in ``counts``; return {call id: refusal} for each one beyond ``limit``."""
    raise NotDoneYet

# %% [markdown]
# ## See it in a loop
#
# A small loop that consults the guard before running each call (the demo `get_weather` of
# `toolkit/demo_tools.py` is the tool), and a **scripted** model that
# asks for Beijing's weather again and again until it reads a refusal (its replies are written
# by hand to show the mechanism; a real model may or may not heed the refusal, which is why the
# round limit stays as a backstop).

# %%
def stubborn(request):
    last = request["messages"][-1]
    if last["role"] == "tool" and last["content"].startswith("Error: "):
        return fake.text("Beijing is sunny, 24 °C.")
    return fake.calls(fake.call("get_weather", {"city": "Beijing"}))


def run_turn_by_hand_with_guard(backend, messages, tools_by_name, limit, max_rounds=6):
    counts, history = {}, list(messages)
    specs = [each.spec() for each in tools_by_name.values()]
    for _ in range(max_rounds):
        message = backend.chat(messages=history, tools=specs).choices[0].message
        calls = calls_of(message)
        if not calls:
            return history + [assistant_from_reply(message)], "answered"
        history.append(assistant_from_reply(message))
        refused = guard_repeats(calls, counts, limit)
        for call in calls:
            text = refused.get(call.id) or render_result(tools_by_name[call.name].invoke(call.arguments))
            history.append(tool_result(call.id, text))
    return history, "max_rounds"


model = fake.ScriptedModel([stubborn] * 10)
try:
    # the Chinese: How is the weather in Beijing?
    history, stop = run_turn_by_hand_with_guard(model.backend(), [{"role": "user", "content": "北京天气怎么样？"}],
                                                {"get_weather": get_weather}, limit=2)
    print(f"{stop} after {len(model.requests)} requests")
    for message in history:
        if message["role"] == "tool":
            print("  tool:", message["content"][:90])
except NotDoneYet:
    print("not done yet: write call_key and guard_repeats above, then run this cell again")

# %% [markdown]
# ## Grade
#
# Besides its public cases, the grader makes up calls as it grades: other tools and values,
# written with keys shuffled, other spacing and escapes, and a turn of several rounds with
# another limit. The report shows their seed; `grade(call_key, guard_repeats, seed=...)` gives
# the same ones again.

# %%
from labs.graders.loop_guard import grade, hints

report = grade(call_key, guard_repeats)
report

# %% [markdown]
# ## Hints

# %%
hints.next()

# %%
hints.next()

# %%
hints.next()
