"""Grader for labs/12_assemble_stream.py: rebuild a reply from streamed chunks."""

from __future__ import annotations

from openai.types.chat import ChatCompletionChunk

from labs.grading import Hints, Report, attempt


def chunk(delta: dict | None = None, finish: str | None = None, usage: dict | None = None) -> ChatCompletionChunk:
    """One chunk as the openai client yields it; ``delta=None`` makes a usage-only chunk."""
    body = {"id": "chatcmpl-lab", "object": "chat.completion.chunk", "created": 0, "model": "lab",
            "choices": [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]}
    if usage:
        body["usage"] = usage
    return ChatCompletionChunk.model_validate(body)


def head(index: int, id: str, name: str) -> dict:
    return {"tool_calls": [{"index": index, "id": id, "type": "function",
                            "function": {"name": name, "arguments": ""}}]}


def more(index: int, fragment: str) -> dict:
    return {"tool_calls": [{"index": index, "function": {"arguments": fragment}}]}


START = {"role": "assistant", "content": ""}
USAGE = {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}


def expected_call(id: str, name: str, arguments: str) -> dict:
    return {"id": id, "name": name, "arguments": arguments}


# (case, chunks, the assembled reply expected)
CASES: list[tuple[str, list, dict]] = [
    ("text only, in pieces",
     [chunk(START), chunk({"content": "Beijing is "}), chunk({"content": "sunny."}), chunk({}, "stop")],
     {"content": "Beijing is sunny.", "tool_calls": [], "finish_reason": "stop"}),
    ("one call, arguments in fragments",
     [chunk(START), chunk(head(0, "call_a", "get_weather")), chunk(more(0, '{"city"')),
      chunk(more(0, ': "Beij')), chunk(more(0, 'ing"}')), chunk({}, "tool_calls")],
     {"content": None, "tool_calls": [expected_call("call_a", "get_weather", '{"city": "Beijing"}')],
      "finish_reason": "tool_calls"}),
    ("Chinese split inside a string",
     [chunk(START), chunk(head(0, "call_b", "get_weather")), chunk(more(0, '{"city": "北')),
      chunk(more(0, '京"}')), chunk({}, "tool_calls")],
     {"content": None, "tool_calls": [expected_call("call_b", "get_weather", '{"city": "北京"}')],
      "finish_reason": "tool_calls"}),
    ("two calls one after the other",
     [chunk(START), chunk(head(0, "call_1", "get_weather")), chunk(more(0, '{"city": "Beijing"}')),
      chunk(head(1, "call_2", "get_weather")), chunk(more(1, '{"city": ')), chunk(more(1, '"Shanghai"}')),
      chunk({}, "tool_calls")],
     {"content": None, "tool_calls": [expected_call("call_1", "get_weather", '{"city": "Beijing"}'),
                                      expected_call("call_2", "get_weather", '{"city": "Shanghai"}')],
      "finish_reason": "tool_calls"}),
    ("two calls interleaved",
     [chunk(START), chunk(head(0, "call_1", "get_weather")), chunk(head(1, "call_2", "calculate")),
      chunk(more(1, '{"expression": ')), chunk(more(0, '{"city": "Paris"}')), chunk(more(1, '"sqrt(2)"}')),
      chunk({}, "tool_calls")],
     {"content": None, "tool_calls": [expected_call("call_1", "get_weather", '{"city": "Paris"}'),
                                      expected_call("call_2", "calculate", '{"expression": "sqrt(2)"}')],
      "finish_reason": "tool_calls"}),
    ("text before a call",
     [chunk(START), chunk({"content": "Let me check. "}), chunk(head(0, "call_c", "get_weather")),
      chunk(more(0, '{"city": "Tokyo"}')), chunk({}, "tool_calls")],
     {"content": "Let me check. ", "tool_calls": [expected_call("call_c", "get_weather", '{"city": "Tokyo"}')],
      "finish_reason": "tool_calls"}),
    ("a tool without parameters",
     [chunk(START), chunk(head(0, "call_d", "list_orders")), chunk({}, "tool_calls")],
     {"content": None, "tool_calls": [expected_call("call_d", "list_orders", "")], "finish_reason": "tool_calls"}),
    ("a usage chunk with no choices at the end",
     [chunk(START), chunk(head(0, "call_e", "calculate")), chunk(more(0, '{"expression": "sqrt(144)"}')),
      chunk({}, "tool_calls"), chunk(None, usage=USAGE)],
     {"content": None, "tool_calls": [expected_call("call_e", "calculate", '{"expression": "sqrt(144)"}')],
      "finish_reason": "tool_calls"}),
    ("cut off by max_tokens",
     [chunk(START), chunk(head(0, "call_f", "get_weather")), chunk(more(0, '{"city": "Be')),
      chunk({}, "length")],
     {"content": None, "tool_calls": [expected_call("call_f", "get_weather", '{"city": "Be')],
      "finish_reason": "length"}),
]


def grade(assemble) -> Report:
    report = Report("Lab 12 - assemble a streamed reply")
    for case, chunks, expected in CASES:
        done, got = attempt(report, case, assemble, iter(chunks))
        if not done:
            if report.failures[-1].note.startswith("not done yet"):
                return report
            continue
        if not isinstance(got, dict) or set(got) != set(expected):
            report.fail(case, "return a dict with the keys 'content', 'tool_calls' and 'finish_reason'",
                        sorted(expected), sorted(got) if isinstance(got, dict) else type(got).__name__)
            continue
        for key in ("content", "tool_calls", "finish_reason"):
            if got[key] != expected[key]:
                report.fail(case, f"{key!r} differs", expected[key], got[key])
                break
        else:
            report.ok(case)
    return report


hints = Hints([
    "Loop over the chunks; skip a chunk whose `choices` is empty (the usage chunk). For the "
    "others, `delta = chunk.choices[0].delta`: add `delta.content` to a text buffer when it is "
    "not None, remember `chunk.choices[0].finish_reason` when it is set, and handle "
    "`delta.tool_calls` (a list, or None).",
    "Keep a dict `calls` from `piece.index` to {'id': ..., 'name': ..., 'arguments': ''}. The "
    "first piece of a call has `piece.id` and `piece.function.name`; every piece may have "
    "`piece.function.arguments`, a fragment to *append*. The pieces of two calls can alternate, "
    "which is why you key by index and not by 'the current call'.",
    "At the end: content is the joined text, or None when it is empty; tool_calls is "
    "[calls[i] for i in sorted(calls)]. Arguments stay the raw text, even when they are cut off "
    "(finish_reason 'length'): judging them is someone else's job.",
])
