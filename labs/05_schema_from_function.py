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
# # Lab 05 — A tool schema from a function
#
# Goes with lesson 5 (`lessons/05_schemas_from_code.py`).
#
# Write `schema_from_function(fn)`: given a typed Python function with a Google-style
# docstring, return the OpenAI tool dict that describes it, exactly as the toolkit's
# `tool(fn).spec()` writes it. The grader compares the two on the six functions of its file and
# on four more that it makes up as it grades (new names, parameters and docstrings every time,
# so only a function that reads the signature passes), and names the first key where yours
# differs. The report shows the seed of the made-up functions: `grade(schema_from_function,
# seed=...)` gives the same ones again.
#
# The target shape:
#
# ```python
# {"type": "function", "function": {
#     "name": fn.__name__,
#     "description": "<summary>\n\n<longer description, if any>",   # "" without a docstring
#     "parameters": {
#         "type": "object",
#         "properties": {"<param>": {<its schema>, "description": "...", "default": ...}},
#         "required": ["<params without a default>"],
#         "additionalProperties": False,
#     }}}
# ```
#
# Each parameter's schema, by type hint:
#
# | type hint | schema |
# |---|---|
# | `str`, `int`, `float`, `bool` | `{"type": "string"}`, `"integer"`, `"number"`, `"boolean"` |
# | `Literal["a", "b"]` (strings) | `{"enum": ["a", "b"], "type": "string"}` |
# | `list[str]` | `{"type": "array", "items": {"type": "string"}}` |
# | `Optional[X]` (that is `Union[X, None]`) | `{"anyOf": [<schema of X>, {"type": "null"}]}` |
#
# Then add `"description"` if the docstring documents the parameter, and `"default"` if it has
# a default (a parameter with a default is not `required`). Key order inside a dict does not
# matter, and neither does the order of `required`.
#
# You may use `inspect`, `typing` (`get_type_hints`, `get_origin`, `get_args`) and
# `docstring_parser`. Do not call the toolkit's `tool`, `function_schema` or pydantic: building
# it yourself is the point. The grader refuses a function that refers to them, and switches them
# off while yours runs, so a call to one of them fails with an error that says so.

# %%
import inspect
import json
import typing
from typing import Literal, Optional, Union

import docstring_parser

from labs.grading import NotDoneYet
from labs.graders.schema_from_function import apply_operator, get_weather, list_orders_with_filters, search_flights_any_day
from toolkit.display import show

# %% [markdown]
# Two tools you can try your function on. This is what `typing` and `docstring_parser` say about
# them:

# %%
type_hints = typing.get_type_hints(search_flights_any_day)  # not `hints`: that name is the lab's hints, below
for name, parameter in inspect.signature(search_flights_any_day).parameters.items():
    hint = type_hints[name]
    print(f"{name:<12} hint={hint!s:<22} origin={typing.get_origin(hint)!s:<14} "
          f"args={typing.get_args(hint)} default={parameter.default!r}")

parsed = docstring_parser.parse(get_weather.__doc__)
print("\nshort:", parsed.short_description, "| long:", parsed.long_description)
print({param.arg_name: param.description for param in parsed.params})

# %% tags=["exercise"]
def schema_from_function(fn) -> dict:
    """The OpenAI tool dict ({"type": "function", "function": {...}}) describing ``fn``."""
    raise NotDoneYet

# %% [markdown]
# Try it on one function and look at the result before grading:

# %%
try:
    show(schema_from_function(get_weather))
except NotDoneYet:
    print("not done yet: write schema_from_function above, then run this cell again")

# %% [markdown]
# ## Grade

# %%
from labs.graders.schema_from_function import grade, hints

report = grade(schema_from_function)
report

# %% [markdown]
# When everything passes, think about what your function does *not* handle: nested models,
# enums made from `Enum` classes, dictionaries, unions of two object types with a discriminator,
# hidden parameters such as `MemoryId`. Each is one more branch in the type helper, which is why
# the toolkit hands types to pydantic instead (`lessons/05_schemas_in_depth.py`, the optional
# second part of lesson 5).
#
# ## Hints

# %%
from labs.graders.schema_from_function import hints  # the same hints as above: asking here first works too

hints.next()

# %%
hints.next()

# %%
hints.next()
