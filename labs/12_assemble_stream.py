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
# # Lab 12 — Assemble a streamed reply
#
# Goes with lesson 12 (`lessons/12_observability.py`).
#
# With `stream=True` a chat-completions reply arrives as chunks. Each chunk's
# `choices[0].delta` may carry a piece of text (`delta.content`) and pieces of tool calls
# (`delta.tool_calls`, a list). Each tool-call piece has an `index` saying which call it
# belongs to; the first piece of a call carries its `id` and `function.name`, and any piece
# may carry a fragment of `function.arguments` to append. The last chunk with a choice has the
# `finish_reason`; with `stream_options={"include_usage": True}` one more chunk follows with
# no choices at all, only `usage`.
#
# Write `assemble(chunks)` that consumes the chunks (any iterable of the `openai` client's
# `ChatCompletionChunk` objects) and returns
#
#     {"content": <all text, or None if there was none>,
#      "tool_calls": [{"id": ..., "name": ..., "arguments": <raw text>}, ...],   # by index
#      "finish_reason": ...}
#
# Keep `arguments` exactly as the pieces add up, even when they are not valid JSON (a reply
# cut off by `max_tokens`).

# %%
from labs.grading import NotDoneYet
from toolkit import fake


# %% tags=["exercise"]
def assemble(chunks) -> dict:
    """content, tool_calls (by index) and finish_reason, rebuilt from streamed chunks."""
    raise NotDoneYet


# %% [markdown]
# Try it on a stream from the scripted model, which splits a reply into chunks the way hosted
# APIs do (two calls, arguments in 8-character fragments):

# %%
scripted = fake.ScriptedModel([fake.calls(fake.call("get_weather", {"city": "Beijing"}, id="call_1"),
                                          fake.call("get_weather", {"city": "上海"}, id="call_2"))])
stream = scripted.chat.completions.create(model="scripted", messages=[{"role": "user", "content": "北京和上海天气？"}],
                                          stream=True)
try:
    print(assemble(stream))
except NotDoneYet:
    print("not done yet: write assemble above, then run this cell again")

# %% [markdown]
# ## Grade
#
# Nine public streams, then five the grader makes up as it grades: other text, tools and
# arguments, cut at other places, calls interleaved in other orders, and sometimes a call's first
# fragment sent together with its name, as some servers do. The report shows their seed;
# `grade(assemble, seed=...)` gives the same ones again.

# %%
from labs.graders.assemble_stream import grade, hints

report = grade(assemble)
report

# %% [markdown]
# ## Hints

# %%
hints.next()

# %%
hints.next()

# %%
hints.next()
