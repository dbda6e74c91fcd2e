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
# # Lab 14 — MCP tools as OpenAI tools
#
# Goes with lesson 14 (`lessons/14_responses_and_mcp.py`).
#
# An MCP server describes each tool with a `name`, an optional `description` and an
# `inputSchema` (plus fields meant for people and clients: `title`, `annotations`,
# `outputSchema`). A call's result comes back as a list of **content parts** — text, images,
# audio, resources — with an `isError` flag, and sometimes `structuredContent` as well.
# A chat model reads none of that directly: the lab must turn each tool into an OpenAI tool
# spec, and each result into the one string a `role: "tool"` message carries.
#
# Write the two translations, on plain dicts (what the `mcp` SDK's objects give with
# `.model_dump(exclude_none=True)`):
#
# - `to_openai_tool(mcp_tool)` → `{"type": "function", "function": {"name", "description",
#   "parameters"}}`: the schema goes under `parameters`; `description` only if the tool has
#   one; nothing else.
# - `result_text(result)` → a string:
#   - each content part becomes text: a `text` part is its `text`; an `image` or `audio` part
#     is `[image: image/png]` (its type and `mimeType`); any other part is `[<type> content]`;
#     the parts are joined with a new line;
#   - no parts at all: the `structuredContent` as JSON (non-ASCII kept), or else `(no output)`;
#   - when `isError` is true the text starts with `Error: ` (the lab's convention for every
#     failed call), without doubling one that is already there.

# %%
import json

from labs.grading import NotDoneYet


# %% tags=["exercise"]
def to_openai_tool(mcp_tool: dict) -> dict:
    """One tool from an MCP server's tools/list -> an OpenAI tool spec."""
    raise NotDoneYet


def result_text(result: dict) -> str:
    """An MCP tools/call result -> the text the model reads."""
    raise NotDoneYet


# %% [markdown]
# Try it on a tool and a failed call:

# %%
listed = {"name": "get_order_status", "title": "Order lookup", "description": "Look up one order by its id.",
          "inputSchema": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}
failed = {"content": [{"type": "text", "text": "No order A9 found."}], "isError": True}
try:
    print(json.dumps(to_openai_tool(listed), indent=2))
    print(result_text(failed))
except NotDoneYet:
    print("not done yet: write to_openai_tool and result_text above, then run this cell again")

# %% [markdown]
# ## Grade
#
# The grader tries the tools and results you can read in it, then six it makes up as it grades:
# other names, schemas and MCP-only fields, results with audio and resource parts, errors and
# structured content. The report shows their seed; `grade(to_openai_tool, result_text, seed=...)`
# gives the same ones again.

# %%
from labs.graders.mcp_tools import grade, hints

report = grade(to_openai_tool, result_text)
report

# %% [markdown]
# ## Hints

# %%
hints.next()

# %%
hints.next()

# %%
hints.next()
