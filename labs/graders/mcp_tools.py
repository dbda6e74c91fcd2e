"""Grader for labs/14_mcp_tools.py: an MCP server's tools and results, in the lab's shapes.

The cases are what an MCP server sends (``tools/list`` entries and ``tools/call`` results as
plain dicts, the way the ``mcp`` SDK's ``model_dump(exclude_none=True)`` gives them), each
with the OpenAI tool spec or the result text the model must get.

Besides the public cases, tools and results are made up while grading: other names, schemas and
MCP-only fields, results with other parts (audio, resources), other texts, errors and structured
content, so that a table of the public cases does not pass; ``grade(f, g, seed=N)`` repeats a run.
"""

from __future__ import annotations

import copy
import json
import random

from labs.grading import Hints, Report, attempt, case_seed

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


# --- Tools and results made up while grading ---------------------------------------------------------

_NAMES = ["search_docs", "read_file", "list_issues", "create_ticket", "translate", "get_forecast"]
_DESCRIPTIONS = ["Search the documentation.", "Read one file from the workspace.", "列出未解决的问题。", ""]
_SCHEMAS = [{"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
            {"type": "object", "properties": {"path": {"type": "string"}, "lines": {"type": "integer"}}},
            {"type": "object", "properties": {}}]
_EXTRAS = {"title": "A title for people", "annotations": {"destructiveHint": False},
           "outputSchema": {"type": "object", "properties": {"items": {"type": "array"}}}, "_meta": {"version": 2}}
_TEXTS = ["3 results found.", "第一行", "Error: file not found", "{\"ok\": true}", "done", "Permission denied."]
_OTHER_PARTS = [({"type": "image", "data": "R0lGODlh", "mimeType": "image/gif"}, "[image: image/gif]"),
                ({"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"}, "[audio: audio/wav]"),
                ({"type": "resource", "resource": {"uri": "file:///notes.md", "text": "notes"}}, "[resource content]"),
                ({"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt"}, "[resource_link content]")]


def made_up_cases(seed: int) -> tuple[list[tuple[str, dict, dict]], list[tuple[str, dict, str]]]:
    rng = random.Random(seed)
    tools = []
    for index, name in enumerate(rng.sample(_NAMES, 2)):
        listed = {"name": name, "inputSchema": copy.deepcopy(rng.choice(_SCHEMAS))}
        function = {"name": name}
        description = rng.choice(_DESCRIPTIONS)
        if description or rng.random() < 0.5:
            listed["description"] = description
        if description:
            function["description"] = description
        function["parameters"] = copy.deepcopy(listed["inputSchema"])
        for extra in rng.sample(sorted(_EXTRAS), rng.randint(0, 3)):
            listed[extra] = copy.deepcopy(_EXTRAS[extra])
        listed = dict(rng.sample(sorted(listed.items()), len(listed)))  # fields in any order
        tools.append((f"made-up case {index + 1}: {name}", listed, {"type": "function", "function": function}))
    results = []
    for index, kind in enumerate(["parts", "parts", "a failed call", "structured content only"], start=3):
        result, texts = {"content": []}, []
        if kind != "structured content only":
            for _ in range(rng.randint(1, 3)):
                if rng.random() < 0.35:
                    part, text = rng.choice(_OTHER_PARTS)
                else:
                    text = rng.choice(_TEXTS)
                    part = _text(text)
                result["content"].append(copy.deepcopy(part))
                texts.append(text)
            text = "\n".join(texts)
        elif rng.random() < 0.8:
            structured = rng.choice([{"count": rng.randint(0, 99)}, {"城市": "北京", "ok": True}, [1, 2, 3]])
            result["structuredContent"] = structured
            text = json.dumps(structured, ensure_ascii=False)
        else:
            text = "(no output)"
        error = kind == "a failed call"
        if error or rng.random() < 0.5:
            result["isError"] = error
        if error and not text.startswith("Error:"):
            text = "Error: " + text
        results.append((f"made-up case {index}: {kind}", result, text))
    return tools, results


def grade(to_openai_tool, result_text, seed: int | None = None) -> Report:
    """Grade on the public cases and on tools and results made up from ``seed`` (a fresh one when None)."""
    seed = case_seed(seed)
    report = Report(f"Lab 14 - MCP tools as OpenAI tools (made-up cases from seed {seed})")
    made_up_tools, made_up_results = made_up_cases(seed)
    for case, listed, expected in TOOL_CASES + made_up_tools:
        done, got = attempt(report, "tool: " + case, to_openai_tool, copy.deepcopy(listed))
        if not done:
            if report.failures[-1].note.startswith("not done yet"):
                return report
            continue
        note = "the spec differs"
        if isinstance(got, dict) and "inputSchema" in str(got.get("function", {}).keys()):
            note = "OpenAI calls the schema 'parameters'; 'inputSchema' is MCP's name for it"
        report.check("tool: " + case, expected, got, note)
    for case, result, expected in RESULT_CASES + made_up_results:
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
