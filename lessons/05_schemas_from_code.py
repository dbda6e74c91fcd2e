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
# In lesson 4 we wrote the `tools` list by hand: a name, a description and a JSON Schema for
# the arguments. Writing it by hand means keeping two things in step, the Python function that
# runs and the JSON that describes it. Sooner or later someone renames a parameter in one and
# not the other, and the model is told about an argument that no longer exists.
#
# Frameworks fix this by reading the schema *from the function*: the signature gives the names,
# the type hints give the types, the default values say what is optional, and the docstring
# gives the descriptions. LangChain's `@tool` does it in Python; LangChain4j's `@Tool` and `@P`
# do it in Java. The model still sees only JSON, so whatever the framework writes is exactly
# what decides whether the model can use the tool well.
#
# ## What you will learn
#
# - how to build a tool schema by hand with `inspect` and a docstring, and what each part of
#   a function becomes in the schema;
# - how the toolkit's `@tool` does the same with pydantic and `docstring_parser`, and where it
#   differs from pydantic's own `TypeAdapter(...).json_schema()`;
# - how to express what a model needs to know: a description per parameter, required versus
#   optional, a closed set of values (`Literal` or `Enum`, the order status example), nested
#   objects (a booking with a guest), lists, maps with documented keys, and arguments that can
#   take several shapes (a payment with a discriminator);
# - how a parameter can be *hidden* from the model (the memory id, the invocation context);
# - why registration collects every problem into one error.

# %%
import enum
import inspect
import json
import typing
from typing import Annotated, Literal, Optional, Union

import docstring_parser
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from typing_extensions import TypedDict

from toolkit.client import connect
from toolkit.schema import InvocationContext, MemoryId, ToolArgumentsError, ToolRegistrationError
from toolkit.tools import ToolSet, tool


def show(value, limit=None):
    """Print JSON the way it goes over the wire, optionally cut to ``limit`` characters."""
    text = json.dumps(value, indent=2, ensure_ascii=False)
    print(text if limit is None or len(text) <= limit else text[:limit] + "\n  ... (cut)")


# %% [markdown]
# ## 1. What a function already knows about itself
#
# Two tools from a calculator: a square root and the four operations. Everything a model needs
# is already written down in the function, for people: names, types, which arguments have
# defaults, and a docstring in the Google style (a summary line, then an `Args:` section).

# %%
def square_root(num: float) -> float:
    """Compute the square root of a non-negative number.

    Use it when the user asks for a square root or a radical.

    Args:
        num: The number to take the root of; must not be negative.
    """
    return num ** 0.5


def calculate(a: float, operator: str, b: float, round_to: int = 2) -> float:
    """Add, subtract, multiply or divide two numbers.

    Args:
        a: The first number.
        operator: One of "+", "-", "*" or "/".
        b: The second number.
        round_to: How many decimal places to keep in the result.
    """
    result = {"+": a + b, "-": a - b, "*": a * b, "/": a / b}[operator]
    return round(result, round_to)


signature = inspect.signature(calculate)
hints = typing.get_type_hints(calculate)
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


read_google_docstring(calculate.__doc__)

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


show(schema_by_hand(calculate))

# %% [markdown]
# Thirty lines, and already useful. But the type map stops at four types: `Optional[int]`,
# `list[str]`, a `Literal`, a nested object or a union would each need more code, and so would
# checking the arguments the model sends back. That is the job of a library that already
# understands Python types: **pydantic**. And the docstring parser above knows only one style;
# **docstring_parser** reads Google, reST, NumPy and Epydoc docstrings.

# %%
parsed = docstring_parser.parse(calculate.__doc__)
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
calculate_tool = tool(calculate)
print(calculate_tool, "->", calculate_tool(6, "/", 4))
show(calculate_tool.spec())

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


for tool_function in (square_root, calculate):
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
print(calculate_tool.validate('{"a": 3, "operator": "+", "b": "5"}'))
for raw in ['{"a": 3, "operator": "+", "b": 5, "round_to": 1.5}',
            '{"a": 3, "operator": "+"}',
            '{"a": "three", "operator": "+", "b": 5, "c": 1}',
            '{"a": 3,']:
    try:
        calculate_tool.validate(raw)
    except ToolArgumentsError as error:
        print(error, end="\n\n")

# %% [markdown]
# ## 3. Required and optional
#
# A parameter is optional to the model when leaving it out is fine: it has a default, or its
# type allows `None` (`Optional[int]`, written `int | None` in newer Python). The toolkit puts
# both kinds outside `required` and records the default.

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
# English", "digits only"). LangChain4j's `@P("...")` and LangChain's `Args:` section exist for
# exactly this.
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
    # No tool_calls means no complete call, e.g. one still unfinished when max_tokens ran out.
    written_by_model[label] = message.tool_calls[0].function.arguments if message.tool_calls else None
    print(f"{label:<5} reply text: {message.content!r:.70}" if message.content else f"{label:<5} reply: a call")
    if label == "enum":
        exchange = backend.last_exchange()

for label, arguments in written_by_model.items():
    if arguments is None:
        print(f"{label:<5} wrote no complete call")
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
#
# The request body that went over the wire for the enum version, and the reply:

# %%
show(exchange.request)
show(exchange.response["choices"][0])

# %% [markdown]
# ## 5. Nested objects, lists and maps (a hotel booking)
#
# Arguments do not have to be flat. A booking needs a guest, which is an object with its own
# fields; a pydantic model describes it, and `Field(description=...)` documents each field (the
# Python counterpart of LangChain4j's `@Description` on a POJO field).
#
# - A **list** (`list[str]`) becomes `{"type": "array", "items": ...}`.
# - A **map** (`dict[str, str]`) becomes an object with `additionalProperties`: any key is
#   allowed, so the description must say which keys mean something (the source article's customer
#   filters: `name`, `mobile`, `level`, `city`).
# - If the keys are known in advance, a `TypedDict` with `total=False` is usually better: each
#   key becomes a documented, optional property, and a key outside the list is refused.

# %%
class Guest(BaseModel):
    """The person the room is booked for."""

    name: str = Field(description="Full name as on the ID card.")
    phone: str = Field(description="Mobile number, digits only.")
    adults: int = Field(1, ge=1, le=4, description="Number of adults in the room, 1 to 4.")


@tool
def book_hotel(city: str, check_in: str, nights: int, guest: Guest,
               requests: list[str] = []) -> str:
    """Book a hotel room for one guest.

    Args:
        city: City of the hotel, e.g. Hangzhou.
        check_in: Check-in date as YYYY-MM-DD.
        nights: Number of nights, 1 or more.
        guest: Who the room is for.
        requests: Special requests, each a short phrase, e.g. "non-smoking", "high floor".
    """
    return f"Booked {nights} night(s) in {city} for {guest.name}: booking B-20001."


show(book_hotel.spec()["function"]["parameters"]["properties"]["guest"])
print(book_hotel.invoke({"city": "杭州", "check_in": "2025-06-01", "nights": 2,
                         "guest": {"name": "王小明", "phone": "13800000000"}}))

# %% [markdown]
# The nested model arrives in the function as a real `Guest` object, validated. Two ways to
# write a map, side by side:

# %%
class CustomerFilters(TypedDict, total=False):
    name: Annotated[str, Field(description="Part of the customer's name.")]
    mobile: Annotated[str, Field(description="Mobile number, digits only.")]
    level: Annotated[Literal["gold", "silver", "regular"], Field(description="Membership level.")]
    city: Annotated[str, Field(description="City the customer lives in.")]


@tool(name="find_customers")
def find_customers_map(filters: dict[str, str]) -> list:
    """Find customers that match all the given filters.

    Args:
        filters: Filters as key -> value. Keys must be name, mobile, level or city; values are strings.
    """
    return [filters]


@tool
def find_customers(filters: CustomerFilters) -> list:
    """Find customers that match all the given filters.

    Args:
        filters: Filters to apply; give only the ones the user mentioned.
    """
    return [filters]


show(find_customers_map.spec()["function"]["parameters"]["properties"]["filters"])
show(find_customers.spec()["function"]["parameters"]["properties"]["filters"], limit=700)

# %% [markdown]
# **Change it and observe.** The same arguments, including one key nobody documented
# (`phone` instead of `mobile`) and a level that does not exist:

# %%
attempt = {"filters": {"city": "上海", "phone": "13800000000", "level": "vip"}}
for variant in (find_customers_map, find_customers):
    try:
        print(f"{variant.function.__name__:<20} accepted: {variant.invoke(attempt)}")
    except ToolArgumentsError as error:
        print(f"{variant.function.__name__:<20} refused: {error.problems}")

# %% [markdown]
# Look closely at the nested `Guest`: pydantic *ignores* unknown fields of a model unless told
# otherwise, so a model that writes `"age": 30` inside the guest is not corrected. If you would
# rather tell the model it invented a field, forbid extras on the nested model too:

# %%
class StrictGuest(Guest):
    model_config = ConfigDict(extra="forbid")


@tool(name="book_hotel")
def book_hotel_strict(city: str, check_in: str, nights: int, guest: StrictGuest) -> str:
    """Book a hotel room for one guest.

    Args:
        city: City of the hotel.
        check_in: Check-in date as YYYY-MM-DD.
        nights: Number of nights.
        guest: Who the room is for.
    """
    return "booked"


arguments = {"city": "Hangzhou", "check_in": "2025-06-01", "nights": 2,
             "guest": {"name": "Li Lei", "phone": "13800000000", "age": 30}}
for variant in (book_hotel, book_hotel_strict):
    try:
        variant.validate(arguments)
        print(f"{variant.function.__name__:<18} accepted (the extra 'age' was dropped)")
    except ToolArgumentsError as error:
        print(f"{variant.function.__name__:<18} refused: {error.problems}")

# %% [markdown]
# ## 6. Arguments with several shapes: a discriminator
#
# A payment can be by credit card (needs a card number) or by wallet (needs a provider). A
# plain union leaves the model guessing which fields go together. A **discriminator** is one
# field whose fixed value says which shape this is (`"type": "wallet"`), exactly what Jackson's
# `@JsonTypeInfo(property = "type")` does for LangChain4j. In pydantic: give each shape a
# `Literal` field and mark the union with `Field(discriminator="type")`.

# %%
class CreditCardPayment(BaseModel):
    type: Literal["credit_card"]
    card_number: str = Field(description="16 digits, no spaces.")


class WalletPayment(BaseModel):
    type: Literal["wallet"]
    provider: Literal["alipay", "wechat_pay"] = Field(description="Which wallet app.")


Payment = Annotated[Union[CreditCardPayment, WalletPayment], Field(discriminator="type")]


@tool
def pay_booking(booking_id: str, payment: Payment) -> str:
    """Pay for a booking.

    Args:
        booking_id: Booking number such as B-20001.
        payment: How to pay: a credit card or a wallet.
    """
    return f"Paid {booking_id} with {type(payment).__name__}"


show(pay_booking.spec()["function"]["parameters"]["properties"]["payment"])

# %% [markdown]
# The schema says `oneOf` two objects, each with a `const` value for `type`. The validator uses
# the discriminator to pick the shape first, so an error names the shape it was checking:

# %%
for payment in [{"type": "wallet", "provider": "alipay"},
                {"type": "wallet", "card_number": "4111111111111111"},
                {"type": "paypal"}]:
    try:
        print("ok:", pay_booking.invoke({"booking_id": "B-20001", "payment": payment}))
    except ToolArgumentsError as error:
        print("refused:", error.problems)

# %% [markdown]
# ## 7. The toolkit's schema next to pydantic's own
#
# The toolkit does not write JSON Schema itself; it asks pydantic, then tidies the result.
# Here is what pydantic's `TypeAdapter(...).json_schema()` gives for the booking's guest and
# payment, with no tidying:

# %%
raw = TypeAdapter(Payment).json_schema()
show(raw)

# %% [markdown]
# Two things are tidied away (`toolkit.schema.tidy_schema`):
#
# - **`$defs` and `$ref`**: pydantic defines each model once and points to it. That is fine for
#   a validator, but a small model reads the schema as text, top to bottom, and must otherwise
#   jump to a definition further down. The toolkit inlines each reference (unless a type refers
#   to itself, such as a tree, which cannot be inlined).
# - **`title`**: pydantic adds a title for every field and model, which only repeats the name.
#   Every character of a schema is read again in every request.
#
# **Change it and observe** how much that saves on the tools above (characters of JSON, as
# sent; roughly four characters make one token for English text):

# %%
from toolkit.schema import function_schema  # what @tool calls inside

for tool_function in (book_hotel.function, pay_booking.function, find_customers.function):
    schema = function_schema(tool_function)
    untidy = schema.arguments.json_schema()  # the same pydantic adapter, before tidying
    print(f"{tool_function.__name__:<15} pydantic {len(json.dumps(untidy, ensure_ascii=False)):>5} chars"
          f"  ->  tidied {len(json.dumps(schema.parameters, ensure_ascii=False)):>5} chars"
          f"   ($ref left: {'$ref' in json.dumps(schema.parameters)})")

# %% [markdown]
# ## 8. Hidden parameters: what the tool needs but the model must not see
#
# Some arguments are not the model's business: *which user* is asking, the tenant, a trace id.
# If they were in the schema, the model would have to guess them, and a prompt injection
# ("I am user admin") could fill them in. LangChain4j marks them with `@ToolMemoryId`, or types
# them `InvocationContext` / `InvocationParameters`; the framework fills them in when it runs
# the tool. The toolkit does the same with two types, `MemoryId` and `InvocationContext`:

# %%
USER_ORDERS = {"user-123": ["A1001", "A1002"], "user-456": ["A1003"]}


@tool
def list_my_orders(memory_id: MemoryId, status: OrderStatus | None = None) -> list:
    """List the orders of the user who is asking.

    Args:
        status: Only orders with this status; leave out for all.
    """
    return USER_ORDERS.get(memory_id, [])


@tool
def cancel_order(order_id: str, context: InvocationContext) -> str:
    """Cancel one of the current user's own orders.

    Args:
        order_id: The order number, e.g. A1001.
    """
    owner = context.memory_id
    if order_id not in USER_ORDERS.get(owner, []):
        return f"Cannot cancel {order_id}: no such order for this user."
    return f"Order {order_id} cancelled for {owner} (trace {context.trace_id})."


show(list_my_orders.spec()["function"]["parameters"])
show(cancel_order.spec()["function"]["parameters"])

# %% [markdown]
# Neither `memory_id` nor `context` appears in the schema. The caller passes the context when it
# runs the tool, next to the model's arguments (lesson 6 shows the loop doing this):

# %%
context = InvocationContext(user="Wang", memory_id="user-123", trace_id="t-42")
print(list_my_orders.invoke("{}", context))
print(cancel_order.invoke('{"order_id": "A1001"}', context))
print(cancel_order.invoke('{"order_id": "A1003"}', context))  # someone else's order
try:  # and the model cannot smuggle the hidden value in as an argument:
    cancel_order.invoke('{"order_id": "A1003", "memory_id": "user-456"}', context)
except ToolArgumentsError as error:
    print(error)

# %% [markdown]
# ## 9. Registration errors, all at once
#
# A function may not be describable: a parameter without a type, `*args` (the model passes
# arguments by name, so what would it name them?), a positional-only parameter, a type pydantic
# cannot express in JSON Schema, a name the API would reject. Finding these one at a time, one
# restart per fix, is tedious. The toolkit collects every problem and raises one error that
# names the function and each parameter (as pydantic-ai does):

# %%
def messy_tool(query, /, limit: int, *tags, callback: typing.Callable[[str], None] = print, **options) -> str:
    """Search something."""
    return ""


try:
    tool(messy_tool, name="messy tool!", return_behavior="later")
except ToolRegistrationError as error:
    print(error)

# %% [markdown]
# With `require_descriptions=True` (on `tool` or on a whole `ToolSet`) a missing description is
# a registration error too: a tool without one is a tool the model can only guess about.

# %%
def get_stock(symbol: str, exchange: str = "SSE") -> float:
    """Latest price of a stock.

    Args:
        symbol: Ticker symbol, e.g. 600519.
    """
    return 0.0


try:
    ToolSet([get_stock], require_descriptions=True)
except ToolRegistrationError as error:
    print(error)

# %% [markdown]
# ## 10. The same thing in LangChain and LangChain4j
#
# Neither library is installed here; this is what their versions of section 2 look like.
#
# **LangChain** (Python) reads the signature and the Google-style docstring, like the toolkit,
# when you ask it to parse the docstring:
#
# ```python
# from langchain_core.tools import tool
#
# @tool(parse_docstring=True)
# def get_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> str:
#     """Get the current weather in one city.
#
#     Args:
#         city: City name in English, e.g. Beijing.
#         unit: Temperature unit.
#     """
# llm.bind_tools([get_weather])   # puts the schema into every request's `tools` field
# ```
#
# **LangChain4j** (Java) reads annotations: `@Tool` gives the description (and optionally the
# name and return behaviour), `@P` describes each parameter and says whether it is required,
# `@Description` documents the fields of a parameter object, `@ToolMemoryId` marks the hidden
# memory id. Java parameter names survive compilation only with the `-parameters` compiler flag;
# without it the model sees `arg0`, `arg1`.
#
# ```java
# @Tool("List the current user's orders that have a given status")
# List<Order> listOrders(@ToolMemoryId String userId,
#                        @P("Order status to filter by") OrderStatus status) { ... }
# ```
#
# | idea | toolkit (Python) | LangChain | LangChain4j |
# |---|---|---|---|
# | tool description | docstring summary | docstring | `@Tool("...")` |
# | parameter description | `Args:` section, or `Field(description=)` | `Args:` with `parse_docstring=True` | `@P("...")` |
# | optional parameter | a default, or `X \| None` | a default | `@P(required = false)`, `Optional<T>` |
# | closed set of values | `Literal`, `Enum` | `Literal`, `Enum` | Java `enum` |
# | nested object | pydantic model, `TypedDict` | pydantic model | POJO with `@Description` fields |
# | several shapes | union + `Field(discriminator=)` | union | sealed interface or `@JsonSubTypes` |
# | hidden context | `MemoryId`, `InvocationContext` | `InjectedToolArg` | `@ToolMemoryId`, `InvocationContext` |

# %% [markdown]
# ## Summary
#
# - A tool's schema can come from the function itself: names from the signature, types from the
#   hints, `required` from the defaults, descriptions from the docstring. One source, no drift.
# - pydantic writes the JSON Schema *and* validates the model's arguments against it; the
#   toolkit inlines `$ref`s and drops titles so the schema reads top to bottom in fewer tokens.
# - Say what the model cannot guess: a description per parameter with its format, an enum for a
#   closed set (a wrong status word is refused instead of silently finding nothing), documented
#   keys for maps (better: a `TypedDict`), a discriminator for arguments with several shapes.
# - Parameters typed `MemoryId` or `InvocationContext` never reach the model; the code that runs
#   the tool fills them in.
# - A function that cannot become a tool fails once, with every problem listed.
#
# Lab: open `labs/05_schema_from_function.py` and write `schema_from_function` yourself, then
# check it against the toolkit's output.
