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
# *The course's terms are defined, each with the lesson that teaches it, in the [glossary](../docs/glossary.md).*
#
# Lessons 2 and 3 put everything into text: the tools were sentences in the system prompt,
# the calls were tags in the reply, the results were user messages, and a regex hoped to find
# the calls. This lesson first removes the hoping with the chat API's own fields for tools
# and calls, and takes them apart: the request, the reply, a full round trip. Then it
# measures them on lesson 2's questions against the `<tool>` protocol, and against that
# protocol under a **grammar** that lets the model write nothing but a well-formed call. The
# model still only writes text (lesson 13 shows the server turning it into these fields), but
# *your* code never parses a tag again.
#
# ## What you will learn
#
# - the request field `tools`: each tool a name, a description and a **JSON Schema** of its
#   parameters;
# - the reply field `tool_calls`: an `id`, the function `name`, and `arguments` as a JSON
#   **string** — with `content` usually null; why `finish_reason` is not the way to tell;
# - how a result goes back: a message with `role: "tool"` and the `tool_call_id` of the call
#   it answers — the ids that lesson 3 was missing;
# - what a grammar is, and what it does to lesson 2's `<tool>` protocol: every reply parses;
#   whether the call is *right* is another matter (measured against native calls, small n);
# - what all this looks like on the wire, captured from the embedded endpoint, and why the
#   same code runs against OpenAI, DeepSeek, Qwen or a local server.

# %%
import json

import jsonschema
import pandas as pd
from IPython.display import display

from toolkit import protocol
from toolkit.bench.rates import wilson_interval
from toolkit.bench.scoring import check
from toolkit.bench.suite_model import Case
from toolkit.client import connect, connect_embedded
from toolkit.demo_tools import calculate
from toolkit.display import show
from toolkit.lab_error import LabError
from toolkit.protocol_grammar import generate_call, protocol_gbnf

backend = connect(capture=True)
print("talking to:", backend.label)

# %% [markdown]
# ## 1. Three tools, as chat APIs take them
#
# Three tools, described as the dicts that chat APIs take (section 2 looks at them closely):
# lesson 2's `get_weather`, `square_root` and `calculate`, the calculator that takes one
# arithmetic expression as text, as in every lesson (`toolkit/demo_tools.py`).

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
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius",
                         "description": "Temperature unit"},
            },
            "required": ["city"],
        },
    },
}
SQUARE_ROOT = {
    "type": "function",
    "function": {
        "name": "square_root",
        "description": "Compute the square root of a number.",
        "parameters": {
            "type": "object",
            "properties": {"x": {"type": "number", "description": "The number, 0 or more"}},
            "required": ["x"],
        },
    },
}
CALCULATE = {
    "type": "function",
    "function": {
        "name": "calculate",
        "description": "Evaluate an arithmetic expression and return the number.",
        "parameters": {
            "type": "object",
            "properties": {"expression": {"type": "string", "description": 'Arithmetic such as "12 * (3 + 4)"'}},
            "required": ["expression"],
        },
    },
}
specs = [GET_WEATHER, SQUARE_ROOT, CALCULATE]
schemas = {spec["function"]["name"]: spec["function"]["parameters"] for spec in specs}

# %% [markdown]
# ## 2. The `tools` field: JSON Schema
#
# A tool is described by a name, a description written **for the model** (it is the model's
# only clue about when to use the tool), and `parameters`: a JSON Schema object. The schema
# says which arguments exist, their types, which are `required`, with `enum` which values are
# allowed, and with `default` what the tool assumes when an argument is left out (the
# embedded endpoint uses it too: section 4). Here is the weather tool from section 1:

# %%
show(GET_WEATHER)

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
# The name has rules of its own. OpenAI's API takes `^[a-zA-Z0-9_-]{1,64}$`: letters, digits,
# `_` and `-`, at most 64 characters, and most compatible servers check the same pattern. A
# LangChain4j example that names its square-root tool `@Tool(name = "平方根运算", ...)` works
# only with a provider that accepts such a name; sent to OpenAI, or to the embedded endpoint,
# the request is refused before any model runs. Keep the name ASCII and put the Chinese in the
# description, which may hold any text:

# %%
chinese_name = {"type": "function", "function": {**SQUARE_ROOT["function"], "name": "平方根运算"}}
try:
    backend.chat(messages=[{"role": "user", "content": "100的平方根是多少？"}], tools=[chinese_name], max_tokens=16)
except LabError as error:
    print("refused:", error)
ascii_name = {"type": "function", "function": {**SQUARE_ROOT["function"], "name": "square_root",
                                               "description": "平方根运算: compute the square root of a number."}}
print("accepted:", [call.function.name for call in backend.chat(
    messages=[{"role": "user", "content": "100的平方根是多少？"}], tools=[ascii_name], tool_choice="required",
    max_tokens=32, temperature=0, seed=0).choices[0].message.tool_calls or []])

# %% [markdown]
# ## 3. A request with `tools`, and its reply
#
# The same `chat.completions.create` as before, with one more field. No system prompt describes
# the tools and no worked example shows a format: the server takes care of both.

# %%
question = "What's the weather in Beijing?"
reply = backend.chat(messages=[{"role": "user", "content": question}], tools=specs, max_tokens=60, temperature=0)
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
# ## 4. A full round trip
#
# Four parties take part: the user, your code (the app), the endpoint that runs the model, and
# the tool, which is a function in your code. The model never talks to the tool; every arrow
# to or from the tool is your code's:
#
# ```mermaid
# sequenceDiagram
#     actor User
#     participant App as App (your code)
#     participant Endpoint as Endpoint (the model)
#     participant Tool as Tool (a function in your code)
#     User->>App: What's the weather in Beijing?
#     App->>Endpoint: request: messages + tools
#     Endpoint-->>App: reply: content null, tool_calls [id, name, arguments as a JSON string]
#     App->>App: parse the arguments, check them against the schema
#     App->>Tool: run get_weather(city=...)
#     Tool-->>App: result
#     App->>Endpoint: request: messages + the assistant message with its tool_calls<br/>+ one role tool message per call, with its tool_call_id
#     Endpoint-->>App: reply: content (the answer) or more tool_calls
#     App-->>User: the final answer
# ```
#
# The cells below walk through it one arrow at a time.
#
# This request sets nothing about calling, as most clients do: `tool_choice` is left out
# (so it is `"auto"`) and parallel calls are allowed. The endpoint decides whether to call at
# all (lesson 7 covers every `tool_choice`; lesson 13 shows how this endpoint decides). The
# model chooses which tool and what arguments — and a model this small often chooses wrong,
# so look at what it chose.

# %%
messages = [{"role": "user", "content": question}]
reply = backend.chat(messages=messages, tools=specs, max_tokens=60, temperature=0, seed=0)
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
schema = next(t["function"]["parameters"] for t in specs if t["function"]["name"] == call.function.name)
print("fits the schema of", call.function.name, ":",
      not list(jsonschema.Draft202012Validator(schema).iter_errors(arguments)))
assert isinstance(call.function.arguments, str) and call.id

# %% [markdown]
# Now stage 3, which is still ours: run the function. The weather here is stand-in data for
# two cities (a real tool would ask a weather service); the square root and the arithmetic are
# real.
# A city it has no data for gets `"found": false` and a sentence saying so, never a made-up
# temperature: a tool that invents a plausible answer is one the model cannot catch (lesson 9).

# %%
import math

WEATHER_DATA = {"beijing": 25, "北京": 25, "shanghai": 28, "上海": 28}  # °C


def get_weather(city: str, unit: str = "celsius") -> dict:
    celsius = WEATHER_DATA.get(city.strip().lower())
    if celsius is None:
        return {"city": city, "found": False,
                "message": f"No weather data for {city}. Known cities: Beijing, Shanghai."}
    temperature = celsius if unit == "celsius" else round(celsius * 9 / 5 + 32)
    return {"city": city, "temperature": temperature, "unit": unit, "condition": "sunny"}


def square_root(x: float) -> float:
    return math.sqrt(x)


tools_by_name = {"get_weather": get_weather, "square_root": square_root,
                 "calculate": calculate}  # the demo calculator: a safe evaluator, never eval()


def run(call) -> str:
    """Run one call; the result goes back as text, so anything else becomes JSON first."""
    try:
        result = tools_by_name[call.function.name](**json.loads(call.function.arguments))
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

reply = backend.chat(messages=messages, tools=specs, max_tokens=48, temperature=0)
print("second request, messages on the wire:")
show(backend.last_exchange().request["messages"])

# %%
final = reply.choices[0].message
if final.tool_calls:
    print("the model asked for another call:", [(c.function.name, c.function.arguments) for c in final.tool_calls])
    print("(a loop would run it and ask again - lesson 6)")
else:
    print("final answer:", repr(final.content))
print("finish_reason:", reply.choices[0].finish_reason, "| tokens written:", reply.usage.completion_tokens)

# %% [markdown]
# On this run the round trip ended with an answer. It passes on what the tool said (no weather
# data for "B Beijing", this model's own spelling of Beijing; lesson 2 says where it comes
# from), repeats it until `max_tokens` runs out (`finish_reason` `"length"`), and invents no
# weather. Look at the tokens: 89 written, with `max_tokens=48`. The model first wrote a call
# again, `get_weather` for the same city, and the endpoint dropped it: it never sends a call
# that repeats one already answered in the turn, and writes the answer instead, with the whole
# of `max_tokens` (lesson 13 shows the rule). The usage counts the dropped call's tokens too.
# Because `unit` has `"default": "celsius"` in the schema, the same city with
# `"unit": "celsius"` added counts as the same call. Without that default it would be a new
# call and go out, and a loop would run it and ask again (lesson 6).

# %% [markdown]
# The `role: "tool"` message is not something the model reads as-is. The server renders the
# whole conversation into one prompt with its chat template; this is what the embedded model
# actually received (lesson 13 takes the template apart). Its tags, `<tool_call>` and
# `<tool_response>`, are the server's own: the same idea as lesson 2's `<tool>` and
# `<tool_result>`, but now the server writes and reads them, and your code never sees them.
# This prompt is the one the model writes a call from after the result; the answer itself
# this small model writes from a shorter prompt, with the results as a note in the question
# (lesson 13 shows both, and why). That note, "(The get weather tool says: ...)", is what the
# answer above copies nearly word for word.

# %%
from toolkit.engine.template import render_prompt

prompt = render_prompt(backend.last_exchange().request["messages"], specs)
start = prompt.index("<|im_start|>user")
print(f"[{start} characters of system turn, holding the tools, left out here]")
print(prompt[start:])

# %% [markdown]
# ## 5. The same question, three ways, measured
#
# Now that the native request is clear, how does it compare with lesson 2's protocol, and
# with that protocol under a grammar? Seven of lesson 2's eight questions, each with an
# **answer key**: the one call that answers it, and for each argument the values that count
# as right (`""` means "may be left out").
# The eighth question asks about two cities and needs two calls; here every way gets one call
# per reply, and lesson 8 is about several. `check` is the lab's scorer (lesson 10 explains
# it): right tool, every required argument, nothing extra, right types, accepted values.
# It compares strings without case, spaces or punctuation, so for `calculate` the key's
# `"17 + 25"` also accepts `"17+25"`.
# These are teaching examples, written for lesson 2, not the held-out suite.

# %%
CITY = {"Beijing": ["Beijing", "北京", "北京市"], "Shanghai": ["Shanghai", "上海", "上海市"],
        "Shenzhen": ["Shenzhen", "深圳", "深圳市"]}
ANSWER_KEY = [  # question, language, the call that answers it
    ("What's the weather in Beijing?", "en", "get_weather", {"city": CITY["Beijing"], "unit": ["celsius", ""]}),
    ("上海今天天气怎么样？", "zh", "get_weather", {"city": CITY["Shanghai"], "unit": ["celsius", ""]}),
    ("What is the square root of 2025?", "en", "square_root", {"x": [2025]}),
    ("100的平方根是多少？", "zh", "square_root", {"x": [100]}),  # What is the square root of 100?
    ("Add 17 and 25.", "en", "calculate", {"expression": ["17 + 25", "25 + 17"]}),
    ("Is it raining in Shenzhen right now?", "en", "get_weather", {"city": CITY["Shenzhen"], "unit": ["celsius", ""]}),
    ("请帮我算一下 3 加 4。", "zh", "calculate", {"expression": ["3 + 4", "4 + 3"]}),  # Please work out 3 plus 4 for me.
]
cases = [Case(id=f"lesson02-{number}", category="multiple", language=language, question=question,
              tools=list(schemas), expected=[{"name": name, "arguments": arguments}])
         for number, (question, language, name, arguments) in enumerate(ANSWER_KEY, start=1)]
print(len(cases), "questions; for example:", cases[4].question, "->", cases[4].reference_calls())

# %% [markdown]
# ### What a grammar is
#
# A **grammar** is a set of rules that says which strings are allowed. llama.cpp reads
# grammars in a format called GBNF: each rule is a name, `::=`, and what the name may stand
# for — quoted text is written as it is, `|` separates choices, `?` makes the part before it
# optional and `*` lets it repeat. While the model generates, llama.cpp checks every candidate
# next token against the rules and removes the ones that would break them; the model then
# picks its likeliest token among those left. So the text that comes out can only be text the
# grammar allows.
#
# `toolkit.protocol_grammar.protocol_gbnf` writes one for lesson 2's protocol from the tools'
# JSON Schemas: llama-cpp-python's converter turns each schema into rules, and one rule of our
# own puts the `<tool>` tags around the call. A few of its rules:

# %%
gbnf = protocol_gbnf(specs)
rules = gbnf.splitlines()
print(f"{len(rules)} rules; the whole reply, the choice of tool, and what 'calculate' may hold:\n")
for rule in rules:
    if rule.startswith(("root ::=", "call ::=", "call-0-name ::=", "call-1-name ::=", "call-2")):
        print(rule)

# %% [markdown]
# Start from `root`, printed last: the reply is `<tool>`, one `call`, `</tool>`, and nothing
# else; a call is one of three shapes, one per tool; in the `calculate` shape the name can only
# be `"calculate"` and `expression` can only be a string. A misspelt tool name, a missing
# argument or prose around the tag cannot be generated at all. (The grammar cannot limit the *length* of a string, so a
# reply can still be cut off by `max_tokens`.)
#
# ### Three ways, measured
#
# 1. **`<tool>` + regex**: lesson 2's system prompt and worked example, a plain request with
#    no `tools`, and the reply parsed with `protocol.extract_calls` (no repair).
# 2. **`<tool>` + grammar**: the very same prompt, generated by the embedded model under the
#    grammar above, parsed the same way. The grammar travels in the request, in a `grammar`
#    field that llama.cpp's server and the embedded endpoint take (OpenAI's client sends a
#    field it does not know with `extra_body`). Hosted APIs take none, so this way always asks
#    the embedded endpoint: it needs an endpoint that runs weights you hold.
# 3. **native `tools`**: only the question, with `tools` in the request, and the endpoint's own
#    `tool_calls`. `tool_choice="required"` and `parallel_tool_calls=False` ask for exactly one
#    call, as the grammar does; the endpoint uses a grammar of its own inside (lesson 13).
#
# All at temperature 0 with seed 0. A reply counts as **parsed** when a call comes out of it
# with an offered tool's name and arguments that are a JSON object; prose counts as not parsed,
# since every question here needs a tool. **Right call** is `check`'s verdict.

# %%
MAX_TOKENS = 48
offered = set(schemas)


def protocol_messages(question: str) -> list[dict]:
    return [{"role": "system", "content": protocol.render_system_prompt(specs)},
            {"role": "user", "content": "How warm is it in Paris?"},  # lesson 2's worked example
            {"role": "assistant", "content": '<tool>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool>'},
            {"role": "user", "content": question}]


def calls_in_text(text: str) -> tuple[list[dict], str | None]:
    """The calls in a <tool> reply, and why a call failed to parse if one did."""
    result = protocol.extract_calls(text, known_tools=None, repair="none")
    calls = [{"name": call.name, "arguments": call.arguments} for call in result.calls]
    problem = next((failure.detail for failure in result.failures if failure.reason != "no_call_found"), None)
    return calls, problem


def with_regex(question: str) -> tuple[str, list[dict], str | None]:
    reply = backend.chat(messages=protocol_messages(question), max_tokens=MAX_TOKENS, temperature=0, seed=0)
    text = reply.choices[0].message.content or ""
    return text, *calls_in_text(text)


# The grammar needs an endpoint that takes one: the embedded one, whatever `backend` is.
grammar_backend = connect_embedded(capture=True, api="chat")


def with_grammar(question: str) -> tuple[str, list[dict], str | None]:
    text = generate_call(protocol_messages(question), specs, max_tokens=MAX_TOKENS, seed=0,
                         backend=grammar_backend).text
    return text, *calls_in_text(text)


def with_native_tools(question: str) -> tuple[str, list[dict], str | None]:
    backend.chat(messages=[{"role": "user", "content": question}], tools=specs, tool_choice="required",
                 parallel_tool_calls=False, max_tokens=MAX_TOKENS, temperature=0, seed=0)
    message = backend.last_exchange().response["choices"][0]["message"]  # the raw JSON, as it came
    calls = [call["function"] for call in message.get("tool_calls") or []]
    raw = json.dumps(calls[0], ensure_ascii=False) if calls else (message.get("content") or "")
    return raw, calls, None  # arguments stay a JSON string: check() parses them


def parsed(calls: list[dict], problem: str | None) -> bool:
    def usable(call):
        arguments = call["arguments"]
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except json.JSONDecodeError:
                return False
        return call["name"] in offered and isinstance(arguments, dict)
    return bool(calls) and problem is None and all(usable(call) for call in calls)


def verdict(case: Case, calls: list[dict], problem: str | None):
    if calls or problem is None:
        return check(case, calls, schemas=schemas)
    return check(case, parse_error=problem, schemas=schemas)


WAYS = {"<tool> + regex": with_regex, "<tool> + grammar": with_grammar, "native tools": with_native_tools}
runs = {way: {} for way in WAYS}

# %% [markdown]
# Ways 1 and 2 send the same prompt, and the model keeps what it has already read (llama.cpp's
# cache), so they run side by side, question by question. The native prompt is a different
# one, so its questions run together afterwards.

# %%
for case in cases:
    for way in ("<tool> + regex", "<tool> + grammar"):
        runs[way][case.id] = WAYS[way](case.question)
print("ways 1 and 2:", len(cases), "questions each")
sent = grammar_backend.last_exchange().request
print("way 2's last request has:", ", ".join(sent), f"(the grammar: {len(sent['grammar'])} characters, no 'tools')")

# %%
for case in cases:
    runs["native tools"][case.id] = with_native_tools(case.question)
print("way 3:", len(cases), "questions")

# %% [markdown]
# Every reply, per question and way: the verdict (`right`, or the reason it is not), then the
# call that came out (for the native way as the endpoint returned it, `arguments` still a
# string) or, where none did, what the model wrote instead.

# %%
def trimmed(text: str, limit: int = 64) -> str:
    text = text.replace("\n", "⏎")
    return text if len(text) <= limit else text[:limit - 1] + "…"


def call_text(calls: list[dict]) -> str:
    return "; ".join(f"{call['name']}({call['arguments'] if isinstance(call['arguments'], str) else json.dumps(call['arguments'], ensure_ascii=False)})"
                     for call in calls) or "-"


verdicts = {way: [] for way in WAYS}
for case in cases:
    print(case.question)
    for way in WAYS:
        raw, calls, problem = runs[way][case.id]
        outcome = verdict(case, calls, problem)
        verdicts[way].append(outcome)
        came_out = call_text(calls) if parsed(calls, problem) else f"no call: {raw!r}"
        print(f"  {way:<17} {'right' if outcome.passed else outcome.reason:<19} {trimmed(came_out, 56)}")

# %% [markdown]
# And per way: how many replies parsed, how many picked the right tool, how many were the
# right call, each with a 95% Wilson interval (lesson 10). With seven questions the intervals
# are wide: these counts describe this run, not the model in general.

# %%
def rate(successes: int, n: int) -> str:
    low, high = wilson_interval(successes, n)
    return f"{successes}/{n}  [{low:.0%}, {high:.0%}]"


summary, why_not = [], {}
for way, outcomes in verdicts.items():
    n = len(outcomes)
    parsed_count = sum(parsed(*runs[way][case.id][1:]) for case in cases)
    summary.append({"way": way, "parsed": rate(parsed_count, n),
                    "right tool": rate(sum(v.selection_ok for v in outcomes), n),
                    "right call": rate(sum(v.passed for v in outcomes), n)})
    reasons = pd.Series([v.reason for v in outcomes if v.reason]).value_counts()
    why_not[way] = ", ".join(f"{reason} {count}" for reason, count in reasons.items()) or "-"
display(pd.DataFrame(summary).set_index("way"))
print("why not right:")
for way, reasons in why_not.items():
    print(f"  {way:<17} {reasons}")

# %% [markdown]
# What this run shows (seven questions, one seed; the reply behind each count is in the table
# above):
#
# - **The regex** got a call out of 4 of 7 replies. The other three came back without one: both
#   square-root questions as prose that answers by itself, and wrongly ("The square root of
#   2025 is 2025."), and "3 加 4" as a numbered list of digits.
# - **The grammar** took the parse failures to zero: 7 of 7. It did not move the right-call
#   rate: 2 of 7, the same two questions as with the regex (Shanghai and Shenzhen). Where the
#   model had written prose, it now had to write a call, and the call it found likeliest was
#   a weather call: for Paris, the worked example's own city, twice, and for London once.
#   Paris is also what it wrote for "Add 17 and 25." with and without the grammar. The grammar
#   fixes the shape; the model still chooses what goes into it.
# - **Native tools** parsed 7 of 7 too, picked the right tool 4 times and made the right call 3
#   times. Its three wrong tools are all `get_weather` for New York: on "100的平方根是多少？"
#   and on both addition questions, so no way called `calculate` even once. Its one other
#   miss is a value: "B Beijing", which all three ways wrote for Beijing. Its prompt differs
#   from ways 1 and 2 (no worked example to copy, the tools rendered by the server), so this
#   is not a test of the API against the grammar with everything else equal.
# - Seven questions are few: the intervals overlap widely (2/7 is 8%–64%, 3/7 is 16%–75%,
#   4/7 is 25%–84%), and the three ways made 2, 2 and 3 right calls, so this run cannot rank
#   them. What it shows without statistics is the mechanism: under a grammar a reply cannot
#   fail to parse, and nothing makes it right.
#
# The rest of the lesson stays with the native way: the toolkit's helpers for the same
# messages, then what changes from one endpoint to another.

# %% [markdown]
# ## 6. The toolkit's message helpers
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
reply = backend.chat(messages=history, tools=specs, tool_choice="required", parallel_tool_calls=False,
                     max_tokens=60, temperature=0)
history.append(m.assistant_from_reply(reply.choices[0].message))
for tool_call in m.calls_of(reply.choices[0].message):
    try:
        output = json.dumps(tools_by_name[tool_call.name](**tool_call.parsed_arguments()), ensure_ascii=False)
    except Exception as error:
        output = json.dumps({"error": str(error)})
    history.append(m.tool_result(tool_call.id, output))
show(history)

# %% [markdown]
# ## 7. Change it and observe
#
# **(a) Answer a call that was never made.** Send a tool result whose `tool_call_id` matches no
# call. The endpoint refuses the request with HTTP 400 before the model sees it — OpenAI's API
# refuses the same mistake the same way. The id is not decoration: it is checked.

# %%
broken = messages[:2] + [{"role": "tool", "tool_call_id": "call_does_not_exist", "content": '{"temperature": 25}'}]
try:
    backend.chat(messages=broken, tools=specs, max_tokens=20)
except LabError as error:
    print("LabError:", error)
print("HTTP status on the wire:", backend.last_exchange().status)

# %% [markdown]
# **(b) Drop the assistant message.** A `tool` message must follow the assistant message that
# holds its call; without it the result answers nothing.

# %%
orphan = [messages[0], messages[2]]  # the user question and the tool result, no assistant call
try:
    backend.chat(messages=orphan, tools=specs, max_tokens=20)
except LabError as error:
    print("LabError:", error)

# %% [markdown]
# **(c) Two cities in one turn.** Ask about Beijing and Shanghai. The model may write one call
# or several (lesson 8 is about parallel calls); each gets its own id, and results are matched
# by id, never by position. Count what happened:

# %%
reply = backend.chat(messages=[m.user("What is the weather in Beijing and in Shanghai?")],
                     tools=specs, tool_choice="required", max_tokens=96, temperature=0)
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
tool_call = m.calls_of(scripted.chat(messages=[m.user(question)], tools=specs).choices[0].message)[0]
print("raw arguments:", repr(tool_call.arguments))
try:
    tool_call.parsed_arguments()
except ValueError as error:
    print("ValueError:", error)

# %% [markdown]
# The call has a name and an id, but nothing to run. What to send back in that case — an
# error result the model can correct — is lesson 9.
#
# ## 8. A hosted API does exactly this
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
# (or set `LAB_BASE_URL`, `LAB_MODEL`, `LAB_API_KEY` and keep `connect()`). Only section 5's
# grammar way stays on the embedded model: a grammar needs weights you run yourself. The names
# are OpenAI's, and the other services copy them:
#
# | where | field | what it holds |
# |---|---|---|
# | request | `tools` | `[{"type": "function", "function": {"name", "description", "parameters"}}]` |
# | request | `tool_choice` | `"auto"`, `"none"`, `"required"` or `{"type": "function", "function": {"name": ...}}` |
# | request | `parallel_tool_calls` | `false` to allow at most one call per turn |
# | reply | `choices[0].message.tool_calls` | `[{"id", "type": "function", "function": {"name", "arguments"}}]`, `arguments` a JSON string |
# | reply | `choices[0].finish_reason` | usually `"tool_calls"` when the reply has calls; `"length"` when `max_tokens` ended the reply, even if its calls are whole (lessons 7 and 8); `"stop"` from OpenAI when one function was forced by name (lesson 7) |
# | next request | `{"role": "tool", "tool_call_id", "content"}` | one per call, after the assistant message |
#
# Older code may use `functions` and `function_call` (one call per turn, no ids); OpenAI has
# deprecated them in favour of the fields above. Some providers add options on top: OpenAI's
# `"strict": true` on a function makes the server constrain the arguments to the schema —
# the same idea as the grammar of section 5 (lesson 13 shows the embedded server's own).
#
# Do not decide "did it call?" from `finish_reason`. It says why the reply *ended*, not what it
# holds. The embedded endpoint (like most servers) says `"tool_calls"` when a reply with calls
# ended by itself, but `"length"` when `max_tokens` ran out, and the calls written before that
# point still come back, whole or not (lessons 7 and 8 show both). OpenAI says `"stop"` when a
# call was forced by name with `tool_choice={"type": "function", "function": {"name": ...}}`
# (lesson 7). Test `message.tool_calls` instead, as the code above does, and parse each call's
# arguments before trusting them.

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
# - A grammar lets a model write only what its rules allow: lesson 2's `<tool>` protocol under
#   one always parses (unless `max_tokens` cuts it off). In section 5 that took parse failures
#   from 3 of 7 to none, and left the right calls where they were (2 of 7).
# - Native tool calling removed the parsing and the id bookkeeping of lessons 2 and 3. It did
#   not make the model reliable: 3 of 7 right calls in section 5, against 2 of 7 for each of the
#   other two ways, on seven questions too few to rank them.
#
# Lab: open `labs/04_tool_schema_by_hand.py` (write the `tools` entries for an order-status
# tool and a weather tool from their specs).
