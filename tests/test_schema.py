"""Tools from functions and specs: schemas, validation, hidden context, tool sets, providers.

The trusted reference for every generated schema is pydantic's own JSON Schema for the same
type, tidied the same way; the trusted reference for "valid JSON Schema" is ``jsonschema``.
"""

import dataclasses
import json
import math
import socket
from datetime import date
from enum import Enum
from typing import Annotated, Callable, Literal, Optional, Union

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, Field, TypeAdapter
from typing_extensions import TypedDict

from toolkit.schema import (
    InvocationContext,
    MemoryId,
    ToolArgumentsError,
    ToolRegistrationError,
    drop_titles,
    inline_refs,
    tidy_schema,
)
from toolkit.tools import (
    Tool,
    ToolRequest,
    ToolSet,
    render_result,
    tool,
    tools_for_turn,
)

# --- Example tools, taken from the source articles ----------------------------------------------


@tool
def get_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> str:
    """Get the current weather in a city.

    Use it when the user asks about the weather, the temperature or the sky.

    Args:
        city: City name in English, for example Beijing.
        unit: Temperature unit.
    """
    return f"{city}: sunny, 25 {unit}"


class OrderStatus(str, Enum):
    PENDING = "pending"
    SHIPPED = "shipped"
    DELIVERED = "delivered"


@tool
def query_order_status(order_id: str, status: OrderStatus) -> bool:
    """Check whether an order is in the given status.

    Args:
        order_id: Order number, for example A-1001.
        status: The status to check for.
    """
    return status is OrderStatus.SHIPPED


@tool(name="square_root", description="Square root of a non-negative number.")
def square_root(num: float) -> float:
    """
    :param num: The number to take the square root of; never negative.
    """
    return math.sqrt(num)


@tool
def calculate(a: float, operator: Literal["+", "-", "*", "/"], b: float) -> float:
    """Add, subtract, multiply or divide two numbers.

    Args:
        a: The first number.
        operator: The operation; only + - * / are supported.
        b: The second number.
    """
    match operator:
        case "+":
            return a + b
        case "-":
            return a - b
        case "*":
            return a * b
        case "/":
            return a / b


@tool(return_behavior="immediate", timeout=30)
def export_report(customer_id: str, title: str = "Customer report") -> str:
    """Export a customer report and return its download link.

    Args:
        customer_id: Customer number, for example C-42.
        title: Title printed on the first page.
    """
    return f"https://reports.example/{customer_id}.pdf"


class FlightRequest(BaseModel):
    """Where and when the traveller wants to fly."""

    departure_city: str = Field(description="Departure city, for example Beijing")
    arrival_city: str = Field(description="Arrival city, for example Shenzhen")
    departure_date: date = Field(description="Departure date, YYYY-MM-DD")


class CreditCardPayment(BaseModel):
    # The tag has no default: a tag with a default would be optional in the schema, yet
    # pydantic needs it to pick the variant, so schema and validator would disagree.
    type: Literal["creditCard"]
    card_number: str


class WalletPayment(BaseModel):
    type: Literal["wallet"]
    wallet_id: str


PaymentRequest = Annotated[Union[CreditCardPayment, WalletPayment], Field(discriminator="type")]


class CustomerFilters(TypedDict, total=False):
    """Filters for the customer search; every key is optional."""

    name: str
    mobile: str
    level: Literal["gold", "silver"]
    city: str


def walk(node):
    """Every dict key and string value in a JSON document, to search for leftovers."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield key
            yield from walk(value)
    elif isinstance(node, list):
        for item in node:
            yield from walk(item)
    elif isinstance(node, str):
        yield node


def reference(annotation, **extra):
    """Pydantic's schema for a type, tidied like ours, plus any keywords the parameter adds."""
    return {**tidy_schema(TypeAdapter(annotation).json_schema()), **extra}


# --- The schema the model sees ----------------------------------------------------------------


def test_weather_spec_is_exactly_the_request_body_shape():
    assert get_weather.spec() == {"type": "function", "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city.\n\n"
                       "Use it when the user asks about the weather, the temperature or the sky.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string",
                         "description": "City name in English, for example Beijing."},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"],
                         "default": "celsius", "description": "Temperature unit."},
            },
            "required": ["city"],
            "additionalProperties": False,
        },
    }}


def test_parameters_start_with_type_properties_required():
    assert list(query_order_status.parameters)[:3] == ["type", "properties", "required"]


def test_enum_class_becomes_enum_like_pydantic_writes_it():
    status = query_order_status.parameters["properties"]["status"]
    assert status["enum"] == ["pending", "shipped", "delivered"]
    assert status == reference(OrderStatus, description="The status to check for.")


def test_nested_model_is_inlined_and_matches_pydantic():
    @tool
    def search_flight(request: FlightRequest) -> list[str]:
        """Search flights."""
        return []

    nested = search_flight.parameters["properties"]["request"]
    assert nested == reference(FlightRequest)
    assert nested["properties"]["departure_date"] == {
        "type": "string", "format": "date", "description": "Departure date, YYYY-MM-DD"}
    assert nested["description"] == "Where and when the traveller wants to fly."
    keys = set(walk(search_flight.parameters))
    assert "$ref" not in keys and "$defs" not in keys and "title" not in keys


def test_lists_sets_and_dicts_match_pydantic():
    @tool
    def tag_customers(customer_ids: list[str], tags: set[str], scores: dict[str, float]) -> None:
        """Tag customers."""

    properties = tag_customers.parameters["properties"]
    assert properties["customer_ids"] == reference(list[str]) == {
        "type": "array", "items": {"type": "string"}}
    assert properties["tags"] == reference(set[str])
    assert properties["tags"]["uniqueItems"] is True
    assert properties["scores"] == {"type": "object", "additionalProperties": {"type": "number"}}


def test_map_keys_are_documented_by_a_typed_dict():
    @tool
    def query_customers(filters: CustomerFilters) -> str:
        """Find customers.

        Args:
            filters: Conditions to match; leave out the ones the user did not mention.
        """
        return ""

    filters = query_customers.parameters["properties"]["filters"]
    assert set(filters["properties"]) == {"name", "mobile", "level", "city"}
    assert filters["properties"]["level"]["enum"] == ["gold", "silver"]
    assert "required" not in filters or filters["required"] == []
    assert filters["description"] == (
        "Conditions to match; leave out the ones the user did not mention.")


def test_discriminated_union_lists_each_variant_with_its_tag():
    @tool
    def pay(payment: PaymentRequest) -> str:
        """Pay for the order."""
        return "paid"

    payment = pay.parameters["properties"]["payment"]
    assert payment == reference(PaymentRequest)
    assert payment["discriminator"] == {"propertyName": "type"}
    tags = [variant["properties"]["type"]["const"] for variant in payment["oneOf"]]
    assert tags == ["creditCard", "wallet"]
    assert all("type" in variant["required"] for variant in payment["oneOf"])
    assert not any(str(s).startswith("#/$defs") for s in walk(pay.parameters))


def test_discriminated_union_validates_to_the_right_variant():
    @tool
    def pay(payment: PaymentRequest) -> str:
        """Pay for the order."""
        return type(payment).__name__

    assert pay.invoke('{"payment": {"type": "wallet", "wallet_id": "w-9"}}') == "WalletPayment"
    with pytest.raises(ToolArgumentsError) as caught:
        pay.validate({"payment": {"type": "cash"}})
    assert caught.value.problems[0].startswith("payment: ")
    assert "'creditCard', 'wallet'" in caught.value.problems[0]


def test_required_unless_default_or_optional():
    @tool
    def book(room: str, note: Optional[str], guests: int = 1, floor: int | None = 3) -> None:
        """Book a room."""

    assert book.parameters["required"] == ["room"]
    assert book.validate({"room": "101"}) == {"room": "101", "note": None, "guests": 1, "floor": 3}
    assert book.parameters["properties"]["note"] == {
        "anyOf": [{"type": "string"}, {"type": "null"}], "default": None}


def test_description_comes_from_short_and_long_docstring():
    assert get_weather.description.startswith("Get the current weather in a city.\n\nUse it")
    assert "Args" not in get_weather.description and "city:" not in get_weather.description


def test_rest_docstring_describes_parameters():
    assert square_root.parameters["properties"]["num"]["description"] == (
        "The number to take the square root of; never negative.")


def test_numpy_docstring_describes_parameters():
    @tool
    def convert(amount: float) -> float:
        """Convert dollars to euros.

        Parameters
        ----------
        amount
            Amount in US dollars.
        """
        return amount

    assert convert.description == "Convert dollars to euros."
    assert convert.parameters["properties"]["amount"]["description"] == "Amount in US dollars."


def test_annotated_field_describes_and_constrains_and_beats_the_docstring():
    @tool
    def refund(order_id: Annotated[str, Field(description="Order number, e.g. A-1001")],
               amount: Annotated[float, Field(gt=0, description="Amount in yuan")]) -> str:
        """Refund an order.

        Args:
            amount: Money.
        """
        return "ok"

    properties = refund.parameters["properties"]
    assert properties["order_id"] == {"type": "string", "description": "Order number, e.g. A-1001"}
    assert properties["amount"] == {"type": "number", "exclusiveMinimum": 0,
                                    "description": "Amount in yuan"}
    with pytest.raises(ToolArgumentsError, match="amount: Input should be greater than 0"):
        refund.validate({"order_id": "A-1", "amount": -5})


def test_explicit_name_and_description_replace_the_defaults():
    assert square_root.name == "square_root"
    assert square_root.description == "Square root of a non-negative number."


def test_titles_go_but_a_parameter_named_title_stays():
    properties = export_report.parameters["properties"]
    assert set(properties) == {"customer_id", "title"}
    assert properties["title"] == {"type": "string", "default": "Customer report",
                                   "description": "Title printed on the first page."}
    assert drop_titles({"title": "X", "default": {"title": "kept"}, "properties": {
        "title": {"title": "Title", "type": "string"}}}) == {
        "default": {"title": "kept"}, "properties": {"title": {"type": "string"}}}


def test_recursive_model_keeps_defs_and_stays_valid():
    class Category(BaseModel):
        name: str
        children: list["Category"] = []

    @tool
    def create_categories(root: Category) -> None:
        """Create a category tree."""

    schema = create_categories.parameters
    assert "Category" in schema["$defs"]
    assert schema["properties"]["root"] == {"$ref": "#/$defs/Category"}
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate({"root": {"name": "a", "children": [{"name": "b"}]}}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"root": {"name": "a", "children": [{"nom": "b"}]}}, schema)


def test_inline_refs_lets_the_field_description_win():
    schema = {"properties": {"a": {"$ref": "#/$defs/A", "description": "field"}},
              "$defs": {"A": {"type": "object", "description": "class"}}}
    assert inline_refs(schema) == {"properties": {"a": {"type": "object", "description": "field"}}}


def test_generated_schemas_are_valid_json_schema():
    for each in (get_weather, query_order_status, square_root, calculate, export_report):
        jsonschema.Draft202012Validator.check_schema(each.parameters)


@given(st.dictionaries(
    st.sampled_from(["city", "unit", "country"]),
    st.one_of(st.text(max_size=5), st.integers(), st.booleans(), st.none(),
              st.sampled_from(["celsius", "fahrenheit", "kelvin"])),
))
def test_schema_and_validator_agree(arguments):
    # Whatever the model writes, the schema it was shown and the check it faces give one verdict.
    schema_accepts = jsonschema.Draft202012Validator(get_weather.parameters).is_valid(arguments)
    try:
        get_weather.validate(arguments)
        validator_accepts = True
    except ToolArgumentsError:
        validator_accepts = False
    assert schema_accepts == validator_accepts


# --- Validating and invoking ------------------------------------------------------------------


def test_invoke_takes_raw_json_text_and_returns_the_raw_result():
    assert calculate.invoke('{"a": 3, "operator": "+", "b": 5}') == 8.0
    assert square_root.invoke({"num": "144"}) == 12.0  # pydantic coerces "144" to a float
    with pytest.raises(ZeroDivisionError):  # invoke does not hide failures; the loop handles them
        calculate.invoke({"a": 1, "operator": "/", "b": 0})


def test_tool_is_still_callable_like_the_function():
    assert square_root(100) == 10.0
    assert get_weather("Beijing", unit="fahrenheit") == "Beijing: sunny, 25 fahrenheit"
    assert get_weather.__name__ == "get_weather" and "Args:" in get_weather.__doc__


def test_wrong_type_names_the_parameter():
    with pytest.raises(ToolArgumentsError) as caught:
        square_root.invoke('{"num": "ten"}')
    assert caught.value.tool_name == "square_root"
    assert caught.value.problems == [
        "num: Input should be a valid number, unable to parse string as a number (got 'ten')"]


def test_missing_required_names_the_parameter():
    with pytest.raises(ToolArgumentsError) as caught:
        get_weather.validate({"unit": "celsius"})
    assert caught.value.problems == ["city: required, but missing"]
    assert "Invalid arguments for tool 'get_weather'" in str(caught.value)


def test_unknown_enum_value_names_the_parameter_and_the_allowed_values():
    with pytest.raises(ToolArgumentsError) as caught:
        query_order_status.validate({"order_id": "A-1", "status": "已发货"})
    (problem,) = caught.value.problems
    assert problem.startswith("status: ")
    assert "'pending', 'shipped' or 'delivered'" in problem


def test_every_problem_is_listed_at_once():
    with pytest.raises(ToolArgumentsError) as caught:
        calculate.validate({"a": "x", "operator": "^", "b": 2, "c": 3})
    assert [p.split(":")[0] for p in caught.value.problems] == ["a", "operator", "c"]
    assert "unexpected" in caught.value.problems[2]


def test_nested_problems_give_the_path():
    @tool
    def search_flight(request: FlightRequest) -> None:
        """Search flights."""

    with pytest.raises(ToolArgumentsError) as caught:
        search_flight.validate({"request": {"departure_city": "Beijing",
                                            "arrival_city": "Shenzhen",
                                            "departure_date": "next friday"}})
    assert caught.value.problems[0].startswith("request.departure_date: ")


def test_arguments_that_are_not_json_or_not_an_object():
    with pytest.raises(ToolArgumentsError, match="not valid JSON: Expecting ',' delimiter"):
        get_weather.validate('{"city": "Beijing" "unit": "celsius"}')
    with pytest.raises(ToolArgumentsError, match="must be a JSON object, not list"):
        get_weather.validate('["Beijing"]')


def test_empty_arguments_mean_no_arguments():
    @tool
    def list_holidays() -> list[str]:
        """List public holidays."""
        return ["New Year"]

    assert list_holidays.parameters["properties"] == {}
    assert list_holidays.invoke("") == ["New Year"]


def test_bound_method_becomes_a_tool_without_self():
    class CalculatorTools:
        def square_root(self, num: float) -> float:
            """Square root.

            Args:
                num: A non-negative number.
            """
            return math.sqrt(num)

    bound = tool(CalculatorTools().square_root)
    assert list(bound.parameters["properties"]) == ["num"]
    assert bound.invoke({"num": 9}) == 3.0


def test_return_behavior_and_timeout():
    assert export_report.return_behavior == "immediate"
    assert export_report.timeout == 30
    assert get_weather.return_behavior == "to_model" and get_weather.timeout is None


# --- Hidden context ---------------------------------------------------------------------------


@tool
def cancel_order(memory_id: MemoryId, order_id: str) -> str:
    """Cancel one of the current user's orders.

    Args:
        memory_id: Who is asking (filled in by the application).
        order_id: Order number.
    """
    return f"{memory_id} cancelled {order_id}"


@tool
def search_flight_for_user(request: FlightRequest, context: InvocationContext) -> str:
    """Search flights for the signed-in user."""
    return f"{context.user}@{context.tenant}:{request.arrival_city}"


def test_hidden_parameters_never_reach_the_schema():
    assert cancel_order.parameters["properties"].keys() == {"order_id"}
    assert cancel_order.parameters["required"] == ["order_id"]
    assert search_flight_for_user.parameters["properties"].keys() == {"request"}
    sent = json.dumps([cancel_order.spec(), search_flight_for_user.spec()])
    assert "memory_id" not in sent and "context" not in sent


def test_hidden_parameters_are_injected_at_invoke():
    context = InvocationContext(user="li", tenant="acme", trace_id="t-1", memory_id="user-123")
    assert cancel_order.invoke('{"order_id": "A-7"}', context=context) == "user-123 cancelled A-7"
    request = {"request": {"departure_city": "Beijing", "arrival_city": "Shenzhen",
                           "departure_date": "2025-05-01"}}
    assert search_flight_for_user.invoke(request, context=context) == "li@acme:Shenzhen"


def test_without_context_memory_id_is_none_and_context_is_empty():
    assert cancel_order.invoke({"order_id": "A-7"}) == "None cancelled A-7"
    request = {"request": {"departure_city": "a", "arrival_city": "b",
                           "departure_date": "2025-05-01"}}
    assert search_flight_for_user.invoke(request) == "None@None:b"


def test_the_model_cannot_smuggle_in_a_hidden_value():
    with pytest.raises(ToolArgumentsError) as caught:
        cancel_order.invoke({"order_id": "A-7", "memory_id": "admin"},
                            context=InvocationContext(memory_id="user-123"))
    assert caught.value.problems == [
        "memory_id: unexpected, the tool has no parameter of that name"]


def test_invocation_context_is_frozen():
    context = InvocationContext(user="li")
    with pytest.raises(dataclasses.FrozenInstanceError):
        context.user = "admin"


# --- Manual registration: a spec plus an executor ---------------------------------------------

BOOKING_SPEC = {"type": "function", "function": {
    "name": "get_booking_details",
    "description": "Look up a booking by its number.",
    "parameters": {
        "type": "object",
        "properties": {"bookingNumber": {"type": "string",
                                         "description": "Booking number, like B-12345"}},
        "required": ["bookingNumber"],
    },
}}


def test_spec_tool_runs_its_executor_with_arguments_and_context():
    received = []

    def executor(arguments, context):
        received.append((arguments, context))
        return f"booking {arguments['bookingNumber']} is confirmed"

    booking = Tool.from_spec(BOOKING_SPEC, executor, return_behavior="immediate")
    context = InvocationContext(memory_id="user-123")
    assert booking.spec() == BOOKING_SPEC
    assert booking.invoke('{"bookingNumber": "B-12345"}', context) == "booking B-12345 is confirmed"
    assert received == [({"bookingNumber": "B-12345"}, context)]
    assert booking.return_behavior == "immediate"


def test_spec_may_be_the_inner_function_dict():
    booking = Tool.from_spec(BOOKING_SPEC["function"], lambda arguments, context: "ok")
    assert booking.spec() == BOOKING_SPEC


def test_spec_tool_checks_arguments_with_jsonschema_before_running():
    calls = []
    booking = Tool.from_spec(BOOKING_SPEC, lambda arguments, context: calls.append(arguments))
    with pytest.raises(ToolArgumentsError) as caught:
        booking.invoke({"bookingNumber": 12345})
    assert caught.value.problems == ["bookingNumber: 12345 is not of type 'string'"]
    with pytest.raises(ToolArgumentsError, match="'bookingNumber' is a required property"):
        booking.invoke("{}")
    assert calls == []


def test_spec_tool_is_not_callable_directly():
    booking = Tool.from_spec(BOOKING_SPEC, lambda arguments, context: "ok")
    with pytest.raises(TypeError, match="use .invoke"):
        booking(bookingNumber="B-1")


def test_bad_spec_lists_every_problem():
    spec = {"name": "get booking!", "description": "",
            "parameters": {"type": "array", "items": {"type": "strnig"}}}
    with pytest.raises(ToolRegistrationError) as caught:
        Tool.from_spec(spec, "not a function", timeout=0)
    problems = " | ".join(caught.value.problems)
    assert "name 'get booking!'" in problems
    assert "timeout 0" in problems
    assert "not a valid JSON Schema" in problems
    assert "describe a JSON object" in problems
    assert "executor is not callable" in problems
    assert len(caught.value.problems) == 5


def test_spec_parameters_are_copied_not_shared():
    spec = json.loads(json.dumps(BOOKING_SPEC))
    booking = Tool.from_spec(spec, lambda arguments, context: "ok")
    spec["function"]["parameters"]["required"].clear()
    booking.spec()["function"]["parameters"]["properties"].clear()
    assert booking.parameters["required"] == ["bookingNumber"]
    assert "bookingNumber" in booking.parameters["properties"]


# --- Registration errors ----------------------------------------------------------------------


def test_registration_lists_every_problem_and_names_the_function():
    def badly_typed(a, *numbers, connection: socket.socket,
                    callback: Callable[[int], int], ok: int, **options):
        pass

    with pytest.raises(ToolRegistrationError) as caught:
        tool(badly_typed, require_descriptions=True)
    message = str(caught.value)
    assert "badly_typed" in caught.value.subject
    assert caught.value.problems == [
        "the tool has no description",
        "parameter 'a' has no type annotation",
        "parameter 'a' has no description",
        "parameter 'numbers': *args and **kwargs cannot be described to a model; "
        "name each parameter",
        "parameter 'connection': pydantic cannot make a JSON Schema for type socket.socket",
        "parameter 'connection' has no description",
        "parameter 'callback': pydantic cannot make a JSON Schema for type Callable[[int], int]",
        "parameter 'callback' has no description",
        "parameter 'ok' has no description",
        "parameter 'options': *args and **kwargs cannot be described to a model; "
        "name each parameter",
    ]
    assert message.count("\n- ") == 10


def test_descriptions_are_only_required_when_asked():
    def undocumented(x: int) -> int:
        return x

    assert tool(undocumented).description == ""
    with pytest.raises(ToolRegistrationError, match="parameter 'x' has no description"):
        tool(undocumented, require_descriptions=True)


def test_settings_are_checked_with_the_signature():
    with pytest.raises(ToolRegistrationError) as caught:
        tool(name="平方根运算", return_behavior="later", timeout=-1)(square_root.function)
    problems = caught.value.problems
    assert len(problems) == 3
    assert problems[0].startswith("name '平方根运算' must be 1 to 64 ASCII letters")
    assert "return_behavior 'later'" in problems[1] and "immediate_if_last" in problems[1]
    assert problems[2].startswith("timeout -1")


def test_positional_only_parameters_are_rejected():
    def legacy(x: int, /) -> int:
        """Legacy."""
        return x

    with pytest.raises(ToolRegistrationError, match="'x' is positional-only"):
        tool(legacy)


def test_parameter_names_that_clash_with_pydantic_model_methods_are_fine():
    @tool
    def save(json: str, copy: bool = False) -> str:
        """Save a document."""
        return json + str(copy)

    assert save.invoke({"json": "{}"}) == "{}False"


# --- Tool sets --------------------------------------------------------------------------------


def test_toolset_basics():
    tools = ToolSet([get_weather, calculate, square_root])
    assert len(tools) == 3
    assert tools.names == ["get_weather", "calculate", "square_root"]
    assert "calculate" in tools and calculate in tools and "weather" not in tools
    assert tools.get("square_root") is square_root and tools.get("weather") is None
    assert list(tools) == [get_weather, calculate, square_root]
    assert tools.specs() == [get_weather.spec(), calculate.spec(), square_root.spec()]


def test_toolset_accepts_plain_functions():
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    tools = ToolSet()
    made = tools.add(add)
    assert isinstance(made, Tool) and tools.get("add").invoke({"a": 2, "b": 3}) == 5


def test_duplicate_names_name_both_tools():
    @tool(name="get_weather")
    def weather_v2(city: str) -> str:
        """Weather, second version."""
        return city

    with pytest.raises(ToolRegistrationError) as caught:
        ToolSet([get_weather, weather_v2])
    message = str(caught.value)
    assert "Two tools are named 'get_weather'" in message
    assert "get_weather and" in message and "weather_v2" in message


def test_toolset_can_require_descriptions_of_ready_made_tools():
    @tool
    def vague(x: int) -> int:
        return x

    assert "vague" in ToolSet([vague])
    with pytest.raises(ToolRegistrationError) as caught:
        ToolSet([get_weather, vague], require_descriptions=True)
    assert caught.value.problems == [
        "the tool has no description", "parameter 'x' has no description"]
    bare_spec = {"name": "ping",
                 "parameters": {"type": "object", "properties": {"host": {"type": "string"}}}}
    with pytest.raises(ToolRegistrationError, match="parameter 'host' has no description"):
        ToolSet([Tool.from_spec(bare_spec, lambda a, c: "pong")], require_descriptions=True)


# --- Tool providers ---------------------------------------------------------------------------

booking_tool = Tool.from_spec(BOOKING_SPEC, lambda arguments, context: "confirmed")


def booking_provider(request: ToolRequest):
    """Offer the booking tool only when the user talks about a booking."""
    if "booking" not in request.user_message.lower():
        return None
    return [booking_tool]


@tool
def delete_customer(customer_id: str) -> str:
    """Delete a customer. Administrators only."""
    return "deleted"


def admin_provider(request: ToolRequest):
    """Offer admin tools to administrators only."""
    context = request.context or InvocationContext()
    return [delete_customer] if context.user == "admin" else []


def test_providers_add_tools_for_this_turn_only():
    static = ToolSet([get_weather])
    request = ToolRequest("Show my booking B-12345", memory_id="user-123",
                          context=InvocationContext(user="admin"))
    turn = tools_for_turn(static, [booking_provider, admin_provider], request)
    assert turn.names == ["get_weather", "get_booking_details", "delete_customer"]
    assert static.names == ["get_weather"]


def test_providers_may_offer_nothing():
    turn = tools_for_turn(ToolSet([get_weather]), [booking_provider, admin_provider],
                          ToolRequest("What is the weather in Beijing?"))
    assert turn.names == ["get_weather"]


def test_provider_name_clash_names_the_tool_and_the_provider():
    @tool(name="get_weather")
    def provided_weather(city: str) -> str:
        """Weather from a plugin."""
        return city

    def weather_provider(request: ToolRequest):
        return [provided_weather]

    with pytest.raises(ToolRegistrationError) as caught:
        tools_for_turn(ToolSet([get_weather]), [weather_provider], ToolRequest("hi"))
    message = str(caught.value)
    assert "weather_provider" in message and "'get_weather'" in message
    assert "already taken by get_weather" in message


def test_two_providers_may_clash_too():
    with pytest.raises(ToolRegistrationError, match="booking_provider.*get_booking_details"):
        tools_for_turn(ToolSet(), [booking_provider, booking_provider], ToolRequest("booking"))


# --- Results as text --------------------------------------------------------------------------


class Forecast(BaseModel):
    city: str
    day: date
    status: OrderStatus


@dataclasses.dataclass
class Booking:
    number: str
    guests: int


@pytest.mark.parametrize("value, text", [
    (None, "success"),
    ("10.0 is the answer", "10.0 is the answer"),
    ("", ""),
    (10.0, "10.0"),
    (True, "true"),
    ({"city": "北京", "temp": 25}, '{"city": "北京", "temp": 25}'),
    (Forecast(city="上海", day=date(2025, 5, 1), status=OrderStatus.SHIPPED),
     '{"city": "上海", "day": "2025-05-01", "status": "shipped"}'),
    (Booking("B-1", 2), '{"number": "B-1", "guests": 2}'),
    ([Booking("B-1", 2)], '[{"number": "B-1", "guests": 2}]'),
    ({"tags": {"vip"}}, '{"tags": ["vip"]}'),
])
def test_render_result(value, text):
    assert render_result(value) == text


def test_render_result_turns_sets_into_lists():
    assert sorted(json.loads(render_result({3, 1, 2}))) == [1, 2, 3]
