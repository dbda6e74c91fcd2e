"""Grader for labs/07_tool_choice_default.py: the tool_choice to send, from a client default and a
per-request override.

Pure logic, no model: each case gives the client's default, the request's override, the tools
being sent and the round of the turn, and says what must go in the request (or which error).
Besides the public cases, cases are made up while grading: other tools, defaults, overrides,
rounds and misspellings, so that a table of the public cases does not pass;
``grade(fn, seed=N)`` repeats a run.
"""

from __future__ import annotations

import random
from typing import Any

from labs.grading import Hints, Report, attempt, case_seed


def named(name: str) -> dict:
    return {"type": "function", "function": {"name": name}}


TOOL_NAMES = ["get_weather", "calculate", "get_order_status"]  # the demo tools
RAISES = "raises ValueError"

# (case, default, override, tool names, round index, expected value or RAISES, a word the error must contain)
CASES: list[tuple[str, Any, Any, list[str], int, Any, str | None]] = [
    ("no default, no override: leave the field out", None, None, TOOL_NAMES, 0, None, None),
    ("the client default is used", "required", None, TOOL_NAMES, 0, "required", None),
    ("a per-request override wins over the default", "required", "none", TOOL_NAMES, 0, "none", None),
    ("a named function as the override", "auto", named("calculate"), TOOL_NAMES, 0, named("calculate"), None),
    ("a named function as the default", named("get_weather"), None, TOOL_NAMES, 0, named("get_weather"), None),
    ("no tools in the request: never send tool_choice", "required", "auto", [], 0, None, None),
    ("after the first request, 'required' becomes 'auto'", "required", None, TOOL_NAMES, 1, "auto", None),
    ("after the first request, a named function becomes 'auto'", None, named("get_weather"), TOOL_NAMES, 2, "auto", None),
    ("after the first request, 'none' stays 'none'", "none", None, TOOL_NAMES, 1, "none", None),
    ("a named function that is not being sent", "auto", named("delete_user"), TOOL_NAMES, 0, RAISES, "delete_user"),
    ("a misspelt mode", "requried", None, TOOL_NAMES, 0, RAISES, "requried"),
]


# --- Cases made up while grading ----------------------------------------------------------------

_POOL = ["search_flights", "convert_currency", "lookup_invoice", "check_stock", "book_room", "send_reminder",
         "get_weather", "calculate", "translate_text"]
_MISSPELT = ["Auto", "REQUIRED", "requierd", "any", "force", "None", "", "nothing", "auto "]


def _relaxed(choice, round_index: int):
    forcing = choice == "required" or isinstance(choice, dict)
    return "auto" if forcing and round_index > 0 else choice


def made_up_cases(seed: int) -> list[tuple[str, Any, Any, list[str], int, Any, str | None]]:
    rng = random.Random(seed)
    cases = []

    def add(what, default, override, tools, round_index, expected, mention=None):
        later = ", after the first request" if round_index > 0 else ""
        cases.append((f"made-up case {len(cases) + 1}: {what}{later} (client's {default!r}, request's {override!r}, "
                      f"tools {tools}, round {round_index})", default, override, tools, round_index, expected, mention))

    tools = rng.sample(_POOL, rng.randint(1, 4))
    choices = ["auto", "none", "required", named(rng.choice(tools))]
    default, override = rng.choice(choices + [None]), rng.choice(choices)
    for _ in range(2):
        round_index = rng.choice([0, 0, 1, rng.randint(2, 9)])
        add("a per-request override", default, override, tools, round_index, _relaxed(override, round_index))
    default = rng.choice(choices)
    round_index = rng.choice([0, 1, rng.randint(2, 9)])
    add("the default", default, None, tools, round_index, _relaxed(default, round_index))
    add("no tools", rng.choice(choices), rng.choice(choices + [None]), [], rng.randint(0, 3), None)
    add("neither", None, None, tools, rng.randint(0, 5), None)
    stranger = rng.choice([name for name in _POOL if name not in tools])
    where = rng.random() < 0.5
    add("a named function that is not being sent", named(stranger) if where else rng.choice(choices),
        None if where else named(stranger), tools, rng.randint(0, 2), RAISES, stranger)
    misspelt = rng.choice(_MISSPELT)
    add("a mode that does not exist", rng.choice(choices + [None]), misspelt, tools, rng.randint(0, 2), RAISES,
        misspelt or None)
    return cases


def grade(choose_tool_choice, seed: int | None = None) -> Report:
    """Grade on the public cases and on cases made up from ``seed`` (a fresh one when None)."""
    seed = case_seed(seed)
    report = Report(f"Lab 07 - tool_choice: a client default and a per-request override (made-up cases from seed {seed})")
    for case, default, override, tools, round_index, expected, must_mention in CASES + made_up_cases(seed):
        arguments = (default, override, list(tools), round_index)
        if expected == RAISES:
            try:
                got = choose_tool_choice(*arguments)
            except ValueError as error:
                if must_mention and must_mention not in str(error):
                    report.fail(case, f"the error should name {must_mention!r}, so that the mistake "
                                      "is easy to find", f"a message naming {must_mention!r}", str(error))
                else:
                    report.ok(case)
                continue
            except Exception as error:
                if "NotDoneYet" in type(error).__name__:
                    report.fail(case, "not done yet: replace the `raise NotDoneYet` line with your code")
                    return report
                report.fail(case, f"raise ValueError, not {type(error).__name__}", "ValueError", type(error).__name__)
                continue
            report.fail(case, "this is a mistake in the caller's code: raise ValueError before "
                              "anything is sent", RAISES, got)
            continue
        done, got = attempt(report, case, choose_tool_choice, *arguments)
        if not done:
            if report.failures[-1].note.startswith("not done yet"):
                return report
            continue
        report.check(case, expected, got, _why(case))
    return report


def _why(case: str) -> str:
    if "after the first request" in case:
        return ("a forcing choice must not outlive the first request, or the model could never "
                "answer in text; 'auto' and 'none' stay as they are")
    if "no tools" in case:
        return "APIs reject tool_choice when there are no tools: return None to leave it out"
    if "override" in case:
        return "the request's own tool_choice, when given, wins over the client's default"
    return "wrong value"


hints = Hints([
    "Work in this order: no tools -> None. Then choice = override if override is not None else "
    "default. None -> None. Then check the choice, then relax it for later rounds.",
    "A valid choice is one of 'auto', 'none', 'required', or a dict whose ['function']['name'] is "
    "in tool_names. Anything else: raise ValueError(f'... {choice!r} ...'), naming the bad value "
    "(and, for a name, the tools that are being sent).",
    "Relaxing: if round_index > 0 and (choice == 'required' or isinstance(choice, dict)): return "
    "'auto'. Otherwise return the choice itself.",
])
