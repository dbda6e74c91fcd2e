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
# # Lab 04 — Write tool schemas by hand
#
# Goes with lesson 4 (`lessons/04_native_tool_calls.py`).
#
# Frameworks generate the `tools` entries of a request from code (lesson 5). Before letting
# them, write two by hand, from the kind of spec a product team hands you. Each function below
# returns one entry of the `tools` list, in OpenAI's format:
#
# ```python
# {"type": "function", "function": {"name": ..., "description": ..., "parameters": <JSON Schema>}}
# ```
#
# ### Spec 1: `get_order_status`
#
# > Looks up the current status of a customer's order. The assistant should use it whenever a
# > customer asks where an order is, or whether it has shipped or arrived.
# >
# > - `order_id` — **required**, a string: the order number as the customer gives it, such as
# >   `A1024`.
# > - No other arguments may be passed.
#
# ### Spec 2: `get_weather`
#
# > Gets the current weather in one city, for questions about the weather, the temperature or
# > the conditions somewhere.
# >
# > - `city` — **required**, a string: the city name in English, such as `Beijing`.
# > - `unit` — **optional**, a string: exactly one of `celsius` or `fahrenheit` (lower case;
# >   nothing else, not `Celsius`, not `摄氏度`).
#
# A fixed set of values belongs in an `enum`. That is the seed articles' story: as a free
# string, an order-status parameter received "已发货", "shipped", "delivered" and many variants;
# limiting it to an `enum` made the calls far more accurate (lesson 5 tells it with
# `list_orders(status)`; lesson 10 measures effects of this kind).
#
# These are the same two tools as the toolkit's demo tools (`toolkit/demo_tools.py`), which
# the later lessons use: same names, same parameters.
#
# Every tool and every parameter needs a description: it is all the model knows about them.
# The grader checks the schema with `jsonschema`, tries argument sets the spec allows and
# forbids (the ones listed in the grader, and others it makes up as it grades: other order ids
# and cities, other wrong units), and asks the embedded endpoint's request checker whether it
# would accept the tool. The report shows the seed of the made-up arguments;
# `grade(order_status_tool, weather_tool, seed=...)` gives the same ones again.

# %%
from labs.grading import NotDoneYet
from toolkit.display import show

# %% tags=["exercise"]
def order_status_tool() -> dict:
    """The tools entry for get_order_status, as specified above."""
    raise NotDoneYet


def weather_tool() -> dict:
    """The tools entry for get_weather, as specified above."""
    raise NotDoneYet

# %% [markdown]
# Look at what you wrote, as it would travel in a request body:

# %%
try:
    show([order_status_tool(), weather_tool()])
except NotDoneYet:
    print("not done yet: write both functions above, then run this cell again")

# %% [markdown]
# ## Grade

# %%
from labs.graders.tool_schema_by_hand import grade, hints

report = grade(order_status_tool, weather_tool)
report

# %% [markdown]
# ## Hints

# %%
print(hints.next())

# %%
print(hints.next())

# %%
print(hints.next())

# %% [markdown]
# ## Afterwards: try them on the model
#
# Once the grader passes, send your tools to the embedded model and see which tool it picks
# for an order question. Run it a few times with different questions; remember that this
# small model often chooses wrong, so a wrong pick says little about your schema. (This cell
# talks to the model; it is skipped until your tools are done.)

# %%
try:
    tools = [order_status_tool(), weather_tool()]
except NotDoneYet:
    tools = None
    print("not done yet: write both functions first")
if tools:
    from toolkit.client import connect

    backend = connect()
    reply = backend.chat(messages=[{"role": "user", "content": "我的订单 A1024 发货了吗？"}],
                         tools=tools, tool_choice="required", max_tokens=60, temperature=0)
    for call in reply.choices[0].message.tool_calls or []:
        print(call.function.name, call.function.arguments)
