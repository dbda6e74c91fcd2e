"""Grader for labs/06_loop_guard.py: refuse a call the model has already made too often this turn.

Two functions are graded: ``call_key(call)``, which must treat two calls as the same whatever the
spacing and key order of their JSON arguments, and ``guard_repeats(calls, counts, limit)``, which
counts calls across the rounds of a turn and returns a refusal for each call beyond the limit.
"""

from __future__ import annotations

from labs.grading import ERROR_PREFIX, Hints, Report, attempt, error_rule_note, follows_error_rule
from toolkit.messages import ToolCall


def weather(call_id: str, arguments: str = '{"city": "Beijing"}') -> ToolCall:
    return ToolCall(call_id, "get_weather", arguments)


KEY_CASES = [
    ("key order and spacing do not matter",
     ToolCall("a", "get_weather", '{"city": "Beijing", "unit": "celsius"}'),
     ToolCall("b", "get_weather", '{ "unit":"celsius",  "city":"Beijing" }'), True),
    ("a different argument value is a different call",
     weather("a", '{"city": "Beijing"}'), weather("b", '{"city": "Shanghai"}'), False),
    ("a different tool with the same arguments is a different call",
     ToolCall("a", "get_weather", '{"city": "Beijing"}'), ToolCall("b", "get_air_quality", '{"city": "Beijing"}'), False),
    ("unicode written escaped or as itself is the same value",
     weather("a", '{"city": "\\u5317\\u4eac"}'), weather("b", '{"city": "北京"}'), True),
    ("nested objects are compared in full",
     ToolCall("a", "book", '{"guest": {"name": "Li", "adults": 2}}'),
     ToolCall("b", "book", '{"guest": {"adults": 2, "name": "Li"}}'), True),
]


def _grade_keys(report: Report, call_key) -> bool:
    for case, first, second, same in KEY_CASES:
        done, keys = attempt(report, f"call_key: {case}", lambda: (call_key(first), call_key(second)))
        if not done:
            if report.failures[-1].note.startswith("not done yet"):
                return False
            continue
        try:
            hash(keys[0])
        except TypeError:
            report.fail(f"call_key: {case}", "the key must be hashable (a tuple or a string), to be "
                                             "counted in a dict", "hashable", type(keys[0]).__name__)
            continue
        if (keys[0] == keys[1]) != same:
            note = ("these are the same call and need the same key: parse the arguments and dump them "
                    "again with sorted keys" if same else "these are different calls and need different keys")
            report.fail(f"call_key: {case}", note, f"{first.arguments} vs {second.arguments}",
                        f"{keys[0]!r} vs {keys[1]!r}")
        else:
            report.ok(f"call_key: {case}")
    _grade_broken_keys(report, call_key)
    return True


BROKEN = '{"city": "Beijing",'  # cut off: not JSON


def _grade_broken_keys(report: Report, call_key) -> None:
    """Arguments that are not JSON must not crash call_key, and must still be told apart: the
    same broken text again is a repeat; other broken text, or another tool, is not."""
    case = "call_key: arguments that are not JSON do not crash it, and still tell calls apart"
    pairs = [
        ("the same broken text twice is the same call", weather("a", BROKEN), weather("b", BROKEN), True),
        ("two different broken texts are different calls",
         weather("a", BROKEN), weather("b", '{"city": "Shanghai",'), False),
        ("the same broken text for another tool is a different call",
         weather("a", BROKEN), ToolCall("b", "get_air_quality", BROKEN), False),
    ]
    for what, first, second, same in pairs:
        done, keys = attempt(report, case, lambda: (call_key(first), call_key(second)))
        if not done:
            return
        try:
            hash(keys[0]), hash(keys[1])
        except TypeError:
            report.fail(case, "the key must be hashable (a tuple or a string), to be counted in a dict",
                        "hashable", type(keys[0]).__name__)
            return
        if (keys[0] == keys[1]) != same:
            note = (f"{what}, so they need the same key" if same else
                    f"{what}, but they got the same key: the guard would refuse a call the model never "
                    "made before. When the arguments do not parse, key on the tool name and the raw text")
            report.fail(case, note, f"{first.name} {first.arguments} vs {second.name} {second.arguments}",
                        f"{keys[0]!r} vs {keys[1]!r}")
            return
    report.ok(case)


def _check_refusals(report: Report, case: str, got, expected_ids: list[str], calls: list[ToolCall]) -> bool:
    if not isinstance(got, dict):
        report.fail(case, "return a dict {call id: message} (empty when nothing is refused)", "a dict", type(got).__name__)
        return False
    if sorted(got) != sorted(expected_ids):
        report.fail(case, "wrong calls refused", sorted(expected_ids), sorted(got))
        return False
    by_id = {call.id: call for call in calls}
    for call_id, message in got.items():
        name = by_id[call_id].name
        if not follows_error_rule(message):
            report.fail(case, f"a refusal is what the model reads instead of a result: {error_rule_note(message)}",
                        f"{ERROR_PREFIX}... {name} ...", message)
            return False
        if name not in message:
            report.fail(case, "name the tool in the refusal, so the model knows which call to stop asking for",
                        f"{ERROR_PREFIX}... {name} ...", message)
            return False
    return True


def _grade_guard(report: Report, guard_repeats) -> None:
    # 1. The same call, round after round, limit 2: the third is refused.
    case = "the same call in three rounds, limit 2: the third is refused"
    counts: dict = {}
    outcomes = []
    for number in (1, 2, 3):
        calls = [weather(f"call_r{number}")]
        done, got = attempt(report, case, guard_repeats, calls, counts, 2)
        if not done:
            if report.failures[-1].note.startswith("not done yet"):
                return
            break
        outcomes.append((calls, got))
    else:
        ok = True
        for number, (calls, got) in enumerate(outcomes, 1):
            expected = ["call_r3"] if number == 3 else []
            if not _check_refusals(report, f"{case} (round {number})", got, expected, calls):
                ok = False
                break
        if ok:
            report.ok(case)

    # 2. Repeats inside one reply count too.
    case = "two identical calls in one reply, limit 1: the second is refused"
    calls = [weather("call_x"), weather("call_y", '{ "city":"Beijing" }')]
    done, got = attempt(report, case, guard_repeats, calls, {}, 1)
    if done and _check_refusals(report, case, got, ["call_y"], calls):
        report.ok(case)

    # 3. Different calls do not count against each other; the counts live in the dict passed in.
    case = "different cities do not count against each other"
    counts = {}
    calls_1 = [weather("c1", '{"city": "Beijing"}'), weather("c2", '{"city": "Shanghai"}')]
    calls_2 = [weather("c3", '{"city": "Guangzhou"}'), weather("c4", '{"city": "Shanghai"}')]
    done, got_1 = attempt(report, case, guard_repeats, calls_1, counts, 1)
    if done and _check_refusals(report, case + " (round 1)", got_1, [], calls_1):
        done, got_2 = attempt(report, case, guard_repeats, calls_2, counts, 1)
        if done and _check_refusals(report, case + " (round 2)", got_2, ["c4"], calls_2):
            report.ok(case)

    case = "the counts are kept in the dict the caller passes in"
    counts = {}
    done, _ = attempt(report, case, guard_repeats, [weather("k1")], counts, 3)
    if done:
        if len(counts) == 1 and list(counts.values()) == [1]:
            report.ok(case)
        else:
            report.fail(case, "after one call, counts should hold one key with the value 1: the loop "
                              "passes the same dict for every round of a turn", "{key: 1}", dict(counts))


def grade(call_key, guard_repeats) -> Report:
    report = Report("Lab 06b - a guard against repeated calls")
    if _grade_keys(report, call_key):
        _grade_guard(report, guard_repeats)
    return report


hints = Hints([
    "Two calls are the same when the tool name and the parsed arguments are equal. Parse with "
    "json.loads and write the value back with json.dumps(value, sort_keys=True, "
    "ensure_ascii=False): equal values give equal text. If the arguments do not parse, fall back "
    "to the raw text, stripped.",
    "call_key can return the tuple (call.name, canonical_text). guard_repeats: for each call in "
    "order, key = call_key(call); counts[key] = counts.get(key, 0) + 1; if counts[key] > limit, "
    "add a refusal for call.id.",
    "The refusal, for example: f\"Error: repeated call. {call.name} was already called {limit} "
    "time(s) with these arguments in this turn, and its result is above. Use it to answer the "
    "user instead of calling again.\"",
])

