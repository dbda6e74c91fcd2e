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
# # Lab 03 — Feed results back, paired by id
#
# Goes with lesson 3 (`lessons/03_feeding_results_back.py`).
#
# Lesson 3 ended with the fix for the multi-turn mess: give every call an id and let its result
# carry the same id. Here you write the two pieces that send results back in the string
# protocol with ids.
#
# **`results_message(calls, finished)`** returns the text of the message that carries the
# results back.
#
# - `calls` is the list of calls in the order the model wrote them, each a dict
#   `{"id": "c1", "name": "square_root", "arguments": {"x": 16}}`.
# - `finished` is a list of `(call_id, result_text)` pairs in the order the tools *finished* —
#   which is not the order of `calls`.
# - Write one block per call, **in the order of `calls`**, joined by `"\n"`:
#
#   ```
#   <tool_result id="c1" name="square_root">
#   4.0
#   </tool_result>
#   ```
#
# - A call with no result (its tool never finished) still gets a block, so the model is not
#   left waiting for it. The block holds an error text, and error texts for the model follow
#   one rule in every lab and in the toolkit: they start with `"Error: "` (capital E, colon,
#   space) and say what failed and what to do next. Here it is exactly
#   `Error: no result. Call the tool again or answer without it.`
#   A result whose id matches no call is left out.
#
# **`add_round(history, reply, calls, finished)`** returns a **new** history: the old messages,
# then the model's `reply` as an `assistant` message, then the results message as a `user`
# message (the string protocol has no other role for it). The caller's `history` list must not
# change.

# %%
from labs.grading import NotDoneYet

# %% tags=["exercise"]
def results_message(calls: list[dict], finished: list[tuple[str, str]]) -> str:
    """One <tool_result id=... name=...> block per call, in call order, paired by id."""
    raise NotDoneYet


def add_round(history: list[dict], reply: str, calls: list[dict],
              finished: list[tuple[str, str]]) -> list[dict]:
    """A new history: history + the reply (assistant) + the results (user)."""
    raise NotDoneYet

# %% [markdown]
# Try it: two square roots that finished in the opposite order.

# %%
calls = [{"id": "c1", "name": "square_root", "arguments": {"x": 16}},
         {"id": "c2", "name": "square_root", "arguments": {"x": 9}}]
try:
    print(results_message(calls, [("c2", "3.0"), ("c1", "4.0")]))
except NotDoneYet:
    print("not done yet: write results_message above, then run this cell again")

# %% [markdown]
# ## Grade
#
# Besides six public rounds, the grader makes up rounds as it grades: new ids, tools, results
# and finishing orders, with calls that never finished and stray results. The report shows their
# seed; `grade(results_message, add_round, seed=...)` gives the same ones again.

# %%
from labs.graders.feed_results_back import grade, hints

report = grade(results_message, add_round)
report

# %% [markdown]
# ## Hints

# %%
print(hints.next())

# %%
print(hints.next())

# %%
print(hints.next())
