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
# # Lesson 4 — Native tool calls: `tools`, `tool_calls` and `role: "tool"`
#
# Lessons 2 and 3 put everything into text: the tools were sentences in the system prompt,
# the calls were tags in the reply, the results were user messages. Chat APIs now have fields
# for each of these. The model still only writes text (lesson 13 shows the server turning it
# into these fields), but *your* code never parses a tag again.
#
# ## What you will learn
#
# - the request field `tools`: each tool a name, a description and a **JSON Schema** of its
#   parameters;
# - the reply field `tool_calls`: an `id`, the function `name`, and `arguments` as a JSON
#   **string** — with `content` usually null; why `finish_reason` is not the way to tell;
# - how a result goes back: a message with `role: "tool"` and the `tool_call_id` of the call
#   it answers — the ids that lesson 3 was missing;
# - what all this looks like on the wire, captured from the embedded endpoint, and why the
#   same code runs against OpenAI, DeepSeek, Qwen or a local server.

# %%
import json

import jsonschema

from toolkit.client import LabError, connect


def show(value, limit=2000):
    text = json.dumps(value, indent=2, ensure_ascii=False)
    print(text if len(text) <= limit else text[:limit] + "\n... (trimmed)")


backend = connect(capture=True)
print("talking to:", backend.label)

# %% [markdown]
# ## 1. The `tools` field: JSON Schema
#
# A tool is described by a name, a description written **for the model** (it is the model's
# only clue about when to use the tool), and `parameters`: a JSON Schema object. The schema
# says which arguments exist, their types, which are `required`, and — with `enum` — which
# values are allowed.

# %%
GET_WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in one city. Use it when the user asks about the weather or temperature.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name in English, e.g. Beijing"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "Temperature unit"},
            },
            "required": ["city"],
        },
    },
}
SQRT = {
    "type": "function",
    "function": {
        "name": "sqrt",
        "description": "Compute the square root of a number.",
        "parameters": {
            "type": "object",
            "properties": {"x": {"type": "number", "description": "The number, 0 or more"}},
            "required": ["x"],
        },
    },
}
TOOLS = [GET_WEATHER, SQRT]

# %% [markdown]
# Because `parameters` is standard JSON Schema, any JSON Schema library can check it, and
# check arguments against it. Here `jsonschema` says which argument sets the schema accepts:

# %%
schema = GET_WEATHER["function"]["parameters"]
jsonschema.Draft202012Validator.check_schema(schema)  # raises if the schema itself is malformed
validator = jsonschema.Draft202012Validator(schema)
for arguments in [{"city": "Beijing"}, {"city": "Beijing", "unit": "kelvin"}, {"unit": "celsius"}, {"city": 42}]:
    problems = [error.message for error in validator.iter_errors(arguments)]
    print(f"{json.dumps(arguments):42} {'accepted' if not problems else 'rejected: ' + '; '.join(problems)}")

# %% [markdown]
# ## 2. A request with `tools`, and its reply
#
# The same `chat.completions.create` as before, with one more field. No system prompt describes
# the tools and no worked example shows a format: the server takes care of both.

# %%
question = "What's the weather in Beijing?"
reply = backend.chat(messages=[{"role": "user", "content": question}], tools=TOOLS, max_tokens=60, temperature=0)
exchange = backend.last_exchange()
show(exchange.request)

# %%
show(exchange.response)

# %% [markdown]
# Without `tool_choice`, a request with tools means `"auto"`: the model may call a tool or
# answer in text. Which one it did is in the reply, computed here:

# %%
message = reply.choices[0].message
print("finish_reason:", reply.choices[0].finish_reason)
print("content:      ", repr(message.content))
print("tool_calls:   ", len(message.tool_calls or []))

# %% [markdown]
# ## 3. A full round trip
#
# This request sets nothing about calling, as most clients do: `tool_choice` is left out
# (so it is `"auto"`) and parallel calls are allowed. The endpoint decides whether to call at
# all (lesson 7 covers every `tool_choice`; lesson 13 shows how this endpoint decides). The
# model chooses which tool and what arguments — and a model this small often chooses wrong,
# so look at what it chose.

# %%
messages = [{"role": "user", "content": question}]
reply = backend.chat(messages=messages, tools=TOOLS, max_tokens=60, temperature=0, seed=0)
assistant_message = backend.last_exchange().response["choices"][0]["message"]  # the raw JSON, as it came
show(assistant_message)

# %% [markdown]
# Three details that trip everyone up the first time:
#
# - `content` is `null`: the model wrote no prose in this turn, only calls.
# - `arguments` is a **string** that holds JSON, not an object. It is exactly the text the
#   model generated, and nothing guarantees that it is valid JSON or that it fits the schema
#   (OpenAI's own documentation says to validate it). Parse it, then check it.
# - Every call has an `id`, made by the server.

# %%
call = reply.choices[0].message.tool_calls[0]
print("type of arguments:", type(call.function.arguments).__name__)
arguments = json.loads(call.function.arguments)
print("parsed:", arguments, "| type:", type(arguments).__name__)
schema = next(t["function"]["parameters"] for t in TOOLS if t["function"]["name"] == call.function.name)
print("fits the schema of", call.function.name, ":",
      not list(jsonschema.Draft202012Validator(schema).iter_errors(arguments)))
assert isinstance(call.function.arguments, str) and call.id

# %% [markdown]
# Now stage 3, which is still ours: run the function. The weather here is stand-in data (a real
# tool would ask a weather service); the square root is real.

# %%
import math


def get_weather(city: str, unit: str = "celsius") -> dict:
    celsius = {"beijing": 25, "北京": 25, "shanghai": 28, "上海": 28}.get(city.strip().lower(), 20)
    temperature = celsius if unit == "celsius" else round(celsius * 9 / 5 + 32)
    return {"city": city, "temperature": temperature, "unit": unit, "condition": "sunny"}


def sqrt(x: float) -> float:
    return math.sqrt(x)


FUNCTIONS = {"get_weather": get_weather, "sqrt": sqrt}


def run(call) -> str:
    """Run one call; the result goes back as text, so anything else becomes JSON first."""
    try:
        result = FUNCTIONS[call.function.name](**json.loads(call.function.arguments))
    except Exception as error:
        return json.dumps({"error": f"{type(error).__name__}: {error}"})
    return json.dumps(result, ensure_ascii=False)


calls = reply.choices[0].message.tool_calls  # one here; in general, answer every one of them
results = {tool_call.id: run(tool_call) for tool_call in calls}
for tool_call in calls:
    print(f"{tool_call.function.name}({tool_call.function.arguments}) -> {results[tool_call.id]}")

# %% [markdown]
# The result goes back in **two** messages appended to the history:
#
# 1. the assistant message exactly as it came (with its `tool_calls`), so the model can see
#    what it asked for;
# 2. one `{"role": "tool", "tool_call_id": ..., "content": ...}` message per call — every
#    call must be answered. The id is the link that lesson 3 had to invent by hand.

# %%
messages.append({"role": "assistant", "content": None, "tool_calls": assistant_message["tool_calls"]})
for tool_call in calls:
    messages.append({"role": "tool", "tool_call_id": tool_call.id, "content": results[tool_call.id]})

reply = backend.chat(messages=messages, tools=TOOLS, max_tokens=48, temperature=0)
print("second request, messages on the wire:")
show(backend.last_exchange().request["messages"])

# %%
final = reply.choices[0].message
if final.tool_calls:
    print("the model asked for another call:", [(c.function.name, c.function.arguments) for c in final.tool_calls])
    print("(a loop would run it and ask again - lesson 6)")
else:
    print("final answer:", repr(final.content))

# %% [markdown]
# The `role: "tool"` message is not something the model reads as-is. The server renders the
# whole conversation into one prompt with its chat template; this is what the embedded model
# actually received (lesson 13 takes the template apart). Its tags, `<tool_call>` and
# `<tool_response>`, are the server's own: the same idea as lesson 2's `<tool>` and
# `<tool_result>`, but now the server writes and reads them, and your code never sees them.

# %%
from toolkit.engine.template import render_prompt

prompt = render_prompt(backend.last_exchange().request["messages"], TOOLS)
start = prompt.index("<|im_start|>user")
print(f"[{start} characters of system turn, holding the tools, left out here]")
print(prompt[start:])

# %% [markdown]
# ## 4. The toolkit's message helpers
#
# `toolkit.messages` writes the same dicts with less typing and the OpenAI spelling built in:
# `assistant_from_reply` keeps the calls of a reply, `calls_of` gives them as `ToolCall`s (whose
# `arguments` stay raw text until `parsed_arguments()`), `tool_result` makes the `role: "tool"`
# message. The same round trip, in Chinese this time (the question asks for Shanghai's weather).
#
# Mind the type of `arguments`. In lessons 2 and 3 the string protocol's `ParsedCall` held a
# **dict**: our own parser had already run `json.loads`. From here on, a call's `arguments`
# is a **JSON string**, exactly as the API sends it: parsing it, and deciding what to do when
# it does not parse, is now your code's job again.

# %%
from toolkit import messages as m

history = [m.user("上海今天天气怎么样？")]  # How is the weather in Shanghai today?
reply = backend.chat(messages=history, tools=TOOLS, tool_choice="required", parallel_tool_calls=False,
                     max_tokens=60, temperature=0)
history.append(m.assistant_from_reply(reply.choices[0].message))
for tool_call in m.calls_of(reply.choices[0].message):
    try:
        output = json.dumps(FUNCTIONS[tool_call.name](**tool_call.parsed_arguments()), ensure_ascii=False)
    except Exception as error:
        output = json.dumps({"error": str(error)})
    history.append(m.tool_result(tool_call.id, output))
show(history)

# %% [markdown]
# ## 5. Change it and observe
#
# **(a) Answer a call that was never made.** Send a tool result whose `tool_call_id` matches no
# call. The endpoint refuses the request with HTTP 400 before the model sees it — OpenAI's API
# refuses the same mistake the same way. The id is not decoration: it is checked.

# %%
broken = messages[:2] + [{"role": "tool", "tool_call_id": "call_does_not_exist", "content": '{"temperature": 25}'}]
try:
    backend.chat(messages=broken, tools=TOOLS, max_tokens=20)
except LabError as error:
    print("LabError:", error)
print("HTTP status on the wire:", backend.last_exchange().status)

# %% [markdown]
# **(b) Drop the assistant message.** A `tool` message must follow the assistant message that
# holds its call; without it the result answers nothing.

# %%
orphan = [messages[0], messages[2]]  # the user question and the tool result, no assistant call
try:
    backend.chat(messages=orphan, tools=TOOLS, max_tokens=20)
except LabError as error:
    print("LabError:", error)

# %% [markdown]
# **(c) Two cities in one turn.** Ask about Beijing and Shanghai. The model may write one call
# or several (lesson 8 is about parallel calls); each gets its own id, and results are matched
# by id, never by position. Count what happened:

# %%
reply = backend.chat(messages=[m.user("What is the weather in Beijing and in Shanghai?")],
                     tools=TOOLS, tool_choice="required", max_tokens=96, temperature=0)
calls = m.calls_of(reply.choices[0].message)
print(len(calls), "call(s):")
for tool_call in calls:
    print(f"  {tool_call.id}  {tool_call.name}({tool_call.arguments})")
assert len({tool_call.id for tool_call in calls}) == len(calls), "every call has its own id"

# %% [markdown]
# **(d) Arguments that are not JSON.** A grammar-constrained server like the embedded one
# produces them only when `max_tokens` cuts a call short (`finish_reason` is then `"length"`);
# a hosted model occasionally does, especially with long or nested arguments. To show it exactly, this reply is **scripted** with the toolkit's fake model:
# the string is cut off mid-object, as when a reply hits `max_tokens`.

# %%
from toolkit import fake

scripted = fake.ScriptedModel([fake.calls(fake.call("get_weather", '{"city": "Beij'))]).backend()
tool_call = m.calls_of(scripted.chat(messages=[m.user(question)], tools=TOOLS).choices[0].message)[0]
print("raw arguments:", repr(tool_call.arguments))
try:
    tool_call.parsed_arguments()
except ValueError as error:
    print("ValueError:", error)

# %% [markdown]
# The call has a name and an id, but nothing to run. What to send back in that case — an
# error result the model can correct — is lesson 9.
#
# ## 6. A hosted API does exactly this
#
# Nothing above is specific to the embedded model. Point the notebook at any
# OpenAI-compatible endpoint and every cell runs unchanged:
#
# ```python
# backend = connect(base_url="https://api.openai.com/v1", model="gpt-4o-mini")  # key from LAB_API_KEY
# backend = connect(base_url="https://api.deepseek.com/v1", model="deepseek-chat")
# backend = connect(base_url="https://dashscope.aliyuncs.com/compatible-mode/v1", model="qwen-plus")
# backend = connect(base_url="http://localhost:11434/v1", model="qwen2.5:7b")  # Ollama
# ```
#
# (or set `LAB_BASE_URL`, `LAB_MODEL`, `LAB_API_KEY` and keep `connect()`). The names are
# OpenAI's, and the other services copy them:
#
# | where | field | what it holds |
# |---|---|---|
# | request | `tools` | `[{"type": "function", "function": {"name", "description", "parameters"}}]` |
# | request | `tool_choice` | `"auto"`, `"none"`, `"required"` or `{"type": "function", "function": {"name": ...}}` |
# | request | `parallel_tool_calls` | `false` to allow at most one call per turn |
# | reply | `choices[0].message.tool_calls` | `[{"id", "type": "function", "function": {"name", "arguments"}}]`, `arguments` a JSON string |
# | reply | `choices[0].finish_reason` | usually `"tool_calls"` when the reply has calls, but `"stop"` from OpenAI when one function was forced by name (lesson 7) |
# | next request | `{"role": "tool", "tool_call_id", "content"}` | one per call, after the assistant message |
#
# Older code may use `functions` and `function_call` (one call per turn, no ids); OpenAI has
# deprecated them in favour of the fields above. Some providers add options on top: OpenAI's
# `"strict": true` on a function makes the server constrain the arguments to the schema —
# the same idea as the grammar the embedded server uses (lesson 13).
#
# Do not decide "did it call?" from `finish_reason`. The embedded endpoint (like most servers)
# says `"tool_calls"` whenever the reply carries calls, but OpenAI says `"stop"` when a call was
# forced by name with `tool_choice={"type": "function", "function": {"name": ...}}` (lesson 7).
# Test `message.tool_calls` instead, as the code above does.

# %% [markdown]
# ## Other frameworks
#
# All of them build on these same fields and hide them. **LangChain**: `llm.bind_tools([...])`
# fills `tools`, the reply's `.tool_calls` is already parsed, and a `ToolMessage` carries the
# `tool_call_id` back. The **OpenAI Agents SDK** (`Agent(tools=[...])`) and **pydantic-ai**
# (`Agent` with `@agent.tool`) never show you the messages unless you ask. **LangChain4j** (Java)
# names them `ToolSpecification`, `ToolExecutionRequest` (id, name, arguments as a string) and
# `ToolExecutionResultMessage`.

# %% [markdown]
# ## Summary
#
# - The request carries `tools`: a name, a description for the model, and a JSON Schema of
#   the parameters (types, `required`, `enum`).
# - A reply that calls tools has `tool_calls`, each with a server-made `id`, a `name` and
#   `arguments` as a JSON **string** — parse it and validate it before running anything;
#   `content` is then usually `null`. `finish_reason` is usually `"tool_calls"`, but not always
#   (OpenAI says `"stop"` for a call forced by name): check `tool_calls`, not `finish_reason`.
# - Results go back as `role: "tool"` messages with the `tool_call_id` they answer, after the
#   assistant message that made the calls. Mismatched ids are refused with HTTP 400.
# - Native tool calling removed the parsing and the id bookkeeping of lessons 2 and 3. It did
#   not make the model choose better: the embedded model picks no better than before.
#
# Lab: open `labs/04_tool_schema_by_hand.py` (write the `tools` entries for an order-status
# tool and a weather tool from their specs).
