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
# # Lesson 5 — Schemas from code: one function, one source of truth
#
# *The course's terms are defined, each with the lesson that teaches it, in the [glossary](../docs/glossary.md).*
#
# In lesson 4 we wrote the `tools` list by hand: a name, a description and a JSON Schema for
# the arguments. Writing it by hand means keeping two things in step, the Python function that
# runs and the JSON that describes it. Sooner or later someone renames a parameter in one and
# not the other, and the model is told about an argument that no longer exists.
#
# Frameworks fix this by reading the schema *from the function*: the signature gives the names,
# the type hints give the types, the default values say what is optional, and the docstring
# gives the descriptions. The model still sees only JSON, so whatever the framework writes is
# exactly what decides whether the model can use the tool well.
#
# ## What you will learn
#
# - how to build a tool schema by hand with `inspect` and a docstring, and what each part of
#   a function becomes in the schema;
# - how the toolkit's `@tool` does the same with pydantic and `docstring_parser`, and how it
#   checks the arguments the model sends back;
# - how to express what a model needs to know: a description per parameter, required versus
#   optional, and a closed set of values (`Literal` or `Enum`, the order status example).
#
# Nested objects, maps, arguments with several shapes, hidden parameters and registration
# errors are in an optional second part, `lessons/05_schemas_in_depth.py`, for when you need
# them.

# %%
import enum
import inspect
import typing
from typing import Optional

import docstring_parser

from toolkit.client import connect
from toolkit.display import show
from toolkit.schema import ToolArgumentsError
from toolkit.tools import tool


# %% [markdown]
# ## 1. What a function already knows about itself
#
# Two tools from a calculator: a square root and the four operations. Everything a model needs
# is already written down in the function, for people: names, types, which arguments have
# defaults, and a docstring in the Google style (a summary line, then an `Args:` section).
# (`apply_operator` is not the `calculate(expression)` of the other lessons: its numbers, text
# and integer with a default give this section one parameter of each basic type to map.)

# %%
def square_root(x: float) -> float:
    """Compute the square root of a non-negative number.

    Use it when the user asks for a square root or a radical.

    Args:
        x: The number to take the root of; must not be negative.
    """
    return x ** 0.5


def apply_operator(a: float, operator: str, b: float, round_to: int = 2) -> float:
    """Add, subtract, multiply or divide two numbers.

    Args:
        a: The first number.
        operator: One of "+", "-", "*" or "/".
        b: The second number.
        round_to: How many decimal places to keep in the result.
    """
    result = {"+": a + b, "-": a - b, "*": a * b, "/": a / b}[operator]
    return round(result, round_to)


signature = inspect.signature(apply_operator)
hints = typing.get_type_hints(apply_operator)
for parameter in signature.parameters.values():
    default = "required" if parameter.default is parameter.empty else f"default {parameter.default!r}"
    print(f"{parameter.name:<9} {hints[parameter.name].__name__:<6} {default}")

# %% [markdown]
# `inspect.signature` gives the parameters in order with their defaults; `typing.get_type_hints`
# resolves the annotations into real types (it also handles annotations written as strings).
# The docstring is plain text, so we parse it ourselves: the first paragraph is the summary,
# and each `name: text` line under `Args:` describes one parameter (indented lines continue it).

# %%
def read_google_docstring(docstring: str | None) -> tuple[str, dict[str, str]]:
    """(description, {parameter: description}) from a Google-style docstring."""
    description_lines, parameters = [], {}
    section, current = "description", None
    for line in inspect.cleandoc(docstring or "").splitlines():
        if line.strip() in ("Args:", "Arguments:", "Parameters:"):
            section = "args"
        elif line and not line[0].isspace() and line.rstrip().endswith(":"):
            section = "other"  # Returns:, Raises:, Examples: ... are not for the model
        elif section == "description":
            description_lines.append(line)
        elif section == "args" and line.strip():
            indent = len(line) - len(line.lstrip())
            name, colon, text = line.strip().partition(":")
            if colon and indent <= 4 and name.isidentifier():
                current = name
                parameters[current] = text.strip()
            elif current:  # a continuation line of the previous parameter
                parameters[current] += " " + line.strip()
    return "\n".join(description_lines).strip(), parameters


read_google_docstring(apply_operator.__doc__)

# %% [markdown]
# Now the schema. Python's basic types map onto JSON Schema's; a parameter without a default is
# `required`; a default is recorded so the model (and the reader) knows what happens when the
# argument is left out.

# %%
JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean"}


def schema_by_hand(function) -> dict:
    """An OpenAI tool dict for a function whose parameters are str, int, float or bool."""
    description, documented = read_google_docstring(function.__doc__)
    hints = typing.get_type_hints(function)
    properties, required = {}, []
    for parameter in inspect.signature(function).parameters.values():
        prop = {"type": JSON_TYPES[hints[parameter.name]]}
        if parameter.name in documented:
            prop["description"] = documented[parameter.name]
        if parameter.default is parameter.empty:
            required.append(parameter.name)
        else:
            prop["default"] = parameter.default
        properties[parameter.name] = prop
    return {"type": "function", "function": {
        "name": function.__name__,
        "description": description,
        "parameters": {"type": "object", "properties": properties, "required": required},
    }}


show(schema_by_hand(apply_operator))

# %% [markdown]
# Thirty lines, and already useful. But the type map stops at four types: `Optional[int]`,
# `list[str]`, a `Literal`, a nested object or a union would each need more code, and so would
# checking the arguments the model sends back. That is the job of a library that already
# understands Python types: **pydantic**. And the docstring parser above knows only one style;
# **docstring_parser** reads Google, reST, NumPy and Epydoc docstrings.

# %%
parsed = docstring_parser.parse(apply_operator.__doc__)
print("summary:", parsed.short_description)
print("long:   ", parsed.long_description)
for param in parsed.params:
    print(f"  {param.arg_name}: {param.description}")

# %% [markdown]
# ## 2. The toolkit's `@tool`
#
# `toolkit/schema.py` does what `schema_by_hand` does, with pydantic writing the types and
# `docstring_parser` reading the docs; `toolkit/tools.py` wraps the result in a `Tool` that
# also validates the model's arguments and runs the function. Apply it as a decorator; the
# function still works as a function.
#
# A `Tool` is what every later lesson passes around. What you can do with one:
#
# | you write | you get |
# |---|---|
# | `t.name`, `t.description`, `t.parameters` | what the model is told (the schema is a JSON Schema dict) |
# | `t.spec()` | the tool as the `tools` list of a request wants it: `{"type": "function", "function": {...}}` |
# | `t.validate(arguments)` | the model's arguments (JSON text or a dict) checked against the schema, as keyword arguments; a `ToolArgumentsError` naming each problem otherwise |
# | `t.run(kwargs, context)` | the function run on arguments already validated, hidden parameters filled from `context` |
# | `t.invoke(arguments, context)` | `validate` then `run`: what the loop calls for each of the model's calls |
# | `t(...)` | the plain function, called as you would call it |
#
# `Tool.from_spec(spec, executor)` makes the same object from a hand-written schema (lesson 11
# uses it); a `ToolSet` holds several tools by name.

# %%
apply_operator_tool = tool(apply_operator)
print(apply_operator_tool, "->", apply_operator_tool(6, "/", 4))
show(apply_operator_tool.spec())

# %% [markdown]
# Compare the two schemas key by key (a small recursive diff, computed, not eyeballed):

# %%
def differences(expected, got, path="") -> list[str]:
    """Every path where two JSON values differ."""
    if isinstance(expected, dict) and isinstance(got, dict):
        found = []
        for key in sorted(set(expected) | set(got), key=str):
            where = f"{path}.{key}" if path else str(key)
            if key not in got:
                found.append(f"{where}: only in the first")
            elif key not in expected:
                found.append(f"{where}: only in the second ({got[key]!r})")
            else:
                found += differences(expected[key], got[key], where)
        return found
    return [] if expected == got else [f"{path}: {expected!r} != {got!r}"]


for tool_function in (square_root, apply_operator):
    print(tool_function.__name__, differences(schema_by_hand(tool_function), tool(tool_function).spec()) or "identical")

# %% [markdown]
# The only difference is `"additionalProperties": false`: the toolkit tells the model (and its
# own validator) that no other argument names exist. Some APIs insist on it in strict mode, and
# the validator rejects an invented argument instead of silently dropping it.
#
# The same validator checks what comes back. Arguments arrive as JSON *text*; `validate`
# parses them and names every problem by parameter. pydantic validates in its *lax* mode, so
# it also converts values whose meaning is unambiguous: the integer `3` where a float is
# expected, and even the string `"5"` (models often quote numbers). A fraction where an integer
# is expected, or an unknown argument name, is refused.

# %%
print(apply_operator_tool.validate('{"a": 3, "operator": "+", "b": "5"}'))
for raw in ['{"a": 3, "operator": "+", "b": 5, "round_to": 1.5}',
            '{"a": 3, "operator": "+"}',
            '{"a": "three", "operator": "+", "b": 5, "c": 1}',
            '{"a": 3,']:
    try:
        apply_operator_tool.validate(raw)
    except ToolArgumentsError as error:
        print(error, end="\n\n")

# %% [markdown]
# ## 3. Required and optional
#
# A parameter is optional to the model when leaving it out is fine: it has a default, or its
# type allows `None` (`Optional[int]`, written `int | None` in newer Python). The toolkit puts
# both kinds outside `required` and records the default. (A list, `list[str]`, becomes
# `{"type": "array", "items": {"type": "string"}}`; the lab asks you to handle it.)

# %%
@tool
def search_flights(origin: str, destination: str, date: str,
                   max_stops: Optional[int] = None, cabin: str = "economy") -> list:
    """Search for flights on one day.

    Args:
        origin: Departure city, e.g. Beijing.
        destination: Arrival city, e.g. Shenzhen.
        date: Departure date as YYYY-MM-DD.
        max_stops: Largest number of stops accepted; leave out for any.
        cabin: Cabin class.
    """
    return []


parameters = search_flights.spec()["function"]["parameters"]
print("required:", parameters["required"])
show(parameters["properties"]["max_stops"])

# %% [markdown]
# Descriptions matter more than they seem. `date` could be the departure date, the return date
# or the booking date; `origin` could be a city or a sales channel. The description is the only
# place the model can learn which one you mean, and the expected *format* (`YYYY-MM-DD`, "in
# English", "digits only"). Every framework has a place for this text; in Python it is the
# docstring's `Args:` section.
#
# ## 4. A closed set of values: `Literal` and `Enum` (the order status example)
#
# A tool that lists the user's orders by status. With `status: str` the model may write
# `"shipped"`, `"Shipped"`, `"已发货"` or `"sent"`: all valid strings, and only one of them is
# what the order database stores. A `Literal` or an `Enum` becomes a JSON Schema `enum`, which
# tells the model the exact words, and lets the validator refuse anything else.

# %%
class OrderStatus(str, enum.Enum):
    PENDING = "pending"
    SHIPPED = "shipped"
    DELIVERED = "delivered"


ORDERS = [{"order_id": "A1001", "status": "shipped"}, {"order_id": "A1002", "status": "pending"},
          {"order_id": "A1003", "status": "delivered"}]


@tool(name="list_orders")
def list_orders_free_text(status: str) -> list:
    """List the current user's orders that have a given status.

    Args:
        status: Order status to filter by.
    """
    return [order for order in ORDERS if order["status"] == status]


@tool
def list_orders(status: OrderStatus) -> list:
    """List the current user's orders that have a given status.

    Args:
        status: Order status to filter by.
    """
    return [order for order in ORDERS if order["status"] == status.value]


show(list_orders_free_text.spec()["function"]["parameters"]["properties"])
show(list_orders.spec()["function"]["parameters"]["properties"])

# %% [markdown]
# **Change it and observe.** Feed both tools the values a model might write, and see what each
# does with them (computed below):

# %%
for written in ["shipped", "Shipped", "已发货", "sent"]:
    free = list_orders_free_text.invoke({"status": written})
    try:
        closed = list_orders.invoke({"status": written})
    except ToolArgumentsError as error:
        closed = "refused: " + error.problems[0]
    print(f"{written!r:<11} str -> {len(free)} order(s) | enum -> {closed if isinstance(closed, str) else f'{len(closed)} order(s)'}")

# %% [markdown]
# With `str`, a wrong word silently finds nothing, and the model goes on to tell the user they
# have no shipped orders. With the enum, the wrong word is refused with a message that lists the
# allowed values, which the loop (lesson 6) can send back so the model corrects itself.
# `Literal["pending", "shipped", "delivered"]` gives the same schema without a class.
#
# ### The real request, and what the embedded model wrote
#
# Now both versions go to the embedded model (SmolLM2-135M) with the Chinese message
# "帮我查一下已经发货的订单" ("show me my orders that have shipped"), forcing a call to
# `list_orders` with a named `tool_choice` (lesson 7). The embedded engine turns the schema into
# a grammar, so with the enum the model *cannot* write anything but one of the three values.
# Whether it picks the *right* one is another matter: this small model was not trained for tool
# calling. The results below are whatever it wrote on this run.

# %%
backend = connect(capture=True)
question = [{"role": "user", "content": "帮我查一下已经发货的订单"}]  # Look up my orders that have shipped
force_list_orders = {"type": "function", "function": {"name": "list_orders"}}

written_by_model = {}
for label, variant in [("str", list_orders_free_text), ("enum", list_orders)]:
    reply = backend.chat(messages=question, tools=[variant.spec()], tool_choice=force_list_orders,
                         max_tokens=40, temperature=0)
    message = reply.choices[0].message
    # A call cut off by max_tokens still comes back in tool_calls, with finish_reason "length"
    # and arguments that may not parse: the validation below is what tells a whole call.
    written_by_model[label] = message.tool_calls[0].function.arguments if message.tool_calls else None
    finish = reply.choices[0].finish_reason
    print(f"{label:<5} reply text: {message.content!r:.70}" if message.content
          else f"{label:<5} reply: a call, finish_reason {finish!r}")
    if label == "enum":
        exchange = backend.last_exchange()

for label, arguments in written_by_model.items():
    if arguments is None:
        print(f"{label:<5} wrote no call")
        continue
    try:
        verdict = f"valid, status={list_orders.validate(arguments)['status'].value}"
    except ToolArgumentsError as error:
        verdict = "invalid for the enum version: " + error.problems[0]
    print(f"{label:<5} wrote {arguments}  ->  {verdict}")

# %% [markdown]
# Read the result with the grammar in mind. With the enum, a complete call can only carry one of
# the three allowed words, so it always validates, but nothing forces it to be `"shipped"`, the
# word the user meant. With `str`, the grammar allows any string, and a small model may write
# a word the database does not know, or keep writing until `max_tokens` cuts the call off.
# On this run both happened: with the enum the model wrote `"pending"`, a valid word but not
# the one the user meant; with `str` it wrote `"100000000000000000` until `max_tokens` cut the
# call off, so its arguments are not even valid JSON.
#
# The request body that went over the wire for the enum version, and the reply:

# %%
show(exchange.request)
show(exchange.response["choices"][0])

# %% [markdown]
# ## Other frameworks
#
# None of these is installed here. **LangChain**'s `@tool` (from `langchain_core.tools`) reads the
# signature, and with `@tool(parse_docstring=True)` the `Args:` section too; `llm.bind_tools([...])`
# puts the schemas into every request. The **OpenAI Agents SDK**'s `@function_tool` and
# **pydantic-ai**'s `@agent.tool` / `@agent.tool_plain` do the same with pydantic, as the toolkit
# does. **LangChain4j** (Java) reads annotations instead: `@Tool("...")` on a method for the
# description, `@P("...")` on each parameter, a Java `enum` for a closed set of values.

# %% [markdown]
# ## Summary
#
# - A tool's schema can come from the function itself: names from the signature, types from the
#   hints, `required` from the defaults, descriptions from the docstring. One source, no drift.
# - pydantic writes the JSON Schema *and* validates the model's arguments against it.
# - Say what the model cannot guess: a description per parameter with its format, and an enum
#   for a closed set (a wrong status word is refused instead of silently finding nothing).
#
# Lab: open `labs/05_schema_from_function.py` and write `schema_from_function` yourself, then
# check it against the toolkit's output.
#
# Optional: `lessons/05_schemas_in_depth.py` covers nested objects, maps, arguments with several
# shapes, hidden parameters and registration errors. Lesson 6 needs only what is above (plus
# hidden parameters, which it recaps). Next, lesson 6 runs the tools in a loop.
