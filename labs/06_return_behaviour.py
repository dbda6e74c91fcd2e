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
# # Lab 06c — Return behaviour: straight to the user, or back to the model
#
# Goes with lesson 6 (`lessons/06_the_loop.py`, section 4).
#
# Most results go back to the model, which turns them into an answer. Some results *are* the
# answer: a report export returns a download link, and asking the model to "summarise" it only
# risks a mangled URL and costs another request. A tool says which kind it is with its
# `return_behavior`:
#
# | `return_behavior` | the result goes |
# |---|---|
# | `"to_model"` (default) | back to the model |
# | `"immediate"` | straight to the user; the model is not asked again |
# | `"immediate_if_last"` | straight to the user when it is the *last* call of the round; otherwise back to the model |
#
# Write `run_round(calls, tools_by_name)`, the step of the loop that runs the calls of one reply
# and decides where the round's results go. Return a tuple `(results, direct, value)`:
#
# 1. `results`: one tool message per call, **in the calls' order**, each
#    `tool_result(execution.call_id, execution.result_text)`. Every call gets one, even when the
#    turn ends here: the history must hold a result for every call, or the next turn's request
#    is refused.
# 2. `direct`: `True` when the turn ends with a tool's result, by this rule:
#    - never when a call of the round failed (`execution.ok` is false: an unknown tool, bad
#      arguments, a tool that raised). The model reads the short error and can try again; the
#      user must never get an error, or nothing, instead of an answer;
#    - otherwise yes when the **last** call's tool is `"immediate_if_last"`;
#    - otherwise only when **every** call's tool is `"immediate"` or `"immediate_if_last"`. A
#      round that mixes an `"immediate"` tool with a `"to_model"` one goes back to the model,
#      which still needs the other result.
# 3. `value`: when `direct`, the **last** call's own value (`execution.value`, as the tool
#    returned it: a dict stays a dict), else `None`.
#
# `execute(call, tools_by_name)` (given) runs one call with the toolkit's executor and never
# raises. Its record has `.ok`, `.value`, `.result_text` (the text for the model: the rendered
# value, or a short sanitised error starting with `"Error: "`), `.return_behavior` (of the tool
# that ran; `None` for a tool that does not exist) and `.error_detail` (the full story with its
# traceback: for logs, never for the model or the user).
#
# The grader runs your step inside a small loop (`run_turn_with_round`, given below) against the
# **scripted fake model**: its replies are written by hand, so each combination of tools in one
# reply is exact. Nothing here measures a model.

# %%
from labs.grading import NotDoneYet
from labs.graders.return_behaviour import TOOLS_BY_NAME, execute, run_turn_with_round
from toolkit import fake
from toolkit.display import show
from toolkit.messages import ToolCall, tool_result

for name, each in TOOLS_BY_NAME.items():
    print(f"{name:<15} return_behavior={each.return_behavior}")

# %% [markdown]
# What `execute` gives back, for a call that works and for one that fails (customer C-9999's
# export hits a broken disk, and the exception names a server path):

# %%
for call in (ToolCall("call_1", "export_report", '{"customer_id": "C-1024", "month": "2025-05"}'),
             ToolCall("call_2", "export_report", '{"customer_id": "C-9999", "month": "2025-05"}')):
    record = execute(call, TOOLS_BY_NAME)
    show({"ok": record.ok, "value": record.value, "result_text": record.result_text,
          "return_behavior": record.return_behavior})

# %% tags=["exercise"]
def run_round(calls: list[ToolCall], tools_by_name: dict):
    """Run one reply's calls; return (tool messages, whether the turn ends here, the user's value)."""
    raise NotDoneYet

# %% [markdown]
# ## Try it
#
# Three scripted rounds: the export alone, a ticket after the weather (`immediate_if_last` in
# last place), and the export next to the weather. Each script queues one reply with calls and
# one answer; a turn that ends directly never reads the answer.

# %%
rounds = {
    "export_report alone": [fake.call("export_report", {"customer_id": "C-1024", "month": "2025-05"})],
    "get_weather, then create_ticket": [fake.call("get_weather", {"city": "Beijing"}),
                                        fake.call("create_ticket", {"summary": "Report for May is empty"})],
    "export_report, then get_weather": [fake.call("export_report", {"customer_id": "C-1024", "month": "2025-05"}),
                                        fake.call("get_weather", {"city": "Beijing"})],
}
try:
    for label, calls in rounds.items():
        model = fake.ScriptedModel([fake.calls(*calls), fake.text("(the model's answer)")])
        # the Chinese: Export C-1024's report for May
        history, stop, shown = run_turn_with_round(model.backend(), [{"role": "user", "content": "导出C-1024五月的报表"}],
                                                   TOOLS_BY_NAME, run_round)
        print(f"{label:<33} stop={stop:<10} requests={len(model.requests)}  the user gets: {shown}")
except NotDoneYet:
    print("not done yet: write run_round above, then run this cell again")

# %% [markdown]
# ## Grade
#
# Thirteen public rounds, then six the grader makes up as it grades: up to four calls in any
# order, with new customers, months, cities, ids and failures. The report shows their seed;
# `grade(run_round, seed=...)` gives the same ones again.

# %%
from labs.graders.return_behaviour import grade, hints

report = grade(run_round)
report

# %% [markdown]
# When it passes, compare with `toolkit.loop.returns_directly` and `run_turn`: the same rule,
# and `TurnResult.immediate_result` is the value you returned here.
#
# ## Hints

# %%
hints.next()

# %%
hints.next()

# %%
hints.next()
