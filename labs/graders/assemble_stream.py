"""Grader for labs/12_assemble_stream.py: rebuild a reply from streamed chunks.

Besides the public streams, streams are made up while grading: other text, tools, arguments and
numbers of calls, split at other places, the calls' pieces interleaved in other orders, sometimes
arguments in the call's first piece, so that a table of the public streams does not pass;
``grade(assemble, seed=N)`` repeats a run.
"""

from __future__ import annotations

import json
import random

from openai.types.chat import ChatCompletionChunk

from labs.grading import Hints, Report, attempt, case_seed


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


# --- Streams made up while grading -------------------------------------------------------------------

_TEXTS = ["Let me look that up.", "好的，我查一下。", "Checking two things at once: ", "Sure!", "The answer is 42."]
_TOOLS = {"get_weather": lambda rng: {"city": rng.choice(["Lisbon", "上海", "Nairobi", "São Paulo"])},
          "calculate": lambda rng: {"expression": rng.choice(["sqrt(2)", "3 * (4 + 5)", "2 ** 10"])},
          "search_flights": lambda rng: {"origin": "PEK", "destination": rng.choice(["LIS", "SFO"]), "adults": rng.randint(1, 4)},
          "list_orders": lambda rng: None}  # no parameters: its arguments stay ""


def _pieces(rng: random.Random, text: str, most: int = 4) -> list[str]:
    """``text`` cut at a few random places (anywhere: inside a word, a string or a character's neighbours)."""
    if len(text) < 2:
        return [text] if text else []
    cuts = sorted(rng.sample(range(1, len(text)), min(len(text) - 1, rng.randint(0, most))))
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]


def _made_up_stream(rng: random.Random, kind: str) -> tuple[list, dict]:
    text = rng.choice(_TEXTS) if kind == "text only" or rng.random() < 0.3 else ""
    count = 0 if kind == "text only" else rng.randint(2 if kind == "interleaved" else 1, 3)
    prefix = rng.choice(["call_", "chatcmpl-tool-", "fc_"])
    calls = []
    for index in range(count):
        last_cut = kind == "cut off" and index == count - 1  # a call with arguments, to be cut
        name = rng.choice([each for each in sorted(_TOOLS) if not (last_cut and each == "list_orders")])
        arguments = _TOOLS[name](rng)
        calls.append(expected_call(f"{prefix}{rng.randint(100, 99999)}{index}", name,
                          "" if arguments is None else json.dumps(arguments, ensure_ascii=False)))
    finish = "stop" if not calls else "tool_calls"
    if kind == "cut off":
        calls[-1]["arguments"] = calls[-1]["arguments"][:rng.randint(1, len(calls[-1]["arguments"]) - 1)]
        finish = "length"
    chunks = [chunk(START)] + [chunk({"content": piece}) for piece in _pieces(rng, text)]
    queues = []  # each call's chunks in its own order; the calls are then interleaved at random
    for index, each in enumerate(calls):
        fragments = _pieces(rng, each["arguments"])
        first = head(index, each["id"], each["name"])
        if fragments and rng.random() < 0.3:  # some servers send the first fragment with the name
            first["tool_calls"][0]["function"]["arguments"] = fragments.pop(0)
        queues.append([first] + [more(index, fragment) for fragment in fragments])
    while any(queues):
        queue = rng.choice([queue for queue in queues if queue] if kind == "interleaved" else [next(q for q in queues if q)])
        chunks.append(chunk(queue.pop(0)))
    chunks.append(chunk({}, finish))
    if rng.random() < 0.5:
        chunks.append(chunk(None, usage={"prompt_tokens": rng.randint(50, 900), "completion_tokens": rng.randint(5, 60),
                                         "total_tokens": 1000}))
    return chunks, {"content": text or None, "tool_calls": calls, "finish_reason": finish}


def made_up_cases(seed: int) -> list[tuple[str, list, dict]]:
    rng = random.Random(seed)
    return [(f"made-up case {index + 1}: {kind}", *_made_up_stream(rng, kind))
            for index, kind in enumerate(["text only", "calls", "interleaved", "interleaved", "cut off"])]


def grade(assemble, seed: int | None = None) -> Report:
    """Grade on the public streams and on streams made up from ``seed`` (a fresh one when None)."""
    seed = case_seed(seed)
    report = Report(f"Lab 12 - assemble a streamed reply (made-up cases from seed {seed})")
    for case, chunks, expected in CASES + made_up_cases(seed):
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
