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
# # Lab 15 — Compare two worlds by their state
#
# Goes with lesson 15 (`lessons/15_conversations_that_change_state.py`).
#
# BFCL judges a multi-turn conversation by the world the model leaves behind: after each turn
# it runs the answer's calls on fresh instances of the same API classes and compares every
# *public* attribute of the two. Write that comparison.
#
# `state_differences(made, wanted)` gets two worlds, each a dict from a class name to an
# instance (`{"Lamp": <Lamp>, "Shelf": <Shelf>}`, the same names in both): `made` is what the
# model's calls left, `wanted` what the answer's calls left. Return a **sorted list** of
# `"ClassName.attribute"` strings, one for each public attribute that:
#
# - holds a different value in the two worlds (compare values with `==`: two lists built apart
#   are equal, and some values are objects that define `__eq__`, as BFCL's folders do);
# - or exists in only one of the two (a call may have created it).
#
# Attributes whose name starts with `_` are private: never report them, whatever they hold.
# Return `[]` when the two worlds are the same.

# %%
from labs.grading import NotDoneYet


# %% tags=["exercise"]
def state_differences(made: dict, wanted: dict) -> list[str]:
    """'Class.attribute' for each public attribute that differs between the two worlds; sorted."""
    raise NotDoneYet


# %% [markdown]
# Try it on the pantry of the lesson: the model added 2 apples where the user asked for 3.

# %%
class Pantry:
    def __init__(self):
        self.items = {"rice": 2}
        self._log = []


made, wanted = Pantry(), Pantry()
made.items["apples"], wanted.items["apples"] = 2, 3
made._log.append("add 2 apples")
try:
    print(state_differences({"Pantry": made}, {"Pantry": wanted}))
except NotDoneYet:
    print("not done yet: write state_differences above, then run this cell again")

# %% [markdown]
# ## Grade
#
# Nine worlds you can read in the grader, and six it makes up as it grades: API classes with
# new names and attributes of every kind, a trajectory of calls run on one instance and a
# changed trajectory (a call dropped, a value changed, two calls swapped, a call that touches
# only private state) on another. For each failure the grader says which attribute you did not
# report, or reported without cause. `grade(state_differences, seed=...)` makes the same APIs
# again.

# %%
from labs.graders.state_check import grade, hints

report = grade(state_differences)
report

# %% [markdown]
# ## Hints
#
# Each cell reveals one more hint, from a gentle nudge to nearly the answer.

# %%
hints.next()

# %%
hints.next()

# %%
hints.next()
