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
# # Lab 02b — Repair almost-JSON by hand
#
# Goes with lesson 2 (`lessons/02_string_protocol.py`).
#
# Models that were not trained on a format write JSON the way they have seen it in code and
# chat: with JavaScript habits, Python habits and word-processor quotes. Write `repair(text)`
# that returns the dict the text means. It must fix:
#
# | drift | example |
# |---|---|
# | trailing commas | `{"city": "Beijing",}` |
# | single quotes | `{'name': 'square_root'}` |
# | unquoted keys | `{city: "Beijing"}` |
# | smart quotes | `{“city”: “Shanghai”}` |
# | comments | `{"x": /* the number */ 16}`, `// ...` to the end of a line |
#
# and it must **not** damage what is inside a string: the apostrophe in `"Xi'an"`, the `//` in
# `"https://example.com"`, a `",}"` that is part of a value. Valid JSON must come back exactly
# as `json.loads` reads it.
#
# The grader shows each drift once in cases you can read, then tries eight it makes up as it
# grades: new keys and values with the same drifts, alone and all together, different every
# time. The report shows their seed; `grade(repair, seed=...)` gives the same ones again.
#
# Use `json` and `re` only. (The toolkit's `repair_json` and the `json_repair` library solve
# this too; lesson 2 compares them. Here you build it yourself.)

# %%
import json
import re

from labs.grading import NotDoneYet

# %% tags=["exercise"]
def repair(text: str) -> dict:
    """The dict that the almost-JSON `text` means."""
    raise NotDoneYet

# %% [markdown]
# Try it on a reply with every drift at once:

# %%
sample = "{name: 'get_weather', // which tool\n arguments: {city: “Beijing”, unit: 'celsius',},}"
try:
    print(repair(sample))
except NotDoneYet:
    print("not done yet: write repair above, then run this cell again")

# %% [markdown]
# ## Grade

# %%
from labs.graders.json_repair import grade, hints

report = grade(repair)
report

# %% [markdown]
# ## Hints
#
# Each cell reveals one more hint. The second one holds the key idea: strings and structure
# must be told apart before anything is changed.

# %%
print(hints.next())

# %%
print(hints.next())

# %%
print(hints.next())
