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
# # Lab 02a — Extract tool calls with a regular expression
#
# Goes with lesson 2 (`lessons/02_string_protocol.py`).
#
# In the string protocol the model writes each tool call as a JSON object inside a tag:
#
#     <tool>{"name": "get_weather", "arguments": {"city": "Beijing"}}</tool>
#
# Write `extract_calls(text)` that returns **every** call in a reply, in order, as a list of
# dicts `{"name": ..., "arguments": {...}}` (an empty list when the reply has no call). Real
# replies drift from the format, and your function must cope with:
#
# - text before and after the calls, in English or Chinese;
# - JSON spread over several lines;
# - several calls in one reply;
# - a Markdown code fence (```` ```json ... ``` ````) inside the tags, or around them;
# - a missing `</tool>`: the call then ends at the next `<tool>` or at the end of the text.
#
# The JSON itself is always valid here; broken JSON is the next lab (`labs/02_json_repair.py`).
# Use the `re` module and `json.loads`; no other library.

# %%
import json
import re

from labs.grading import NotDoneYet

# %% tags=["exercise"]
def extract_calls(text: str) -> list[dict]:
    """Every <tool>{json}</tool> call in `text`, as {"name": ..., "arguments": {...}} dicts."""
    raise NotDoneYet

# %% [markdown]
# Try it on one reply with two drifts at once: a code fence and a forgotten closing tag.

# %%
sample = 'Checking now.\n<tool>\n```json\n{"name": "get_weather", "arguments": {"city": "北京"}}\n```\n<tool>{"name": "get_weather", "arguments": {"city": "Shanghai"}}'
try:
    print(extract_calls(sample))
except NotDoneYet:
    print("not done yet: write extract_calls above, then run this cell again")

# %% [markdown]
# ## Grade
#
# Ten replies you can read, then six the grader makes up as it grades: new tools, arguments
# and numbers of calls in the same shapes, different every time (the report shows their seed;
# `grade(extract_calls, seed=...)` gives the same ones again). For each failure the grader
# shows the input, what was expected and what your function returned.

# %%
from labs.graders.extract_regex import grade, hints

report = grade(extract_calls)
report

# %% [markdown]
# ## Hints
#
# Each cell reveals one more hint, from a gentle nudge to nearly the answer.

# %%
print(hints.next())

# %%
print(hints.next())

# %%
print(hints.next())
