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
# # Lesson 1 — The model only writes text
#
# *The course's terms are defined, each with the lesson that teaches it, in the [glossary](../docs/glossary.md).*
#
# When a chat API replies with "call `get_weather` with `{"city": "Beijing"}`", it is easy to
# picture the model reaching out and running a function. It does nothing of the kind. A
# language model reads one string and writes the next piece of that string. Everything else —
# noticing that the text asks for a function, finding that function, running it, sending the
# result back — is ordinary code on *our* side.
#
# This lesson makes that concrete with the smallest model there is in this lab and a few lines
# of Python.
#
# ## What you will learn
#
# - what goes to a model and what comes back: text in, text out, over plain HTTP;
# - the three stages of every tool call: the model **decides** whether to call, the model
#   **generates the arguments** as text, and **our code executes** the function;
# - that "the model called a tool" really means "our code read the model's text and ran a
#   function" — and therefore that our code, not the model, decides what may run.
#
# The model is the embedded **SmolLM2-135M-Instruct**: tiny, fast enough for a laptop, and
# never trained on tool calling. It gets things wrong, and that is useful here: you will see
# exactly which stage went wrong. To point this notebook at a stronger model, set
# `LAB_BASE_URL`, `LAB_MODEL` and `LAB_API_KEY` before starting Jupyter; no code changes.

# %%
import json
import math
import re

from toolkit.client import connect
from toolkit.display import show  # prints JSON the way it travels, cut if it is long


backend = connect(capture=True)  # capture=True keeps every HTTP request and reply for us to read
print("talking to:", backend.label, "at", backend.base_url)

# %% [markdown]
# ## 1. Text in, text out
#
# Ask a plain question. `backend.chat(...)` is the official `openai` client's
# `chat.completions.create` with the model filled in; the embedded model sits behind a local
# HTTP endpoint that speaks the same protocol as OpenAI's.

# %%
question = "What is the square root of 144?"
reply = backend.chat(messages=[{"role": "user", "content": question}], max_tokens=40, temperature=0)
answer = reply.choices[0].message.content
print(type(answer).__name__, "->", repr(answer))

# %% [markdown]
# That is the whole product of a language model: a string. Here is the HTTP exchange as it
# went over the wire — a JSON request with our messages, a JSON reply with one message whose
# `content` is text.

# %%
exchange = backend.last_exchange()
print("POST", exchange.url)
show(exchange.request)
print()
show(exchange.response)

# %% [markdown]
# Even the "messages" are a convenience of the API. Before the model sees them, the server
# pastes them into **one** string with a chat template, and the model continues that string.
# This lab's server does it in `toolkit/engine/template.py` (lesson 13 takes it apart):

# %%
from toolkit.engine.template import render_prompt

print(render_prompt([{"role": "user", "content": question}], tools=None))

# %% [markdown]
# The model writes whatever tokens are likely after `<|im_start|>assistant`. Whether they form
# a correct answer is a separate question. Let us check the number in the reply against
# Python's `math.sqrt` (the check is computed, so it holds whatever the model wrote this time):

# %%
def numbers_in(text: str) -> list[float]:
    return [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", text or "")]


truth = math.sqrt(144)
claimed = [n for n in numbers_in(answer) if n != 144]  # ignore the 144 it repeats from the question
print("numbers the model wrote (besides 144):", claimed)
print(f"does the reply contain the right value {truth:g}?", any(abs(n - truth) < 1e-9 for n in claimed))

# %% [markdown]
# A model predicts plausible text; it does not compute. A 135-million-parameter model often
# gets even this wrong; far larger models get most arithmetic right but still cannot *know*
# today's weather in Beijing or the status of order 1024. That is what tools are for: let
# code do what code is good at.
#
# ## 2. The three stages of a tool call
#
# We agree on a format with the model, in plain words: "if you need a square root, write
# `CALL square_root(NUMBER)` and nothing else". Small models follow a format much better when they
# see it used once, so the conversation starts with one worked example (a question and the
# reply we want).

# %%
SYSTEM = (
    "You have a calculator. When a question needs a square root, do not compute it yourself: "
    "reply with one line\nCALL square_root(NUMBER)\nand nothing else. The result will be sent back to you."
)
EXAMPLE = [
    {"role": "user", "content": "What is the square root of 81?"},
    {"role": "assistant", "content": "CALL square_root(81)"},
]


def ask(question: str, with_example: bool = True, **options) -> str:
    messages = [{"role": "system", "content": SYSTEM}, *(EXAMPLE if with_example else []),
                {"role": "user", "content": question}]
    options = {"max_tokens": 30, "temperature": 0, **options}
    return backend.chat(messages=messages, **options).choices[0].message.content or ""


reply_text = ask("What is the square root of 144?")
print(repr(reply_text))

# %% [markdown]
# Whatever came back is, again, only text. Now the three stages, each in its own small step:
#
# 1. **Decide** — did the model choose to call a tool at all? (Is there a `CALL` line?)
# 2. **Generate arguments** — what did it write between the parentheses?
# 3. **Execute** — *our* code looks the name up in a table of functions we allow, and runs it.

# %%
CALL_LINE = re.compile(r"CALL\s+([A-Za-z_][\w.]*)\s*\(([^)]*)\)")
ALLOWED = {"square_root": math.sqrt}  # the only functions our code is willing to run


def three_stages(text: str) -> None:
    found = CALL_LINE.search(text)
    print("1. decide:    ", "the text asks for a call" if found else "no call: the text is an answer")
    if not found:
        return
    name, raw_argument = found.group(1), found.group(2)
    print("2. arguments: ", f"name={name!r}, argument text={raw_argument!r}")
    if name not in ALLOWED:
        print("3. execute:    refused -", name, "is not in our table of allowed functions")
        return
    try:
        value = float(raw_argument)
    except ValueError:
        print("3. execute:    refused - the argument is not a number")
        return
    print("3. execute:   ", f"our code ran {name}({value:g}) = {ALLOWED[name](value):g}")


three_stages(reply_text)

# %% [markdown]
# Look at where each stage happened. Stages 1 and 2 are text the model wrote. Stage 3 is
# `ALLOWED[name](value)` — a line of Python in this notebook. The model never saw the function
# and could not have run it.
#
# ## 3. "Calling a tool" is our code reading text
#
# The function `three_stages` cannot tell who wrote the text. Hand it strings typed here and it
# does the same thing: it runs what is allowed and refuses the rest.

# %%
for typed_by_hand in [
    "CALL square_root(2)",               # a well-formed call
    "Sure! CALL square_root(10000) - one moment",  # a call with chatter around it
    "CALL os.remove(/etc/passwd)",       # a name we never offered
    "CALL square_root(twelve)",          # an argument that is not a number
    "The square root of 49 is 7.",       # no call at all
]:
    print(repr(typed_by_hand))
    three_stages(typed_by_hand)
    print()

# %% [markdown]
# This is the most important safety fact of tool calling: the model can *write* any function
# name, but only the names your code maps to real functions can *run*. The table `ALLOWED` is
# the boundary.
#
# And a function could not travel to the model even if we wanted it to: a request body is
# JSON, and JSON has no place for code.

# %%
try:
    json.dumps({"tools": [math.sqrt]})
except TypeError as error:
    print("TypeError:", error)

sent = json.dumps(backend.last_exchange().request, ensure_ascii=False)
print(f"the last request body is {len(sent)} characters of JSON;",
      f"'square_root' appears in it {sent.count('square_root')} times, each time as letters inside a message")

# %% [markdown]
# ## 4. Change it and observe
#
# Each cell below changes one thing and computes what happened; read the printed result, not
# a prediction.
#
# **(a) Remove the worked example.** Same system prompt, same question, no example exchange.
# Does the model still write a `CALL` line?

# %%
for with_example in (True, False):
    text = ask("What is the square root of 144?", with_example=with_example)
    print(f"with example={with_example!s:5}  call written: {bool(CALL_LINE.search(text))!s:5}  reply: {text!r}")

# %% [markdown]
# **(b) Change the question**: one that needs no square root (a joke), and the square-root
# question asked in Chinese, a language the worked example does not use. Stage 1, the decision,
# is the model's: does it write a call where none is needed, and one where it is?

# %%
for question in ["Tell me a joke about cats.", "100的平方根是多少？"]:  # What is the square root of 100?
    text = ask(question)
    print(question, "->", repr(text))
    three_stages(text)
    print()

# %% [markdown]
# On this run neither question got a call. For the joke that is right. For the square root in
# Chinese it is wrong: the model answered by itself, and wrongly (`100 * 100 = 1000`). One
# worked example in English did not carry over to the same question in another language.
#
# **(c) Sample instead of taking the most likely token.** With `temperature=1` the model draws
# each token at random from its distribution; different seeds can give different texts, and
# so different decisions. This is why tool-calling code sets the temperature low and still
# checks every reply.

# %%
samples = [ask("What is the square root of 144?", temperature=1.0, seed=seed) for seed in (1, 2, 3)]
for seed, text in zip((1, 2, 3), samples):
    print(f"seed {seed}: call written: {bool(CALL_LINE.search(text))!s:5}  {text!r}")
print("distinct replies:", len(set(samples)), "of", len(samples))

# %% [markdown]
# ## Other frameworks
#
# The three stages hold in every framework: the model only writes a proposal, and the
# framework's code runs it in your process. **LangChain**'s `@tool` and `bind_tools`, the
# **OpenAI Agents SDK**'s `@function_tool`, **pydantic-ai**'s `@agent.tool` and **LangChain4j**'s
# `@Tool` (Java) all describe functions to the model and run them for it; none lets the model
# execute anything itself.

# %% [markdown]
# ## Summary
#
# - A model receives one string (the chat template joins the messages) and writes text back.
#   Nothing else comes out of it.
# - A tool call has three stages: the model **decides** to call, the model **writes the
#   arguments** as text, and **your code executes**. The first two can go wrong in the
#   model; the third is entirely yours.
# - Your code cannot tell who wrote a call and should not need to: it runs only the functions
#   it has chosen to offer and checks the arguments before running anything.
# - The 135M model used here makes mistakes often, which makes the stages easy to see. In this
#   lesson they were all at stage 1, a call not written where one was needed; every call it
#   did write had the right argument. A stronger model makes fewer mistakes at stages 1 and 2;
#   stage 3 does not change.
#
# `CALL square_root(144)` was an ad-hoc format. Lesson 2 turns it into a real protocol —
# `<tool>{json}</tool>` — and deals with the many ways a model drifts from it.
#
# Lab: open `labs/01_read_and_run.ipynb` (its script is `labs/01_read_and_run.py`): read a
# reply, refuse unknown functions, run the rest.
