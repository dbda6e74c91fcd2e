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
# # Lab 15 — Capstone: an agent of your own
#
# Comes after the last lesson and draws on all of them: tools and schemas (lessons 4 and 5), the
# loop (6), `tool_choice` (7), errors (9), descriptions (10) and offering only some tools (11).
#
# Build a small shop assistant on the embedded model, SmolLM2-135M, and make it pass conversations
# it has never seen. Two pieces:
#
# 1. `shop_tools(shop)` returns **three or four tools** of your own, as toolkit `Tool`s: write the
#    functions with the `@tool` decorator (the schema comes from the signature and docstring) or
#    write the spec by hand with `Tool.from_spec(spec, executor)`; both are allowed. They read a
#    `shop` the grader hands you, which has three methods and returns `None` when it has nothing:
#    - `shop.order_status(order_id)`: `"shipped"`, `"delivered"`, ... (ids look like `A1001`:
#      a capital letter and four digits);
#    - `shop.weather(city)`: `{"condition": "rainy", "celsius": 14}` (one-word city names);
#    - `shop.stock(product)`: a number of units (products are one or two lower-case words).
#
#    What a tool returns is what the model reads: make it a short sentence the model can repeat,
#    and when the shop has nothing, say that nothing was found.
# 2. `run_agent(backend, question, tools)` runs one conversation and **returns its messages**,
#    ending with the model's answer (a `role: "assistant"` message with text). Use the lab's loop,
#    `toolkit.loop.run_turn` (its result's `.messages`), or a loop of your own (lab 6a); a system
#    prompt, `tool_choice`, which tools to offer for which question: all yours.
#
# The grader makes up a shop and seven questions while it grades (the ids, cities, products and
# values are new each time; the report shows the seed, and `grade(..., seed=N)` repeats one):
#
# - **three answers**: the right tool is called with the right argument, its result goes back to
#   the model, and the model's answer states the value the shop holds;
# - **two refusals**: a question none of the tools can answer gets no call and a text reply;
# - **two "not found"s**: the shop has no such order, city or product; the tool's result says so,
#   and so does the answer, with no value made up.
#
# Every request goes through a recording client at temperature 0 with seed 0 (so a grading repeats)
# and at most 200 tokens; `stream=True` is refused, and so are `extra_body` and `response_format`
# (a grammar or a schema there would make the model write text your code chose). The grader judges
# from that traffic and from the shop's side, never from your tool names or exact words. So the
# model must do the model's part: an answer your code wrote, a lookup the model did not ask for,
# or an answer asked for without the result in the messages each fail, saying at which step.
# Grading takes well under two minutes on two cores.
#
# **How it is marked.** Each failure is either your agent's fault or the model's slip:
#
# - a **fault** is a step your code owns: never asking the model, returning an answer the model
#   did not write, running a call the model did not ask for, not sending a result back, asking for
#   the answer without the result. One fault fails the grading;
# - a **slip** is the model's own choice going wrong although your agent did its part: the wrong
#   tool or argument, a call for a question no tool answers, an answer that leaves out the value or
#   does not say that nothing was found. A 135M model slips now and then whatever you build, so a
#   grading passes with **up to three slips**, as long as each kind of conversation (answer,
#   refusal, not found) passed in full at least once.
#
# The allowance was set from the lab's own reference agent (`labs/solutions/capstone_agent.py`),
# graded on 70 seeds, and then measured on 40 seeds it was never tried on (3000 to 3039): it
# passed 36 of the 40 gradings, 230 of the 280 conversations, with no fault; none had more than
# three slips, and the four it failed had both "not found"s wrong.
# Fewer slips than that is a better agent; the report lists each slip with what the model wrote.
#
# SmolLM2-135M was not trained for tools. Lessons 10 and 11 measured what that means: it picks
# tools by name, is led astray by the others on offer, copies examples from descriptions into its
# arguments, and writes best when it has little to choose. An agent around it has to make its job
# small. The embedded endpoint serves it three ways, `SmolLM2-135M-Instruct` and the tool-tuned
# `SmolLM2-135M-Instruct+tools` and `SmolLM2-135M-Instruct+tools2` (send `model=` in a request);
# any is allowed.

# %%
from typing import Annotated

from pydantic import Field

from labs.graders.capstone_agent import sample_shop
from labs.grading import NotDoneYet
from toolkit.client import connect
from toolkit.loop import run_turn
from toolkit.messages import assistant_from_reply, calls_of, tool_result
from toolkit.retrieval import ToolRetriever
from toolkit.tools import Tool, render_result, tool
from toolkit.trace import format_trace

shop = sample_shop()  # the grader makes up another one
print(shop.order_status("A1001"), shop.weather("Paris"), shop.stock("kettle"), shop.order_status("Z9999"))

# %% tags=["exercise"]
def shop_tools(shop) -> list[Tool]:
    """Three or four tools over the shop."""
    raise NotDoneYet


def run_agent(backend, question: str, tools: list[Tool]) -> list[dict]:
    """One conversation on the model; return its messages, ending with the model's answer."""
    raise NotDoneYet

# %% [markdown]
# Try it on the sample shop: one question of each kind.

# %%
backend = connect()
for question in ["Where is my order A1001?", "What's the weather like in Tokyo?",
                 "Tell me a story about a dragon.", "How many teapots are in stock?"]:
    try:
        messages = run_agent(backend, question, shop_tools(sample_shop()))
        print(f"{question}\n  -> {messages[-1].get('content')!r}")
    except NotDoneYet:
        print("not done yet: write shop_tools and run_agent above, then run this cell again")
        break

# %% [markdown]
# ## Grade
#
# Seven conversations on the embedded model, about ten seconds in all (the reference took 7 s).

# %%
from labs.graders.capstone_agent import grade, hints

report = grade(shop_tools, run_agent)
report

# %% [markdown]
# When it passes, grade it on a few more seeds (`grade(shop_tools, run_agent, seed=N)` for N in
# 0 to 9): how often does it pass, how many slips does it have, and at which step? Fewer slips
# than the reference's (`python benchmarks/capstone_reference.py --seeds 3000-3039` counts them)
# is an agent that makes the model's job smaller still. Then point it at a stronger model
# (`LAB_BASE_URL`, `LAB_MODEL`, `LAB_API_KEY`) and offer every tool on every question: what did
# the small model need that a large one does not?
#
# ## Hints

# %%
hints.next()

# %%
hints.next()

# %%
hints.next()
