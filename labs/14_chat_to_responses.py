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

# %%

# %% [markdown]
# # Lab 14 — The same conversation as Responses items
#
# Goes with lesson 14 (`lessons/14_responses_and_mcp.py`).
#
# Chat Completions keeps a conversation as **messages**: an assistant message carries a list
# of `tool_calls`, and each result is a `role: "tool"` message with a `tool_call_id`. The
# Responses API keeps it as a flat list of **items**: every call is its own `function_call`
# item with a `call_id`, every result a `function_call_output` item with the same `call_id`.
# Tools change shape too: the fields inside `"function"` move up one level.
#
# Write the two translations:
#
# - `to_response_tools(specs)`: Chat Completions tool specs
#   (`{"type": "function", "function": {"name", "description", "parameters", "strict"}}`) →
#   Responses tools (`{"type": "function", "name", "description", "parameters", "strict"}`).
#   Copy `description` only when the spec has one; a tool without `parameters` gets
#   `{"type": "object", "properties": {}}`. Always write `strict`: the spec's value, or `False`
#   when the spec has none. Left out, `strict` means *off* in Chat Completions but *on* in
#   OpenAI's Responses API, which then makes every optional field required: the same tool
#   would change meaning on the way over.
# - `to_input_items(messages)`: a Chat Completions history → Responses input items, in order:
#   - a `user`, `system` or `assistant` message with text → `{"type": "message", "role", "content"}`;
#   - each entry of an assistant's `tool_calls` → `{"type": "function_call", "call_id", "name",
#     "arguments"}` (after the message item, when the assistant also wrote text);
#   - a `tool` message → `{"type": "function_call_output", "call_id", "output"}`.
#
#   `arguments` and `output` stay strings, exactly as they were.
#
# The grader checks every item field by field and names the first one that differs, on the
# cases you can read in it and on a tool list and three conversations it makes up as it grades
# (other tools, texts, ids, numbers of calls and rounds). The report shows their seed;
# `grade(to_input_items, to_response_tools, seed=...)` gives the same ones again.

# %%
import json

from labs.grading import NotDoneYet


# %% tags=["exercise"]
def to_response_tools(specs: list[dict]) -> list[dict]:
    """Chat Completions tool specs -> Responses function tools."""
    raise NotDoneYet


def to_input_items(messages: list[dict]) -> list[dict]:
    """A Chat Completions history -> the Responses API's list of input items."""
    raise NotDoneYet


# %% [markdown]
# Try it on one round trip:

# %%
history = [
    {"role": "user", "content": "What's the weather in Beijing?"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Beijing"}'}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": '{"condition": "sunny", "temperature": 24}'},
]
try:
    print(json.dumps(to_input_items(history), indent=2, ensure_ascii=False))
except NotDoneYet:
    print("not done yet: write to_input_items above, then run this cell again")

# %% [markdown]
# ## Grade

# %%
from labs.graders.chat_to_responses import grade, hints

report = grade(to_input_items, to_response_tools)
report

# %% [markdown]
# ## Hints

# %%
hints.next()

# %%
hints.next()

# %%
hints.next()
