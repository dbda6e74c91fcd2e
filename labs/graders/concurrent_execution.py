"""Grader for labs/08_concurrent_execution.py: run a reply's calls at the same time, answer by id.

The tools here record how many of them run at once. That count, not a stopwatch, decides
whether the learner's executor was concurrent, so a busy machine cannot fail a right answer.

The executor also hands each message to ``on_result`` as soon as its tool finishes, before the
slowest is done, so it must know which call each finished result belongs to: position in the
list of calls is no help there. In the first case the tools do not sleep but wait for one
another through the grader's ``on_result`` (a Relay): Shanghai's lookup finishes at once,
Shenzhen's only after one message has been handed on, Guangzhou's after two, Beijing's after
three. The finishing order is therefore exact on any machine, and an executor that holds the
results back until all are done makes the tools wait in vain, which the Relay records.

Besides the public cases, cases are made up while grading: other cities, ids, call and finishing
orders, pool sizes and failing calls in other places, so that an executor built around the public
calls does not pass; ``grade(fn, seed=N)`` repeats a run.
"""

from __future__ import annotations

import json
import random
import threading
import time

from labs.grading import ERROR_PREFIX, Hints, Report, attempt, case_seed, error_rule_note, follows_error_rule
from toolkit.messages import ToolCall
from toolkit.tools import render_result


class Overlap:
    """Counts how many tools are running at the same moment, and the most there ever were."""

    def __init__(self):
        self.lock, self.running, self.peak = threading.Lock(), 0, 0

    def __enter__(self):
        with self.lock:
            self.running += 1
            self.peak = max(self.peak, self.running)

    def __exit__(self, *exc):
        with self.lock:
            self.running -= 1


WEATHER = {"Beijing": ("sunny", 24, 0.5), "Shanghai": ("cloudy", 27, 0.1),
           "Guangzhou": ("rain", 30, 0.3), "Shenzhen": ("thunderstorms", 29, 0.2)}


def make_tools(overlap: Overlap, weather: dict = WEATHER) -> dict:
    """Plain functions, called with the call's arguments as keywords."""

    def get_weather(city: str, unit: str = "celsius") -> dict:  # the demo tool's signature
        with overlap:
            condition, celsius, delay = weather[city]
            time.sleep(delay)
            temperature = celsius if unit == "celsius" else round(celsius * 9 / 5 + 32)
            return {"city": city, "condition": condition, "temperature": temperature, "unit": unit}

    def get_order_status(order_id: str) -> dict:
        with overlap:
            time.sleep(0.15)
            raise ConnectionError("order service unavailable")

    def log_event(name: str) -> None:
        with overlap:
            time.sleep(0.05)
            return None

    return {"get_weather": get_weather, "get_order_status": get_order_status, "log_event": log_event}


class Relay:
    """The grader's ``on_result``: keeps what was handed on, in order, and lets a gated tool wait
    until a number of messages have been handed on (at most ``WAIT`` seconds)."""

    def __init__(self):
        self.condition, self.messages, self.waited_in_vain = threading.Condition(), [], []

    def __call__(self, message) -> None:
        with self.condition:
            self.messages.append(message)
            self.condition.notify_all()

    def wait_for(self, count: int) -> bool:
        with self.condition:
            return self.condition.wait_for(lambda: len(self.messages) >= count, WAIT)


WAIT = 1.0  # seconds a gated tool waits for the results before it gives up and finishes anyway
FINISH_ORDER = ("Shanghai", "Shenzhen", "Guangzhou", "Beijing")  # in case 1, whatever the call order


def make_gated_tools(overlap: Overlap, relay: Relay, finish_order=FINISH_ORDER, weather: dict = WEATHER) -> dict:
    """get_weather that finishes in ``finish_order``: each lookup waits until the results of the
    lookups before it in that order have been handed on to ``relay``."""

    def get_weather(city: str, unit: str = "celsius") -> dict:  # the demo tool's signature
        with overlap:
            if not relay.wait_for(finish_order.index(city)):
                with relay.condition:
                    relay.waited_in_vain.append(city)
            condition, celsius, _ = weather[city]
            temperature = celsius if unit == "celsius" else round(celsius * 9 / 5 + 32)
            return {"city": city, "condition": condition, "temperature": temperature, "unit": unit}

    return {"get_weather": get_weather}


def weather_call(call_id: str, city: str) -> ToolCall:
    return ToolCall(call_id, "get_weather", json.dumps({"city": city}))


def expected_weather(city: str, weather: dict = WEATHER) -> str:
    condition, celsius, _ = weather[city]
    return render_result({"city": city, "condition": condition, "temperature": celsius, "unit": "celsius"})


def _same_content(expected: str, got) -> bool:
    """Equal as JSON when both are JSON (spacing and escaping do not matter), else as text."""
    if not isinstance(got, str):
        return False
    try:
        return json.loads(expected) == json.loads(got)
    except ValueError:
        return expected == got


def _check_messages(report: Report, case: str, calls: list[ToolCall], got,
                    expected_contents: dict[str, str | None]) -> bool:
    """One tool message per call, in the calls' order, each under its call's id; contents that
    are None in ``expected_contents`` must follow the rule for error texts ("Error: ...")."""
    if not isinstance(got, list) or not all(isinstance(each, dict) for each in got):
        report.fail(case, "return a list of tool messages (dicts)", "a list of dicts", type(got).__name__)
        return False
    ids = [each.get("tool_call_id") for each in got]
    wanted_ids = [call.id for call in calls]
    if ids != wanted_ids:
        note = ("the messages are not in the calls' order (or not one per call): the i-th message "
                "must answer the i-th call")
        if sorted(map(str, ids)) == sorted(wanted_ids):
            note = ("every id is there, but in a different order: probably the order the tools "
                    "finished in. Return the messages in the order of the calls")
        report.fail(case, note, wanted_ids, ids)
        return False
    for index, (call, message) in enumerate(zip(calls, got)):
        if message.get("role") != "tool":
            report.fail(case, f"message {index} must have role 'tool'", "tool", message.get("role"))
            return False
        wanted = expected_contents[call.id]
        content = message.get("content")
        if wanted is None:
            if not follows_error_rule(content):
                report.fail(case, f"the call {call.id} ({call.name}) failed: its message should say so: "
                                  f"{error_rule_note(content)}", f"{ERROR_PREFIX}...", content)
                return False
        elif not _same_content(wanted, content):
            report.fail(case, f"the content under id {call.id} is not the result of that call "
                              f"({call.name} {call.arguments})", wanted, content)
            return False
    return True


def _check_handed_on(report: Report, case: str, calls: list[ToolCall], relay: Relay,
                     expected_contents: dict[str, str | None]) -> bool:
    """on_result got one message per call (any order), each under its own call's id."""
    got = list(relay.messages)
    if not all(isinstance(each, dict) for each in got):
        report.fail(case, "hand on_result one tool message (a dict) per call", "dicts",
                    [type(each).__name__ for each in got])
        return False
    ids = sorted(str(each.get("tool_call_id")) for each in got)
    if ids != sorted(call.id for call in calls):
        report.fail(case, "on_result must receive exactly one message per call, each under its "
                          "call's id", sorted(call.id for call in calls), ids)
        return False
    by_id = {call.id: call for call in calls}
    for message in got:
        call = by_id[message["tool_call_id"]]
        wanted, content = expected_contents[call.id], message.get("content")
        if wanted is None and not follows_error_rule(content):
            report.fail(case, f"on_result: the call {call.id} ({call.name}) failed: its message should "
                              f"say so: {error_rule_note(content)}", f"{ERROR_PREFIX}...", content)
            return False
        if wanted is not None and not _same_content(wanted, content):
            report.fail(case, f"on_result: the content under id {call.id} is not the result of that "
                              f"call ({call.name} {call.arguments}): a finished result must be matched "
                              "to its call, not to a position", wanted, content)
            return False
    return True


_WORDS = {3: "three", 4: "four", 5: "five", 6: "six"}


def _grade_gated(report: Report, execute_concurrently, calls: list[ToolCall], finish_order, weather: dict,
                 max_workers: int, label: str = "") -> bool:
    """Lookups that finish in ``finish_order``: the messages, what was handed on and the overlap.
    False when the learner's function is still a stub."""
    count = _WORDS.get(len(calls), str(len(calls)))
    case = f"{label}{count} lookups that finish in a different order than they were called"
    expected = {call.id: expected_weather(json.loads(call.arguments)["city"], weather) for call in calls}
    overlap, relay = Overlap(), Relay()
    started = time.perf_counter()
    done, got = attempt(report, case, execute_concurrently, calls,
                        make_gated_tools(overlap, relay, finish_order, weather), relay, max_workers)
    elapsed = time.perf_counter() - started
    if not done:
        if report.failures[-1].note.startswith("not done yet"):
            return False
    elif _check_messages(report, case, calls, got, expected):
        report.ok(case)

    case = f"{label}each result handed to on_result as its tool finished, under its own id"
    if done and _check_handed_on(report, case, calls, relay, expected):
        order = [message["tool_call_id"] for message in relay.messages]
        wanted = [call.id for city in finish_order for call in calls if json.loads(call.arguments)["city"] == city]
        if relay.waited_in_vain:
            waited = [city for city in finish_order if city in relay.waited_in_vain]
            report.fail(case, f"the lookups for {waited} waited {WAIT:.0f} s for results "
                              "that were finished but not handed on: call on_result for each call as "
                              "soon as its tool returns (as_completed, or inside the function each "
                              "thread runs), not after all of them", wanted, order)
        elif order != wanted:
            report.fail(case, "on_result got the messages in another order than the tools finished in",
                        wanted, order)
        else:
            report.ok(case)

    case = f"{label}the {count} lookups ran at the same time"
    if done:
        if overlap.peak >= 2:
            report.ok(case)
        else:
            report.fail(case, f"at most {overlap.peak} tool ran at any moment, so the calls ran one "
                              f"after the other ({elapsed:.2f} s). Submit them all to a thread pool "
                              "before waiting for any result", ">= 2 at once", overlap.peak)
    return True


def _grade_pool_size(report: Report, execute_concurrently, case: str, calls: list[ToolCall], weather: dict,
                     max_workers: int) -> None:
    overlap, relay = Overlap(), Relay()
    expected = {call.id: expected_weather(json.loads(call.arguments)["city"], weather) for call in calls}
    done, got = attempt(report, case, execute_concurrently, calls, make_tools(overlap, weather), relay, max_workers)
    if (done and _check_messages(report, case, calls, got, expected)
            and _check_handed_on(report, case, calls, relay, expected)):
        if overlap.peak <= max_workers:
            report.ok(case)
        else:
            report.fail(case, "more tools ran at once than max_workers allows", f"at most {max_workers}", overlap.peak)


# --- Cases made up while grading ------------------------------------------------------------------

_CITIES = ["Lisbon", "Nairobi", "Toronto", "成都", "杭州", "Oslo", "Lima", "Hanoi", "Cairo", "Perth"]
_CONDITIONS = ["sunny", "cloudy", "rain", "snow", "fog", "windy", "晴"]
_UNKNOWN = ["get_stock_price", "get_forecast", "lookup_flight", "weather", "get_weather_v2"]


def _made_up_weather(rng: random.Random) -> dict:
    return {city: (rng.choice(_CONDITIONS), rng.randint(-15, 40), rng.choice([0.02, 0.05, 0.1, 0.15]))
            for city in rng.sample(_CITIES, rng.randint(3, 6))}


def _ids(rng: random.Random, count: int) -> list[str]:
    prefix = rng.choice(["call_", "tc_", "fc-", ""])
    return [f"{prefix}{number}" for number in rng.sample(range(1, 500), count)]


def _grade_made_up(report: Report, execute_concurrently, rng: random.Random) -> None:
    weather = _made_up_weather(rng)
    cities = list(weather)
    called = rng.sample(cities, len(cities))
    finish_order = called
    while finish_order == called:
        finish_order = rng.sample(cities, len(cities))
    calls = [weather_call(call_id, city) for call_id, city in zip(_ids(rng, len(called)), called)]
    _grade_gated(report, execute_concurrently, calls, tuple(finish_order), weather,
                 len(calls) + rng.randint(0, 2), "made-up case 1: ")

    max_workers = rng.randint(1, 3)
    called = [rng.choice(cities) for _ in range(max_workers + rng.randint(1, 2))]
    called.insert(rng.randrange(len(called) + 1), rng.choice(called))  # the same city twice: only ids tell them apart
    calls = [weather_call(call_id, city) for call_id, city in zip(_ids(rng, len(called)), called)]
    _grade_pool_size(report, execute_concurrently, f"made-up case 2: max_workers={max_workers} runs at most "
                     f"{max_workers} of {len(calls)} tools at once", calls, weather, max_workers)

    good = [weather_call(call_id, rng.choice(cities)) for call_id in _ids(rng, rng.randint(2, 3))]
    bad = [ToolCall(f"x{rng.randint(500, 999)}", rng.choice(_UNKNOWN), json.dumps({"city": rng.choice(cities)})),
           ToolCall(f"y{rng.randint(500, 999)}", "get_order_status", json.dumps({"order_id": f"B{rng.randint(1, 9999)}"}))]
    calls = good + rng.sample(bad, rng.randint(1, 2))
    rng.shuffle(calls)
    expected = {call.id: expected_weather(json.loads(call.arguments)["city"], weather) if call.name == "get_weather"
                else None for call in calls}
    case = f"made-up case 3: {len(calls) - len(good)} failing call(s) among {len(calls)}"
    relay = Relay()
    done, got = attempt(report, case, execute_concurrently, calls, make_tools(Overlap(), weather), relay, 4)
    if (done and _check_messages(report, case, calls, got, expected)
            and _check_handed_on(report, case, calls, relay, expected)):
        report.ok(case)


def grade(execute_concurrently, seed: int | None = None) -> Report:
    """Grade on the public cases and on cases made up from ``seed`` (a fresh one when None)."""
    seed = case_seed(seed)
    report = Report(f"Lab 08 - a concurrent executor that answers by id (made-up cases from seed {seed})")

    # 1. Four lookups whose ids are in no sorted order and that finish in another order still.
    calls = [weather_call("call_9", "Beijing"), weather_call("call_2", "Shanghai"),
             weather_call("call_5", "Guangzhou"), weather_call("call_7", "Shenzhen")]
    if not _grade_gated(report, execute_concurrently, calls, FINISH_ORDER, WEATHER, 4):
        return report

    # 2. The pool size is respected.
    calls = [weather_call(f"call_{n}", city) for n, city in enumerate(WEATHER, 1)]
    _grade_pool_size(report, execute_concurrently, "max_workers=2 runs at most two tools at once", calls, WEATHER, 2)

    # 3. Failures stay in their own message; the other calls still answer.
    case = "an unknown tool and a tool that raises, between two good calls"
    calls = [weather_call("call_a", "Shanghai"), ToolCall("call_b", "get_stock_price", '{"symbol": "600519"}'),
             ToolCall("call_c", "get_order_status", '{"order_id": "A1001"}'), weather_call("call_d", "Shenzhen")]
    relay = Relay()
    expected = {"call_a": expected_weather("Shanghai"), "call_b": None, "call_c": None,
                "call_d": expected_weather("Shenzhen")}
    done, got = attempt(report, case, execute_concurrently, calls, make_tools(Overlap()), relay, 4)
    if (done and _check_messages(report, case, calls, got, expected)
            and _check_handed_on(report, case, calls, relay, expected)):
        report.ok(case)

    # 4. A tool that returns nothing, and a single call.
    case = "one call to a tool that returns None"
    calls = [ToolCall("call_only", "log_event", '{"name": "opened"}')]
    relay = Relay()
    done, got = attempt(report, case, execute_concurrently, calls, make_tools(Overlap()), relay, 4)
    if (done and _check_messages(report, case, calls, got, {"call_only": "success"})
            and _check_handed_on(report, case, calls, relay, {"call_only": "success"})):
        report.ok(case)

    case = "no calls at all"
    relay = Relay()
    done, got = attempt(report, case, execute_concurrently, [], make_tools(Overlap()), relay, 4)
    if done:
        if report.check(case, [], got, "no calls, no messages: return an empty list") and relay.messages:
            report.outcomes.pop()
            report.fail(case, "no calls, so nothing to hand on_result", [], relay.messages)

    _grade_made_up(report, execute_concurrently, random.Random(seed))
    return report


hints = Hints([
    "Write a small function run_one(call) that returns the tool message for one call: look the "
    "tool up in tools_by_name, call it with call.parsed_arguments() as keyword arguments, turn "
    "the value into text with render_result, and wrap it: tool_result(call.id, text). Catch an "
    "unknown name and any exception and use an error text instead (it starts with 'Error: '; "
    "toolkit.errors_for_model.unknown_tool_text and sanitize(tool_error_text(error, call.name)) word it the "
    "toolkit's way): one failing call must not lose the others.",
    "concurrent.futures.ThreadPoolExecutor(max_workers=...) runs functions in threads. Submit "
    "every call first: futures = {pool.submit(run_one, call): call for call in calls}. Then "
    "as_completed(futures) gives the futures in the order they FINISH: that is when on_result "
    "gets each message. pool.map would give them in the calls' order, so the first message "
    "would wait for the slowest tool.",
    "with ThreadPoolExecutor(max_workers=max(1, min(max_workers, len(calls)))) as pool: futures = "
    "{pool.submit(run_one, c): c for c in calls}; by_id = {}; for future in as_completed(futures): "
    "message = future.result(); on_result(message); by_id[futures[future].id] = message. Then "
    "return [by_id[call.id] for call in calls]. Return [] at once when there are no calls.",
])
