"""Reference solution for labs/15_capstone_agent.py.

Every choice makes the small model's job smaller: one tool offered (or none), the call forced,
arguments held to the shape the shop's keys have, results it can repeat, and the answer asked
for with no tools at all. It runs on the tool-tuned embedded model, which answers from results
more often than the base one.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from toolkit.engine import TUNED_MODEL
from toolkit.errors_for_model import tool_error_text
from toolkit.messages import assistant_from_reply, calls_of, tool_result
from toolkit.retrieval import ToolRetriever
from toolkit.tools import Tool, render_result, tool

SYSTEM_PROMPT = "You are a shop assistant. Reply with the tool's result in one sentence."
REQUEST = {"model": TUNED_MODEL, "max_tokens": 60}
# Words a question may use for each tool that its name and description do not (lesson 11).
KEYWORDS = {"get_order_status": "order parcel package delivery shipped status",
            "get_city_weather": "weather temperature forecast rain sunny warm cold",
            "count_stock": "stock inventory units items left warehouse"}


def shop_tools(shop) -> list[Tool]:
    """Three tools over the shop. No parameter descriptions: the model copied their examples
    into its arguments. Patterns keep each argument to the shape of the shop's keys."""

    @tool
    def get_order_status(order_id: Annotated[str, Field(pattern=r"^[A-Z][0-9]{4}$")]) -> str:
        """Get the status of a customer's order, by its order id."""
        status = shop.order_status(order_id)
        return f"Order {order_id} is {status}." if status else f"Not found: there is no order {order_id}."

    @tool
    def get_city_weather(city: Annotated[str, Field(pattern=r"^[A-Z][a-z]+( [A-Z][a-z]+)?$")]) -> str:
        """Get the current weather and temperature in a city."""
        found = shop.weather(city)
        if found is None:
            return f"Not found: there is no weather data for {city}."
        return f"The weather in {city} is {found['condition']}, {found['celsius']} degrees Celsius."

    @tool
    def count_stock(product: Annotated[str, Field(pattern=r"^[a-z]+( [a-z]+){0,2}$")]) -> str:
        """Count how many units of a product are in stock."""
        units = shop.stock(product)
        return f"Not found: there is no product {product}." if units is None else f"{units} units of {product} are in stock."

    return [get_order_status, get_city_weather, count_stock]


def run_agent(backend, question: str, tools: list[Tool]) -> list[dict]:
    """One conversation: offer the one tool the question is about (or none), run its call, answer."""
    messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": question}]
    # A 135M model picks among tools by name and is easily led astray: offer only the tool whose
    # words the question shares, and none when it shares too few to be about any of them.
    offered = ToolRetriever(tools, KEYWORDS).top_k(question, k=1, min_score=0.3)
    if not offered:
        reply = backend.chat(messages=messages, **REQUEST).choices[0].message
        return messages + [assistant_from_reply(reply)]
    by_name = {each.name: each for each in offered}
    reply = backend.chat(messages=messages, tools=[each.spec() for each in offered],
                         tool_choice="required", **REQUEST).choices[0].message
    messages.append(assistant_from_reply(reply))
    for call in calls_of(reply):
        try:
            text = render_result(by_name[call.name].invoke(call.arguments))
        except Exception as error:  # the model reads what went wrong; the conversation goes on
            text = tool_error_text(error, call.name)
        messages.append(tool_result(call.id, text))
    # No tools for the answer: after a result the model would otherwise ask for the call again.
    answer = backend.chat(messages=messages, **REQUEST).choices[0].message
    return messages + [assistant_from_reply(answer)]
