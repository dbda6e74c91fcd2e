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
# # Lesson 13 — Under the hood: how a server turns text into `tool_calls`
#
# *The course's terms are defined, each with the lesson that teaches it, in the [glossary](../docs/glossary.md).*
#
# Every lesson so far sent `tools` in a request and got `tool_calls` back, as if the model
# itself spoke JSON. It does not: a language model only continues a string of tokens. A server
# that offers "native" tool calling does three things around the model, and this lab's
# embedded endpoint does them in plain Python that you can open:
#
# | step | module | what it does |
# |---|---|---|
# | template | `toolkit/engine/template.py` | turns messages **and tools** into the one string the model reads |
# | grammar | `toolkit/engine/grammar.py` | limits, token by token, what the model may write |
# | parser | `toolkit/engine/parser.py` | cuts the generated text back into `tool_calls` |
#
# plus `request.py` (checks the request as OpenAI does, HTTP 400 on mistakes), `model.py`
# (loads the weights and ties the steps together) and `toolkit/engine/serve.py` (the HTTP endpoint).
#
# ## What you will learn
#
# - what the prompt looks like once tools are rendered into it, and what it costs in tokens;
# - how a GBNF grammar is built from the tools' JSON Schemas, and what it allows;
# - how to generate with llama-cpp-python directly and parse the result into `tool_calls`;
# - what the grammar changes: without it the text may not parse, with it it always does —
#   which is not the same as being right;
# - how the HTTP endpoint does the very same thing, and why llama-cpp-python's own
#   `chatml-function-calling` handler was not used.

# %%
import inspect
import json
import time

from toolkit.demo_tools import demo_toolset, get_weather
from toolkit.display import show
from toolkit.engine import Engine
from toolkit.engine.grammar import build_gbnf, grammar_for
from toolkit.engine.parser import new_call_id, parse_reply
from toolkit.engine.request import RequestError, parse_request
from toolkit.engine.template import render_prompt
from toolkit.tools import render_result


# %% [markdown]
# ## 1. The request we want to answer
#
# Two of the demo tools that lessons 6-12 use, the weather lookup and the calculator, and one
# question. `specs` is what a request carries in its `tools` field: the JSON Schemas below are
# generated from the functions' signatures and docstrings (lesson 5).

# %%
tools = demo_toolset(["get_weather", "calculate"])  # toolkit/demo_tools.py, as in lessons 6-12
specs = tools.specs()  # what a request carries in its "tools" field
messages = [{"role": "user", "content": "What is the weather in Beijing?"}]

# %% [markdown]
# ## 2. The template: messages and tools become one string
#
# SmolLM2 was trained on ChatML turns (`<|im_start|>role ... <|im_end|>`). Its own chat
# template has no place for tools, so `render_prompt` adds a `# Tools` section to the system
# turn (as tool-trained models such as Qwen and Hermes see it), and ends with an open
# assistant turn for the model to continue. This string is **everything** the model knows
# about your tools.

# %%
prompt = render_prompt(messages, specs)
print(prompt)

# %% [markdown]
# The tool descriptions are not free: they are read as prompt tokens on every request.
# Count them with the model's own tokenizer (the engine loads in well under a second).

# %%
started = time.perf_counter()
engine = Engine()
print(f"engine loaded in {time.perf_counter() - started:.2f} s")

tokens = engine.llm.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)
bare = engine.llm.tokenize(render_prompt(messages, None).encode("utf-8"), add_bos=False, special=True)
print(f"prompt with tools:    {len(tokens)} tokens")
print(f"prompt without tools: {len(bare)} tokens")
print(f"the two tools cost {len(tokens) - len(bare)} tokens per request")

# %% [markdown]
# **Change it and observe.** How does a finished round look to the model? Add the assistant's
# call and the tool's result to the history and render again: the result comes back as a
# `tool` turn, tied to its call by the id.

# %%
history = messages + [
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Beijing"}'}}]},
    {"role": "tool", "tool_call_id": "call_1",
     "content": render_result(get_weather.invoke({"city": "Beijing"}))},
]
rendered = render_prompt(history, specs)
print(rendered[rendered.index("<|im_start|>user"):])

# %% [markdown]
# ## 3. The grammar: what the model is allowed to write
#
# You met a grammar in lesson 4: llama.cpp masks, at every step, each token that would break
# it. Here is how the engine builds one for any set of tools: llama-cpp-python's JSON-Schema
# converter turns each tool's `parameters` into rules, and a few rules of our own wrap them in
# `<tool_call> ... </tool_call>` blocks. `tool_choice` picks the root rule:
#
# - `"auto"`: `root ::= calls | text` (the model may also answer in prose);
# - `"required"` or a named function: `root ::= calls`;
# - `"none"`: no grammar at all, and no tools in the prompt.
#
# Masking "each token that would break it" means checking the whole vocabulary, 49,152 tokens,
# at every step, and that costs several milliseconds on two cores. Yet at temperature 0 only the
# likeliest allowed token can be picked, and above it only those close to it. So the engine
# (`toolkit/engine/grammar_sampling.py`) shows the grammar the likeliest tokens first and stops
# as soon as no token further down could be picked. The same tokens come out; a call is written
# in about two thirds of the time (`python benchmarks/grammar_sampling.py`).

# %%
gbnf_required = build_gbnf(specs, "required", parallel=False)
rules = gbnf_required.splitlines()
print(f"{len(rules)} rules; the ones that fix the shape of a call:\n")
for rule in rules:
    if rule.startswith(("root", "calls", "call ", "call-0", "call-1")):
        print(rule)

# %% [markdown]
# `call-0-name ::= "\"get_weather\""` means the model cannot misspell a tool name, and
# `call-0-arguments-unit ::= "\"celsius\"" | "\"fahrenheit\""` means `unit` can only be one of
# the two values of its `enum`; the `( "," ... )?` around it lets the model leave the optional
# `unit` out.
# What does `"auto"` add? Compute the difference:

# %%
gbnf_auto = build_gbnf(specs, "auto", parallel=True)
print("only in 'auto' (parallel):")
for rule in sorted(set(gbnf_auto.splitlines()) - set(rules)):
    print("  ", rule)


# %% [markdown]
# `text ::= [^<\x00] ...` is a small trick: prose may not start with `<`, so once the model
# writes `<` it is committed to a call block, and the parser can tell the two apart from the
# first character.
#
# ## 4. Generate with the grammar, by hand
#
# Now do what the server does, step by step: tokens in, grammar on, text out, then parse.
# `tool_choice="required"` here, so the grammar only allows call blocks.

# %%
def generate(prompt_tokens, grammar=None, max_tokens=None):
    # A call block needs about 40 tokens ("<tool_call>" alone is 5); the grammar ends it there.
    # Without a grammar, 24 tokens are enough to see whether the text starts like a call.
    max_tokens = max_tokens or (60 if grammar else 24)
    started = time.perf_counter()
    result = engine.llm.create_completion(prompt=prompt_tokens, grammar=grammar, max_tokens=max_tokens,
                                          temperature=0, seed=0)
    return result["choices"][0]["text"], time.perf_counter() - started


with_grammar, seconds = generate(tokens, grammar_for(specs, "required", False))
print(f"raw text ({seconds:.1f} s):\n{with_grammar}")

# %%
content, calls = parse_reply(with_grammar)
assert calls, "the grammar only allows call blocks, so the parser must find one"
message = {"role": "assistant", "content": content, "tool_calls": [
    {"id": new_call_id(), "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
    for c in calls]}
show(message)
json.loads(message["tool_calls"][0]["function"]["arguments"])  # always valid JSON

# %% [markdown]
# That dict is exactly the `message` of a chat-completions reply: an `id` the server made up,
# the `name`, and `arguments` as a JSON **string** holding the text the model wrote. Look at
# the arguments closely: the grammar guarantees their *shape*; the content is the model's own,
# and here the 135M model wrote `B Beijing` for the city it was just asked about (lesson 2
# explains that spelling).
#
# ## 5. The same prompt without the grammar
#
# The model was not trained on tool calling. Without the grammar, nothing forces it into the
# format the template described.

# %%
without_grammar, seconds = generate(tokens, grammar=None)
content, calls = parse_reply(without_grammar)
print(f"raw text ({seconds:.1f} s):\n{without_grammar}\n")
print(f"the parser found {len(calls)} call(s)")

# %% [markdown]
# **Change it and observe.** Two more questions, one in Chinese, each generated with and
# without the grammar. The table is computed from what this model wrote just now; read it
# with the caveat that a 135M model's picks are unreliable and do not follow the descriptions.

# %%
questions = ["What is the square root of 144?", "上海现在天气怎么样？"]  # How is the weather in Shanghai right now?
required = grammar_for(specs, "required", False)
print(f"{'question':<34}{'grammar':<9}{'parses':<8}{'tool':<14}arguments")
for question in questions:
    question_tokens = engine.llm.tokenize(
        render_prompt([{"role": "user", "content": question}], specs).encode("utf-8"), add_bos=False, special=True)
    for grammar in (required, None):
        text, _ = generate(question_tokens, grammar)
        _, found = parse_reply(text)
        tool = found[0].name if found else "-"
        arguments = found[0].arguments if found else repr(text[:30])
        print(f"{question:<34}{'on' if grammar else 'off':<9}{'yes' if found else 'no':<8}{tool:<14}{arguments}")

# %% [markdown]
# With the grammar on, every row parses, because nothing else could be generated. Whether the
# tool and the arguments are *right* is a separate question, and for this model the answer is
# often no: the grammar turns a model that cannot call tools into one that calls them in the
# right shape, not one that calls the right tool. Lesson 10 measures exactly that.
#
# ## 6. Two decisions, taken by likelihood
#
# A grammar says what *may* come next; at a fork it leaves the choice to the model, one token
# at a time. Two forks matter, and token by token a small model takes both badly:
#
# - **Call or text?** Under `"auto"` the grammar above allows either. The model's likeliest
#   *first* token is nearly always a word ("The", "You"), so it answers in prose, even though
#   once it has written `<` it goes on with `tool_call>` almost surely.
# - **Another call, or stop?** After `</tool_call>` its likeliest token is a newline, and the
#   parallel grammar then allows nothing but another call: it repeats its call until
#   `max_tokens` runs out, although ending the reply was likelier than a whole second call.
#
# So the engine (`toolkit/engine/reply.py`) writes a reply in steps and asks the model about
# each option **as a whole** (`toolkit/engine/decide.py`): it opens a call when
# log P(`<tool_call>\n`) clears a threshold, and writes another call only when
# log P(another call) beats log P(end of reply). The threshold was fitted on the lab's own
# synthetic questions (`python -m scripts.calibrate_decisions`), never on the suite or BFCL.
# A later call that repeats an earlier one in the same reply, or carries no value from the
# user's message that the earlier calls left out, is dropped and ends the reply.
#
# The whole fork, from a request's `tool_choice` to the reply. First the engine decides call
# or text; only then does a grammar constrain what the model writes:
#
# ```mermaid
# flowchart TD
#     req["request: messages, tools, tool_choice"] --> modes{"parse_request: tool_choice becomes a mode"}
#     modes -- "none, or no tools" --> textreply
#     modes -- "required" --> opening
#     modes -- "a named function: required, with that one tool" --> opening
#     modes -- "auto, the default with tools" --> decidecall{"decide.opens_call: log P(call opening) above the threshold? (a threshold of its own after tool results)"}
#     decidecall -- "yes" --> opening
#     decidecall -- "no" --> textreply
#     opening["the engine writes the call opening itself"] --> callwrite["the model writes the call under the call grammar: only the offered names, each one's parameters and enums"]
#     callwrite --> repeats{"a repeat of a call answered earlier, or a later call with nothing new?"}
#     repeats -- "the first call repeats an answered one, under auto" --> textreply
#     repeats -- "otherwise: dropped" --> callsreply
#     repeats -- "no" --> anothercall{"parallel calls allowed, and log P(another call) beats log P(end)?"}
#     anothercall -- "yes" --> opening
#     anothercall -- "no" --> callsreply(["reply: the calls kept, as tool_calls, content null"])
#     textreply["text, under the markup ban: no call block, no role markers"] --> answerreply(["reply: content, no tool_calls"])
# ```
#
# Under `"required"` the model has no say in whether it calls, only in which tool and what
# arguments; under `"none"` it has no say either, and the tools are not even in the prompt.
#
# Ask the model directly, on a question that needs a tool and one that does not:

# %%
from toolkit.engine import decide, model_thread

opener = engine.writer.tokens("<tool_call>\n")
print(f"call threshold: {decide.CALL_THRESHOLD}")
for question in ("What is the weather in Beijing?", "Write a haiku about autumn."):
    question_tokens = engine.writer.tokens(render_prompt([{"role": "user", "content": question}], specs))
    opens, score = model_thread.run(decide.opens_call, engine.llm.raw, question_tokens, opener)
    print(f"{question:<36} log P(<tool_call>) = {score:6.2f} -> {'call' if opens else 'text'}")

# %% [markdown]
# The engine records the decisions of its last reply. A question that needs one call, with
# parallel calls allowed, shows the second decision too: the margin of "another call" over
# "end of reply".

# %%
engine.complete({"messages": [{"role": "user", "content": "What is the weather in Beijing?"}], "tools": specs,
                 "temperature": 0, "seed": 0, "max_tokens": 80})
for decision, score in engine.writer.decisions:
    print(f"{decision:<8} {score:6.2f}")

# %% [markdown]
# ### A third fork: after tool results, answer or call again?
#
# When the messages end with tool results, the same question comes back: text, or a call? A
# model trained on tool use answers from the results. This one, shown a call in the
# conversation, asks for the same call again, and a loop that trusts it never ends (lessons 6,
# 9 and 12 used to show exactly that). Its log P(`<tool_call>`) after results does not help:
# on the lab's synthetic after-result turns it separates "a next call is needed" from "answer
# from the result" with an AUC of 0.31, worse than a coin (`python -m scripts.calibrate_decisions
# --after-results`). So the engine lets the model write its call, and then applies a rule: **a
# call that repeats one already answered in this turn is never sent** (same name, JSON-equal
# arguments once the schema's defaults are filled in); under `"auto"` the engine writes the
# answer instead (`decide.answered_calls`).
# A call that is new, another tool or a corrected value, goes out as a call.
#
# The answer is written from a prompt of its own. The base model was never trained on a `tool`
# turn: shown its `<tool_response>` block, it echoes the block back. Shown the results as a
# note in the question, with the tools left out, it answers the question
# (`template.render_answer_prompt`). And text is written under a ban on the template's markup
# (`markup.MarkupBan`): `<tool_call>`, `<tool_response>` and the role markers cannot appear in
# an answer, so a call can never come back disguised as text.
#
# The weather question once more, now with the tool's result after the call:

# %%
from toolkit.engine.template import render_answer_prompt

call = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Beijing"}'}}
after = [*messages, {"role": "assistant", "content": None, "tool_calls": [call]},
         {"role": "tool", "tool_call_id": "call_1", "content": render_result(get_weather("Beijing"))}]
print("calls already answered:", decide.answered_calls(after))
reply = engine.complete({"messages": after, "tools": specs, "temperature": 0, "seed": 0, "max_tokens": 80})
for decision, score in engine.writer.decisions:
    print(f"{decision:<15} {score:6.2f}")
print("reply:", reply["choices"][0]["message"])
print("\nthe prompt the answer was written from:")
print(render_answer_prompt(after))

# %% [markdown]
# `after_results` is the model's own preference, log P(`<tool_call>`) at the start of the
# reply; `answered_again` (1.0) says the call it wrote was the one already answered, so the
# engine dropped it and wrote text. A hosted model needs none of this: it was trained to end
# the turn with an answer. What the rule guarantees is that the loop closes, not that the answer
# is good: on a held-out set of after-result conversations this model states a fact from the
# result in only part of its answers ([docs/endpoint.md](../docs/endpoint.md) has the figures).
#
# These rules are the lab's, for a model that was never taught to call tools. A model trained
# on tool calling (and the servers built for it) gets the same effect from its training: it
# ends a reply after the calls it needs. What stays the same everywhere: the grammar fixes the
# *shape*, the model's probabilities (and, after results, one rule) decide the *choices*.
#
# ## 7. The same thing through HTTP
#
# The embedded endpoint (`toolkit/engine/serve.py`) runs an engine behind `/v1/chat/completions`.
# `Engine.complete` is the steps above: `parse_request` → `render_prompt` → the decisions
# and a grammar-constrained `create_completion` per call → `parse_reply`. `connect()`
# normally starts one such server for you (`ensure_server()`); here we serve the very engine
# used above, on a free local port, and talk to it like any OpenAI-compatible endpoint, with
# OpenAI's defaults: no `tool_choice`, parallel calls allowed. The request and the reply on
# the wire, captured by the client:

# %%
import threading

from toolkit.client import connect
from toolkit.engine.serve import base_url_of, make_server

server = make_server(engine=engine)  # port 0: any free port
threading.Thread(target=server.serve_forever, daemon=True).start()
backend = connect(base_url_of(server), model=engine.model_name, capture=True)
reply = backend.chat(messages=messages, tools=specs, max_tokens=80, temperature=0, seed=0)
exchange = backend.last_exchange()
print("POST", exchange.url)
show(exchange.request)
print("\nreply:")
show(exchange.response)
message = reply.choices[0].message
# The grammar's root is calls | text, so this engine's reply holds one or the other.
assert (message.content is None) != (message.tool_calls is None), "this engine writes text or calls, never both"
server.shutdown()

# %% [markdown]
# On this run the reply is calls only (`content` is `null`). The assertion in that cell, text
# or calls but never both, holds for this engine only, because its grammar says
# `calls | text`. A hosted model may return both in one message: a sentence in `content`
# ("Let me check the weather") and the calls in `tool_calls`. Code that reads replies must
# take both, never one *or* the other: show the text, then run the calls. Wanting the model to
# mix the two freely (a call in the middle of an answer) is one reason some projects keep a
# string protocol, where the call is just part of the text (lesson 2).

# %% [markdown]
# How does each `tool_choice` reach the grammar? `parse_request` turns it into a *mode* before
# anything else happens, and a request the engine cannot honour gets HTTP 400 with a reason,
# as from a hosted API. No model call is needed to see this:

# %%
for choice in (None, "auto", "none", "required", {"type": "function", "function": {"name": "calculate"}}):
    parsed = parse_request({"messages": messages, "tools": specs, "tool_choice": choice})
    offered = [t["function"]["name"] for t in parsed.tools]
    print(f"tool_choice={json.dumps(choice):<58} mode={parsed.mode:<9} tools in grammar={offered}")

try:
    parse_request({"messages": messages, "tools": specs, "tool_choice": {"type": "function", "function": {"name": "send_email"}}})
except RequestError as error:
    print("\nHTTP 400:", error)

# %% [markdown]
# ## 8. Why not llama-cpp-python's built-in `chatml-function-calling`?
#
# llama-cpp-python ships a chat handler for function calling, and it was the obvious thing to
# build on. Tried against this model, it fell short in five ways:
#
# 1. with `tool_choice` absent or `"none"` it leaves the tools out of the prompt altogether;
# 2. with `"auto"` it returns at most one call, and empty content when the model chooses to talk;
# 3. `"required"` stops on an assertion, so the server answers HTTP 500;
# 4. `role: tool` messages render as nothing, so the model never sees a tool's result;
# 5. tools are rendered only inside a system message, so a conversation without one has none.
#
# (The GGUF file's own template has no tool support at all.) You can check three of these in
# the handler's source without running a model: its template has branches for the `system`,
# `user` and `assistant` roles only, its first case renders `tools=[]` whenever `tool_choice`
# is missing or `"none"`, and its last line of defence is an `assert` on `"auto"`.

# %%
from llama_cpp import llama_chat_format

source = inspect.getsource(llama_chat_format.chatml_function_calling)
lines = source.splitlines()
print("roles the template handles:", sorted({line.split("==")[1].strip(" '}%\"") for line in lines
                                             if "message.role ==" in line}))
for number, line in enumerate(lines):
    if "Case 1" in line or "tools=[]," in line or "assert isinstance(tool_choice, str)" in line:
        print(f"line {number:>3}: {line.strip()}")

# %% [markdown]
# So the lab renders tools itself (section 2), constrains decoding itself with
# `LlamaGrammar` (section 3), decides itself (section 6) and parses itself (section 4),
# honouring `auto`, `none`, `required`, a named function, several calls per turn and tool
# results in later turns.
# Hosted APIs do the same three things with better-trained models and their own formats
# (Qwen and Hermes use `<tool_call>` blocks much like ours; others use special tokens).
#
# ## 9. What training changes: the same prompt through two models
#
# Template, grammar and decisions make any model's calls *parse*. Whether it picks the right
# tool is the model's part. The endpoint serves three models for exactly this comparison
# (`toolkit.engine.EMBEDDED_MODELS` lists them): the base weights, `SmolLM2-135M-Instruct`,
# and the same weights with one of two 4.9 MB LoRA adapters, each trained on the CPU on 800
# invented tool-calling conversations (`training/`: none of them from the scenario suite or
# BFCL, which stay held out to measure them). `SmolLM2-135M-Instruct+tools` is the first
# adapter (about 35 minutes on two cores). `SmolLM2-135M-Instruct+tools2`, the second, was
# trained with gradients through the prompt as well, to read descriptions while keeping
# names, and is served as a third model to compare; `training/README.md` says how each was
# trained and what each measured. A request picks the model by name, like any hosted API.
#
# Below, the base model and the first adapter (`BASE_MODEL` and `TUNED_MODEL`; import
# `SECOND_TUNED_MODEL` from `toolkit.engine` too and add it to the pair in the loop to ask the
# third). Three tools whose names say nothing (`tool_a`, `tool_b`, `tool_c`): only the
# descriptions tell them apart, so this asks whether each model *reads* them. Same prompt,
# same grammar, same seed; only the `model` field changes.

# %%
from toolkit.engine import BASE_MODEL, TUNED_MODEL


def described(name, description, **properties):
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": properties, "required": list(properties)}}}


anonymous = [described("tool_a", "Send a text message to a phone number",
                       number={"type": "string"}, text={"type": "string"}),
             described("tool_b", "Current weather in a city", city={"type": "string"}),
             described("tool_c", "Convert an amount of money between two currencies",
                       amount={"type": "number"}, source={"type": "string"}, target={"type": "string"})]
for question in ["Is it raining in Lisbon?", "How many yen is 20 euros?", "Write a haiku about autumn."]:
    for name in (BASE_MODEL, TUNED_MODEL):
        reply = engine.complete({"model": name, "messages": [{"role": "user", "content": question}],
                                 "tools": anonymous, "max_tokens": 60, "temperature": 0, "seed": 0})
        message = reply["choices"][0]["message"]
        assert reply["model"] == name and (message["content"] is None) != (message.get("tool_calls") is None)
        said = [f'{c["function"]["name"]}({c["function"]["arguments"]})' for c in message.get("tool_calls") or []]
        print(f"{name:28} {question:30} -> {', '.join(said) or repr(message['content'][:50])}")

# %% [markdown]
# Read the saved outputs closely: neither model is good at this. On the weather question the
# base model reaches for the currency tool and starts a web address in `source`
# (`"https://www.todaysweather.com/…`) that runs on until `max_tokens` cuts it off; the
# tuned one picks the messaging tool and then writes `</tool_call>` and role names *inside* a
# JSON string until `max_tokens` cuts it off. The grammar allows any text inside a string, so
# it cannot stop that; the adapter learned the shape of a reply from 800 examples, not yet to
# close what it opens. On the currency question both models pick the messaging tool, and the
# tuned one adds a weather call whose arguments stop inside the city's name. Both answer the
# haiku request in text, which is right.
#
# A handful of prompts shows the *kind* of difference, not its size. The size is measured on
# the held-out suite and on BFCL in [docs/models.md](../docs/models.md), and you can
# measure it yourself: in the app, pick `model` (or `names`: real or hidden) as the factor of
# an experiment. The adapter's recipe, its training curve and its evaluation are in
# `training/README.md`; `python -m training.train_lora` rebuilds it on two CPU cores.
#
# ## Summary
#
# - "Native" tool calling is a template, a grammar and a parser behind an HTTP API.
# - The template puts the tools into the prompt: descriptions cost prompt tokens every time.
# - The grammar makes the output parse — every time — and can pin names and types. It cannot
#   make a weak model choose well.
# - The parser turns call blocks into `tool_calls` with fresh ids and `arguments` as a string.
# - Where the grammar leaves a choice (call or text, another call or stop), the engine asks
#   the model about each option as a whole instead of letting one token decide.
# - Reading the source of a library you want to build on, and trying it on the real model,
#   is how the gaps in the built-in handler were found.
# - Choosing well is the model's part, and the grammar cannot help with it: a small adapter
#   trained on invented conversations changed which tool SmolLM2 picked on the weather
#   question, and on this run neither model picked the right one. Whether an adapter helps is
#   a question for the bench, over many cases (the figures in [docs/bench.md](../docs/bench.md)), not for two questions.
#
# Lab: open `labs/13_call_parser.py` and write the parser yourself.
