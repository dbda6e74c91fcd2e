"""Reference solution for labs/15_capstone_agent.py."""

from __future__ import annotations

from toolkit.messages import assistant_from_reply, calls_of, tool_result
from toolkit.retrieval import ToolRetriever
from toolkit.tools import Tool, render_result, tool

SYSTEM_PROMPT = "You are a shop assistant. Answer in one short sentence, using what the tool returned."
REQUEST = {"max_tokens": 60}  # short answers: grading pins temperature 0 and a seed itself


def make_tools(shop) -> list[Tool]:
    """Three tools over the shop, each returning a sentence the model can copy into its answer."""

    @tool
    def get_order_status(order_id: str) -> str:
        """Get the status of a customer's order, by its order id.

        Args:
            order_id: the order id, e.g. A1001
        """
        status = shop.order_status(order_id)
        return f"Order {order_id} is {status}." if status else f"No order {order_id} was found."

    @tool
    def get_weather(city: str) -> str:
        """Get the current weather and temperature in a city.

        Args:
            city: the city's name, e.g. Paris
        """
        found = shop.weather(city)
        if found is None:
            return f"No weather for {city} was found."
        return f"The weather in {city} is {found['condition']}, {found['celsius']} degrees Celsius."

    @tool
    def count_stock(product: str) -> str:
        """Count how many units of a product are in stock.

        Args:
            product: the product's name, e.g. kettle
        """
        units = shop.stock(product)
        return f"No product {product} was found." if units is None else f"{units} units of {product} are in stock."

    return [get_order_status, get_weather, count_stock]


def run_agent(backend, question: str, tools: list[Tool]) -> list[dict]:
    """One conversation: offer the one tool the question is about (or none), run its call, answer."""
    messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": question}]
    # A 135M model picks among tools by name and is easily led astray: offer it only the tool
    # whose words the question shares (lesson 11), and none when it shares nothing.
    offered = ToolRetriever(tools).top_k(question, k=1, min_score=0.3)
    if not offered:
        reply = backend.chat(messages=messages, **REQUEST).choices[0].message
        return messages + [assistant_from_reply(reply)]
    by_name = {each.name: each for each in offered}
    specs = [each.spec() for each in offered]
    reply = backend.chat(messages=messages, tools=specs, tool_choice="required", **REQUEST).choices[0].message
    messages.append(assistant_from_reply(reply))
    for call in calls_of(reply):
        try:
            text = render_result(by_name[call.name].invoke(call.arguments))
        except Exception as error:  # the model reads what went wrong, the turn goes on
            text = f"Error: {error}"
        messages.append(tool_result(call.id, text))
    # Forced to text: after a result this model would otherwise ask for the same call again.
    answer = backend.chat(messages=messages, tools=specs, tool_choice="none", **REQUEST).choices[0].message
    return messages + [assistant_from_reply(answer)]
