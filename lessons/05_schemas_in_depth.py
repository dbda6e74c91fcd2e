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
# # Lesson 5, part 2 (optional) — Schemas in depth
#
# *The course's terms are defined, each with the lesson that teaches it, in the [glossary](../docs/glossary.md).*
#
# **This part is optional.** Lesson 5 (`lessons/05_schemas_from_code.py`) is all that later
# lessons need. Come here when your tools take more than flat values: it assumes you have read
# lesson 5 and know its `@tool`, `spec()`, `validate()` and `invoke()`, and a little pydantic
# (`BaseModel` and `Field`).
#
# ## What you will learn
#
# - nested objects (a booking with a guest), lists, and maps with documented keys;
# - arguments that can take several shapes (a payment with a discriminator);
# - why the toolkit inlines pydantic's `$defs` and drops its titles;
# - how a parameter can be *hidden* from the model (the memory id, the invocation context);
# - why registration collects every problem into one error;
# - limits on values (`minimum`, `maximum`, `pattern`): what the validator, the engine's grammar
#   and the model each do with them.

# %%
import enum
import json
import typing
from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from typing_extensions import TypedDict

from toolkit.client import connect
from toolkit.display import show
from toolkit.engine.grammar import call_rules
from toolkit.messages import calls_of
from toolkit.schema import InvocationContext, MemoryId, ToolArgumentsError, ToolRegistrationError, without_constraints
from toolkit.tools import ToolSet, tool


class OrderStatus(str, enum.Enum):  # the closed set of lesson 5
    PENDING = "pending"
    SHIPPED = "shipped"
    DELIVERED = "delivered"


# %% [markdown]
# ## 1. Nested objects, lists and maps (a hotel booking)
#
# Arguments do not have to be flat. A booking needs a guest, which is an object with its own
# fields; a pydantic model describes it, and `Field(description=...)` documents each field, as
# the docstring's `Args:` section documents each parameter.
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


@tool  # not lesson 11's book_hotel(city, check_in, nights): this one takes the guest as an object
def book_hotel_for_guest(city: str, check_in: str, nights: int, guest: Guest,
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


show(book_hotel_for_guest.spec()["function"]["parameters"]["properties"]["guest"])
print(book_hotel_for_guest.invoke({"city": "杭州", "check_in": "2025-06-01", "nights": 2,
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


@tool(name="book_hotel_for_guest")
def book_hotel_for_guest_strict(city: str, check_in: str, nights: int, guest: StrictGuest,
                                requests: list[str] = []) -> str:
    """Book a hotel room for one guest.

    Args:
        city: City of the hotel.
        check_in: Check-in date as YYYY-MM-DD.
        nights: Number of nights.
        guest: Who the room is for.
        requests: Special requests, each a short phrase.
    """
    return "booked"


arguments = {"city": "Hangzhou", "check_in": "2025-06-01", "nights": 2,
             "guest": {"name": "Li Lei", "phone": "13800000000", "age": 30}}
for variant in (book_hotel_for_guest, book_hotel_for_guest_strict):
    try:
        variant.validate(arguments)
        print(f"{variant.function.__name__:<27} accepted (the extra 'age' was dropped)")
    except ToolArgumentsError as error:
        print(f"{variant.function.__name__:<27} refused: {error.problems}")

# %% [markdown]
# ## 2. Arguments with several shapes: a discriminator
#
# A payment can be by credit card (needs a card number) or by wallet (needs a provider). A
# plain union leaves the model guessing which fields go together. A **discriminator** is one
# field whose fixed value says which shape this is (`"type": "wallet"`). In pydantic: give each
# shape a `Literal` field and mark the union with `Field(discriminator="type")`.

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
# ## 3. The toolkit's schema next to pydantic's own
#
# The toolkit does not write JSON Schema itself; it asks pydantic, then tidies the result.
# Here is what pydantic's `TypeAdapter(...).json_schema()` gives for the booking's guest and
# payment, with no tidying:

# %%
print("guest:")
show(TypeAdapter(Guest).json_schema())
raw = TypeAdapter(Payment).json_schema()
print("payment:")
show(raw)

# %% [markdown]
# Two things are tidied away (`toolkit.schema.tidy_schema`):
#
# - **`$defs` and `$ref`**: pydantic defines each model once and points to it (the payment
#   above: two `$defs`, a `oneOf` of two `$ref`s, and a discriminator `mapping` into `$defs`).
#   That is fine for a validator, but a small model reads the schema as text, top to bottom,
#   and must otherwise jump to a definition further down. The toolkit inlines each reference
#   (unless a type refers to itself, such as a tree, which cannot be inlined) and drops the
#   `mapping`, which would point nowhere; `oneOf` and the `const` values still say which shape
#   is which (compare section 2).
# - **`title`**: pydantic adds a title for every field and model, which only repeats the name.
#   Every character of a schema is read again in every request.
#
# One thing differs without being tidied: the `description`. Alone, pydantic takes the guest's
# class docstring ("The person the room is booked for.") and gives the payment none; as
# parameters of `book_hotel_for_guest` and `pay_booking` (sections 1 and 2), each schema carries
# the parameter's line in the function's docstring ("Who the room is for.", "How to pay: a
# credit card or a wallet."), which says what the argument does in this call.
#
# **Change it and observe** how much that saves on the tools above (characters of JSON, as
# sent; roughly four characters make one token for English text):

# %%
from toolkit.schema import function_schema  # what @tool calls inside

for tool_function in (book_hotel_for_guest.function, pay_booking.function, find_customers.function):
    schema = function_schema(tool_function)
    untidy = schema.arguments.json_schema()  # the same pydantic adapter, before tidying
    print(f"{tool_function.__name__:<20} pydantic {len(json.dumps(untidy, ensure_ascii=False)):>5} chars"
          f"  ->  tidied {len(json.dumps(schema.parameters, ensure_ascii=False)):>5} chars"
          f"   ($ref left: {'$ref' in json.dumps(schema.parameters)})")

# %% [markdown]
# ## 4. Hidden parameters: what the tool needs but the model must not see
#
# Some arguments are not the model's business: *which user* is asking, the tenant, a trace id.
# If they were in the schema, the model would have to guess them, and a prompt injection
# ("I am user admin") could fill them in. So they are left out of the schema and filled in by
# the code that runs the tool. The toolkit marks them by type, `MemoryId` and
# `InvocationContext`:

# %%
USER_ORDERS = {"user-123": ["A1001", "A1002"], "user-456": ["A1003"]}


@tool  # lesson 6's list_my_orders takes no status: this one filters by it
def list_my_orders_by_status(memory_id: MemoryId, status: OrderStatus | None = None) -> list:
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


show(list_my_orders_by_status.spec()["function"]["parameters"])
show(cancel_order.spec()["function"]["parameters"])

# %% [markdown]
# Neither `memory_id` nor `context` appears in the schema. The caller passes the context when it
# runs the tool, next to the model's arguments (lesson 6 shows the loop doing this):

# %%
context = InvocationContext(user="Wang", memory_id="user-123", trace_id="t-42")
print(list_my_orders_by_status.invoke("{}", context))
print(cancel_order.invoke('{"order_id": "A1001"}', context))
print(cancel_order.invoke('{"order_id": "A1003"}', context))  # someone else's order
try:  # and the model cannot smuggle the hidden value in as an argument:
    cancel_order.invoke('{"order_id": "A1003", "memory_id": "user-456"}', context)
except ToolArgumentsError as error:
    print(error)

# %% [markdown]
# ## 5. Registration errors, all at once
#
# A function may not be describable: a parameter without a type, `*args` (the model passes
# arguments by name, so what would it name them?), a positional-only parameter, a type pydantic
# cannot express in JSON Schema, a name the API would reject. Finding these one at a time, one
# restart per fix, is tedious. The toolkit collects every problem and raises one error that
# names the function and each parameter:

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
# ## 6. Limits on values: `minimum`, `maximum`, `pattern`
#
# `enum` lists every value a parameter may take. For a number or a string with too many values
# to list, JSON Schema has limits: `minimum` / `maximum` (and their `exclusive` forms) for
# numbers, `pattern` (a regular expression) and `minLength` / `maxLength` for strings,
# `minItems` / `maxItems` for lists. pydantic writes them from `Field(ge=..., le=...,
# pattern=...)`. A limit can be held in three places, and they are not equally strong:
#
# 1. **the prompt**: the model reads the schema, and may or may not respect it;
# 2. **the grammar**: an engine that constrains decoding (this lab's, lesson 13) can make a
#    value outside the limit impossible to write;
# 3. **the validator**: your code checks the arguments before the tool runs. This one is
#    always yours, whatever the model and the engine do.
#
# A thermostat that takes 10 to 30 °C, and a parcel service that takes five-digit zip codes:

# %%
# Written out here so the lesson reads on its own; benchmarks/schema_constraints.py measures the
# same two tools (and two more) over more questions.
@tool
def set_thermostat(room: str, celsius: Annotated[int, Field(ge=10, le=30)]) -> str:
    """Set the target temperature of a room's thermostat.

    Args:
        room: The room, e.g. kitchen.
        celsius: Target temperature in degrees Celsius.
    """
    return f"{room}: heating set to {celsius} °C"


@tool
def ship_parcel(zip_code: Annotated[str, Field(pattern=r"^\d{5}$")],
                weight_kg: Annotated[float, Field(gt=0, le=30)]) -> str:
    """Ship a parcel within the country.

    Args:
        zip_code: Destination zip code.
        weight_kg: Weight of the parcel in kilograms.
    """
    return f"parcel of {weight_kg} kg to {zip_code}"


show(set_thermostat.spec()["function"]["parameters"])
show(ship_parcel.spec()["function"]["parameters"])
for tool_, arguments in [(set_thermostat, '{"room": "kitchen", "celsius": 40}'),
                         (ship_parcel, '{"zip_code": "9410", "weight_kg": 45}')]:
    try:
        tool_.invoke(arguments)
    except ToolArgumentsError as error:
        print(error)  # what the loop would send back to the model (lesson 9)

# %% [markdown]
# The validator refuses both, naming each parameter and its limit, in words the model can act
# on. Now the grammar. The embedded engine turns each tool's schema into grammar rules (lesson
# 13). A small integer range becomes the list of its values, and a pattern llama.cpp can express
# exactly becomes a rule of its own (`\d` written as `[0-9]`). The weight's range has no such
# rule (its value is any `number`): between 0 and 30 lie infinitely many decimals, so only the
# validator can hold it.

# %%
rules, _ = call_rules([set_thermostat.spec(), ship_parcel.spec()])
wanted = ("arguments-celsius ::=", "arguments-zip-code", "arguments-weight-kg-kv")  # one rule set per tool: call-0-, call-1-
for line in rules.splitlines():
    if any(part in line for part in wanted):
        print(line)

# %% [markdown]
# What does that change in a real call? The embedded model is asked for 40 °C, which the limit
# forbids: once with the schema as `@tool` wrote it, and once with the limits removed
# (`without_constraints`), the same call forced both times (`tool_choice="required"`). The
# validator then judges each call's arguments.

# %%
backend = connect()
question = [{"role": "user", "content": "Set the kitchen to 40 degrees."}]
limited = set_thermostat.spec()
unlimited = {"type": "function", "function": {**limited["function"],
                                              "parameters": without_constraints(limited["function"]["parameters"])}}
for label, spec in [("with the limits", limited), ("without them", unlimited)]:
    reply = backend.chat(messages=question, tools=[spec], tool_choice="required",
                         max_tokens=80, temperature=0, seed=0)
    call = calls_of(reply.choices[0].message)[0]
    try:
        verdict = "the validator accepts: " + set_thermostat.invoke(call.arguments)
    except ToolArgumentsError as error:
        verdict = "the validator refuses: " + str(error).splitlines()[-1].strip()
    print(f"{label:16} the model wrote {call.arguments}\n{'':16} {verdict}")

# %% [markdown]
# Under the grammar the model could not write 40, so it wrote a value the grammar allows (10 on
# this run), and the call went through. Without the limits it wrote what was asked, and the validator refused
# it with a message that names the limit. The first outcome is the more dangerous one: the
# call is *legal*, not *right*. The user asked for 40 and, with no error anywhere, the kitchen
# was set to another temperature. A grammar guarantees the shape of a call; only a model that
# reads the limit can say "30 °C is the most I can set", and only your validator and your tool
# can decide what to tell the user when a request is out of range.
#
# `python benchmarks/schema_constraints.py` asks more such questions (ranges, a zip code, a list
# length, each within and beyond its limit) with and without the limits, and prints how often
# the arguments satisfy them and what the model wrote instead.

# %% [markdown]
# ## Other frameworks
#
# None of these is installed here. **LangChain** and **pydantic-ai** read nested pydantic models and
# discriminated unions as the toolkit does; LangChain hides a parameter with `InjectedToolArg`,
# pydantic-ai passes hidden state as the `RunContext` first parameter of an `@agent.tool`, and
# the **OpenAI Agents SDK**'s `@function_tool` likewise keeps a `RunContextWrapper` parameter out
# of the schema. **LangChain4j** (Java) documents the fields of a parameter class with
# `@Description`, describes several shapes with Jackson's `@JsonTypeInfo`/`@JsonSubTypes` or a
# sealed interface, and hides the memory id with `@ToolMemoryId`.

# %% [markdown]
# ## Summary
#
# - Nested pydantic models, lists and `TypedDict`s become nested JSON Schema; the nested values
#   arrive validated. Forbid extra fields on a nested model if an invented field should be
#   refused rather than dropped.
# - A map's keys are invisible to the model unless a description names them; a `TypedDict`
#   names them in the schema itself.
# - A discriminator (`Field(discriminator="type")`) tells the model and the validator which
#   fields go together.
# - The toolkit inlines `$ref`s and drops titles so the schema reads top to bottom in fewer
#   tokens.
# - Parameters typed `MemoryId` or `InvocationContext` never reach the model; the code that runs
#   the tool fills them in (lesson 6 shows the loop doing it).
# - A function that cannot become a tool fails once, with every problem listed.
# - Limits (`Field(ge=..., le=..., pattern=...)`) go into the schema as `minimum`, `maximum`,
#   `pattern`. The validator always holds them; the embedded engine's grammar holds small integer
#   ranges and simple patterns, which makes a call legal but not right: check what the tool
#   was asked to do, not only whether its arguments fit.
#
# Next, lesson 6 runs the tools in a loop.
