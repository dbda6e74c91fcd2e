"""Grader for labs/06_return_behaviour.py: a tool's result straight to the user, or back to the model.

The learner writes ``run_round(calls, tools_by_name)``, the step of the loop that runs one
reply's calls and decides whether the turn ends with a tool's own result. The rule is the
toolkit's (``toolkit.loop.returns_directly``, lesson 6): never when a call of the round failed;
yes when the last call's tool is ``immediate_if_last``; otherwise only when every call's tool is
``immediate`` or ``immediate_if_last``. The value the user gets is the last call's own value.

Every case runs the learner's step inside ``run_turn_with_round`` (below) against the scripted
fake model, whose replies are written by hand, so that each combination is exact. The fake
records every request: a turn that should have ended must not ask the model again.

Besides the public cases, rounds are made up while grading: longer rounds in new orders, new
customers, months, summaries, cities, ids and failures, judged by the toolkit's rule, so that a
table of the public rounds does not pass; ``grade(run_round, seed=N)`` repeats a run.
"""

from __future__ import annotations

import logging
import random
from typing import Any

from labs.grading import Hints, Report, attempt, case_seed
from toolkit import fake
from toolkit.demo_tools import get_weather
from toolkit.execution import CallRunner
from toolkit.messages import ToolCall, assistant_from_reply, calls_of
from toolkit.tools import ToolSet, tool
from toolkit.trace import ToolExecution
from toolkit.turn_options import TurnOptions

# --- The tools: one of each return behaviour ------------------------------------------------------


@tool(return_behavior="immediate")
def export_report(customer_id: str, month: str) -> str:
    """Export a customer's monthly report and return the download link.

    Args:
        customer_id: Customer number, e.g. C-1024.
        month: Month as YYYY-MM.
    """
    if customer_id == "C-9999":  # a broken export, with the server's layout in its message
        raise RuntimeError(f"cannot write /srv/reports/{customer_id}/{month}.xlsx: disk full")
    return f"https://reports.example.com/{customer_id}/{month}.xlsx?expires=24h"


@tool(return_behavior="immediate_if_last")
def create_ticket(summary: str) -> dict:
    """Open a support ticket.

    Args:
        summary: One sentence describing the problem.
    """
    return {"ticket": "T-5521", "summary": summary}


TOOLS_BY_NAME = {each.name: each for each in (export_report, create_ticket, get_weather)}

_quiet = logging.getLogger("labs.return_behaviour")
_quiet.addHandler(logging.NullHandler())  # failures are the point here; no warnings on stderr
_quiet.propagate = False


def execute(call: ToolCall, tools_by_name: dict) -> ToolExecution:
    """Run one call with the toolkit's executor; never raises.

    The record has ``.ok``, ``.value`` (the tool's own return value), ``.result_text`` (the
    text for the model: the rendered value, or a short sanitised error starting with
    "Error: "), ``.return_behavior`` (of the tool that ran; None for an unknown tool) and
    ``.error_detail`` (the full story, traceback included: for logs, never for the model or
    the user).
    """
    runner = CallRunner(ToolSet(tools_by_name.values()), TurnOptions(log=_quiet))
    return runner.run(call)


# --- The loop the learner's step runs in ------------------------------------------------------------


def run_turn_with_round(client, messages: list[dict], tools_by_name: dict, run_round,
                        max_rounds: int = 4) -> tuple[list[dict], str, Any]:
    """Ask; run each reply's calls with ``run_round``; stop on an answer, a direct result or
    the round limit. Returns (history, stop, what the user gets)."""
    history = list(messages)
    specs = [each.spec() for each in tools_by_name.values()]
    for _ in range(max_rounds):
        message = client.chat(messages=history, tools=specs).choices[0].message
        calls = calls_of(message)
        history.append(assistant_from_reply(message))
        if not calls:
            return history, "answered", message.content
        results, direct, value = run_round(calls, tools_by_name)
        history.extend(results)
        if direct:
            return history, "immediate", value
    return history, "max_rounds", None


# --- Cases ------------------------------------------------------------------------------------------

USER = {"role": "user", "content": "导出C-1024五月的报表"}  # Export C-1024's report for May
ANSWER = "(the model's answer)"
LINK = "https://reports.example.com/C-1024/2025-05.xlsx?expires=24h"
LINK_JUNE = "https://reports.example.com/C-1024/2025-06.xlsx?expires=24h"
SUMMARY = "Report for May is empty"
TICKET = {"ticket": "T-5521", "summary": SUMMARY}
SECRET_PATH = "/srv/reports"


def _export(call_id: str, month: str = "2025-05", customer: str = "C-1024"):
    return fake.call("export_report", {"customer_id": customer, "month": month}, id=call_id)


def _ticket(call_id: str):
    return fake.call("create_ticket", {"summary": SUMMARY}, id=call_id)


def _weather(call_id: str):
    return fake.call("get_weather", {"city": "Beijing"}, id=call_id)


# (case, the calls of the one reply, "immediate" with the user's value, or "answered")
CASES: list[tuple[str, list, str, Any]] = [
    ("a to_model call alone goes back to the model", [_weather("c1")], "answered", ANSWER),
    ("an immediate call alone goes straight to the user", [_export("c1")], "immediate", LINK),
    ("the user gets the tool's own value, not the text for the model", [_ticket("c1")], "immediate", TICKET),
    ("two immediate calls: straight to the user, with the last call's value",
     [_export("c1"), _export("c2", "2025-06")], "immediate", LINK_JUNE),
    ("immediate, then to_model in one reply: back to the model (it needs the weather)",
     [_export("c1"), _weather("c2")], "answered", ANSWER),
    ("to_model, then immediate in last place: still back to the model",
     [_weather("c1"), _export("c2")], "answered", ANSWER),
    ("to_model, then immediate_if_last in last place: straight to the user",
     [_weather("c1"), _ticket("c2")], "immediate", TICKET),
    ("immediate_if_last, then to_model: back to the model",
     [_ticket("c1"), _weather("c2")], "answered", ANSWER),
    ("immediate_if_last, then immediate: every call is direct, so straight to the user",
     [_ticket("c1"), _export("c2")], "immediate", LINK),
    ("an immediate tool that fails: back to the model, never the error to the user",
     [_export("c1", customer="C-9999")], "answered", ANSWER),
    ("an immediate call with bad arguments: back to the model, which can correct them",
     [fake.call("export_report", {"customer_id": "C-1024"}, id="c1")], "answered", ANSWER),
    ("an immediate call next to a tool that does not exist: back to the model",
     [_export("c1"), fake.call("get_stock_price", {"symbol": "600519"}, id="c2")], "answered", ANSWER),
    ("a failed call, then immediate_if_last in last place: back to the model",
     [_export("c1", customer="C-9999"), _ticket("c2")], "answered", ANSWER),
]


# --- Rounds made up while grading ------------------------------------------------------------------

_CITIES = ["Beijing", "上海", "Shenzhen", "Lisbon", "Atlantis"]
_SUMMARIES = ["The export button does nothing", "报表里没有六月的数据", "Wrong currency in the totals",
              "Cannot log in since Monday"]
_UNKNOWN = ["get_stock_price", "delete_report", "send_sms", "export_reports"]


def _made_up_call(rng: random.Random, call_id: str, kind: str):
    if kind == "immediate":
        month = f"{rng.randint(2023, 2026)}-{rng.randint(1, 12):02d}"
        return fake.call("export_report", {"customer_id": f"C-{rng.randint(1000, 9998)}", "month": month}, id=call_id)
    if kind == "immediate_if_last":
        return fake.call("create_ticket", {"summary": rng.choice(_SUMMARIES)}, id=call_id)
    if kind == "to_model":
        return fake.call("get_weather", {"city": rng.choice(_CITIES)}, id=call_id)
    return rng.choice([  # a call that fails: the tool raises, an argument is missing, the tool does not exist
        fake.call("export_report", {"customer_id": "C-9999", "month": f"2025-{rng.randint(1, 12):02d}"}, id=call_id),
        fake.call("export_report", {"month": "2025-05"}, id=call_id),
        fake.call(rng.choice(_UNKNOWN), {"symbol": str(rng.randint(100000, 699999))}, id=call_id)])


def _expected_outcome(calls: list) -> tuple[str, Any]:
    """What the toolkit's rule says: ("immediate", the last call's value) or ("answered", ANSWER)."""
    from toolkit.loop import returns_directly

    executions = [execute(ToolCall(*call), TOOLS_BY_NAME) for call in calls]
    if returns_directly([each.return_behavior for each in executions], executions):
        return "immediate", executions[-1].value
    return "answered", ANSWER


MADE_UP_COUNT = 6  # made-up rounds per grading


def made_up_cases(seed: int) -> list[tuple[str, list, str, Any]]:
    """Rounds of one to four calls in any order; at least one ends the turn and one does not."""
    rng = random.Random(seed)
    while True:
        cases = []
        for index in range(MADE_UP_COUNT):
            kinds = rng.choices(["immediate", "immediate_if_last", "to_model", "fails"], weights=[4, 3, 2, 1],
                                k=rng.randint(1, 4) if index else 4)
            prefix = rng.choice(["call_", "c", "tc-"])
            calls = [_made_up_call(rng, f"{prefix}{rng.randint(10, 99)}{number}", kind)
                     for number, kind in enumerate(kinds)]
            stop, shown = _expected_outcome(calls)
            cases.append((f"made-up case {index + 1}: {' then '.join(call[1] for call in calls)}", calls, stop, shown))
        if {case[2] for case in cases} == {"immediate", "answered"}:
            return cases


def _expected_results(calls: list) -> list[tuple[str, str]]:
    """(tool_call_id, content) of each result, as the toolkit's executor words it."""
    return [(call_id, execute(ToolCall(call_id, name, arguments), TOOLS_BY_NAME).result_text)
            for call_id, name, arguments in calls]


def _check_shape(report: Report, case: str, value: Any) -> bool:
    if (isinstance(value, tuple) and len(value) == 3 and isinstance(value[0], list)
            and isinstance(value[1], bool)):
        return True
    report.fail(case, "return a tuple (results, direct, value): the list of tool messages, True "
                      "or False, and the value for the user (None when not direct)",
                "(list, bool, value)", repr(value)[:120])
    return False


def _grade_case(report: Report, run_round, case: str, calls: list, stop: str, shown: Any) -> bool:
    """Run one case; False when the learner's step is still a stub."""
    model = fake.ScriptedModel([fake.calls(*calls), fake.text(ANSWER)])
    checked: list = []

    def step(*args):
        value = run_round(*args)
        checked.append(_check_shape(report, case, value))
        return value if checked[-1] else ([], False, None)

    done, outcome = attempt(report, case, run_turn_with_round, model.backend(), [dict(USER)], dict(TOOLS_BY_NAME), step)
    if not done:
        return not report.failures[-1].note.startswith("not done yet")
    if not all(checked):
        return True
    history, got_stop, got_shown = outcome
    results = [(m.get("tool_call_id"), m.get("content")) for m in history
               if isinstance(m, dict) and m.get("role") == "tool"]
    expected_results = _expected_results(calls)
    if [r[0] for r in results] != [r[0] for r in expected_results]:
        report.fail(case, "every call needs its own tool message, in the calls' order, under its id, even "
                          "when the turn ends there: the next turn's history must hold a result for every "
                          "call", [r[0] for r in expected_results], [r[0] for r in results])
        return True
    for (call_id, content), (_, wanted) in zip(results, expected_results):
        if SECRET_PATH in str(content) or "Traceback" in str(content):
            report.fail(case, f"the result for {call_id} carries the raw error (a path or a traceback): "
                              "send the short, sanitised result_text, not error_detail", wanted, content)
            return True
        if content != wanted:
            report.fail(case, f"the tool message for {call_id} should carry the call's result_text",
                        wanted, content)
            return True
    if got_stop != stop:
        if stop == "answered":
            note = ("this round must go back to the model"
                    + (": a call failed, and the user must not get an error (or nothing) instead of an "
                       "answer" if any(not execute(ToolCall(*c), TOOLS_BY_NAME).ok for c in calls) else
                       ": not every call returns directly, and no immediate_if_last call is last"))
        else:
            note = "this round's result goes straight to the user: return direct=True"
        report.fail(case, note, stop, got_stop)
        return True
    requests = len(model.requests)
    if stop == "immediate" and requests != 1:
        report.fail(case, "a direct result ends the turn: the model must not be asked again", 1, requests)
        return True
    if SECRET_PATH in str(got_shown):
        report.fail(case, "the user must never see a tool's raw error", shown, got_shown)
        return True
    if stop == "immediate" and (got_shown != shown or type(got_shown) is not type(shown)):
        report.fail(case, "the user gets the last call's own value (execution.value), as the tool "
                          "returned it, not the text written for the model", shown, got_shown)
        return True
    report.ok(case)
    return True


def grade(run_round, seed: int | None = None) -> Report:
    """Grade on the public rounds and on rounds made up from ``seed`` (a fresh one when None)."""
    seed = case_seed(seed)
    report = Report(f"Lab 06c - return behaviour: to the user or back to the model (made-up cases from seed {seed})")
    for case, calls, stop, shown in CASES + made_up_cases(seed):
        if not _grade_case(report, run_round, case, calls, stop, shown):
            return report
    return report


hints = Hints([
    "Run every call first: executions = [execute(call, tools_by_name) for call in calls], and "
    "make one tool message per execution, in order: tool_result(e.call_id, e.result_text). Only "
    "then decide, because the rule looks at the whole round.",
    "The decision, in order: if any execution is not .ok, the round goes back to the model. If "
    "the last execution's return_behavior is 'immediate_if_last', it goes to the user. Otherwise "
    "it goes to the user only if every return_behavior is 'immediate' or 'immediate_if_last'.",
    "Return (messages, True, executions[-1].value) when the result goes to the user, else "
    "(messages, False, None). The value is the tool's own return value (a dict stays a dict), "
    "not result_text.",
])
