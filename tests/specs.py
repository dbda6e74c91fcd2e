"""Tool specs that many tests offer, written once.

``weather_spec()`` is a get_weather tool in the chat completions format: a required ``city``
string and an optional ``unit`` that is "celsius" or "fahrenheit". Each call returns a new deep
copy, so a test (or the code under test) can change its spec without touching another test's.
A test whose assertions depend on a particular description, enum or default sets that field
itself on its copy, where a reader can see it.

Test modules import it as ``from specs import weather_spec`` (this folder has no
``__init__.py``, so pytest puts it on ``sys.path``, as it does for conftest.py); a test that
only needs the spec takes the ``weather_spec`` fixture from conftest.py instead.
"""

import copy

_WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Get the current weather of a city",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string", "description": "City name, e.g. Beijing"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"]}}}


def weather_spec() -> dict:
    """A fresh copy of the get_weather tool spec, ``{"type": "function", "function": {...}}``."""
    return copy.deepcopy(_WEATHER)
