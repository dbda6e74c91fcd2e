"""Grader for labs/06_loop_guard.py: refuse a call the model has already made too often this turn.

Two functions are graded: ``call_key(call)``, which must treat two calls as the same whatever the
spacing and key order of their JSON arguments, and ``guard_repeats(calls, counts, limit)``, which
counts calls across the rounds of a turn and returns a refusal for each call beyond the limit.

Besides the public cases, calls are made up while grading: other tools and values, their JSON
written with keys shuffled, other spacing and escapes, and a turn of several rounds with another
limit, so that a table of the public calls or ids does not pass; ``grade(f, g, seed=N)`` repeats
a run.
"""

from __future__ import annotations

import json
import random

from labs.grading import ERROR_PREFIX, Hints, Report, attempt, case_seed, error_rule_note, follows_error_rule
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
    # The same names and the same values, paired differently: a key of sorted names and sorted
    # values would call these the same, and refuse a trip the model never asked for.
    ("two parameters that swap values are a different call",
     ToolCall("a", "search_flights", '{"origin": "PEK", "destination": "SFO"}'),
     ToolCall("b", "search_flights", '{"origin": "SFO", "destination": "PEK"}'), False),
    ("two numbers that swap parameters are a different call",
     ToolCall("a", "book_room", '{"adults": 1, "nights": 2}'),
     ToolCall("b", "book_room", '{"adults": 2, "nights": 1}'), False),
]
_SWAPPED = {case for case, *_ in KEY_CASES if "swap" in case}


# --- Calls made up while grading ----------------------------------------------------------------

_TOOLS = {"get_weather": {"city": ["北京", "Lisbon", "São Paulo"], "unit": ["celsius", "fahrenheit"]},
          "search_flights": {"origin": ["PEK", "LIS"], "destination": ["SFO", "上海"], "adults": [1, 2, 3]},
          "lookup_order": {"order_id": ["A1001", "B2718", "C3141"], "verbose": [True, False]},
          "book_room": {"guest": [{"name": "Li", "adults": 2}, {"name": "Ana", "adults": 1, "pets": ["cat"]}],
                        "nights": [1, 4]}}


def _arguments(rng: random.Random, name: str) -> dict:
    keys = rng.sample(sorted(_TOOLS[name]), rng.randint(1, len(_TOOLS[name])))
    return {key: rng.choice(_TOOLS[name][key]) for key in keys}


def _shuffled(rng: random.Random, value):
    if not isinstance(value, dict):
        return value
    items = [(key, _shuffled(rng, item)) for key, item in value.items()]
    rng.shuffle(items)
    return dict(items)


def _write(rng: random.Random, value) -> str:
    """The same value as JSON a model might write it: keys in any order, any spacing, escaped or not."""
    value = _shuffled(rng, value)
    separators = rng.choice([(", ", ": "), (",", ":"), (" , ", " : "), (",\n  ", ": ")])
    text = json.dumps(value, separators=separators, ensure_ascii=rng.random() < 0.5)
    return rng.choice(["", " ", "\n"]) + text + rng.choice(["", " ", "\n"])


def _key(call: ToolCall) -> tuple[str, str]:
    return call.name, json.dumps(json.loads(call.arguments), sort_keys=True)


def made_up_key_cases(rng: random.Random) -> list[tuple[str, ToolCall, ToolCall, bool]]:
    cases = []
    for index in range(4):
        name = rng.choice(sorted(_TOOLS))
        arguments = _arguments(rng, name)
        if index % 2 == 0:
            other, first, second = name, arguments, arguments
            what = "the same call written another way"
        else:  # one value changed, or the same arguments for another tool
            second = dict(arguments)
            key = rng.choice(sorted(arguments))
            choices = [v for v in _TOOLS[name][key] if v != arguments[key]]
            second[key] = rng.choice(choices)
            other, first = name, arguments
            what = f"another {key}"
        cases.append((f"made-up case {index + 1}: {what}", ToolCall(f"m{index}a", name, _write(rng, first)),
                      ToolCall(f"m{index}b", other, _write(rng, second)), index % 2 == 0))
    return cases


def made_up_turn(rng: random.Random) -> tuple[int, list[list[ToolCall]], list[list[str]]]:
    """A turn of rounds drawn from a few distinct calls, with a limit; and the ids to refuse in each round."""
    while True:
        limit = rng.randint(1, 3)
        pool = []
        while len(pool) < 3:
            name = rng.choice(sorted(_TOOLS))
            candidate = (name, _arguments(rng, name))
            if candidate not in pool:
                pool.append(candidate)
        rounds, refused, counts, number = [], [], {}, 0
        for _ in range(rng.randint(3, 5)):
            calls = []
            for name, arguments in rng.choices(pool, weights=[5, 2, 1], k=rng.randint(1, 3)):
                number += 1
                calls.append(ToolCall(f"{rng.choice(['call_', 'tc', 'id-'])}{number}{rng.randint(10, 99)}", name,
                                      _write(rng, arguments)))
            ids = []
            for call in calls:
                counts[_key(call)] = counts.get(_key(call), 0) + 1
                if counts[_key(call)] > limit:
                    ids.append(call.id)
            rounds.append(calls)
            refused.append(ids)
        if any(refused) and not all(refused):
            return limit, rounds, refused


def _grade_keys(report: Report, call_key, rng: random.Random) -> bool:
    for case, first, second, same in KEY_CASES + made_up_key_cases(rng):
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
            if case in _SWAPPED:
                note += ": keep each value with the name of its parameter"
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


_REPEAT_WORDS = ("repeat", "again", "already", "before")  # any one says the call was made before


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
        # "Error: get_weather" names the tool but says neither what failed nor what to do next.
        shape = f"{ERROR_PREFIX}... {name} ... already ... result ..."
        if not any(word in message.lower() for word in _REPEAT_WORDS):
            report.fail(case, "say what failed: the call is a repeat (with a word such as 'repeated', 'again' or "
                              "'already'), so the model knows it asked for this before", shape, message)
            return False
        if "result" not in message.lower():
            report.fail(case, "say what to do next: tell the model to use the result it already has (the word "
                              "'result'), instead of calling again", shape, message)
            return False
    return True


def _grade_made_up_turn(report: Report, guard_repeats, rng: random.Random) -> None:
    limit, rounds, refused = made_up_turn(rng)
    case = f"made-up case: a turn of {len(rounds)} rounds, limit {limit}"
    counts: dict = {}
    for number, (calls, expected) in enumerate(zip(rounds, refused), 1):
        done, got = attempt(report, case, guard_repeats, calls, counts, limit)
        if not done or not _check_refusals(report, f"{case} (round {number}: "
                                           f"{[(c.id, c.name, c.arguments) for c in calls]})", got, expected, calls):
            return
    report.ok(case)


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


def grade(call_key, guard_repeats, seed: int | None = None) -> Report:
    """Grade on the public cases and on calls made up from ``seed`` (a fresh one when None)."""
    seed = case_seed(seed)
    rng = random.Random(seed)
    report = Report(f"Lab 06b - a guard against repeated calls (made-up cases from seed {seed})")
    if _grade_keys(report, call_key, rng):
        _grade_guard(report, guard_repeats)
        if not any(o.note.startswith("not done yet") for o in report.failures):
            _grade_made_up_turn(report, guard_repeats, rng)
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

