"""Grader for labs/11_permission_provider.py: offer admin tools only to users allowed to use them,
and refuse them to anyone else who names them anyway.

Two functions are graded together: the provider ``admin_tools(request)`` (what each user is
offered), and ``run_call(call, request, provider)``, which runs a call only if that provider
offered the tool for that request, and otherwise refuses it exactly as it refuses a tool that
does not exist. The refusal cases call the learner's ``run_call`` with the learner's provider.

The tools and the role table live here so that the lab, the solution and the grader share the
very same objects.

Besides the public users, the grader makes up users while grading, adds them to ``ROLES`` for
the grading only, with other roles, and has them name tools for other accounts, so that a
provider that knows the public users by name does not pass; ``grade(f, g, seed=N)`` repeats a run.
"""

from __future__ import annotations

import json
import random

from labs.grading import ERROR_PREFIX, Hints, Report, attempt, case_seed, error_rule_note, follows_error_rule
from toolkit.demo_tools import get_order_status  # the demo tool, offered to everyone
from toolkit.messages import ToolCall
from toolkit.schema import InvocationContext
from toolkit.tools import ToolRequest, ToolSet, render_result, tool, tools_for_turn

ROLES: dict[str, set[str]] = {
    "alice": {"admin"},
    "dave": {"support"},
    "erin": {"admin", "support"},
    "bob": set(),
}
"""Who may do what. A user missing from the table has no roles."""

DELETED: list[str] = []  # what delete_user really did, so the grader can tell if it ran


@tool
def delete_user(user_id: str) -> str:
    """Delete a user account and all its data (admins only).

    Args:
        user_id: The account to delete.
    """
    DELETED.append(user_id)
    return f"User {user_id} deleted."


@tool
def reset_password(user_id: str) -> str:
    """Send a password-reset link to a user (admins and support staff).

    Args:
        user_id: The account whose password is reset.
    """
    return f"Reset link sent to {user_id}."


STATIC = ToolSet([get_order_status])  # offered to everyone
EVERY_TOOL = [get_order_status, delete_user, reset_password]

# (case, the request's context, the tool names expected in the request)
USERS: list[tuple[str, InvocationContext | None, list[str]]] = [
    ("alice (admin)", InvocationContext(user="alice"), ["get_order_status", "delete_user", "reset_password"]),
    ("dave (support)", InvocationContext(user="dave"), ["get_order_status", "reset_password"]),
    ("erin (admin and support)", InvocationContext(user="erin"),
     ["get_order_status", "delete_user", "reset_password"]),
    ("bob (no role)", InvocationContext(user="bob"), ["get_order_status"]),
    ("mallory (not in the table)", InvocationContext(user="mallory"), ["get_order_status"]),
    ("a request without a context", None, ["get_order_status"]),
    ("a context without a user", InvocationContext(tenant="acme"), ["get_order_status"]),
]


def _offered(provider, context: InvocationContext | None) -> list[str]:
    return tools_for_turn(STATIC, [provider], _request(context)).names


def _request(context: InvocationContext | None) -> ToolRequest:
    return ToolRequest("Please delete the account u-42", memory_id="chat-1", context=context)


# (case, user, the tool the model names, whether it may run)
CALLS: list[tuple[str, str | None, str, bool]] = [
    ("bob names delete_user anyway", "bob", "delete_user", False),
    ("dave (support) names delete_user anyway", "dave", "delete_user", False),
    ("a request without a context names reset_password", None, "reset_password", False),
    ("alice (admin) may delete", "alice", "delete_user", True),
    ("dave (support) may reset a password", "dave", "reset_password", True),
    ("bob may look up an order", "bob", "get_order_status", True),
]
ARGUMENTS = {"delete_user": '{"user_id": "u-42"}', "reset_password": '{"user_id": "u-42"}',
             "get_order_status": '{"order_id": "A1001"}'}
RESULTS = {"delete_user": "User u-42 deleted.", "reset_password": "Reset link sent to u-42.",
           "get_order_status": render_result(get_order_status.invoke('{"order_id": "A1001"}'))}
MADE_UP = "drop_database"  # no such tool anywhere: the refusal of a withheld tool must read the same


# --- Users made up while grading -------------------------------------------------------------------

_NAMES = ["zhang.wei", "priya", "u1087", "ops-bot", "kim", "olu", "marta", "li.na", "sam_k"]
_ROLE_SETS = [{"admin"}, {"support"}, {"admin", "billing"}, {"support", "viewer"}, {"billing"}, {"viewer"}, set()]
_ORDER_IDS = ["A1001", "A1002", "B2001"]


def _may(roles: set[str], name: str) -> bool:
    return name == "get_order_status" or "admin" in roles or (name == "reset_password" and "support" in roles)


def _expected_names(roles: set[str]) -> list[str]:
    return [each.name for each in EVERY_TOOL if _may(roles, each.name)]


def made_up_users(seed: int) -> tuple[dict[str, set[str]], list[tuple], list[tuple]]:
    """Users to add to ROLES; (case, context, names offered); and (case, user, tool, allowed,
    arguments, result) for calls they make."""
    rng = random.Random(seed)
    names = rng.sample(_NAMES, 4)
    sets = [rng.choice([{"admin"}, {"admin", "billing"}]), rng.choice([{"support"}, {"support", "viewer"}]),
            rng.choice([{"billing"}, {"viewer"}, set()]), rng.choice(_ROLE_SETS)]
    rng.shuffle(sets)
    roles = dict(zip(names[:3], sets[:3]))  # the fourth name stays out of the table
    offers = [(f"made-up case {index + 1}: {user} ({', '.join(sorted(roles.get(user, ()))) or 'no role'}"
               f"{'' if user in roles else ', not in the table'})", InvocationContext(user=user),
               _expected_names(roles.get(user, set()))) for index, user in enumerate(names)]
    calls = []
    for user in rng.sample(names, 4):
        tool_name = rng.choice(["delete_user", "reset_password"] + (["get_order_status"] if rng.random() < 0.3 else []))
        if tool_name == "get_order_status":
            order_id = rng.choice(_ORDER_IDS)
            arguments, result = {"order_id": order_id}, render_result(get_order_status.invoke(json.dumps({"order_id": order_id})))
        else:
            target = f"u-{rng.randint(100, 9999)}"
            arguments = {"user_id": target}
            result = f"User {target} deleted." if tool_name == "delete_user" else f"Reset link sent to {target}."
        allowed = _may(roles.get(user, set()), tool_name)
        calls.append((f"made-up case {len(offers) + len(calls) + 1}: {user} names {tool_name} for {arguments}",
                      user, tool_name, allowed, json.dumps(arguments), result))
    return roles, offers, calls


def _run(report: Report, case: str, run_call, admin_tools, name: str, user: str | None, arguments: str | None = None):
    """The learner's run_call on one call, with the learner's provider; did delete_user run?"""
    DELETED.clear()
    call = ToolCall("call_1", name, arguments or ARGUMENTS.get(name, '{"user_id": "u-42"}'))
    context = InvocationContext(user=user) if user else None
    done, text = attempt(report, case, run_call, call, _request(context), admin_tools)
    return done, text, bool(DELETED)


def _grade_calls(report: Report, admin_tools, run_call, made_up: list[tuple] = ()) -> None:
    public = [(case, user, name, allowed, ARGUMENTS[name], RESULTS[name]) for case, user, name, allowed in CALLS]
    for case, user, name, allowed, arguments, result in public + list(made_up):
        done, text, deleted = _run(report, case, run_call, admin_tools, name, user, arguments)
        if not done:
            if report.failures[-1].note.startswith("not done yet"):
                return
            continue
        if not isinstance(text, str):
            report.fail(case, "return the text the model reads: the tool's result, or a refusal",
                        "a str", type(text).__name__)
        elif allowed and text != result:
            report.fail(case, f"this user may use {name}: your provider should offer it, and run_call "
                              "should run it and return its result (render_result of the value)",
                        result, text)
        elif not allowed and (deleted or text in (*RESULTS.values(), result)):
            report.fail(case, f"{name} ran for a user it was not offered to: run only the tools "
                              "that tools_for_turn(STATIC, [provider], request) offers for this "
                              "request, never one looked up elsewhere", f"a refusal: '{ERROR_PREFIX}...'", text)
        elif not allowed and not follows_error_rule(text):
            report.fail(case, f"a refusal is what the model reads instead of a result: {error_rule_note(text)}",
                        f"{ERROR_PREFIX}...", text)
        elif not allowed:
            _same_as_unknown(report, case, run_call, admin_tools, name, user, text)
        else:
            report.ok(case)


def _same_as_unknown(report: Report, case: str, run_call, admin_tools, name: str, user: str | None,
                     refusal: str) -> None:
    """A withheld tool must be refused exactly as a tool that does not exist."""
    done, unknown, _ = _run(report, case, run_call, admin_tools, MADE_UP, user)
    if not done:
        return
    if not follows_error_rule(unknown):
        report.fail(case, f"a tool that does not exist ({MADE_UP}) must get a refusal too, not crash "
                          f"the turn: {error_rule_note(unknown)}", f"{ERROR_PREFIX}...", unknown)
    elif refusal.replace(name, "<tool>") != unknown.replace(MADE_UP, "<tool>"):
        report.fail(case, f"the refusal of {name} differs from the refusal of {MADE_UP}, a tool "
                          "that does not exist: the model (and whoever steers it) learns that "
                          f"{name} exists for other users. Refuse both with the same words",
                    unknown.replace(MADE_UP, name), refusal)
    else:
        report.ok(case)


def grade(admin_tools, run_call, seed: int | None = None) -> Report:
    """Grade on the public users and on users made up from ``seed`` (a fresh one when None)."""
    seed = case_seed(seed)
    report = Report(f"Lab 11 - a tool provider that checks permissions (made-up cases from seed {seed})")
    roles, offers, calls = made_up_users(seed)
    ROLES.update(roles)  # the made-up users are in the table while grading, and only then
    try:
        _grade(report, admin_tools, run_call, offers, calls)
    finally:
        for user in roles:
            ROLES.pop(user, None)
    return report


def _grade(report: Report, admin_tools, run_call, offers: list[tuple], calls: list[tuple]) -> None:
    for case, context, expected in USERS + offers:
        done, names = attempt(report, case, _offered, admin_tools, context)
        if not done:
            if report.failures[-1].note.startswith("not done yet"):
                return
            continue
        if sorted(names) != sorted(expected):
            extra = sorted(set(names) - set(expected))
            missing = sorted(set(expected) - set(names))
            note = (f"offered {extra} to a user who may not use them" if extra
                    else f"did not offer {missing}")
            report.fail(case, note, sorted(expected), sorted(names))
        else:
            report.ok(case)
    _grade_calls(report, admin_tools, run_call, calls)


hints = Hints([
    "A provider receives a ToolRequest. The user is in request.context.user, but request.context "
    "may be None, and context.user may be None too. Look the user up in ROLES (a missing user has "
    "no roles) and return a list of tools, or None to offer nothing extra.",
    "Build the list from the roles: delete_user needs 'admin'; reset_password needs 'admin' or "
    "'support'. `roles = ROLES.get(user, set())` handles unknown users; "
    "`user = request.context.user if request.context else None` handles a missing context.",
    "roles = ROLES.get(user, set()); tools = []; if 'admin' in roles: tools.append(delete_user); "
    "if roles & {'admin', 'support'}: tools.append(reset_password); return tools or None.",
    "run_call: offered = tools_for_turn(STATIC, [provider], request); tool = offered.get(call.name). "
    "If tool is None (withheld OR made up: the same branch, so the same words), return "
    "f\"Error: there is no tool named {call.name!r}. Call one of the tools offered, or answer without a "
    "tool.\"; else return "
    "render_result(tool.invoke(call.arguments)). Never look the name up in a list of every tool.",
])
