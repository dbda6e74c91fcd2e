"""Grader for labs/14_chat_to_responses.py: the same conversation in the Responses API's shape.

Each case is a Chat Completions history (or tool list) written by hand, with the Responses
input items (or tools) it must become. Where an answer differs, the grader says which item
and which field, because the mistakes are small and silent on the wire: a remote endpoint
answers a misplaced ``tool_call_id`` with a 400, or worse, ignores it.

Besides the public cases, tool lists and histories are made up while grading: other tools, with
and without descriptions, parameters and strict, and conversations of several rounds with other
texts, ids and numbers of calls, so that a table of the public cases does not pass;
``grade(f, g, seed=N)`` repeats a run.
"""

from __future__ import annotations

import json
import random

from labs.grading import Hints, Report, attempt, case_seed

WEATHER_SPEC = {"type": "function", "function": {
    "name": "get_weather", "description": "Get the current weather in one city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"},
                                                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
                   "required": ["city"]}}}
ORDER_SPEC = {"type": "function", "function": {
    "name": "get_order_status", "description": "Look up the status of one order by its id.", "strict": True,
    "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                   "required": ["order_id"], "additionalProperties": False}}}
NO_PARAMETERS_SPEC = {"type": "function", "function": {"name": "list_cities"}}

TOOL_CASES: list[tuple[str, list[dict], list[dict]]] = [
    ("one tool", [WEATHER_SPEC], [
        {"type": "function", "name": "get_weather", "description": "Get the current weather in one city.",
         "parameters": WEATHER_SPEC["function"]["parameters"], "strict": False}]),
    ("strict stays on the tool", [ORDER_SPEC], [
        {"type": "function", "name": "get_order_status",
         "description": "Look up the status of one order by its id.", "strict": True,
         "parameters": ORDER_SPEC["function"]["parameters"]}]),
    ("a tool without parameters gets an empty object schema", [NO_PARAMETERS_SPEC], [
        {"type": "function", "name": "list_cities", "parameters": {"type": "object", "properties": {}},
         "strict": False}]),
]


def _call(call_id: str, name: str, arguments: dict) -> dict:
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)}}


QUESTION = {"role": "user", "content": "What's the weather in Beijing?"}
SYSTEM = {"role": "system", "content": "Answer in one sentence."}
ONE_CALL = {"role": "assistant", "content": None, "tool_calls": [_call("call_bj", "get_weather", {"city": "Beijing"})]}
ONE_RESULT = {"role": "tool", "tool_call_id": "call_bj", "content": '{"condition": "sunny", "temperature": 24}'}
TWO_CALLS = {"role": "assistant", "content": None, "tool_calls": [
    _call("call_sh", "get_weather", {"city": "上海"}), _call("call_a1", "get_order_status", {"order_id": "A1001"})]}
TWO_RESULTS = [{"role": "tool", "tool_call_id": "call_a1", "content": '{"status": "shipped"}'},
               {"role": "tool", "tool_call_id": "call_sh", "content": '{"condition": "cloudy"}'}]
TALK_THEN_CALL = {"role": "assistant", "content": "Let me check.",
                  "tool_calls": [_call("call_gz", "get_weather", {"city": "Guangzhou"})]}
ANSWER = {"role": "assistant", "content": "It is sunny in Beijing."}

ITEM_CASES: list[tuple[str, list[dict], list[dict]]] = [
    ("a question", [QUESTION], [{"type": "message", "role": "user", "content": QUESTION["content"]}]),
    ("a system message stays a message", [SYSTEM, QUESTION], [
        {"type": "message", "role": "system", "content": SYSTEM["content"]},
        {"type": "message", "role": "user", "content": QUESTION["content"]}]),
    ("one call and its result", [QUESTION, ONE_CALL, ONE_RESULT, ANSWER], [
        {"type": "message", "role": "user", "content": QUESTION["content"]},
        {"type": "function_call", "call_id": "call_bj", "name": "get_weather", "arguments": '{"city": "Beijing"}'},
        {"type": "function_call_output", "call_id": "call_bj", "output": ONE_RESULT["content"]},
        {"type": "message", "role": "assistant", "content": ANSWER["content"]}]),
    ("two calls in one reply become two items, results in the order they came", [QUESTION, TWO_CALLS, *TWO_RESULTS], [
        {"type": "message", "role": "user", "content": QUESTION["content"]},
        {"type": "function_call", "call_id": "call_sh", "name": "get_weather", "arguments": '{"city": "上海"}'},
        {"type": "function_call", "call_id": "call_a1", "name": "get_order_status", "arguments": '{"order_id": "A1001"}'},
        {"type": "function_call_output", "call_id": "call_a1", "output": '{"status": "shipped"}'},
        {"type": "function_call_output", "call_id": "call_sh", "output": '{"condition": "cloudy"}'}]),
    ("text and a call in one reply: the text comes first", [QUESTION, TALK_THEN_CALL], [
        {"type": "message", "role": "user", "content": QUESTION["content"]},
        {"type": "message", "role": "assistant", "content": "Let me check."},
        {"type": "function_call", "call_id": "call_gz", "name": "get_weather", "arguments": '{"city": "Guangzhou"}'}]),
]

# --- Tool lists and histories made up while grading -------------------------------------------------

_TOOL_NAMES = ["search_flights", "convert_currency", "lookup_invoice", "check_stock", "book_room", "send_reminder"]
_DESCRIPTIONS = ["Find flights between two airports.", "Convert an amount between currencies.",
                 "查询发票。", "Check whether an item is in stock."]
_PARAMETERS = [{"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
               {"type": "object", "properties": {"amount": {"type": "number"}, "to": {"type": "string", "enum": ["EUR", "CNY"]}},
                "required": ["amount", "to"], "additionalProperties": False},
               {"type": "object", "properties": {}}]
_QUESTIONS = ["How much is 120 USD in euros?", "Is item K-77 in stock?", "帮我订一间房。", "Remind me at 9."]
_TEXTS = ["Let me check.", "One moment.", "好的。", "I'll look that up for you."]
_ANSWERS = ["It is 110 euros.", "Yes, 4 are left.", "已经订好了。", "Done: the reminder is set."]
_OUTPUTS = ['{"ok": true}', "3 left", '{"rate": 0.92}', "Error: the service is down.", "已完成", ""]


def made_up_tool_case(rng: random.Random) -> tuple[str, list[dict], list[dict]]:
    specs, expected = [], []
    for name in rng.sample(_TOOL_NAMES, rng.randint(1, 3)):
        function, tool = {"name": name}, {"type": "function", "name": name}
        if rng.random() < 0.7:
            function["description"] = tool["description"] = rng.choice(_DESCRIPTIONS)
        if rng.random() < 0.7:
            function["parameters"] = json.loads(json.dumps(rng.choice(_PARAMETERS)))
        tool["parameters"] = function.get("parameters", {"type": "object", "properties": {}})
        strict = rng.choice([True, False, None])
        if strict is not None:
            function["strict"] = strict
        tool["strict"] = bool(strict)
        specs.append({"type": "function", "function": function})
        expected.append(tool)
    return f"made-up case: {len(specs)} tool(s)", specs, expected


def made_up_item_case(rng: random.Random, index: int) -> tuple[str, list[dict], list[dict]]:
    messages, items = [], []

    def say(role: str, text: str):
        messages.append({"role": role, "content": text})
        items.append({"type": "message", "role": role, "content": text})

    if rng.random() < 0.5:
        say("system", rng.choice(["Be brief.", "你是一个助手。", "Use the tools when they help."]))
    rounds = rng.randint(1, 3)
    for number in range(rounds):
        say("user", rng.choice(_QUESTIONS))
        for _ in range(rng.randint(0, 2)):  # rounds of calls before the answer
            text = rng.choice(_TEXTS) if rng.random() < 0.4 else None
            calls = [_call(f"{rng.choice(['call_', 'fc_', 'toolu_'])}{rng.randint(1000, 99999)}", rng.choice(_TOOL_NAMES),
                           {"query": rng.choice(_QUESTIONS)}) for _ in range(rng.randint(1, 3))]
            messages.append({"role": "assistant", "content": text, "tool_calls": calls})
            if text:
                items.append({"type": "message", "role": "assistant", "content": text})
            items += [{"type": "function_call", "call_id": c["id"], "name": c["function"]["name"],
                       "arguments": c["function"]["arguments"]} for c in calls]
            for call in rng.sample(calls, len(calls)):  # results in the order the tools finished
                output = rng.choice(_OUTPUTS)
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": output})
                items.append({"type": "function_call_output", "call_id": call["id"], "output": output})
        if number < rounds - 1 or rng.random() < 0.7:
            say("assistant", rng.choice(_ANSWERS))
    return f"made-up case {index}: {rounds} round(s), {len(messages)} messages", messages, items


_ITEM_KEYS = {"message": {"type", "role", "content"},
              "function_call": {"type", "call_id", "name", "arguments"},
              "function_call_output": {"type", "call_id", "output"}}


def _item_problem(index: int, item, expected: dict) -> str | None:
    """What is wrong with one item, in words, or None."""
    if not isinstance(item, dict):
        return f"item {index} should be a dict, not {type(item).__name__}"
    if item.get("type") != expected["type"]:
        return f"item {index} should have type {expected['type']!r}, not {item.get('type')!r}"
    wanted = _ITEM_KEYS[expected["type"]]
    if set(item) != wanted:
        extra, missing = sorted(set(item) - wanted), sorted(wanted - set(item))
        return f"item {index} ({expected['type']}) should have exactly the keys {sorted(wanted)}" + (
            f"; extra: {extra}" if extra else "") + (f"; missing: {missing}" if missing else "")
    for key in sorted(wanted):
        if item[key] != expected[key]:
            return f"item {index} ({expected['type']}): {key} should be {expected[key]!r}, not {item[key]!r}"
    return None


def _items_problem(got, expected: list[dict]) -> str | None:
    if not isinstance(got, list):
        return f"return a list of items, not {type(got).__name__}"
    for index, (item, wanted) in enumerate(zip(got, expected)):
        if problem := _item_problem(index, item, wanted):
            return problem
    if len(got) != len(expected):
        return f"expected {len(expected)} items, got {len(got)}"
    return None


def grade(to_input_items, to_response_tools, seed: int | None = None) -> Report:
    """Grade on the public cases and on cases made up from ``seed`` (a fresh one when None)."""
    seed = case_seed(seed)
    rng = random.Random(seed)
    report = Report(f"Lab 14 - the same conversation as Responses items (made-up cases from seed {seed})")
    tool_cases = TOOL_CASES + [made_up_tool_case(rng)]
    item_cases = ITEM_CASES + [made_up_item_case(rng, index) for index in (1, 2, 3)]
    for case, specs, expected in tool_cases:
        done, got = attempt(report, "tools: " + case, to_response_tools, [dict(each) for each in specs])
        if not done:
            if report.failures[-1].note.startswith("not done yet"):
                return report
            continue
        if got == expected:
            report.ok("tools: " + case)
        else:
            first = got[0] if isinstance(got, list) and got and isinstance(got[0], dict) else {}
            if "function" in first:
                note = ("a Responses tool is flat: name, description and parameters sit beside 'type', "
                        "not inside 'function'")
            elif "strict" not in first:
                note = ("say 'strict': the chat spec leaves it out, which means off there, but the Responses "
                        "API takes a missing strict as on (and then makes every optional field required)")
            else:
                note = "the tools differ"
            report.fail("tools: " + case, note, expected, got)
    for case, messages, expected in item_cases:
        done, got = attempt(report, "items: " + case, to_input_items, json.loads(json.dumps(messages)))
        if not done:
            if report.failures[-1].note.startswith("not done yet"):
                return report
            continue
        problem = _items_problem(got, expected)
        if problem:
            report.fail("items: " + case, problem)
        else:
            report.ok("items: " + case)
    return report


hints = Hints([
    "Tools: take spec['function'] and lift its fields one level up, next to 'type': 'function'. "
    "A tool with no 'parameters' still needs a schema: an empty object. 'strict' is always "
    "written: the spec's value, or False when the spec has none.",
    "Items: walk the messages in order. A 'tool' message becomes one function_call_output "
    "(its tool_call_id is the call_id). Any other message becomes a message item if it has "
    "text, then one function_call item per entry in its tool_calls.",
    "{'type': 'function_call', 'call_id': call['id'], 'name': call['function']['name'], "
    "'arguments': call['function']['arguments']} - the arguments stay a JSON string, as in "
    "Chat Completions.",
])
