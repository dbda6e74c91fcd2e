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
# # Lab 13 — Parse the model's call blocks
#
# Goes with lesson 13 (`lessons/13_under_the_hood.py`).
#
# The embedded engine's grammar makes the model write each tool call as a block:
#
#     <tool_call>
#     {"name": "get_weather", "arguments": {"city": "Beijing"}}
#     </tool_call>
#
# and the engine's parser turns the generated text back into `tool_calls`. Write that parser:
# `parse_calls(text)` returns a tuple `(content, calls)`:
#
# - text that does not start with `<tool_call>` (leading whitespace aside) is plain text:
#   `(text, [])`;
# - otherwise every complete block becomes `{"name": ..., "arguments": <JSON text>}` and the
#   result is `(None, calls)` — a reply with calls has no content, as in OpenAI's API;
# - a block cut off before its JSON object is complete (the model ran out of `max_tokens`) is
#   dropped here; if no complete call is left, the whole text is content after all. (The
#   engine itself keeps such a call with its partial arguments, as OpenAI's API does with
#   `finish_reason` "length", so the caller can see a call was attempted. Its arguments are
#   not JSON, so it can never run: dropping it keeps this exercise to complete calls.)
# - `arguments` is a JSON **string**, as in the API (whitespace inside it does not matter to
#   the grader).
#
# The grader compares your parser with the engine's own, `toolkit.engine.parser.parse_reply`,
# minus the cut-off calls (don't look at it before you try), on twelve texts you can read and
# five it makes up as it grades: other tools, nested arguments with braces, quotes and tags
# inside strings, other spacing and cut-off points. The report shows their seed;
# `grade(parse_calls, seed=...)` gives the same ones again.

# %%
import json

from labs.grading import NotDoneYet


# %% tags=["exercise"]
def parse_calls(text: str):
    """(content, calls) from generated text; calls are {"name", "arguments" (JSON text)} dicts."""
    raise NotDoneYet


# %% [markdown]
# Try it on a reply with two calls, one with nested arguments:

# %%
sample = ('<tool_call>\n{"name": "get_weather", "arguments": {"city": "北京"}}\n</tool_call>\n'
          '<tool_call>\n{"name": "book_flight", "arguments": {"origin": "Beijing", "passengers": [{"name": "Li Lei"}]}}\n</tool_call>')
try:
    print(parse_calls(sample))
except NotDoneYet:
    print("not done yet: write parse_calls above, then run this cell again")

# %% [markdown]
# ## Grade

# %%
from labs.graders.call_parser import grade, hints

report = grade(parse_calls)
report

# %% [markdown]
# ## Hints

# %%
hints.next()

# %%
hints.next()

# %%
hints.next()
