"""Grader for labs/11_permission_provider.py: offer admin tools only to users allowed to use them.

The tools and the role table live here so that the lab, the solution and the grader share the
very same objects.
"""

from __future__ import annotations

import logging

from labs.grading import Hints, Report, attempt
from toolkit import fake
from toolkit.loop import run_turn
from toolkit.schema import InvocationContext
from toolkit.tools import ToolRequest, ToolSet, tool, tools_for_turn

ROLES: dict[str, set[str]] = {
    "alice": {"admin"},
    "dave": {"support"},
    "erin": {"admin", "support"},
    "bob": set(),
}
"""Who may do what. A user missing from the table has no roles."""

_QUIET = logging.getLogger("labs.graders.permission_provider")
_QUIET.addHandler(logging.NullHandler())
_QUIET.propagate = False  # the refused call is expected here: no warning on the notebook

DELETED: list[str] = []  # what delete_user really did, so the grader can tell if it ran


@tool
def get_order_status(order_id: str) -> str:
    """Look up the status of one order.

    Args:
        order_id: Order number such as A1024.
    """
    return f"Order {order_id}: shipped"


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
    request = ToolRequest("Please delete the account u-42", memory_id="chat-1", context=context)
    return tools_for_turn(STATIC, [provider], request).names


def _refusal(report: Report, provider, user: str, should_run: bool) -> None:
    """The scripted model names delete_user whatever it was offered; did the tool run?"""
    case = f"{user} names delete_user anyway" if not should_run else f"{user} may delete"
    model = fake.ScriptedModel([fake.calls(fake.call("delete_user", {"user_id": "u-42"})), fake.text("Done.")])
    DELETED.clear()
    done, result = attempt(report, case, run_turn, model.backend(),
                           [{"role": "user", "content": "Please delete the account u-42"}], STATIC,
                           providers=[provider], context=InvocationContext(user=user), registry=EVERY_TOOL, log=_QUIET)
    if not done:
        return
    execution = result.tool_executions[0]
    ran = DELETED == ["u-42"]
    if ran != should_run:
        note = ("delete_user ran for a user without the admin role: it was offered to them"
                if ran else "delete_user was refused for an admin: your provider did not offer it")
        report.fail(case, note, "refused" if not should_run else "ran",
                    f"ran (error={execution.error})" if ran else f"refused ({execution.error})")
    else:
        report.ok(case)


def grade(admin_tools) -> Report:
    report = Report("Lab 11 - a tool provider that checks permissions")
    for case, context, expected in USERS:
        done, names = attempt(report, case, _offered, admin_tools, context)
        if not done:
            if report.failures[-1].note.startswith("not done yet"):
                return report
            continue
        if sorted(names) != sorted(expected):
            extra = sorted(set(names) - set(expected))
            missing = sorted(set(expected) - set(names))
            note = (f"offered {extra} to a user who may not use them" if extra
                    else f"did not offer {missing}")
            report.fail(case, note, sorted(expected), sorted(names))
        else:
            report.ok(case)
    _refusal(report, admin_tools, "bob", should_run=False)
    _refusal(report, admin_tools, "alice", should_run=True)
    return report


hints = Hints([
    "A provider receives a ToolRequest. The user is in request.context.user, but request.context "
    "may be None, and context.user may be None too. Look the user up in ROLES (a missing user has "
    "no roles) and return a list of tools, or None to offer nothing extra.",
    "Build the list from the roles: delete_user needs 'admin'; reset_password needs 'admin' or "
    "'support'. `roles = ROLES.get(user, set())` handles unknown users; "
    "`user = request.context.user if request.context else None` handles a missing context.",
    "roles = ROLES.get(user, set()); tools = []; if 'admin' in roles: tools.append(delete_user); "
    "if roles & {'admin', 'support'}: tools.append(reset_password); return tools or None. You do "
    "not need to refuse calls yourself: the loop runs only the tools offered this turn.",
])
