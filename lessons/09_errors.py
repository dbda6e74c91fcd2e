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
# # Lesson 9 — Errors: every failure becomes something the model can read
#
# *The course's terms are defined, each with the lesson that teaches it, in the [glossary](../docs/glossary.md).*
#
# A tool-calling turn has many places to fail. The model can name a tool that does not exist,
# or write arguments that do not fit the schema. A tool can raise, or hang. The model call
# itself can time out or be rate-limited. And a tool can succeed yet return nothing useful, so
# that the model asks again and again.
#
# The rule most tool-calling frameworks follow: **a failure inside a
# turn goes back to the model as text, and the loop never crashes** — but that text must be
# safe (no traceback, no file path, no key), while the full story goes to the log.
#
# ## What you will learn
#
# - what the model is told for an unknown tool name, bad arguments, a tool that raises and a
#   tool that hangs, and what the log keeps;
# - when a native call's broken `arguments` may be repaired instead (never when cut off);
# - why raw exception text must be sanitized before a model sees it;
# - model-call time-outs and retries with exponential back-off, watched against a tiny local
#   server that answers 429 twice;
# - retries inside a tool, and "not found" results that stop a loop;
# - how to reword every case with the loop's `ErrorPolicy`.

# %%
import json
import logging
import re
import threading
import time
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import toolkit
from toolkit import fake
from toolkit.client import connect
from toolkit.demo_tools import get_weather
from toolkit.errors_for_model import ErrorPolicy, sanitize
from toolkit.lab_error import LabError
from toolkit.loop import run_turn
from toolkit.tools import tool
from toolkit.trace import format_trace

backend = connect(capture=True)


class KeepRecords(logging.Handler):
    """Collects the loop's log records, so that we can look at what the log keeps."""

    def __init__(self):
        super().__init__()
        self.records = []

    def emit(self, record):
        self.records.append(record)


loop_log = logging.getLogger("toolkit.loop")
kept = KeepRecords()
loop_log.addHandler(kept)
loop_log.propagate = False  # keep the full tracebacks out of the notebook; we print what we need


# %% [markdown]
# ## 1. A tool that raises: what the model sees, what the log keeps
#
# Start with the most common failure. This report exporter fails the way real code does: the
# exception message names an internal host, a configuration file and a key. First, by hand:
# what would a naive loop send back if it caught the exception and used its text?

# %%
@tool
def export_report(customer_id: str, month: str) -> str:  # lesson 6's exporter, now failing
    """Export a customer's monthly report and return the download link.

    Args:
        customer_id: Customer number, e.g. C-2048.
        month: Month as YYYY-MM.
    """
    raise ConnectionError("could not reach postgres://reports:Hx9@10.0.3.7:5432/reports "
                          "(settings in /srv/reports/conf/db.yaml, api_key=sk-live-3f9a8b7c6d5e4f3a)")


try:
    export_report.invoke({"customer_id": "C-2048", "month": "2025-05"})
except Exception:
    raw = traceback.format_exc()
# File names as the repository has them (the folder the lab sits in, and the kernel's scratch
# file for this cell, differ on every machine and every run); what they reveal stays the same.
raw = re.sub(r"/tmp/ipykernel_\d+/\d+\.py", "<this cell>", raw.replace(str(Path(toolkit.__file__).parents[1]) + "/", ""))
# Any other frame (Python's own library, an installed package) keeps only its file's name.
raw = re.sub(r'File "(?:/|[A-Za-z]:\\)[^"]*[/\\]([^"/\\]+)"', r'File "\1"', raw)
print("naive text for the model:\n" + raw)
print("sanitized text for the model:\n" + sanitize(raw))

# %% [markdown]
# The naive text tells the model (and, through it, the user — or whoever wrote a prompt
# injection) where the code lives, which database it uses and a live key. The sanitized text
# keeps what the model needs: *which* error, roughly *why*. The loop does this for every
# failure. Here it is with the real model, forced to call the exporter by a named
# `tool_choice`:

# %%
kept.records.clear()
result = run_turn(backend, [{"role": "user", "content": "Export customer C-2048's report for May 2025."}],
                  [export_report], tool_choice={"type": "function", "function": {"name": "export_report"}},
                  parallel_tool_calls=False, max_rounds=1, request_options={"max_tokens": 48, "temperature": 0})
execution = result.tool_executions[0]
print("error kind:     ", execution.error)
print("model was told: ", execution.result_text)
detail = kept.records[-1].getMessage().splitlines()
print(f"the log kept {len(detail)} lines, ending with:\n  " + "\n  ".join(detail[-2:]))
assert execution.error == "tool_error" and "sk-live" not in execution.result_text

# %% [markdown]
# The record (`execution.error_detail`) and the log keep the full traceback for you; the model
# got one line. (The log now holds the key in clear text: logs need access control and a
# retention policy too, but they stay inside your system, unlike the model's context.) The
# source articles' advice is the same: *tell the model it failed, not how your system is built*.
#
# ## 2. A hallucinated tool name and bad arguments
#
# These two need a model that makes a specific mistake on demand, which no real model does
# reliably, so the next cells use the **scripted** fake model: its replies are written by hand
# (a misspelt tool name, a wrong parameter, broken JSON) and then corrected. What we study is
# the loop's answer to each mistake, not the model.

# %%
scripted = fake.ScriptedModel([
    fake.calls(fake.call("get_wether", {"city": "Beijing"})),  # no such tool
    fake.calls(fake.call("get_weather", {"town": "Beijing"}),  # wrong parameter name
               fake.call("get_weather", '{"city": "Beijing"')),  # JSON cut short
    fake.calls(fake.call("get_weather", {"city": "Beijing"})),
    fake.text("It is sunny in Beijing, 24 °C."),
])
# the Chinese: How is the weather in Beijing?
result = run_turn(scripted.backend(), [{"role": "user", "content": "北京天气怎么样？"}], [get_weather])
print(format_trace(result))

# %%
for number, request in enumerate(scripted.requests[1:3], start=2):
    tool_messages = [m for m in request["messages"] if m["role"] == "tool"][-2:]
    print(f"request {number} carried back:")
    for message in tool_messages:
        print(f"  {message['tool_call_id']}: {message['content']}")


# %% [markdown]
# Each error names the problem precisely enough to fix (the tools that exist; the parameter
# that is missing or unexpected; where the JSON broke) and ends with what to do next. The turn
# went on; nothing raised. Some frameworks are stricter by default and raise an exception for
# an unknown name or bad arguments unless told otherwise (see the end of the lesson); the lab's
# loop takes the feeding-back route by default.
#
# ### Repairing a native call's arguments first
#
# Feeding the error back costs a model round. For the small slips a model makes in JSON (a
# trailing comma, single quotes) there is a cheaper first step: repair the `arguments` string,
# as lesson 2 did for the string protocol, and feed an error back only when repair fails. One
# rule makes it safe: never repair a call cut off by `max_tokens` (`finish_reason` is
# `"length"`). Closing a string that stopped half way turns `"Beij` into the city `Beij`, an
# argument nobody asked for.

# %%
from toolkit.repair import parse_json_object


def parse_arguments(arguments: str, finish_reason: str) -> dict:
    """A native call's arguments: as sent, or repaired if the reply ended by itself."""
    try:
        return json.loads(arguments)
    except json.JSONDecodeError:
        if finish_reason == "length":
            raise  # cut off: whatever a repair added would be made up
        return parse_json_object(arguments, repair="hand")[0]


for arguments, finish_reason in [('{"city": "Beijing",}', "tool_calls"), ("{'city': 'Beijing'}", "tool_calls"),
                                 ('{"city": "Beij', "length")]:
    try:
        print(f"{arguments:22} {finish_reason:10} -> {parse_arguments(arguments, finish_reason)}")
    except json.JSONDecodeError as error:
        print(f"{arguments:22} {finish_reason:10} -> not repaired ({error.msg}): feed the error back")
    print(f"{'':22} {'':10}    repair regardless: {parse_json_object(arguments, repair='hand')[0]}")

# %% [markdown]
# The first two were repaired to the call the model meant. The third shows why the rule is
# there: a repair of it, printed last, is a call for a city called `Beij`.
#
# ## 3. A tool that hangs
#
# A tool may wait forever on a dead service. `@tool(timeout=...)` bounds it: the loop stops
# waiting, tells the model, and moves on. Python cannot
# kill a thread, so the tool keeps running in the background until it returns by itself; its
# late result is thrown away. Tools that can cancel properly (an HTTP client's own timeout, a
# database statement timeout) should do that as well.

# %%
@tool(timeout=0.5)
def check_inventory(product: str) -> str:
    """Check how many items of a product are in stock.

    Args:
        product: Product name.
    """
    time.sleep(3)  # a warehouse service that does not answer
    return "12 in stock"


result = run_turn(backend, [{"role": "user", "content": "Is the blue kettle in stock?"}], [check_inventory],
                  tool_choice={"type": "function", "function": {"name": "check_inventory"}}, max_rounds=1,
                  parallel_tool_calls=False,
                  request_options={"max_tokens": 48, "temperature": 0})
execution = result.tool_executions[0]
print(f"error kind: {execution.error}, waited {execution.seconds:.2f} s")
print("model was told:", execution.result_text)
assert execution.error == "timeout" and execution.seconds < 2


# %% [markdown]
# ## 4. Model-call time-outs and retries with exponential back-off
#
# The model call can fail too: the endpoint is slow, overloaded (HTTP 429 "too many
# requests"), or briefly down (5xx). These are the client's business, not the loop's. The
# `openai` client retries 408, 409, 429, 5xx and time-outs, waiting 0.5 s, then 1 s, 2 s, …
# (at most 8 s, each shortened by up to a quarter at random so that many clients do not
# retry in lock-step), or as long as a `Retry-After` header asks. `connect(timeout=...,
# max_retries=...)` sets both (or `LAB_TIMEOUT` and `LAB_MAX_RETRIES`).
#
# To watch it happen, here is a tiny local server that answers 429 to the first two requests
# and a normal reply to the third, recording when each attempt arrived.

# %%
class TinyServer(BaseHTTPRequestHandler):
    attempts: list[float] = []
    failures_before_ok = 2
    delay = 0.0

    def log_message(self, *args):  # keep the notebook quiet
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        TinyServer.attempts.append(time.perf_counter())
        if len(TinyServer.attempts) <= TinyServer.failures_before_ok:
            body, status = {"error": {"message": "Rate limit reached, slow down", "type": "rate_limit"}}, 429
        else:
            time.sleep(TinyServer.delay)
            body, status = {"id": "chatcmpl-tiny", "object": "chat.completion", "created": 0, "model": "tiny",
                            "choices": [{"index": 0, "finish_reason": "stop",
                                         "message": {"role": "assistant", "content": "OK"}}]}, 200
        data = json.dumps(body).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up waiting (the time-out demo below)


server = ThreadingHTTPServer(("127.0.0.1", 0), TinyServer)
threading.Thread(target=server.serve_forever, daemon=True).start()
tiny_url = f"http://127.0.0.1:{server.server_address[1]}/v1"


def attempt_report(started):
    times = [t - started for t in TinyServer.attempts]
    gaps = [later - earlier for earlier, later in zip(times, times[1:])]
    return (f"{len(times)} attempt(s) at " + ", ".join(f"{t:.2f} s" for t in times)
            + ("; gaps " + ", ".join(f"{g:.2f} s" for g in gaps) if gaps else ""))


# %%
TinyServer.attempts, TinyServer.failures_before_ok, TinyServer.delay = [], 2, 0.0
patient = connect(tiny_url, model="tiny", api_key="test-key", timeout=5, max_retries=2)
started = time.perf_counter()
reply = patient.chat(messages=[{"role": "user", "content": "hi"}])
print("reply:", reply.choices[0].message.content, "|", attempt_report(started))

# %% [markdown]
# Two refusals, two waits that roughly double, then the answer; the caller saw only the
# answer. **Change it and observe:** with `max_retries=1` the client gives up after the second
# 429, and `connect`'s error says what happened and what to do.

# %%
TinyServer.attempts, TinyServer.failures_before_ok = [], 2
impatient = connect(tiny_url, model="tiny", api_key="test-key", timeout=5, max_retries=1)
started = time.perf_counter()
try:
    impatient.chat(messages=[{"role": "user", "content": "hi"}])
except LabError as error:
    print("LabError:", error)
print(attempt_report(started))

# %% [markdown]
# A time-out is retried the same way. Here the server takes 1.5 s to answer and the client
# waits at most 0.4 s per attempt:

# %%
TinyServer.attempts, TinyServer.failures_before_ok, TinyServer.delay = [], 0, 1.5
hasty = connect(tiny_url, model="tiny", api_key="test-key", timeout=0.4, max_retries=1)
started = time.perf_counter()
try:
    hasty.chat(messages=[{"role": "user", "content": "hi"}])
except LabError as error:
    print("LabError:", error)
print(attempt_report(started))
server.shutdown()


# %% [markdown]
# Choose the time-out from the slowest answer you expect (a long generation on a small CPU
# can take a minute: the lab's default is 120 s), and keep retries few: each retry of a slow
# request costs the full time-out again.
#
# ## 5. Retries inside a tool
#
# The loop does not retry tools: a tool knows best which of its failures are worth another
# try. The source articles' example is a payment-status query: try up to three times with a doubling
# pause, and if the service is still down, *return* a message the model can pass on instead of
# raising.

# %%
class FlakyPayments:
    """A payment service that fails a given number of times before it answers."""

    def __init__(self, failures):
        self.failures, self.calls = failures, 0

    def status(self, order_id):
        self.calls += 1
        if self.calls <= self.failures:
            raise ConnectionError("payment service unavailable")
        return f"Order {order_id}: paid"


payments = FlakyPayments(failures=2)


@tool
def payment_status(order_id: str) -> str:
    """Look up whether an order has been paid.

    Args:
        order_id: Order number such as A1024.
    """
    attempts = 3
    for attempt in range(attempts):
        try:
            return payments.status(order_id)
        except ConnectionError:
            if attempt == attempts - 1:
                return "Error: the payment service is unavailable right now. Tell the user to try again later."
            time.sleep(0.1 * 2 ** attempt)  # 0.1 s, 0.2 s: exponential back-off


for failures in (2, 5):
    payments = FlakyPayments(failures)
    started = time.perf_counter()
    answer = payment_status.invoke({"order_id": "A1024"})
    print(f"service fails {failures}x: {payments.calls} attempt(s) in {time.perf_counter() - started:.2f} s -> {answer}")


# %% [markdown]
# ## 6. "Not found" results that stop loops
#
# One source article tells of a search tool that returned an empty result when nothing matched; the
# model took the empty text as "the search did not work" and searched again, and again. Once
# the tool said plainly *"no matching record; tell the user"*, the model stopped.
#
# The **scripted** model below imitates that model exactly: it repeats the call while the
# result is empty and answers once the result says something. It shows the mechanism, not a
# measurement. The loop's `max_rounds` is the hard stop either way. The embedded model follows
# after it, on the same two tools.

# %%
def persistent_model(request):
    last = request["messages"][-1]
    if last["role"] == "tool" and last["content"].strip():
        return fake.text("There is no order A9999. Please check the order number.")
    return fake.calls(fake.call("get_order_status", {"order_id": "A9999"}))


ORDERS = {"A1024": "shipped"}


@tool(name="get_order_status")
def get_order_status_silent(order_id: str) -> str:
    """Look up the status of one order.

    Args:
        order_id: Order number such as A1024.
    """
    return ORDERS.get(order_id, "")  # nothing found: an empty answer


@tool(name="get_order_status")
def get_order_status_clear(order_id: str) -> str:
    """Look up the status of one order.

    Args:
        order_id: Order number such as A1024.
    """
    return ORDERS.get(order_id, f"No order {order_id} was found. Tell the user; do not search again.")


for variant in (get_order_status_silent, get_order_status_clear):  # same name, two behaviours
    model = fake.ScriptedModel([persistent_model] * 10)
    turn = run_turn(model.backend(), [{"role": "user", "content": "Where is order A9999?"}], [variant], max_rounds=4)
    print(f"{variant.function.__name__:<24} stop={turn.stop_reason:<11} rounds={len(turn.rounds)} "
          f"tool calls={len(turn.tool_executions)}")

# %% [markdown]
# The same two tools on the embedded model, with the first round forced to call (so that both
# turns reach the tool) and OpenAI's defaults after it:

# %%
for variant in (get_order_status_silent, get_order_status_clear):
    turn = run_turn(backend, [{"role": "user", "content": "Where is order A9999?"}], [variant], max_rounds=4,
                    tool_choice="required", request_options={"max_tokens": 60, "temperature": 0, "seed": 0})
    print(f"{variant.function.__name__:<24} stop={turn.stop_reason:<11} rounds={len(turn.rounds)} "
          f"tool calls={len(turn.tool_executions)}")
    print(f"    tool said: {turn.tool_executions[0].result_text!r}")
    print(f"    answer:    {turn.final_text!r}")

# %% [markdown]
# On the embedded model the two tools end the same way: `stop=answered` after 2 rounds, with
# one tool call each. The silent tool said `''`; the clear one said that no order A9999 was
# found. Neither answer passes that on: both talk about "the get order status tool", and
# neither says that the order was not found. The round counts cannot tell the two tools apart
# here, because the embedded engine never sends a call that repeats one already answered in
# the turn (lesson 13): this model cannot search for A9999 again and again, as the scripted
# one did. What differs is what the model was given. An empty
# result holds nothing an answer could pass on; "not found" is a fact that an answer can state,
# that a user can act on, and that you can read in the trace. The clear message did not make
# this small model's answer right; it is what makes a right answer possible.

# %% [markdown]
# ## 7. The loop's `ErrorPolicy`: your own wording
#
# Every message above came from the loop's `ErrorPolicy`, one function per kind of failure.
# Replace any of them. Whatever a strategy returns still goes
# through `sanitize`; `sanitize=None` exists only to show why it is on by default. The same
# scripted failing call is run under three policies:

# %%
policies = {
    "default": ErrorPolicy(),
    "terse": ErrorPolicy(
        tool_error=lambda error, name: "Error: the tool failed. Tell the user.",
        unknown_tool=lambda name, offered: f"Error: there is no tool called {name}"),
    "raw message, not sanitized": ErrorPolicy(tool_error=lambda error, name: f"{name} failed: {error}", sanitize=None),
}
for label, policy in policies.items():
    model = fake.ScriptedModel([fake.calls(fake.call("export_report", {"customer_id": "C-2048", "month": "2025-05"})),
                                fake.text("Sorry, the export failed.")])
    turn = run_turn(model.backend(), [{"role": "user", "content": "Export C-2048's report for May 2025"}], [export_report],
                    errors=policy)
    print(f"{label}:\n    {turn.tool_executions[0].result_text}")

# %% [markdown]
# The last line is the one to never ship.

# %% [markdown]
# ## Other frameworks
#
# **LangChain**'s `ToolNode` (LangGraph) turns a tool's exception into a `ToolMessage` with
# `handle_tool_errors`. The **OpenAI Agents SDK**'s `@function_tool(failure_error_function=...)`
# writes what the model is told (`None` re-raises instead). In **pydantic-ai** a tool raises
# `ModelRetry("...")` to send the model a message and let it try again, up to `retries`.
# **LangChain4j** (Java) has `toolExecutionErrorHandler`, `toolArgumentsErrorHandler` and
# `hallucinatedToolNameStrategy` on the `AiServices` builder, and `.timeout(...)` and
# `.maxRetries(...)` on its model builders. The source articles' `toolExecutionTimeout` on the
# `AiServices` builder is not in LangChain4j's core API: bound the time in the tool itself.

# %% [markdown]
# ## Summary
#
# | failure | who handles it | what the model gets |
# |---|---|---|
# | unknown tool name | loop (`ErrorPolicy.unknown_tool`) | the names that exist |
# | bad arguments | loop (`invalid_arguments`) | each problem, by parameter |
# | tool raises | loop (`tool_error`) + `sanitize` | type and first line, no paths, no keys |
# | tool hangs | `@tool(timeout=...)` + loop | "did not finish within n s" |
# | model call slow / 429 / 5xx | the client: `connect(timeout=, max_retries=)` | nothing: retried with back-off, or a `LabError` for you |
# | flaky service | the tool itself: retry, then return a message | a sentence it can pass on |
# | nothing found | the tool: say so plainly | "no order A9999", not "" |
#
# The full detail (tracebacks, timings, raw arguments) is in the log and in
# `result.tool_executions` — lesson 12 looks at that record.
#
# Lab: open `labs/09_sanitize_error.py` and write `sanitize` yourself.
