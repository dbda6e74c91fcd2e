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
# # Lab 07b — "The model won't call my tool": a checklist
#
# Goes with lesson 7 (`lessons/07_tool_choice.py`).
#
# The most common complaint about tool calling is a reply that talks instead of calling. Before
# blaming the model, go down a checklist, cheapest step first. Write it as a function:
#
# `diagnose(backend, request)` gets the request body that got no call (`messages`, maybe
# `tools`, maybe `tool_choice`, as a dict) and a backend to send with (`backend.chat(**body)`).
# It returns the codes of what it found, in this order:
#
# 1. **Print the request** and look at it: are the tools in it at all? If `tools` is missing or
#    empty, return `["tools_missing"]` and stop: nothing else can be checked.
# 2. `"tool_choice_none"`: the request says `tool_choice: "none"`, which forbids calls.
# 3. `"description_too_short"`: some tool's description has fewer than 4 words (an empty one
#    counts). The description is the model's only clue about when to use the tool.
# 4. `"system_prompt_forbids"`: a `system` message tells the model not to use tools: its
#    content, lower-cased, holds one of `"do not use"`, `"don't use"`, `"never use"`,
#    `"never call"`, `"without tools"`, `"without using tools"`, `"不要使用"`, `"不要调用"`.
# 5. `"answered_in_text"`: send the request as it is, and read the reply's `content`. Text
#    and no `tool_calls` means the model decided a tool was not needed.
# 6. Force it: send a copy with `tool_choice="required"`. If a call comes back, append
#    `"calls_when_forced"`: the tool and its schema work, so the problem is the decision (steps
#    2 to 4 say where to look). If the endpoint refuses the field (`LabError`), append
#    `"forcing_refused"`: this endpoint has no `required`, and lesson 7's section 6 says what is
#    left.
#
# Do not change the request you were given: copy it. The grader runs seven cases it shows, then
# cases it makes up while grading, on a scripted endpoint whose behaviour each case fixes.

# %%
import copy

from labs.grading import NotDoneYet
from toolkit.client import connect
from toolkit.lab_error import LabError


# %% tags=["exercise"]
def diagnose(backend, request: dict) -> list[str]:
    """The findings of the checklist, in its order, for a request that got no tool call."""
    raise NotDoneYet

# %% [markdown]
# Try it on the embedded model, with a request that has two of the faults above.

# %%
request = {
    "messages": [{"role": "system", "content": "You are a friendly assistant. Never call tools, just answer."},
                 {"role": "user", "content": "What is 12 times 7?"}],
    "tools": [{"type": "function", "function": {
        "name": "calculate", "description": "Math.",
        "parameters": {"type": "object", "properties": {"expression": {"type": "string"}},
                       "required": ["expression"]}}}],
    "max_tokens": 48, "temperature": 0, "seed": 0,
}
try:
    print(diagnose(connect(), request))
except NotDoneYet:
    print("not done yet: write diagnose above, then run this cell again")

# %% [markdown]
# ## Grade

# %%
from labs.graders.why_no_call import grade, hints

report = grade(diagnose)
report

# %% [markdown]
# When it passes, fix the request above (a description that says when to use the tool, a
# system prompt that allows it) and run `diagnose` on it again: which findings are left?
#
# ## Hints

# %%
hints.next()

# %%
hints.next()

# %%
hints.next()
