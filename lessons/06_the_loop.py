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
# # Lesson 6 — The loop: ask, run, send back, ask again
#
# *The course's terms are defined, each with the lesson that teaches it, in the [glossary](../docs/glossary.md).*
#
# One request gets one reply. When the reply asks for tools, someone has to run them, send the
# results back and ask the model again, and again if it asks for more, until it writes an
# answer. That *someone* is a loop in your code (in a framework, its agent runner). It is
# short, and every framework feature of this lesson is a line or two in it:
#
# ```
# history = [user message]
# reply = ask(history)
# while reply has tool_calls:
#     history += [reply] + [one role:tool message per call, with its tool_call_id]
#     reply = ask(history)
# answer = reply.content
# ```
#
# ## What you will learn
#
# - to write the loop by hand and read the history it builds;
# - why a loop needs a limit on tool rounds, and two ways to stop;
# - what a result becomes on its way to the model: `None` → `"success"`, text as it is, objects
#   as JSON;
# - return behaviour: a result that goes to the model, one that goes straight to the user (a
#   report export), and one that does so only when it is the last call;
# - how hidden context (the memory id, the invocation context) is filled in when a tool runs;
# - the toolkit's `run_turn` and `format_trace`.

# %%
import dataclasses
import datetime
import enum
import json

from pydantic import BaseModel

from toolkit import fake
from toolkit.client import connect
from toolkit.display import show
from toolkit.demo_tools import calculate, get_weather
from toolkit.loop import returns_directly, run_turn
from toolkit.messages import assistant_from_reply, calls_of, tool_result
from toolkit.schema import InvocationContext, MemoryId
from toolkit.tools import ToolSet, render_result, tool
from toolkit.trace import ToolExecution, format_trace

backend = connect(capture=True)


# %% [markdown]
# ## 1. The loop by hand
#
# From this lesson on, the examples use the toolkit's demo tools (`toolkit/demo_tools.py`),
# small `@tool` functions that answer from made-up data, instantly and offline:
# `get_weather(city, unit)`, `calculate(expression)`, `get_order_status(order_id)` and
# `convert_currency(...)`. Two of them are enough here:

# %%
tools_by_name = {each.name: each for each in (get_weather, calculate)}
for each in tools_by_name.values():
    print(f"{each.name}: {each.description.splitlines()[0]}")


def run_turn_by_hand(backend, messages, tools_by_name, **options):
    """Ask; while the reply asks for tools, run them, send the results back by id, ask again."""
    history = list(messages)
    specs = [each.spec() for each in tools_by_name.values()]
    reply = backend.chat(messages=history, tools=specs, **options).choices[0].message
    while calls_of(reply):
        history.append(assistant_from_reply(reply))  # the calls, exactly as the model wrote them
        for call in calls_of(reply):
            value = tools_by_name[call.name].invoke(call.arguments)
            history.append(tool_result(call.id, render_result(value)))
        reply = backend.chat(messages=history, tools=specs, **options).choices[0].message
    history.append(assistant_from_reply(reply))
    return history


# %% [markdown]
# "144的平方根加5等于多少？" ("what is the square root of 144, plus 5?") can take two rounds:
# the root first, then the addition with the root's result. (One `calculate` call could do
# both; a model that works step by step makes two.) To show those two rounds exactly, this cell
# uses the **scripted fake model**: its three replies are written by hand, so nothing here
# measures a model; it shows what the loop does with them.

# %%
scripted = fake.ScriptedModel([
    fake.calls(fake.call("calculate", {"expression": "sqrt(144)"}, id="call_root")),
    fake.calls(fake.call("calculate", {"expression": "12 + 5"}, id="call_add")),
    fake.text("144的平方根是12，加5等于17。"),
])
# the Chinese: What is the square root of 144, plus 5?
history = run_turn_by_hand(scripted.backend(), [{"role": "user", "content": "144的平方根加5等于多少？"}], tools_by_name)
for message in history:
    print(json.dumps(message, ensure_ascii=False))
print(f"\n{len(scripted.requests)} requests; the last one carried {len(scripted.requests[-1]['messages'])} messages")

# %% [markdown]
# Every request carries the *whole* history: the model keeps no state between requests, so the
# only way it learns a result is to read it in the next request, next to the call it answers
# (the `tool_call_id`). The history grows by one assistant message and one tool message per
# call, every round.
#
# ### A real turn on the embedded model
#
# The same steps against SmolLM2-135M, with the weather tool. Both requests set nothing about
# calling, as most clients do: the endpoint decides whether the model calls (lesson 7 covers
# `tool_choice`, lesson 13 how this endpoint decides). The two requests are written out here
# one by one. Whatever the model writes is this run's output, not something this lesson can
# promise:

# %%
question = [{"role": "user", "content": "What is the weather in Beijing today?"}]
first = backend.chat(messages=question, tools=[get_weather.spec()], max_tokens=60, temperature=0,
                     seed=0).choices[0].message
real_history = question + [assistant_from_reply(first)]
for call in calls_of(first):
    real_history.append(tool_result(call.id, render_result(get_weather.invoke(call.arguments))))
final = backend.chat(messages=real_history, tools=[get_weather.spec()], max_tokens=60, temperature=0)
real_history.append(assistant_from_reply(final.choices[0].message))
for message in real_history:
    print(json.dumps(message, ensure_ascii=False))

# %% [markdown]
# Look at the last message. If it is text, the turn is over. If it is another call, the model
# asked for more after reading a result: exactly the case the loop exists for, and the reason
# section 2 adds a limit. Read the arguments too. On this run the model wrote `B Beijing` for
# Beijing: its vocabulary has ` Beijing` with a space and no `Beijing` without one, so right
# after the opening quote it starts with `B`. The demo tool answered `"found": false` with the
# cities it knows, a result the model could act on. It did not: the last message is an answer
# with weather it made up (28°C, a light breeze), which nothing in the result says. The loop
# ended correctly; the answer is still wrong. Lesson 9 comes back to results that say "not
# found".
#
# The second request as it went over the wire (the tool result travels as a `role: tool`
# message with the call's id):

# %%
show(backend.last_exchange().request["messages"])

# %% [markdown]
# ## 2. A limit on tool rounds
#
# Nothing guarantees that the model ever stops asking. A tool whose result does not settle the
# question, two tools that keep pointing at each other, or simply a weak model, and the loop
# above runs until something breaks. To show that exactly, a **scripted** model that asks for
# the weather forever (twenty identical replies queued; a real runaway would not stop at twenty):

# %%
def runaway_model(replies=20):
    return fake.ScriptedModel([fake.calls(fake.call("get_weather", {"city": "Beijing"})) for _ in range(replies)])


runaway = runaway_model()
try:
    run_turn_by_hand(runaway.backend(), question, {"get_weather": get_weather})
except fake.ScriptExhausted as error:
    print(f"{type(error).__name__}: {error}  (after {len(runaway.requests)} requests)")

# %% [markdown]
# The fix is a counter: at most so many rounds of tools per turn (every framework has one; see
# the end of the lesson for their names). What to do when the limit is reached is a design
# choice, and there are two common ones:
#
# - **stop**, and tell the caller the turn ended at the limit (the toolkit does this: the last
#   reply's calls are not run, and the reply is not added to the history, since a history that
#   ends in calls without results is refused by the next request);
# - **ask once more with `tool_choice="none"`**, so that the model must answer in text with
#   what it has. This is the variant below.

# %%
def run_turn_by_hand_with_limit(backend, messages, tools_by_name, max_rounds, **options):
    """The loop, with at most ``max_rounds`` rounds of tools, then a request that must answer."""
    history = list(messages)
    specs = [each.spec() for each in tools_by_name.values()]
    for _ in range(max_rounds):
        reply = backend.chat(messages=history, tools=specs, **options).choices[0].message
        if not calls_of(reply):
            history.append(assistant_from_reply(reply))
            return history, "answered"
        history.append(assistant_from_reply(reply))
        for call in calls_of(reply):
            history.append(tool_result(call.id, render_result(tools_by_name[call.name].invoke(call.arguments))))
    reply = backend.chat(messages=history, tools=specs, tool_choice="none", **options).choices[0].message
    history.append(assistant_from_reply(reply))
    return history, "forced answer after the limit"


def stubborn(request):
    """A scripted reply can be a function of the request: calls, unless tool_choice forbids them."""
    if request.get("tool_choice") == "none":
        return fake.text("Beijing is sunny, 24 °C.")
    return fake.calls(fake.call("get_weather", {"city": "Beijing"}))


runaway = fake.ScriptedModel([stubborn] * 20)
history, how = run_turn_by_hand_with_limit(runaway.backend(), question, {"get_weather": get_weather}, max_rounds=3)
print(how, "|", len(runaway.requests), "requests |", sum(m["role"] == "tool" for m in history), "tool results")
print("last request's tool_choice:", runaway.requests[-1].get("tool_choice"))
print("answer:", history[-1]["content"])

# %% [markdown]
# ## 3. What a result becomes
#
# A `role: tool` message carries *text*. Whatever the function returns must become a string,
# and the rule the toolkit follows is:
#
# - `None` (a function without a `return`) becomes `"success"`, so the model still learns that
#   the call worked; an empty string would leave it guessing, and often calling again;
# - a `str` is sent as it is;
# - anything else is sent as JSON: dicts, lists, numbers, pydantic models, dataclasses, enums,
#   dates (`toolkit.tools.render_result`, using pydantic's serialiser). Non-English text stays
#   readable (`ensure_ascii=False`), which is also fewer tokens.
#
# Computed for a few kinds of value:

# %%
class Priority(enum.Enum):
    HIGH = "high"


@dataclasses.dataclass
class Shipment:
    carrier: str
    eta: datetime.date


class Order(BaseModel):
    order_id: str
    status: str
    shipment: Shipment | None = None


values = [None, "北京：晴，24°C", 12.0, ["A1001", "A1002"], {"city": "上海", "temperature": 27},
          Priority.HIGH, datetime.date(2025, 6, 1),
          Order(order_id="A1001", status="shipped", shipment=Shipment("SF Express", datetime.date(2025, 6, 3)))]
for value in values:
    print(f"{type(value).__name__:<10} -> {render_result(value)}")

# %% [markdown]
# ## 4. Return behaviour: to the model, immediately, immediately if last
#
# By default a result goes back to the model, which turns it into an answer. Some results *are*
# the answer: a report export returns a download link, and a model that "summarises" it can
# only add risk (a mangled URL, an invented expiry date) and another request's worth of time
# and tokens. The toolkit's `tool(return_behavior=...)` has three values:
#
# | value | the result goes |
# |---|---|
# | `"to_model"` (default) | back to the model, which answers |
# | `"immediate"` | straight to the caller; the model is not asked again |
# | `"immediate_if_last"` | straight to the caller when it is the *last* call of the round; otherwise to the model |
#
# The rule for a round with several calls: return directly only if no call failed, and either
# the last call is `immediate_if_last`, or every call is `immediate` / `immediate_if_last`. So
# a round that mixes an `immediate` tool with a `to_model` one goes back to the model, which
# still needs the other result; but an `immediate_if_last` call in last place wins even then,
# and the other calls' results stay in the execution record for the caller.

# %%
@tool(return_behavior="immediate")
def export_report(customer_id: str, month: str) -> str:
    """Export a customer's monthly report and return the download link.

    Args:
        customer_id: Customer number, e.g. C-1024.
        month: Month as YYYY-MM.
    """
    return f"https://reports.example.com/{customer_id}/{month}.xlsx?expires=24h"


@tool(return_behavior="immediate_if_last")
def create_ticket(summary: str) -> dict:
    """Open a support ticket.

    Args:
        summary: One sentence describing the problem.
    """
    return {"ticket": "T-5521", "summary": summary}


print("the rule, computed for a few rounds in which every call succeeded:")
for behaviours in (["immediate"], ["to_model", "immediate"], ["immediate_if_last"],
                   ["immediate_if_last", "to_model"], ["to_model", "immediate_if_last"]):
    records = [ToolExecution(call_id=f"call_{n}", name="t", arguments_raw="{}") for n, _ in enumerate(behaviours)]
    print(f"  {str(behaviours):<40} -> {'directly to the caller' if returns_directly(behaviours, records) else 'back to the model'}")

# %% [markdown]
# Now through the toolkit's loop. Each round below is a hand-written reply of the **scripted**
# model (the exact combinations matter here, not what a model would choose); what is computed
# is what the loop does with them: how the turn stops, what it returns, and how many requests
# it made.

# %%
report_tools = ToolSet([export_report, create_ticket, get_weather])
export = fake.call("export_report", {"customer_id": "C-1024", "month": "2025-05"})
ticket = fake.call("create_ticket", {"summary": "Report for May is empty"})
weather = fake.call("get_weather", {"city": "Beijing"})
rounds = {
    "export_report alone": [export],
    "create_ticket, then get_weather": [ticket, weather],
    "get_weather, then create_ticket": [weather, ticket],
}
for label, round_calls in rounds.items():
    model = fake.ScriptedModel([fake.calls(*round_calls), fake.text("(the model's answer)")])
    # the Chinese: Export C-1024's report for May
    result = run_turn(model.backend(), [{"role": "user", "content": "导出C-1024五月的报表"}], report_tools)
    outcome = result.immediate_result if result.stop_reason == "immediate" else result.final_text
    print(f"{label:<33} stop={result.stop_reason:<10} requests={len(model.requests)}  returned: {outcome}")

# %% [markdown]
# ## 5. Hidden context, filled in at execution
#
# Some parameters are not the model's business: *which user* is asking, a trace id. A parameter
# typed `MemoryId` or `InvocationContext` is left out of the schema (the optional
# `lessons/05_schemas_in_depth.py` shows how). The loop is where it gets its value: the caller
# passes `context=InvocationContext(...)` to the turn, and each tool that asks for it receives
# it when it runs. The model cannot see or forge it.
#
# A real turn on the embedded model, through the toolkit's `run_turn`: the first request is
# forced to call `list_my_orders` by name; the later request is `"auto"` (the loop relaxes a
# forcing `tool_choice` after the first request, lesson 7).

# %%
ORDERS = {"user-123": [{"order_id": "A1001", "status": "shipped"}, {"order_id": "A1002", "status": "pending"}],
          "user-456": [{"order_id": "A1003", "status": "delivered"}]}
seen_by_tool = []


@tool
def list_my_orders(memory_id: MemoryId, context: InvocationContext) -> list:
    """List the orders of the user who is asking."""
    seen_by_tool.append({"memory_id": memory_id, "user": context.user, "trace_id": context.trace_id})
    return ORDERS.get(memory_id, [])


# the Chinese: Which orders do I have?
result = run_turn(backend, [{"role": "user", "content": "我有哪些订单？"}], [list_my_orders, get_weather],
                  tool_choice={"type": "function", "function": {"name": "list_my_orders"}},
                  context=InvocationContext(user="Wang", memory_id="user-123", trace_id="t-7f3a"),
                  max_rounds=1, request_options={"max_tokens": 60, "temperature": 0})
print(format_trace(result))

# %%
print("the schema the model was sent:")
show(next(t for t in result.rounds[0].request["tools"] if t["function"]["name"] == "list_my_orders"))
print("what the tool received when it ran:", seen_by_tool)
print("'user-123' in the first request:", "user-123" in json.dumps(result.rounds[0].request, ensure_ascii=False))

# %% [markdown]
# The first request never contained the memory id; the tool still received it. (The *result*
# of the tool, the user's orders, does go to the model in the next request, as it must.) On
# this run the turn ended `answered` after 2 rounds, but the answer answers nothing: the model
# wrote the question back (`我有哪些订单？`) instead of the two orders the tool returned. A
# 135M model does that with a result in front of it; the loop cannot tell, since an answer is
# any text. Had it asked for a new call in round 2, `max_rounds=1` would have ended the trace
# with `max_rounds` instead (a repeat of the answered call is never sent, lesson 13).
#
# ## 6. The toolkit's `run_turn` and what it returns
#
# `toolkit.loop.run_turn(backend, messages, tools, ...)` is the loop of this lesson with every
# option in one place: the fields of one object, `toolkit.turn_options.TurnOptions`, each with
# its default and its check. Give them as keyword arguments, as below, or build the object once
# and pass it to every turn (`run_turn(backend, messages, tools, options)`):
#
# | argument | what it does |
# |---|---|
# | `max_rounds=5` | the round limit; the turn stops with `stop_reason="max_rounds"` |
# | `tool_choice`, `parallel_tool_calls` | sent on the first request (lessons 7 and 8) |
# | `context=InvocationContext(...)` | fills `MemoryId` / `InvocationContext` parameters |
# | `concurrent=True, max_workers=4` | runs a reply's calls in a thread pool (lesson 8) |
# | `errors=ErrorPolicy(...)`, `result_limit=2000` | error wording and result truncation (lessons 9 and 12) |
# | `providers=[...]` | tools offered per request (lesson 11) |
# | `protocol="string"` | the same loop over the string protocol of lessons 2–3 |
#
# It returns a `TurnResult`: `final_text`, `stop_reason` (`"answered"`, `"immediate"`,
# `"max_rounds"`, `"no_reply"`, `"call_in_text"`), `immediate_result`, `messages` (the history,
# ready for the next turn), `rounds` (each with the exact `request` sent, the `calls` and the
# `executions`) and `tool_executions`, the record of every call that ran (lesson 12).
#
# Every way out of the loop is one of those stop reasons, except one: a model call that fails
# (a time-out, a 429 after the client's retries) raises a `LabError` to the caller. A tool
# that fails does not end the turn; the `ErrorPolicy` (lesson 9) turns the failure into the
# call's result, and the model reads it in the next round.
#
# ```mermaid
# flowchart TD
#     start(["the user's message"]) --> ask["ask the model: the whole history + the tools"]
#     ask -- "the model call fails" --> raised(["LabError raised to the caller"])
#     ask --> reply{"what does the reply hold?"}
#     reply -- "text" --> answered(["stop: answered"])
#     reply -- "no text, no call" --> noreply(["stop: no_reply"])
#     reply -- "a tool_call block in its text" --> intext(["stop: call_in_text"])
#     reply -- "tool_calls" --> limit{"max_rounds tool rounds run already?"}
#     limit -- "yes" --> maxrounds(["stop: max_rounds, the calls not run"])
#     limit -- "no" --> run["run every call"]
#     run -- "a call fails: unknown tool, bad arguments, raises, times out" --> policy["ErrorPolicy: a sanitized message is the call's result"]
#     run --> append["append the reply, then one role tool message per call, with its tool_call_id"]
#     policy --> append
#     append --> goesdirect{"section 4's rule: do the results go straight to the caller?"}
#     goesdirect -- "yes" --> immediate(["stop: immediate"])
#     goesdirect -- "no" --> ask
# ```
#
# The runaway model once more, now with the toolkit's limit:

# %%
runaway = runaway_model()
result = run_turn(runaway.backend(), question, [get_weather], max_rounds=3)
print(format_trace(result))
print("\nrequests:", len(runaway.requests), "| last message in the history:", result.messages[-1]["role"])
show(result.tool_executions[0].to_dict())

# %% [markdown]
# ## Other frameworks
#
# Each has this loop, under other names. LangChain's agents run on LangGraph, which stops at the
# run's `recursion_limit`. The **OpenAI Agents SDK**'s `Runner.run(agent, input, max_turns=...)`
# raises `MaxTurnsExceeded`, and `Agent(tool_use_behavior="stop_on_first_tool")` returns a tool's
# result as the answer; **pydantic-ai** caps a run with `UsageLimits(request_limit=...)` and gives
# hidden state to tools through `RunContext`. **LangChain4j** (Java) sets the limit with
# `maxToolCallingRoundTrips(...)` on the `AiServices` builder: the source articles'
# `maxSequentialToolsInvocations` is deprecated in its favour. Its
# `@Tool(returnBehavior = ReturnBehavior.IMMEDIATE)` needs the service method to return
# `Result<T>`, and `@ToolMemoryId` fills the memory id.
#
# LangChain is a Python package, so it runs here too, offline: its `ChatOpenAI` speaks to any
# OpenAI-compatible endpoint, the lab's embedded one included. `bind_tools` turns a function
# into the `tools` field, `AIMessage.tool_calls` is the reply's `tool_calls` with the arguments
# already parsed, and a `ToolMessage` is a `role: tool` message matched by `tool_call_id`: the
# round trip of this lesson, written by the framework.

# %%
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool as langchain_tool
from langchain_openai import ChatOpenAI


@langchain_tool("get_weather")
def weather_for_langchain(city: str) -> dict:
    """Get the current weather (condition and temperature) in one city.

    Args:
        city: City name, in English or Chinese, e.g. Beijing or 北京.
    """
    return get_weather(city)  # the demo tool, as LangChain's tool


chat = ChatOpenAI(base_url=backend.base_url, api_key=backend.client.api_key, model=backend.model,
                  temperature=0, seed=0, max_tokens=80).bind_tools([weather_for_langchain])
conversation = [HumanMessage("What's the weather in Shanghai?")]
asked = chat.invoke(conversation)
print("the model asks for:", asked.tool_calls)
conversation += [asked, *(weather_for_langchain.invoke(call) for call in asked.tool_calls)]
print("the tool says:      ", conversation[-1].content)
answer = chat.invoke(conversation)
print("the model answers:  ", answer.content, "| calls:", answer.tool_calls)

# %% [markdown]
# The framework's round trip is this lesson's: one call, one `ToolMessage` with its result,
# then an answer that quotes what the tool said (cloudy, 27, celsius), with sentences the small
# model made up around the quote (Shanghai is "a city with a lot of weather conditions") until
# `max_tokens` cut it off mid-sentence.

# %% [markdown]
# ## Summary
#
# - The loop: ask; while the reply has `tool_calls`, append it, run every call, append one
#   `role: tool` message per call with its `tool_call_id`, and ask again with the whole history.
# - Always bound it. Either stop at the limit and say so (`stop_reason="max_rounds"`), or ask
#   one last time with `tool_choice="none"`.
# - Results become text: `None` → `"success"`, strings as they are, everything else as JSON.
# - A tool whose result *is* the answer (`"immediate"`, the report export) ends the turn without
#   asking the model again; `"immediate_if_last"` does so only as the round's last call.
# - Hidden context is passed to the turn and injected when a tool runs; it never enters a request.
#
# Labs: open `labs/06_loop_with_ids.py` and write the loop yourself, graded on exact scripts
# (several calls per reply, ids in no order, a made-up tool, a model that never stops). Then
# `labs/06_loop_guard.py`: a sharper guard than the round limit, which refuses a call the model
# has already made with the same arguments. And `labs/06_return_behaviour.py`: the step of the
# loop that decides, from section 4's rule, whether a round's results go to the model or
# straight to the user.
