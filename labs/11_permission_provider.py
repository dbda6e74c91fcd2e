# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
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
# An order-service assistant offers `get_order_status` to everyone. Two more tools are
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
# Write the tool provider `admin_tools(request)`: given a `ToolRequest`, return the extra tools
# this user may use (a list of the tool objects below), or `None` for none. Be careful: a
# request may come without a context, and a context without a user.
#
# The grader checks what is offered to seven users, and then what happens when a scripted
# model names `delete_user` for a user who was not offered it.

# %%
from labs.grading import NotDoneYet
from labs.graders.permission_provider import ROLES, STATIC, delete_user, get_order_status, reset_password
from toolkit.schema import InvocationContext
from toolkit.tools import ToolRequest, tools_for_turn

print("roles:", ROLES)
print("offered to everyone:", STATIC.names)


# %% tags=["exercise"]
def admin_tools(request: ToolRequest):
    """The staff tools this request's user may use: a list of tools, or None."""
    raise NotDoneYet


# %% [markdown]
# Try it: what does each user get? (`tools_for_turn` is what the loop calls at the start of a
# turn: the static tools plus every provider's.)

# %%
for user in ("alice", "dave", "bob"):
    request = ToolRequest("Please delete the account u-42", context=InvocationContext(user=user))
    try:
        print(f"{user:<6}", tools_for_turn(STATIC, [admin_tools], request).names)
    except NotDoneYet:
        print("not done yet: write admin_tools above, then run this cell again")
        break

# %% [markdown]
# ## Grade

# %%
from labs.graders.permission_provider import grade, hints

report = grade(admin_tools)
report

# %% [markdown]
# Look at the two last cases: the scripted model asks for `delete_user` whether or not it was
# offered. For Bob the loop refuses (`not_offered`) and `delete_user` never runs, because the
# loop only runs tools offered *this turn* — hiding a tool and refusing it are both needed.
#
# ## Hints

# %%
hints.next()

# %%
hints.next()

# %%
hints.next()
