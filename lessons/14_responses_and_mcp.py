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
# # Lesson 14 — Where tool calling is now: the Responses API and MCP
#
# *The course's terms are defined, each with the lesson that teaches it, in the [glossary](../docs/glossary.md).*
#
# Everything so far used one wire format, OpenAI's Chat Completions: `tools` in the request,
# `tool_calls` on an assistant message, results as `role: "tool"` messages. Today's learners
# meet two newer shapes as well:
#
# - **OpenAI's Responses API** (`POST /v1/responses`): the same conversation as a flat list of
#   *items*. A call is a `function_call` item with a `call_id`; its result is a
#   `function_call_output` item with the same `call_id`.
# - **The Model Context Protocol (MCP)**: tools that live in another program, listed and called
#   over a protocol instead of being defined in your code.
#
# Neither changes what this lab has taught: the model still only writes text, a schema still
# describes each tool, your code still runs the call and sends the result back with an id.
# This lesson puts the old and the new side by side so you can see exactly what moved.
#
# ## What you will learn
#
# - the same tool round trip in Chat Completions and in the Responses API, on the wire;
# - what changes (`call_id` vs `tool_call_id`, items vs messages, flat tools, where `strict`
#   sits, streaming events) and what stays the same (schemas, the loop, ids);
# - that the lab's loop and trace run unchanged on either API;
# - MCP: a server that offers the demo tools, a client that turns its listing into tools, and
#   what happens when the server or a call fails.
#
# The embedded endpoint serves both APIs through one engine: the same template, grammar and
# parser answer `/v1/chat/completions` and `/v1/responses`. This lesson asks the default model,
# `SmolLM2-135M-Instruct`, as most lessons do. After a tool result the engine never sends a
# call that repeats one already answered (lesson 13), so the round trips below end in an
# answer; the answers are this small model's: wordy, and all of them cut off here by
# `max_tokens` (`finish_reason` `length` in round 2 of the traces).

# %%
import json
import sys

import pandas as pd

from toolkit import fake
from toolkit.client import connect
from toolkit.demo_tools import demo_toolset
from toolkit.display import show
from toolkit.engine import BASE_MODEL
from toolkit.lab_error import LabError
from toolkit.loop import run_turn
from toolkit.mcp_tools import McpServerError, McpTools
from toolkit.trace import format_trace

MODEL = BASE_MODEL
chat = connect(model=MODEL, capture=True)                      # Chat Completions, as in every lesson so far
responses = connect(model=MODEL, api="responses", capture=True)  # the same endpoint, over the Responses API
tools = demo_toolset(["get_weather", "get_order_status"])
specs = tools.specs()
question = "What's the weather in Shanghai?"
SETTINGS = {"temperature": 0, "seed": 7}
print(chat.label, "|", responses.label)

# %% [markdown]
# ## 1. The tools, in both shapes
#
# A Chat Completions tool wraps its function in `"function"`. A Responses tool is flat: the
# same name, description and parameters sit next to `"type"`. The JSON Schema inside is the
# same, byte for byte. One field changes meaning on the way: left out, `strict` is *off* in
# Chat Completions but *on* in OpenAI's Responses API, which then treats every optional field
# (here `unit`) as required. So the flat tools say `"strict": false`, as the chat ones meant.

# %%
flat_tools = [{"type": "function", **spec["function"], "strict": spec["function"].get("strict", False)}
              for spec in specs]
show(specs[0])
show(flat_tools[0])
print("same schema:", specs[0]["function"]["parameters"] == flat_tools[0]["parameters"])

# %% [markdown]
# ## 2. The first request: the model asks for a call
#
# Both requests force a call (`tool_choice="required"`) so the round trip is the same every
# time. On the left, `chat.completions.create`; on the right, `responses.create`, which takes
# `input` (a string, or a list of items) and `max_output_tokens`. The embedded endpoint also
# takes `seed` on `/v1/responses` (OpenAI's does not, so it goes in `extra_body`).

# %%
first_chat = chat.chat(messages=[{"role": "user", "content": question}], tools=specs,
                       tool_choice="required", max_tokens=60, **SETTINGS)
first_response = responses.client.responses.create(
    model=responses.model, input=question, tools=flat_tools, tool_choice="required",
    max_output_tokens=60, temperature=0, extra_body={"seed": 7})

chat_call = first_chat.choices[0].message.tool_calls[0]
response_call = next(item for item in first_response.output if item.type == "function_call")
print("chat:      ", chat_call.function.name, chat_call.function.arguments, "id:", chat_call.id)
print("responses: ", response_call.name, response_call.arguments, "call_id:", response_call.call_id,
      "item id:", response_call.id)

# %% [markdown]
# The same call, twice. Here are the two replies as they came over the wire. The chat reply
# nests the call in `choices[0].message.tool_calls`; the Responses reply puts a `function_call`
# item straight into `output`. Notice that an output item has **two** ids: `id` (`fc_...`)
# names the item itself, `call_id` (`call_...`) is what the result must quote.

# %%
show(chat.last_exchange().response, limit=1200)

# %%
show({key: value for key, value in responses.last_exchange().response.items() if key != "tools"}, limit=1500)

# %% [markdown]
# ## 3. Sending the result back
#
# Run the tool once, then send its result back in each API's own way:
#
# - **Chat Completions**: append the assistant message (with its `tool_calls`) and a
#   `{"role": "tool", "tool_call_id": ..., "content": ...}` message;
# - **Responses**: append the `function_call` item as it came, and a
#   `{"type": "function_call_output", "call_id": ..., "output": ...}` item.

# %%
arguments = json.loads(response_call.arguments)
result = json.dumps(tools.get("get_weather").invoke(arguments), ensure_ascii=False)
print("tool result:", result)

chat_history = [{"role": "user", "content": question},
                first_chat.choices[0].message.model_dump(exclude_none=True),
                {"role": "tool", "tool_call_id": chat_call.id, "content": result}]
response_input = [{"role": "user", "content": question},
                  response_call.model_dump(exclude_none=True),
                  {"type": "function_call_output", "call_id": response_call.call_id, "output": result}]

final_chat = chat.chat(messages=chat_history, tools=specs, max_tokens=60, **SETTINGS)
final_response = responses.client.responses.create(
    model=responses.model, input=response_input, tools=flat_tools, max_output_tokens=60,
    temperature=0, extra_body={"seed": 7})
print("chat:      ", repr(final_chat.choices[0].message.content))
print("responses: ", repr(final_response.output_text))

# %% [markdown]
# The two answers are the same, word for word: one engine serves both APIs, and both requests
# carry the same seed. The two second requests, side by side (only the conversation part;
# both also carry the tools). Same three steps, different containers:

# %%
sent_chat = chat.last_exchange().request["messages"]
sent_response = responses.last_exchange().request["input"]
pd.set_option("display.max_colwidth", 90)
pd.DataFrame({"Chat Completions: messages": [json.dumps(m, ensure_ascii=False) for m in sent_chat],
              "Responses: input items": [json.dumps(i, ensure_ascii=False) for i in sent_response]})

# %% [markdown]
# ## 4. What changes and what stays
#
# | | Chat Completions | Responses |
# |---|---|---|
# | the conversation | `messages` | `input`: a string, or a list of items |
# | a system prompt | a `system` message | `instructions` (or a `system`/`developer` item) |
# | a tool | `{"type": "function", "function": {name, description, parameters, strict}}` | `{"type": "function", name, description, parameters, strict}` |
# | a call | an entry in the assistant message's `tool_calls`, with `id` | its own `function_call` item, with `call_id` (and an item `id`) |
# | a result | `{"role": "tool", "tool_call_id", "content"}` | `{"type": "function_call_output", "call_id", "output"}` |
# | reply length | `max_tokens` / `max_completion_tokens` | `max_output_tokens` |
# | cut short | `finish_reason: "length"` | `status: "incomplete"` with `incomplete_details` |
# | `strict` | inside `function`; left out means off | beside `name`; left out means on (OpenAI then makes every field required), so say `false` to keep optional fields optional |
# | streaming | chunks with `delta.tool_calls[i].function.arguments` | typed events: `response.function_call_arguments.delta`, `.done`, … |
#
# What stays the same: the JSON Schema of each tool, `tool_choice` (`"auto"`, `"none"`,
# `"required"`, or one function — flat in Responses: `{"type": "function", "name": ...}`),
# parallel calls, and the rule that every result quotes the id of its call. The Responses
# API can also keep the conversation on OpenAI's servers (`previous_response_id`); the
# embedded endpoint stores nothing, so it answers that with HTTP 400 and you send the items
# yourself, as above.
#
# An id mismatch is still an error. A `function_call_output` whose `call_id` matches no
# `function_call` in the input is refused:

# %%
try:
    responses.client.responses.create(
        model=responses.model, input=[{"role": "user", "content": question},
                                      {"type": "function_call_output", "call_id": "call_nobody", "output": result}],
        tools=flat_tools, max_output_tokens=20)
except Exception as error:
    print(type(error).__name__, "->", getattr(error, "status_code", ""), str(error)[:300])

# %% [markdown]
# ## 5. Streaming: events instead of chunks
#
# With `stream=True`, Chat Completions sends chunks whose deltas you assemble by `index`
# (lesson 12). The Responses API sends named events instead: an item is *added*, its
# arguments arrive as `response.function_call_arguments.delta` events, then `.done` gives
# the whole arguments, and `response.completed` carries the finished response.

# %%
events = list(responses.client.responses.create(
    model=responses.model, input=question, tools=flat_tools, tool_choice="required",
    max_output_tokens=60, temperature=0, stream=True, extra_body={"seed": 7}))
print(pd.Series([event.type for event in events]).value_counts().to_string())
deltas = "".join(event.delta for event in events if event.type == "response.function_call_arguments.delta")
done = next(event for event in events if event.type == "response.function_call_arguments.done")
print("joined deltas:", deltas)
print("done event:   ", done.arguments, "| same:", deltas == done.arguments)

# %% [markdown]
# ## 6. The loop does not care
#
# `connect(api="responses")` gives a backend whose `.chat(...)` takes the usual chat-style
# arguments, sends them as a Responses request, and reads the reply back as a chat
# completion. So `run_turn`, its trace and the app run unchanged on either API (in the app,
# choose the API in the sidebar). Here is one whole turn, over `/v1/responses`:

# %%
responses.exchanges.clear()
turn = run_turn(responses, [{"role": "user", "content": question}], tools, tool_choice="required", max_rounds=2,
                request_options={"max_tokens": 60, **SETTINGS})
print(format_trace(turn))
print("requests went to:", sorted({exchange.url.rsplit("/", 1)[-1] for exchange in responses.exchanges}))

# %% [markdown]
# ## 7. MCP: tools that live in another program
#
# So far every tool was a Python function in the same process as the loop. The **Model
# Context Protocol** puts tools in a separate program, a *server*, that any client can start
# and talk to: the client asks `tools/list` (each tool's `name`, `description` and
# `inputSchema`) and sends `tools/call` (a name and arguments), as JSON-RPC messages over the
# server's stdin and stdout. One server then serves every client that speaks MCP: an IDE, a
# desktop assistant, your own loop.
#
# `toolkit/mcp_server.py` serves the lab's demo tools with the official `mcp` SDK, and
# `toolkit.mcp_tools.McpTools` is the client side: it starts a server from a command, lists
# its tools and turns each into an ordinary lab tool. The schema travels through MCP and comes
# back unchanged:

# %%
with McpTools("python -m toolkit.mcp_server get_weather get_order_status") as server:
    print("server:", server.server_name, "| tools:", server.names)
    print("listing == the local specs:", server.specs() == specs)
    from_server = server.call("get_weather", {"city": "上海"})
    print("a call through the server:", from_server)

# %% [markdown]
# Because the server's tools are ordinary lab tools, the loop runs them unchanged: the model
# sees the same specs, the loop checks the arguments against the listed schema, and the call
# goes over the protocol.

# %%
with McpTools("python -m toolkit.mcp_server get_weather get_order_status") as server:
    turn = run_turn(chat, [{"role": "user", "content": question}], server.toolset,
                    tool_choice="required", max_rounds=2, request_options={"max_tokens": 60, **SETTINGS})
print(format_trace(turn))

# %% [markdown]
# ## 8. When MCP goes wrong
#
# A remote tool can fail in more ways than a local function: the model may ask for a tool the
# server does not have or send bad arguments, and the server itself may fail to start, hang or
# die. The first two are the model's slips, and reach it as the lab's usual `Error: ...`
# text, so it can correct itself. To show both exactly, a scripted model (not a measurement)
# makes the slips:

# %%
slips = fake.ScriptedModel([
    fake.calls(fake.call("delete_order", {"order_id": "A1002"}),  # not offered by the server
               fake.call("get_weather", {"town": "Beijing"})),    # wrong parameter name
    fake.text("Sorry, I could not look that up."),
])
with McpTools("python -m toolkit.mcp_server get_weather get_order_status") as server:
    turn = run_turn(slips.backend(), [{"role": "user", "content": "Cancel A1002 and check Beijing."}],
                    server.toolset)
for execution in turn.tool_executions:
    print(f"{execution.name}: {execution.result_text}")

# %% [markdown]
# A server that cannot be used at all is a different kind of failure: there is nothing to
# tell the model, so the client raises one clear error that names the command.

# %%
for command in ["python -m no_such_server_module", "definitely-not-a-program --stdio"]:
    try:
        with McpTools(command, startup_timeout=10):
            pass
    except McpServerError as error:  # the interpreter's own path, as every machine has its own
        print(str(error)[:300].replace(sys.executable, "python"), "\n")

# %% [markdown]
# ## Other frameworks
#
# The **OpenAI Agents SDK** uses the Responses API by default (its `OpenAIChatCompletionsModel`
# switches to Chat Completions) and connects MCP servers with `MCPServerStdio` passed as
# `mcp_servers=[...]` to an `Agent`. **pydantic-ai** takes MCP servers as toolsets
# (`pydantic_ai.mcp.MCPServerStdio`), and **LangChain** loads them with the
# `langchain-mcp-adapters` package (`MultiServerMCPClient(...).get_tools()`). **LangChain4j**
# (Java) has an `McpToolProvider` that plugs into an AI service. In every case the framework
# does what section 7 did: list the tools, turn each into its own tool type, and route calls
# through the session.

# %% [markdown]
# ## Summary
#
# - The Responses API holds the same conversation as a list of items: `function_call` items
#   with a `call_id`, answered by `function_call_output` items with the same `call_id`.
# - Tools are flat there; the JSON Schema inside is the same. `max_output_tokens`,
#   `instructions` and `status: "incomplete"` replace `max_tokens`, a system message and
#   `finish_reason: "length"`; streaming sends named events.
# - The lab's loop runs on either API (`connect(api="responses")`), because only the wire
#   format changed, not the protocol of ask, run, send back.
# - MCP moves tools into a server that lists and runs them; a client turns the listing into
#   tools, and errors from the model's slips still go back as `Error: ...` text, while a dead
#   server is one clear error naming its command.
#
# Labs: open `labs/14_chat_to_responses.py` to translate a chat history into Responses items
# yourself, and `labs/14_mcp_tools.py` to turn an MCP listing and results into what the model
# reads.
#
# Next, lesson 15 lets the user speak more than once: a conversation whose world changes from
# turn to turn, judged by the state it leaves. Last, `labs/15_capstone_agent.py` puts the course
# together: an agent of your own, graded on conversations it has never seen.
