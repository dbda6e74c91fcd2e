# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lab 10a — Score a call with BFCL's rules
#
# Goes with lesson 10 (`lessons/10_description_quality.py`).
#
# To say "the model picked the right tool 7 times out of 10" you need a checker that decides,
# for each call, whether it is right — and if not, why. The Berkeley Function Calling
# Leaderboard (BFCL) checks the call's structure (its AST) against an answer key. Write a small
# version of it for one call.
#
# `score(expected, call)` gets
#
# - `expected = {"name": ..., "parameters": <the tool's JSON Schema>, "arguments": <answer key>}`,
#   where the answer key maps each parameter to a **list of accepted values**; `""` in that list
#   means the parameter may be left out;
# - `call = {"name": ..., "arguments": <JSON text, or a dict>}` as the model sent it;
#
# and returns `None` when the call passes, or the first reason it fails, checked in this order:
#
# | reason | when |
# |---|---|
# | `"wrong_tool"` | the name differs |
# | `"unparsable"` | the arguments are not valid JSON, or not a JSON object |
# | `"missing_required"` | a parameter is absent that the schema requires, or that the key does not allow to leave out |
# | `"unexpected_parameter"` | a parameter the schema or the key does not have |
# | `"wrong_type"` | a value of the wrong JSON type: an int is fine for `number`; a bool is never an `integer` |
# | `"value_not_accepted"` | a value that is none of the accepted ones; strings compare ignoring case, spaces and punctuation |

# %%
import json

from labs.grading import NotDoneYet

example_key = {
    "name": "get_weather",
    "parameters": {"type": "object",
                   "properties": {"city": {"type": "string"},
                                  "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
                   "required": ["city"]},
    "arguments": {"city": ["Beijing", "北京"], "unit": ["celsius", ""]},
}


# %% tags=["exercise"]
def score(expected: dict, call: dict):
    """None when the call passes; otherwise the reason it fails (see the table above)."""
    raise NotDoneYet


# %% [markdown]
# Try it on three calls: one that passes after normalising, one with a value the key does not
# accept, one with a misspelt parameter.

# %%
tries = [{"name": "get_weather", "arguments": '{"city": "  BEIJING "}'},
         {"name": "get_weather", "arguments": '{"city": "Beijing", "unit": "kelvin"}'},
         {"name": "get_weather", "arguments": '{"cty": "Beijing"}'}]
for made in tries:
    try:
        print(f"{made['arguments']:<42} -> {score(example_key, made)}")
    except NotDoneYet:
        print("not done yet: write score above, then run this cell again")
        break

# %% [markdown]
# ## Grade
#
# Nineteen calls you can read, then eight the grader makes up as it grades: other tools,
# parameters, types and accepted values, one call for each reason and two that pass, written
# another way. The report shows their seed; `grade(score, seed=...)` gives the same ones again.
# Every expected reason, public or made up, agrees with the toolkit's full checker,
# `toolkit.bench.scoring.check`, which also handles nested objects, lists and parallel calls.

# %%
from labs.graders.bfcl_scoring import grade, hints

report = grade(score)
report

# %% [markdown]
# ## Hints

# %%
hints.next()

# %%
hints.next()

# %%
hints.next()
