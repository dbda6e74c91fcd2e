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
# # Lab 07 — `tool_choice`: a client default and a per-request override
#
# Goes with lesson 7 (`lessons/07_tool_choice.py`).
#
# Lesson 7's `ToolChoiceClient` holds a `tool_choice` set once on the client (a default for
# every request), and each `chat(...)` call may pass its own (an override). Write the decision
# a client makes before each request of a turn:
#
# `choose_tool_choice(default, override, tool_names, round_index)` returns the value to put in
# the request's `tool_choice` field, or `None` to leave the field out.
#
# - `default` and `override` are each `None`, `"auto"`, `"none"`, `"required"` or a named
#   function `{"type": "function", "function": {"name": "..."}}`. The override, when it is not
#   `None`, wins.
# - `tool_names` are the tools being sent. With no tools, never send `tool_choice` (APIs refuse
#   it).
# - `round_index` is 0 for the first request of a turn, 1 for the request after the first
#   tool results, and so on. A choice that *forces* a call (`"required"` or a named function)
#   holds for the first request only; later requests get `"auto"`, or the model could never
#   answer. `"auto"` and `"none"` stay as they are.
# - Mistakes in the caller's code raise `ValueError` before anything is sent, with a message
#   naming the bad value: a mode that does not exist, or a named function that is not among the
#   tools being sent.
#
# No model is needed: the grader checks eleven situations you can read, then seven it makes up
# as it grades (other tools, defaults, overrides, rounds and misspellings). The report shows
# their seed; `grade(choose_tool_choice, seed=...)` gives the same ones again.

# %%
from labs.grading import NotDoneYet

REQUIRED = "required"


def named(name: str) -> dict:
    return {"type": "function", "function": {"name": name}}


tool_names = ["get_weather", "calculate", "get_order_status"]  # the demo tools being sent

# %% tags=["exercise"]
def choose_tool_choice(default, override, tool_names: list[str], round_index: int):
    """The tool_choice to send with this request, or None to leave the field out."""
    raise NotDoneYet

# %% [markdown]
# Try it: a client whose default is `"required"`, through the first three requests of a turn,
# and once with a per-request override.

# %%
try:
    for round_index in range(3):
        print(f"request {round_index + 1}:", choose_tool_choice(REQUIRED, None, tool_names, round_index))
    print("override 'none':", choose_tool_choice(REQUIRED, "none", tool_names, 0))
except NotDoneYet:
    print("not done yet: write choose_tool_choice above, then run this cell again")

# %% [markdown]
# ## Grade

# %%
from labs.graders.tool_choice_default import grade, hints

report = grade(choose_tool_choice)
report

# %% [markdown]
# When it passes, find the same two decisions in the toolkit: `choice_after_first_round` and
# `request_for_round` in `toolkit/round_trip.py`.
#
# ## Hints

# %%
hints.next()

# %%
hints.next()

# %%
hints.next()
