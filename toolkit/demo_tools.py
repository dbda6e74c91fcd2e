"""A few small tools to chat with in the app's playground and in lesson cells.

They answer from made-up data, instantly and offline, so that what you watch is the model and
the loop, not a weather service. Each one is an ordinary typed, documented function turned into
a tool by ``@tool``: the docstring is the description the model reads.
"""

from __future__ import annotations

import ast
import math
import operator
from typing import Literal

from toolkit.tools import ToolSet, tool

_WEATHER = {
    "beijing": ("sunny", 24), "shanghai": ("cloudy", 27), "guangzhou": ("rain", 30),
    "shenzhen": ("thunderstorms", 29), "hangzhou": ("light rain", 25), "paris": ("cloudy", 18),
    "london": ("drizzle", 14), "new york": ("sunny", 22), "tokyo": ("clear", 20),
}
_CHINESE_CITIES = {"北京": "beijing", "上海": "shanghai", "广州": "guangzhou", "深圳": "shenzhen",
                   "杭州": "hangzhou", "巴黎": "paris", "伦敦": "london", "纽约": "new york",
                   "东京": "tokyo"}


@tool
def get_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> dict:
    """Get the current weather (condition and temperature) in one city.

    Args:
        city: City name, in English or Chinese, e.g. Beijing or 北京.
        unit: Temperature unit.
    """
    key = _CHINESE_CITIES.get(city.strip(), city.strip().lower())
    if key not in _WEATHER:
        return {"city": city, "found": False,
                "message": f"No weather data for {city}. Known cities: "
                           + ", ".join(name.title() for name in _WEATHER) + "."}
    condition, celsius = _WEATHER[key]
    temperature = celsius if unit == "celsius" else round(celsius * 9 / 5 + 32)
    return {"city": key.title(), "condition": condition, "temperature": temperature, "unit": unit}


_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
              ast.Div: operator.truediv, ast.Pow: operator.pow, ast.Mod: operator.mod,
              ast.FloorDiv: operator.floordiv, ast.USub: operator.neg, ast.UAdd: operator.pos}
_FUNCTIONS = {"sqrt": math.sqrt, "abs": abs, "round": round}


def _evaluate(node: ast.AST) -> float:
    # A tiny arithmetic evaluator: eval() would run whatever text the model wrote.
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
            and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        right = _evaluate(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > 100:
            raise ValueError("exponent too large")
        return _OPERATORS[type(node.op)](_evaluate(node.left), right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_evaluate(node.operand))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id in _FUNCTIONS and not node.keywords:
        return _FUNCTIONS[node.func.id](*(_evaluate(arg) for arg in node.args))
    raise ValueError(f"unsupported expression element: {ast.dump(node)[:60]}")


@tool
def calculate(expression: str) -> float:
    """Evaluate an arithmetic expression and return the number.

    Args:
        expression: Arithmetic with + - * / ** % // and sqrt(), abs(), round(), e.g. "12 * (3 + 4)".
    """
    try:
        tree = ast.parse(expression.replace("^", "**").replace("×", "*").replace("÷", "/"),
                         mode="eval")
    except SyntaxError as error:
        raise ValueError(f"not an arithmetic expression: {error.msg}") from None
    return _evaluate(tree)


_ORDERS = {
    "A1001": {"status": "shipped", "carrier": "SF Express", "eta": "2 days"},
    "A1002": {"status": "processing", "eta": "ships tomorrow"},
    "A1003": {"status": "delivered", "delivered_on": "last Monday"},
    "A1004": {"status": "cancelled", "refund": "refunded to the original card"},
}


@tool
def get_order_status(order_id: str) -> dict:
    """Look up the status of one order by its id.

    Args:
        order_id: The order id, e.g. A1001.
    """
    key = order_id.strip().upper()
    if key not in _ORDERS:
        # Saying plainly that nothing exists stops a model from asking again and again.
        return {"order_id": order_id, "found": False,
                "message": f"No order {order_id} found. Known ids look like A1001."}
    return {"order_id": key, "found": True, **_ORDERS[key]}


_RATES_TO_USD = {"USD": 1.0, "CNY": 0.14, "EUR": 1.08, "GBP": 1.27, "JPY": 0.0067}


@tool
def convert_currency(amount: float, from_currency: Literal["USD", "CNY", "EUR", "GBP", "JPY"],
                     to_currency: Literal["USD", "CNY", "EUR", "GBP", "JPY"]) -> dict:
    """Convert an amount of money from one currency to another at a fixed demo rate.

    Args:
        amount: How much money, in from_currency.
        from_currency: ISO code of the currency the amount is in.
        to_currency: ISO code of the currency wanted.
    """
    converted = amount * _RATES_TO_USD[from_currency] / _RATES_TO_USD[to_currency]
    return {"amount": amount, "from": from_currency, "to": to_currency,
            "result": round(converted, 2)}


DEMO_TOOLS = (get_weather, calculate, get_order_status, convert_currency)


def demo_toolset(names: list[str] | None = None) -> ToolSet:
    """The demo tools (all, or those named), ready to offer in a turn."""
    chosen = [each for each in DEMO_TOOLS if names is None or each.name in names]
    return ToolSet(chosen)
