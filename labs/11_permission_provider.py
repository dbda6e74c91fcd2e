# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lab 11 — A tool provider that checks permissions
#
# Goes with lesson 11 (`lessons/11_many_tools.py`).
#
# An order-service assistant offers `get_order_status` (the demo tool of `toolkit/demo_tools.py`)
# to everyone. Two more tools are
# dangerous and must be offered only to staff:
#
# | tool | who may use it |
# |---|---|
# | `delete_user` | users with the role `admin` |
# | `reset_password` | users with the role `admin` or `support` |
#
# The roles are in the table `ROLES` below (a user who is not in it has no roles). Who is asking
# arrives with each request in its invocation context, `request.context.user` — never from the
# model, which cannot be trusted to say who the user is.
#
# Write two functions:
#
# 1. The tool provider `admin_tools(request)`: given a `ToolRequest`, return the extra tools
#    this user may use (a list of the tool objects below), or `None` for none. Be careful: a
#    request may come without a context, and a context without a user.
# 2. `run_call(call, request, provider)`, the other half of a permission: a model can *name* a
#    tool it was not offered (it saw it earlier, or invents it). Run the call (`tool.invoke(
#    call.arguments)`, then `render_result`) only if `tools_for_turn(STATIC, [provider], request)`
#    offers that tool for this request. Otherwise return a refusal, worded **exactly** as for a
#    tool that does not exist at all (only the name differs), so that the model cannot learn
#    that other users have it. A refusal follows the rule for every error text sent to a model
#    (the same in every lab and in the toolkit's `toolkit/errors_for_model.py`): it starts with
#    `"Error: "` (capital E, colon, space) and says what to do next.
#
# The grader checks what your provider offers to seven users, then calls your `run_call`, with
# your provider, for calls the user may and may not make — Bob naming `delete_user` among them —
# and checks that `delete_user` really did not run. Then it makes up four users as it grades,
# adds them to `ROLES` while it grades (with other roles, one left out of the table) and has them
# name tools for other accounts: look the roles up in `ROLES`, never write the users out. The
# report shows the seed; `grade(admin_tools, run_call, seed=...)` gives the same users again.

# %%
from labs.grading import NotDoneYet
from labs.graders.permission_provider import ROLES, STATIC, delete_user, get_order_status, reset_password
from toolkit.messages import ToolCall
from toolkit.schema import InvocationContext
from toolkit.tools import ToolRequest, render_result, tools_for_turn

print("roles:", ROLES)
print("offered to everyone:", STATIC.names)


# %% tags=["exercise"]
def admin_tools(request: ToolRequest):
    """The staff tools this request's user may use: a list of tools, or None."""
    raise NotDoneYet


def run_call(call: ToolCall, request: ToolRequest, provider) -> str:
    """The result text of the call if ``provider`` offers its tool for this request; else the
    same refusal as for a tool that does not exist."""
    raise NotDoneYet


# %% [markdown]
# Try it: what does each user get? (`tools_for_turn` is what the loop calls at the start of a
# turn: the static tools plus every provider's.)

# %%
for user in ("alice", "dave", "bob"):
    request = ToolRequest("Please delete the account u-42", context=InvocationContext(user=user))
    try:
        print(f"{user:<6}", tools_for_turn(STATIC, [admin_tools], request).names)
        print(f"{'':<6} names delete_user ->", run_call(ToolCall("call_1", "delete_user", '{"user_id": "u-42"}'),
                                                       request, admin_tools))
    except NotDoneYet:
        print("not done yet: write admin_tools and run_call above, then run this cell again")
        break

# %% [markdown]
# ## Grade

# %%
from labs.graders.permission_provider import grade, hints

report = grade(admin_tools, run_call)
report

# %% [markdown]
# Hiding a tool and refusing it are both needed: your `run_call` is the refusal half. The
# toolkit's loop does the same inside `run_turn(..., providers=[...])`: it runs only the tools
# offered *this turn*, and labels a withheld one `not_offered` in its records, while the model
# reads the same text as for a tool that does not exist (lesson 11, section 2).
#
# ## Hints

# %%
hints.next()

# %%
hints.next()

# %%
hints.next()
