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
# # Lesson 7 — `tool_choice`: may, must not, must, must call this one
#
# *The course's terms are defined, each with the lesson that teaches it, in the [glossary](../docs/glossary.md).*
#
# Offering tools does not oblige the model to use them. By default it decides for itself: a
# question about the weather should produce a call, "tell me a joke" should not. Sometimes you
# want to take that decision away from it:
#
# | `tool_choice` | meaning |
# |---|---|
# | `"auto"` (the default when tools are sent) | the model may answer in text or call tools |
# | `"none"` | the model must answer in text, even though tools are listed |
# | `"required"` | the model must call at least one tool (any of them) |
# | `{"type": "function", "function": {"name": "get_weather"}}` | the model must call this tool |
#
# Typical uses: `"required"` for a step that must produce structured data (an extraction, a
# router), or while debugging, to check that a tool works at all without the model's decision
# getting in the way; a named function when the application already knows which tool is next;
# `"none"` for the final answer after the tools have run, or to stop a model that keeps calling.
#
# ## What you will learn
#
# - what each value does, measured on the embedded model over a handful of prompts;
# - how the embedded engine enforces `required` and a named function: with a grammar;
# - how to set a default per client and override it per request;
# - why a loop must not keep `required` after the first request;
# - what is left where an endpoint has no `required`: asking in the system prompt, and checking.

# %%
from toolkit import fake
from toolkit.client import connect
from toolkit.demo_tools import demo_toolset
from toolkit.display import show
from toolkit.engine.grammar import build_gbnf
from toolkit.lab_error import LabError
from toolkit.loop import run_turn

backend = connect(capture=True)
tools = demo_toolset(["get_weather", "calculate", "get_order_status"])
print("tools:", tools.names)

# %% [markdown]
# ## 1. A client with a default, and a per-request override
#
# The request field is all there is to `tool_choice`. A framework adds one convenience: a
# default set once on the client, which any single request may override. That takes a
# few lines, and the wrapper can also catch a mistake before it costs a request: naming a tool
# that was not sent.

# %%
AUTO, NONE, REQUIRED = "auto", "none", "required"


def named(name: str) -> dict:
    return {"type": "function", "function": {"name": name}}


class ToolChoiceClient:
    """Sends chat requests with a default tool_choice that each request may override."""

    def __init__(self, backend, default=AUTO):
        self.backend, self.default = backend, default

    def chat(self, *, messages, tools=None, tool_choice=None, **options):
        choice = self.default if tool_choice is None else tool_choice
        request = {"messages": messages, **options}
        if tools:  # APIs refuse tool_choice without tools, so only send it with them
            names = [each["function"]["name"] for each in tools]
            if isinstance(choice, dict) and choice["function"]["name"] not in names:
                raise ValueError(f"tool_choice names {choice['function']['name']!r}, "
                                 f"but the tools sent are {names}")
            request.update(tools=tools, tool_choice=choice)
        return self.backend.chat(**request)


client = ToolChoiceClient(backend, default=AUTO)

# %% [markdown]
# ## 2. Measured: how often does a call come back under each mode?
#
# Three prompts, one for each kind of need: a weather question, a square root asked in Chinese,
# and a request that needs no tool at all. Each is sent under each of the four modes through
# the client above, overriding its default per request. Temperature 0, so each cell of the table
# is one reply. Everything below is computed from the replies of this run.
#
# Remember what model this is: SmolLM2-135M was not trained for tool calling; whatever it
# does under `"auto"` is its own decision, and under `"required"` it must call *something*.
# One call per reply is enough to count, so the requests also say `parallel_tool_calls=False`
# (lesson 8), which ends a forced reply after its first call and keeps this cell fast.

# %%
# the Chinese: What is the square root of 100?
PROMPTS = ["What is the weather in Beijing?", "100的平方根是多少？", "Hi! Tell me a short joke."]
MODES = {"auto": AUTO, "none": NONE, "required": REQUIRED, "named get_weather": named("get_weather")}
# Room for one complete call where a call is forced; a few words are enough to see prose.
MAX_TOKENS = {"auto": 32, "none": 24, "required": 48, "named get_weather": 48}

rows = []
for label, mode in MODES.items():  # grouped by mode: same tools, so the prompt prefix is reused
    for prompt in PROMPTS:
        reply = client.chat(messages=[{"role": "user", "content": prompt}], tools=tools.specs(),
                            tool_choice=mode, parallel_tool_calls=False,
                            max_tokens=MAX_TOKENS[label], temperature=0)
        message = reply.choices[0].message
        rows.append({"mode": label, "prompt": prompt,
                     "calls": [(c.function.name, c.function.arguments) for c in message.tool_calls or []],
                     "text": message.content, "prompt_tokens": reply.usage.prompt_tokens,
                     "finish_reason": reply.choices[0].finish_reason})

for row in rows:
    what = row["calls"] or f"text: {(row['text'] or '')[:50]!r}"
    print(f"{row['mode']:<18} {row['prompt']:<34} {row['finish_reason']:<10} {what}")

# %%
print(f"{'mode':<18} {'replies with a call':>20} {'tools called':<40} prompt tokens")
for label in MODES:
    mine = [row for row in rows if row["mode"] == label]
    with_call = sum(bool(row["calls"]) for row in mine)
    called = sorted({name for row in mine for name, _ in row["calls"]})
    tokens = sorted({row["prompt_tokens"] for row in mine})
    print(f"{label:<18} {with_call:>14} of {len(mine)}   {', '.join(called) or '-':<40} {tokens}")

# %% [markdown]
# Read the table with the right expectations:
#
# - Under `"required"` and the named function, every reply is a call, *whatever the
#   question*, including the joke. That is the point of forcing, and its danger: forced, the
#   model calls even when no tool fits, and makes up what the call needs (an order id,
#   `"1234567890"`, under `"required"`; a city under the named `get_weather`).
# - Under `"none"`, no reply carries `tool_calls`. Look at the prompt tokens: this engine leaves
#   the tools out of the prompt entirely for `"none"`, so the model does not even read them
#   (hosted APIs may keep them in the prompt and only forbid the call).
# - With the named function, the prompt is shorter than under `"auto"`: only the named tool is
#   described.
# - The `finish_reason` column says why a reply ended, not whether it holds calls. A forced call
#   that ended by itself says `"tool_calls"`, and so does the weather call under `"auto"`.
#   The square-root call under `"auto"` is whole but says `"length"`: `max_tokens` (32) ran out
#   before the reply ended (under `"required"`, with 48, the same call says `"tool_calls"`).
#   OpenAI's API says `"stop"` when the function was forced by name. So test `tool_calls`,
#   never `finish_reason`, to know whether a reply has calls.
# - Under `"auto"`, whether a call comes back is the model's decision. A model trained for
#   tool calling would call for the first two prompts and not for the joke. On this run this
#   one did, but for the square root it called `get_order_status`, with `");"` as the order
#   id: a call is not yet a right call. (This endpoint asks the model how likely
#   it is to open a call, and calls when that clears a threshold: lesson 13 shows the numbers.)
#
# The request and reply of the last exchange, as they went over the wire:

# %%
exchange = backend.last_exchange()
# the tools shortened to their names here; lesson 4 showed a whole tool definition on the wire
request = dict(exchange.request, tools=[tool["function"]["name"] for tool in exchange.request["tools"]])
show(request)
show(exchange.response["choices"][0])

# %% [markdown]
# ## 3. How `required` is enforced: a grammar
#
# A model trained for tool calling has *learned* to emit a call when told to, and a serving
# stack may also constrain decoding so that it cannot do otherwise (vLLM and llama.cpp's server
# can; hosted APIs do not always say how they do it). The embedded engine does the
# constraining in the open (`toolkit/engine/grammar.py`): it turns the tools' JSON Schemas into
# a GBNF grammar, and llama.cpp masks every token that the grammar does not allow at that
# point. Only the top rules differ between the modes (computed here from the same tools):

# %%
def top_rules(tool_specs, mode, parallel=True):
    grammar = build_gbnf(tool_specs, mode, parallel)
    return [line for line in grammar.splitlines() if line.startswith(("root ::=", "text ::=", "call ::=", "call-name ::="))]


specs = tools.specs()
print("auto:     ", *top_rules(specs, "auto"), sep="\n  ")
print("required: ", *top_rules(specs, "required"), sep="\n  ")
only_weather = [each for each in specs if each["function"]["name"] == "get_weather"]
print("named get_weather (the tools are cut down to one, then 'required'):",
      *top_rules(only_weather, "required"), sep="\n  ")

# %% [markdown]
# - `auto`: `root ::= calls | text`. Plain text is allowed, but it may not start with `<`, so a
#   reply that starts like a call must *be* a well-formed call. Which branch is taken is a
#   fork the grammar leaves open; this engine takes it itself, by likelihood (lesson 13).
# - `required`: `root ::= calls`. The very first token must begin `<tool_call>`; there is no
#   path through the grammar that produces prose.
# - a named function: the same, with only one tool, so the `name` can only be `"get_weather"`.
# - `none`: no grammar and no tools in the prompt.
#
# The grammar guarantees that the output *parses* and fits the schema. It cannot make the
# choice right: forced to call, the model still picks whichever tool and arguments it finds
# most likely. With the string protocol of lessons 2–3, on an endpoint that takes no grammar,
# the loop can only *ask* in words ("In this reply you must call at least one tool"), and
# nothing enforces it. (Where you run the model yourself, lesson 4 puts the same protocol under
# a grammar.)
#
# ## 4. The default per client, and errors caught early
#
# A client whose default is `"required"`: a request
# without its own `tool_choice` sends the default (look at the body that was sent):

# %%
router = ToolChoiceClient(backend, default=REQUIRED)
reply = router.chat(messages=[{"role": "user", "content": "订单A1002现在到哪了？"}],  # Where is order A1002 now?
                    tools=tools.specs(), parallel_tool_calls=False, max_tokens=48, temperature=0)
print("sent tool_choice:", backend.last_exchange().request["tool_choice"])
print("calls:", [(c.function.name, c.function.arguments) for c in reply.choices[0].message.tool_calls or []])

# %% [markdown]
# Naming a tool that is not in the request is a mistake in *your* code. The wrapper refuses it
# before anything is sent; an API that receives it anyway answers HTTP 400. Both, computed (the
# second is a real request to the embedded endpoint; it is rejected before the model runs):

# %%
weather_only = [each for each in tools.specs() if each["function"]["name"] == "get_weather"]
try:
    client.chat(messages=[{"role": "user", "content": "1+1?"}], tools=weather_only,
                tool_choice=named("calculate"))
except ValueError as error:
    print("wrapper:", error)
try:
    backend.chat(messages=[{"role": "user", "content": "1+1?"}], tools=weather_only,
                 tool_choice=named("calculate"), max_tokens=8)
except LabError as error:
    print("endpoint:", error)

# %% [markdown]
# ## 5. In a loop, `required` holds for the first request only
#
# After the tools have run, the model must be *allowed* to answer in text; if every request
# said `"required"`, it could only ever call tools again, and the loop would stop only at its
# round limit. The toolkit's loop (lesson 6) therefore sends a forcing `tool_choice` on the
# first request only and `"auto"` afterwards. This is an exact two-request script, so it uses
# the **scripted fake model**: its replies are written by hand, and only the requests it
# received are of interest.

# %%
scripted = fake.ScriptedModel([fake.calls(fake.call("get_weather", {"city": "Beijing"})),
                               fake.text("Beijing is sunny, 24 °C.")])
# the Chinese: How is the weather in Beijing?
result = run_turn(scripted.backend(), [{"role": "user", "content": "北京天气怎么样？"}], tools,
                  tool_choice=REQUIRED)
for number, sent in enumerate(scripted.requests, 1):
    print(f"request {number}: tool_choice={sent.get('tool_choice')!r}")
print("stop:", result.stop_reason, "| answer:", result.final_text)

# %% [markdown]
# ## 6. An endpoint without `required`: ask in the system prompt, then check
#
# Not every model or server takes every `tool_choice`: some older or smaller deployments take
# only `"auto"`, and some refuse a named function. What is left is to *ask*: a system prompt
# that says to answer by calling a tool, and to call at most one per reply. That is a
# request, not a rule the server enforces. The three prompts of section 2, under `"auto"`,
# without and with such a system prompt:

# %%
GUIDE = ("Answer every question by calling exactly one of the tools. Call at most one tool per "
         "reply. Never answer from memory.")
asked = {}
for label, system in (("no system prompt", None), ("system prompt", GUIDE)):
    for prompt in PROMPTS:
        messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]
        message = client.chat(messages=messages, tools=tools.specs(), tool_choice=AUTO,
                              max_tokens=48, temperature=0, seed=0).choices[0].message
        asked[label, prompt] = [(c.function.name, c.function.arguments) for c in message.tool_calls or []]
        what = asked[label, prompt] or f"text: {(message.content or '')[:44]!r}"
        print(f"{label:<17} {prompt:<32} {what}")
changed = sum(bool(asked["no system prompt", p]) != bool(asked["system prompt", p]) for p in PROMPTS)
print(f"\nprompts whose reply went from text to a call or back: {changed} of {len(PROMPTS)}")

# %% [markdown]
# On this run the instruction changed no decision: the weather question was a call either
# way, the square root got the wrong tool either way, and the joke stayed a joke. A small
# model reads an instruction as more text; a larger one follows it more often, but never
# always. So whatever the system prompt says, the code after the request is the same: test
# `tool_calls`, and where a call was needed and none came, ask again or tell the user, instead
# of passing the text on as if a tool had answered. Where the server does take `"required"`,
# use it: lesson 13 shows that the embedded one enforces it with a grammar.

# %% [markdown]
# ## Other frameworks
#
# **LangChain**: `llm.bind_tools(tools, tool_choice=...)` takes `"auto"`, `"required"` (or
# `"any"`), or a tool's name. The **OpenAI Agents SDK** sets `ModelSettings(tool_choice=...)` on
# an `Agent` and, like the toolkit, resets it to `"auto"` after a tool call
# (`Agent.reset_tool_choice`). **LangChain4j** (Java) has a `ToolChoice` enum (`AUTO`, `REQUIRED`)
# set with `toolChoice(...)` on the model builder or per `ChatRequest`. The source articles'
# `ToolChoice.from(...)`, to name one function, is not in LangChain4j's core API.

# %% [markdown]
# ## Summary
#
# - `tool_choice` is one request field: `"auto"` (the model decides), `"none"` (text only),
#   `"required"` (at least one call), or a named function (exactly that tool).
# - Measured here, forcing always yields calls, even for a joke; the model's own decision under
#   `"auto"` is only as good as the model.
# - The embedded engine enforces forcing with a grammar whose root allows only call blocks; the
#   grammar makes the call parse, not make sense.
# - A default on the client plus a per-request override is a small wrapper; it can also refuse
#   a named tool that is not being sent, before the API does.
# - A loop should force a call on its first request only.
# - Without `required`, a system prompt can only ask for a call; on this run asking changed
#   nothing, so the code checks `tool_calls` either way.
#
# Lab: open `labs/07_tool_choice_default.py` and write the decision a client makes before each
# request: default, override, checks, and relaxing a forced call after the first request. The
# app's tool_choice toggle (`streamlit run app.py`) measures the same table on your own prompts.
# Then `labs/07_why_no_call.py`: the checklist to go down when a model will not call your tool,
# from the request itself to a forced retry.
