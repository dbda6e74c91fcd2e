"""Grader for labs/14_mcp_tools.py: an MCP server's tools and results, in the lab's shapes.

The cases are what an MCP server sends (``tools/list`` entries and ``tools/call`` results as
plain dicts, the way the ``mcp`` SDK's ``model_dump(exclude_none=True)`` gives them), each
with the OpenAI tool spec or the result text the model must get.
"""

from __future__ import annotations

import copy

from labs.grading import Hints, Report, attempt

WEATHER_SCHEMA = {"type": "object", "properties": {"city": {"type": "string", "description": "City name."},
                                                  "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
                  "required": ["city"]}

TOOL_CASES: list[tuple[str, dict, dict]] = [
    ("a tool with a description",
     {"name": "get_weather", "description": "Get the current weather in one city.", "inputSchema": WEATHER_SCHEMA},
     {"type": "function", "function": {"name": "get_weather", "description": "Get the current weather in one city.",
                                       "parameters": WEATHER_SCHEMA}}),
    ("a tool without a description",
     {"name": "ping", "inputSchema": {"type": "object", "properties": {}}},
     {"type": "function", "function": {"name": "ping", "parameters": {"type": "object", "properties": {}}}}),
    ("extra MCP fields (title, annotations, outputSchema) are not sent to the model",
     {"name": "calculate", "title": "Calculator", "description": "Evaluate arithmetic.",
      "inputSchema": {"type": "object", "properties": {"expression": {"type": "string"}}, "required": ["expression"]},
      "outputSchema": {"type": "object", "properties": {"result": {"type": "number"}}},
      "annotations": {"readOnlyHint": True}},
     {"type": "function", "function": {"name": "calculate", "description": "Evaluate arithmetic.",
                                       "parameters": {"type": "object", "properties": {"expression": {"type": "string"}},
                                                      "required": ["expression"]}}}),
]


def _text(text: str) -> dict:
    return {"type": "text", "text": text}


RESULT_CASES: list[tuple[str, dict, str]] = [
    ("one text part", {"content": [_text('{"condition": "sunny"}')], "isError": False}, '{"condition": "sunny"}'),
    ("two text parts are joined by a new line", {"content": [_text("line one"), _text("line two")]},
     "line one\nline two"),
    ("an image is named, not pasted", {"content": [_text("Here is the chart."),
                                                  {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}]},
     "Here is the chart.\n[image: image/png]"),
    ("a failed call starts with Error:", {"content": [_text("No order A9 found.")], "isError": True},
     "Error: No order A9 found."),
    ("a failed call that already says Error: is not doubled",
     {"content": [_text("Error: unknown city")], "isError": True}, "Error: unknown city"),
    ("only structured content", {"content": [], "structuredContent": {"result": 42}}, '{"result": 42}'),
    ("nothing at all", {"content": []}, "(no output)"),
]


def grade(to_openai_tool, result_text) -> Report:
    report = Report("Lab 14 - MCP tools as OpenAI tools")
    for case, listed, expected in TOOL_CASES:
        done, got = attempt(report, "tool: " + case, to_openai_tool, copy.deepcopy(listed))
        if not done:
            if report.failures[-1].note.startswith("not done yet"):
                return report
            continue
        note = "the spec differs"
        if isinstance(got, dict) and "inputSchema" in str(got.get("function", {}).keys()):
            note = "OpenAI calls the schema 'parameters'; 'inputSchema' is MCP's name for it"
        report.check("tool: " + case, expected, got, note)
    for case, result, expected in RESULT_CASES:
        done, got = attempt(report, "result: " + case, result_text, copy.deepcopy(result))
        if not done:
            if report.failures[-1].note.startswith("not done yet"):
                return report
            continue
        note = "the text differs"
        if result.get("isError") and isinstance(got, str) and not got.startswith("Error:"):
            note = ("isError is true: the model must be told the call failed, or it will take the "
                    "message for data")
        report.check("result: " + case, expected, got, note)
    return report


hints = Hints([
    "A tool: {'type': 'function', 'function': {...}} with the MCP tool's name, its description "
    "only if it has one, and its inputSchema under the key 'parameters'. Leave everything else out.",
    "A result: turn each content part into text (a text part is its 'text'; an image or audio "
    "part is '[image: <mimeType>]'), join them with '\\n'. No parts? Use the structuredContent "
    "as JSON, else '(no output)'.",
    "Last, if result.get('isError') is true and the text does not already start with 'Error:', "
    "put 'Error: ' in front: the same convention as every other failed call in the lab.",
])
