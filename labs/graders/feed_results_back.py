"""Grader for labs/03_feed_results_back.py: send results back as text, paired with their calls by id.

Besides the public cases, rounds are made up while grading: new ids, tools, results, numbers of
calls and finishing orders, with calls that never finished and stray results, so that a table
of the public cases does not pass; ``grade(fn, fn, seed=N)`` repeats a run.
"""

from __future__ import annotations

import copy
import random
import re

from labs.grading import Hints, Report, attempt, case_seed

NO_RESULT = "Error: no result. Call the tool again or answer without it."  # the block of a call that never finished


def _block(call_id: str, name: str, result: str) -> str:
    return f'<tool_result id="{call_id}" name="{name}">\n{result}\n</tool_result>'


ROOT_16 = {"id": "c1", "name": "square_root", "arguments": {"x": 16}}
ROOT_9 = {"id": "c2", "name": "square_root", "arguments": {"x": 9}}
SUM = {"id": "c3", "name": "calculate", "arguments": {"expression": "4 + 3"}}

# (case, calls in the order written, results in the order finished, expected message text)
MESSAGE_CASES = [
    ("one call, one result", [ROOT_16], [("c1", "4.0")], _block("c1", "square_root", "4.0")),
    ("two results in call order", [ROOT_16, ROOT_9], [("c1", "4.0"), ("c2", "3.0")],
     _block("c1", "square_root", "4.0") + "\n" + _block("c2", "square_root", "3.0")),
    ("two results that finished in the other order", [ROOT_16, ROOT_9], [("c2", "3.0"), ("c1", "4.0")],
     _block("c1", "square_root", "4.0") + "\n" + _block("c2", "square_root", "3.0")),
    ("three calls, finished in a shuffled order", [ROOT_16, ROOT_9, SUM],
     [("c3", "7"), ("c1", "4.0"), ("c2", "3.0")],
     "\n".join([_block("c1", "square_root", "4.0"), _block("c2", "square_root", "3.0"), _block("c3", "calculate", "7")])),
    ("a call whose tool never finished", [ROOT_16, ROOT_9], [("c2", "3.0")],
     _block("c1", "square_root", NO_RESULT) + "\n" + _block("c2", "square_root", "3.0")),
    ("a stray result whose id matches no call", [ROOT_16], [("c9", "81.0"), ("c1", "4.0")],
     _block("c1", "square_root", "4.0")),
]

HISTORY = [
    {"role": "system", "content": "You can use tools ..."},
    {"role": "user", "content": "What is the square root of 16 plus the square root of 9?"},
]
REPLY = ('<tool>{"name": "square_root", "arguments": {"x": 16}}</tool>\n'
         '<tool>{"name": "square_root", "arguments": {"x": 9}}</tool>')


# --- Rounds made up while grading ---------------------------------------------------------------

_TOOLS = {"square_root": lambda rng: {"x": rng.randint(1, 400)}, "get_weather": lambda rng: {"city": rng.choice(["Beijing", "上海", "Oslo"])},
          "calculate": lambda rng: {"a": rng.randint(1, 99), "operator": rng.choice("+-*"), "b": rng.randint(1, 99)},
          "lookup_order": lambda rng: {"order_id": f"A{rng.randint(1000, 9999)}"}}
_RESULTS = ["4.0", "17", "sunny, 21 °C", "多云，18 度", "shipped on Monday", "Error: the city was not found.", "-3", "[1, 2, 3]"]


def _made_up_round(rng: random.Random) -> tuple[list[dict], list[tuple[str, str]]]:
    """Calls with fresh ids, and results in a shuffled finishing order: sometimes one is missing,
    sometimes one matches no call."""
    prefix = rng.choice(["call_", "c", "tool-", "id"])
    ids = [f"{prefix}{number}" for number in rng.sample(range(1, 1000), rng.randint(1, 5))]
    calls = [{"id": call_id, "name": (name := rng.choice(sorted(_TOOLS))), "arguments": _TOOLS[name](rng)}
             for call_id in ids]
    finished = [(call_id, rng.choice(_RESULTS)) for call_id in ids]
    rng.shuffle(finished)
    if len(finished) > 1 and rng.random() < 0.5:
        finished.pop(rng.randrange(len(finished)))
    if rng.random() < 0.4:
        finished.insert(rng.randrange(len(finished) + 1), (f"{prefix}{rng.randint(1000, 2000)}", rng.choice(_RESULTS)))
    return calls, finished


def _expected_message(calls: list[dict], finished: list[tuple[str, str]]) -> str:
    by_id = dict(finished)
    return "\n".join(_block(call["id"], call["name"], by_id.get(call["id"], NO_RESULT)) for call in calls)


MADE_UP_COUNT = 5  # made-up rounds per grading


def made_up_cases(seed: int) -> list[tuple[str, list[dict], list[tuple[str, str]], str]]:
    rng = random.Random(seed)
    cases = []
    for index in range(MADE_UP_COUNT):
        calls, finished = _made_up_round(rng)
        cases.append((f"made-up case {index + 1}: {len(calls)} call(s), {len(finished)} result(s)",
                      calls, finished, _expected_message(calls, finished)))
    return cases


_BLOCK = re.compile(r'<tool_result id="([^"]*)" name="([^"]*)">\n(.*?)\n</tool_result>', re.DOTALL)


def _what_differs(expected: str, got: str) -> str:
    want, have = _BLOCK.findall(expected), _BLOCK.findall(got)
    if not have:
        return 'no block in the form <tool_result id="..." name="...">\\nRESULT\\n</tool_result> was found'
    if sorted(want) == sorted(have):
        return "the right blocks, in the wrong order: write one block per call, in the order of `calls`"
    results = {call_id: result for call_id, _, result in have}
    for call_id, _, result in want:
        if call_id not in results:
            return f"there is no block for call {call_id}; every call needs one (with {NO_RESULT!r} if it never finished)"
        if result == NO_RESULT and results[call_id] != result:
            return (f"the block for call {call_id}, which never finished, holds {results[call_id]!r}: write exactly "
                    f"{NO_RESULT!r} (error texts for the model start with 'Error: ')")
        if results[call_id] != result:
            return (f"the block for call {call_id} holds {results[call_id]!r}, but {call_id}'s result is {result!r}: "
                    "pair results with calls by id, not by position")
    extra = sorted(set(results) - {call_id for call_id, _, _ in want})
    if extra:
        return f"there is a block for {extra}, which is not a call: leave out results whose id matches no call"
    return "the message text differs (check the spacing and line breaks against the expected text)"


def grade(results_message, add_round, seed: int | None = None) -> Report:
    """Grade on the public cases and on rounds made up from ``seed`` (a fresh one when None)."""
    seed = case_seed(seed)
    report = Report(f"Lab 03 - feed results back, paired by id (made-up cases from seed {seed})")
    made_up = made_up_cases(seed)
    for case, calls, finished, expected in MESSAGE_CASES + made_up:
        done, got = attempt(report, f"results_message: {case}", results_message, calls, finished)
        if not done:
            if report.failures[-1].note.startswith("not done yet"):
                return report
            continue
        if got != expected:
            note = _what_differs(expected, got) if isinstance(got, str) else f"should return a str, got {type(got).__name__}"
            report.fail(f"results_message: {case}", f"{note}\n      finished: {finished}", expected, got)
        else:
            report.ok(f"results_message: {case}")

    _, calls, finished, _ = made_up[-1]
    later_history = [*HISTORY, {"role": "assistant", "content": "<tool>...</tool>"},
                     {"role": "user", "content": "<tool_result ...>"}, {"role": "assistant", "content": "And then?"}]
    later_reply = "\n".join(f"<tool>{{\"name\": \"{call['name']}\"}}</tool>" for call in calls)
    for case, start, reply, calls, finished in [
            ("add_round", HISTORY, REPLY, [ROOT_16, ROOT_9], [("c2", "3.0"), ("c1", "4.0")]),
            ("add_round on a made-up later round", later_history, later_reply, calls, finished)]:
        history = copy.deepcopy(start)
        done, got = attempt(report, case, add_round, history, reply, calls, finished)
        if not done:
            continue
        expected = [*start, {"role": "assistant", "content": reply},
                    {"role": "user", "content": _expected_message(calls, finished)}]
        if history != start:
            report.fail(f"{case} leaves the caller's history alone",
                        "the history passed in was changed; build and return a new list", start, history)
        else:
            report.ok(f"{case} leaves the caller's history alone")
        if not isinstance(got, list):
            report.fail(case, f"should return the new history (a list), got {type(got).__name__}")
        elif [m.get("role") for m in got if isinstance(m, dict)] != [m["role"] for m in expected]:
            report.fail(case, "the roles of the new history are not right: the reply goes in as 'assistant', "
                              "the results as 'user' (the string protocol has no other role for them)",
                        [m["role"] for m in expected], [m.get("role") if isinstance(m, dict) else m for m in got])
        else:
            report.check(case, expected, got, "the new history differs")
    return report


hints = Hints([
    "Never pair results by position. Turn `finished` into a dict from call id to result first "
    "(`dict(finished)` does it), then walk through `calls` - in the order the model wrote them - and "
    "look each id up.",
    "For each call: `result = by_id.get(call['id'], 'Error: no result. Call the tool again or answer without it.')`, then the block "
    "`f'<tool_result id=\"{call[\"id\"]}\" name=\"{call[\"name\"]}\">\\n{result}\\n</tool_result>'`. Join the "
    "blocks with '\\n'. A stray result is never looked up, so it drops out by itself.",
    "add_round returns `[*history, {'role': 'assistant', 'content': reply}, {'role': 'user', 'content': "
    "results_message(calls, finished)}]` - a new list, so the caller's history is untouched.",
])
