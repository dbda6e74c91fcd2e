"""Reference solution for labs/04_tool_schema_by_hand.py."""


def order_status_tool() -> dict:
    return {
        "type": "function",
        "function": {
            "name": "get_order_status",
            "description": (
                "Look up the current status of a customer's order. Use it when the user asks "
                "where an order is, or whether it has shipped or been delivered."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "order_id": {
                        "type": "string",
                        "description": "The order number exactly as the customer gives it, e.g. A1024",
                    },
                },
                "required": ["order_id"],
                "additionalProperties": False,
            },
        },
    }


def weather_tool() -> dict:
    return {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": (
                "Get the current weather in one city. Use it when the user asks about the "
                "weather, the temperature or the conditions somewhere."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "City name in English, e.g. Beijing"},
                    "unit": {
                        "type": "string",
                        "enum": ["celsius", "fahrenheit"],
                        "description": "Temperature unit; celsius if not given",
                    },
                },
                "required": ["city"],
            },
        },
    }
