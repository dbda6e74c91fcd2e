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
# # Lab 01 — Read a reply, refuse what is not offered, run the rest
#
# Goes with lesson 1 (`lessons/01_the_model_only_writes_text.py`).
#
# In lesson 1 the model was told to ask for a square root by writing one line:
#
#     CALL square_root(144)
#
# Your job is stage 3 of a tool call — the part that is always *your* code. Write
# `run_reply(text, tools)`:
#
# - `text` is whatever the model wrote; `tools` is a dict from tool name to a Python function
#   of one number, for example `{"square_root": math.sqrt}`.
# - **No** `CALL name(argument)` in the text: the model chose to answer in words. Return `None`.
# - A call of a name that is **not** a key of `tools` (`os.remove`, `print`, ...): run nothing
#   and return an error text that names the tool and the tools there are (the keys of `tools`).
# - An argument that is not a number: run nothing and return an error text that quotes the
#   argument and says it is not a number.
# - **The rule for error texts** (the same in every lab and in the toolkit): an error text for
#   the model starts with `"Error: "` (capital E, colon, space), says what failed and what to
#   do next, for example `"Error: there is no tool named 'print'. Call square_root, or answer
#   in words."`
# - Otherwise: convert the argument with `float(...)`, run the tool, and return its result as
#   text: `str(result)` (so `"12.0"` for `square_root(144)`).
#
# The model may write text around the call and put spaces in it (`CALL  cube ( 3 )`). Never use
# `eval`: the only way from a name to a function is the `tools` dict.

# %%
import math
import re

from labs.grading import NotDoneYet

# %% tags=["exercise"]
def run_reply(text: str, tools: dict) -> str | None:
    """Run the call written in `text` with one of `tools`; None if there is no call."""
    raise NotDoneYet

# %% [markdown]
# Try it on a few replies before grading:

# %%
try:
    for reply in ["CALL square_root(144)", "The square root of 49 is 7.", "CALL os.remove(/etc/passwd)"]:
        print(repr(reply), "->", repr(run_reply(reply, {"square_root": math.sqrt})))
except NotDoneYet:
    print("not done yet: write run_reply above, then run this cell again")

# %% [markdown]
# ## Grade
#
# The grader runs nine replies you can read, then seven it makes up as it grades: tools with
# other names and results, new numbers and new text around the call, different every time. It
# checks with tools that record whether they ran that a refused call runs nothing. The report
# shows the seed of the made-up replies; `grade(run_reply, seed=...)` gives the same ones again.

# %%
from labs.graders.read_and_run import grade, hints

report = grade(run_reply)
report

# %% [markdown]
# ## Hints
#
# Stuck? Run the next cell for a first nudge, the one after for a stronger one.

# %%
print(hints.next())

# %%
print(hints.next())

# %%
print(hints.next())
