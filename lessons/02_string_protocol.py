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
# # Lesson 2 — A string protocol: `<tool>{json}</tool>`
#
# *The course's terms are defined, each with the lesson that teaches it, in the [glossary](../docs/glossary.md).*
#
# Before chat APIs had a `tools` field, this is how every application let a model call a
# function: describe the tools and a text format in the prompt, then dig the calls out of the
# reply with a regular expression. It still matters — it is the fallback for models and
# servers without native tool calling, and lesson 13 shows that native tool calling is this
# same idea hidden behind an API.
#
# ## What you will learn
#
# - how to write a tool-calling system prompt by hand, and what a small model does with it;
# - the classic parser — one regex and `json.loads` — and the ways replies drift from the
#   format: code fences, single quotes, trailing commas, a missing closing tag, several calls;
# - how to repair almost-JSON by hand, and where hand repair stops;
# - the toolkit's version (`toolkit.protocol`) and the production library `json_repair`;
# - how much repair actually recovers on real replies from the embedded model (small n,
#   computed here, not claimed).

# %%
import json
import re

from toolkit.client import connect


backend = connect(capture=True)
print("talking to:", backend.label)

# %% [markdown]
# ## 1. A system prompt written by hand
#
# The prompt must say three things: which tools exist, what their arguments mean, and exactly
# how to write a call. A 135M model also needs to *see* the format once, so the conversation
# starts with a worked example: a question and the reply we want.

# %%
HAND_PROMPT = """You can use tools. To call one, write exactly one line:
<tool>{"name": "TOOL_NAME", "arguments": {...}}</tool>
Use valid JSON with double quotes. If no tool is needed, answer in plain text.

Tools:
- get_weather: current weather in a city. Arguments: city (string, English name, e.g. Beijing).
- square_root: square root of a number. Arguments: x (number).
- calculate: evaluates an arithmetic expression. Arguments: expression (string, e.g. "12 * (3 + 4)")."""

WORKED_EXAMPLE = [
    {"role": "user", "content": "How warm is it in Paris?"},
    {"role": "assistant", "content": '<tool>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool>'},
]

messages = [{"role": "system", "content": HAND_PROMPT}, *WORKED_EXAMPLE,
            {"role": "user", "content": "What's the weather in Beijing?"}]
reply = backend.chat(messages=messages, max_tokens=48, temperature=0).choices[0].message.content
print(repr(reply))

# %% [markdown]
# A call, in the agreed format. Look at the city: `B Beijing`. That is the small model's own
# spelling, and you will meet it in every lesson that asks about Beijing. Its vocabulary has
# ` Beijing` (with a leading space) as one token and no `Beijing` without the space, so right
# after an opening quote the likeliest start is a lone `B`, and ` Beijing` follows. The tool
# then receives a city it does not know: lesson 4 shows what a careful tool answers.
#
# On the wire there is nothing special about this request: three kinds of messages, all
# text. The tools exist only as sentences inside the system message.

# %%
request = backend.last_exchange().request
print("fields of the request body:", sorted(request))
print("roles:", [m["role"] for m in request["messages"]])

# %% [markdown]
# ## 2. The classic parser: a regex and `json.loads`
#
# Find the text between `<tool>` and `</tool>`, parse it as JSON, give up if that fails. This
# is the parser every string-protocol project starts with:

# %%
def parse_tool_call(text: str) -> dict | None:
    match = re.search(r"<tool>(.*?)</tool>", text, re.DOTALL)
    if not match:
        return None
    try:
        return json.loads(match.group(1))
    except json.JSONDecodeError:
        return None  # the model wrote something that is not JSON


print(parse_tool_call(reply))

# %% [markdown]
# ## 3. How replies drift from the format
#
# Models drift from a format in a handful of typical ways. The replies below are **written by
# hand** in those shapes, so that each drift appears exactly once; section 6 counts what the
# real model does. For each one: how many calls did the writer mean, and how many does the
# classic parser recover with arguments that are a dict?

# %%
BEIJING = '{"name": "get_weather", "arguments": {"city": "Beijing"}}'
SHANGHAI = '{"name": "get_weather", "arguments": {"city": "Shanghai"}}'
DRIFTS = {  # name: (reply, number of calls meant)
    "clean": (f"<tool>{BEIJING}</tool>", 1),
    "text around": (f"Sure, let me check. <tool>{BEIJING}</tool> One moment.", 1),
    "code fence": (f"<tool>\n```json\n{BEIJING}\n```\n</tool>", 1),
    "single quotes": ("<tool>{'name': 'get_weather', 'arguments': {'city': 'Beijing'}}</tool>", 1),
    "trailing commas": ('<tool>{"name": "square_root", "arguments": {"x": 2,},}</tool>', 1),
    "missing closing tag": ('<tool>{"name": "square_root", "arguments": {"x": 2}}', 1),
    "two calls": (f"<tool>{BEIJING}</tool>\n<tool>{SHANGHAI}</tool>", 2),
    "unquoted keys, True": ('<tool>{name: "get_weather", arguments: {city: "Shanghai", detailed: True}}</tool>', 1),
    "arguments as a string": ('<tool>{"name": "get_weather", "arguments": "{\\"city\\": \\"Beijing\\"}"}</tool>', 1),
}


def recovered(calls: list) -> int:
    """How many calls came back usable: a name, and arguments that are a dict."""
    return sum(isinstance(c, dict) and isinstance(c.get("name"), str) and isinstance(c.get("arguments"), dict)
               for c in calls)


def table(parser, title: str) -> None:
    total_meant = total_got = 0
    print(f"{title}\n{'drift':24} recovered")
    for name, (text, meant) in DRIFTS.items():
        got = recovered(parser(text))
        total_meant, total_got = total_meant + meant, total_got + got
        print(f"{name:24} {got}/{meant}" + ("" if got == meant else "   <- lost"))
    print(f"{'total':24} {total_got}/{total_meant}\n")


table(lambda text: [call] if (call := parse_tool_call(text)) else [], "classic parser")

# %% [markdown]
# The last row is sneaky: `json.loads` succeeds, but `arguments` is a *string* holding JSON,
# because models that have seen native APIs copy their habit of sending arguments as text
# (lesson 4). A parser that only checks "did it parse" would pass it on.
#
# ## 4. Repairing by hand
#
# Each drift has a small fix. Here they are one at a time, so you can see what each one does.

# %%
def strip_fence(body: str) -> str:
    return re.sub(r"^\s*```(?:json)?\s*|\s*```\s*$", "", body)


def drop_trailing_commas(body: str) -> str:
    return re.sub(r",(\s*[}\]])", r"\1", body)


def single_to_double_quotes(body: str) -> str:
    return body.replace("'", '"')  # naive, on purpose: see below


print(strip_fence("```json\n{\"x\": 2}\n```"))
print(drop_trailing_commas('{"x": 2,},'))
print(single_to_double_quotes("{'city': 'Beijing'}"))

# %% [markdown]
# The quote fix is too naive. It cannot tell a quote that delimits a string from an
# apostrophe inside one:

# %%
broken = single_to_double_quotes("{'city': \"Xi'an\"}")
print(broken)
try:
    json.loads(broken)
except json.JSONDecodeError as error:
    print("json.loads:", error)

# %% [markdown]
# Every text fix has this risk: it must touch the *structure* of the JSON and never the inside
# of a string. (The second lab makes you solve it properly.)
#
# Now a second parser: find **all** tags, let the closing tag be missing at the very end, and
# apply the fixes before `json.loads`.

# %%
def parse_v2(text: str) -> list[dict]:
    calls = []
    for body in re.findall(r"<tool>(.*?)(?:</tool>|$)", text, re.DOTALL):
        body = drop_trailing_commas(strip_fence(body.strip()))
        if '"' not in body:
            body = single_to_double_quotes(body)  # only when no double quotes at all: a little safer
        try:
            calls.append(json.loads(body))
        except json.JSONDecodeError:
            pass
    return calls


table(parse_v2, "hand-repaired parser")

# %% [markdown]
# Better, and each remaining gap needs another fix: unquoted keys, Python's `True`, arguments
# sent as a string. The hand-made parser grows one special case at a time. That is the honest
# picture of the string protocol.
#
# ## 5. The toolkit version, and the `json_repair` library
#
# `toolkit.protocol` holds the finished version of this lesson:
#
# - `render_system_prompt(tools)` writes the system prompt from tool dicts (the same dicts
#   native APIs use — lesson 4 looks at them closely);
# - `extract_calls(text, known_tools, repair=...)` finds calls in tags, in code fences or as a
#   bare object, scans braces instead of trusting the first `</tool>`, and returns the calls,
#   the prose around them and a reason for every failure. `repair` says what to do with JSON
#   that `json.loads` refuses: `"none"` (count it as a failure), `"hand"` (the small repair
#   below), `"library"` (`json_repair`) or `"both"` (the hand repair first, then the library);
# - `repair_json` (a hand repair, small enough to read) and `repair_json_with_library` (the
#   maintained `json_repair` package), in their own module, `toolkit.repair`.

# %%
from toolkit import protocol

specs = [  # tool definitions in OpenAI's format (lesson 4)
    {"type": "function", "function": {
        "name": "get_weather",
        "description": "Get the current weather in one city. Use it when the user asks about weather or temperature.",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string", "description": "City name in English, e.g. Beijing"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "Temperature unit"}},
            "required": ["city"]}}},
    {"type": "function", "function": {
        "name": "square_root", "description": "Compute the square root of a number.",
        "parameters": {"type": "object", "properties": {
            "x": {"type": "number", "description": "The number, 0 or more"}}, "required": ["x"]}}},
    {"type": "function", "function": {  # the calculator every later lesson uses (toolkit/demo_tools.py)
        "name": "calculate", "description": "Evaluate an arithmetic expression and return the number.",
        "parameters": {"type": "object", "properties": {
            "expression": {"type": "string", "description": 'Arithmetic such as "12 * (3 + 4)"'}},
            "required": ["expression"]}}},
]
KNOWN = {spec["function"]["name"] for spec in specs}
SYSTEM_PROMPT = protocol.render_system_prompt(specs)
print(SYSTEM_PROMPT)

# %%
def toolkit_parser(repair):
    def parse(text):
        result = protocol.extract_calls(text, KNOWN, repair=repair)
        return [{"name": call.name, "arguments": call.arguments} for call in result.calls]
    return parse


table(toolkit_parser("none"), "toolkit, no repair")
table(toolkit_parser("hand"), "toolkit, hand repair")

# %% [markdown]
# Each result also says *why* a call failed, in a sentence a program can log and a person can
# act on:

# %%
for text in ['<tool>{"name": "get_wether", "arguments": {"city": "Beijing"}}</tool>',
             '<tool>{"name": "square_root", "arguments": [16]}</tool>',
             "The weather in Beijing is sunny."]:
    result = protocol.extract_calls(text, KNOWN)
    for failure in result.failures:
        print(f"{failure.reason:18} {failure.detail}")

# %% [markdown]
# Hand repair covers the common drifts. Some almost-JSON is beyond it: string values without
# quotes, missing commas, a line break inside a string. The `json_repair` library is built
# for exactly this; `json_repair.loads` returns the repaired value directly.

# %%
import json_repair

from toolkit.repair import repair_json

HARDER = {
    "unquoted string value": '{"city": Beijing}',
    "missing comma": '{"a": 17 "b": 25}',
    "line break inside a string": '{"note": "line one\nline two"}',
    "cut off by max_tokens": '{"name": "square_root", "arguments": {"x": 2',
}


def outcome(function, text):
    try:
        return json.dumps(function(text), ensure_ascii=False)
    except Exception as error:
        return f"fails ({type(error).__name__})"


for name, text in HARDER.items():
    print(name)
    print("   json.loads      :", outcome(json.loads, text))
    print("   hand repair     :", outcome(lambda t: json.loads(repair_json(t)), text))
    print("   json_repair     :", outcome(json_repair.loads, text))

# %% [markdown]
# Repair makes text *parse*. It cannot make it *right*. A reply cut off in the middle of a
# city name is "repaired" into a complete-looking call with half a city:

# %%
print(json_repair.loads('{"name": "get_weather", "arguments": {"city": "Shangh'))

# %% [markdown]
# `extract_calls` therefore refuses a call whose arguments stop before they close, with no
# closing tag after them, whichever repair it is given: that is what a reply cut off by
# `max_tokens` looks like, and the part written is not a call the model made. It reports
# the reason `cut_off` instead. A call that lacks only its last brace before `</tool>` is
# finished, and repair still closes it.

# %%
for text in ('<tool>{"name": "get_weather", "arguments": {"city": "Shangh',
             '<tool>{"name": "get_weather", "arguments": {"city": "Shanghai"}</tool>'):
    result = protocol.extract_calls(text, repair="library")
    print([(call.name, call.arguments) for call in result.calls], [failure.reason for failure in result.failures])

# %% [markdown]
# So a repaired call still has to pass argument checks (the schema, lesson 5) before it runs.
#
# ## 6. Measured: what the embedded model writes, and what repair recovers
#
# Eight questions, in English and Chinese, with the toolkit's system prompt and the same
# worked example as before, temperature 0. For each reply we record whether the classic
# parser gets a usable call, and whether the toolkit gets one without and with repair.

# %%
QUESTIONS = [
    "What's the weather in Beijing?",
    "上海今天天气怎么样？",  # How is the weather in Shanghai today?
    "What is the square root of 2025?",
    "100的平方根是多少？",  # What is the square root of 100?
    "Add 17 and 25.",
    "Is it raining in Shenzhen right now?",
    "What is the weather in Beijing and in Shanghai?",
    "请帮我算一下 3 加 4。",  # Please work out 3 plus 4 for me.
]
rows = []
for question in QUESTIONS:
    messages = [{"role": "system", "content": SYSTEM_PROMPT}, *WORKED_EXAMPLE, {"role": "user", "content": question}]
    text = backend.chat(messages=messages, max_tokens=40, temperature=0).choices[0].message.content or ""
    classic = parse_tool_call(text)
    rows.append({
        "question": question,
        "reply": text,
        "has <tool> tag": "<tool>" in text,
        "classic parser": recovered([classic] if classic else []) > 0,
        "toolkit, no repair": bool(protocol.extract_calls(text, KNOWN, repair="none").calls),
        "toolkit, repair": bool(protocol.extract_calls(text, KNOWN, repair="both").calls),
    })

for row in rows:
    print(f"{row['question']}\n    {row['reply']!r}")

# %%
n = len(rows)
for column in ["has <tool> tag", "classic parser", "toolkit, no repair", "toolkit, repair"]:
    count = sum(row[column] for row in rows)
    print(f"{column:20} {count}/{n}")

# %% [markdown]
# Read the counts for what they are: eight replies, one small model, one prompt, one
# temperature. They say what happened in this run, nothing more general; lesson 10 runs
# experiments large enough to put confidence intervals on such rates.
#
# Two things are worth checking in the replies above rather than in the counts:
#
# - "a usable call" only means *parsable, with a known tool name*. Whether it is the right
#   tool with the right arguments is a different question (compare each call with its
#   question).
# - The gap between "no repair" and "repair" is the part repair is responsible for. On this run
#   there is none: all four counts are 5 of 8. The problems of this model are not in the JSON
#   but in whether it writes a call at all (both square-root questions got prose, and the
#   Chinese addition numbered lines of its own: `1. 3. 4.`, then `# 3. 4.`, `# 4. 5.`...) and
#   what it puts in it (a weather call for Paris, the worked example's city, for "Add 17 and
#   25.", and one call for Beijing alone when the question asks about two cities).
#
# ## 7. Change it and observe
#
# **(a) Remove the worked example.** The same system prompt, the first question, no example
# exchange. Does the reply still contain a `<tool>` tag?

# %%
messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": QUESTIONS[0]}]
text = backend.chat(messages=messages, max_tokens=48, temperature=0).choices[0].message.content or ""
result = protocol.extract_calls(text, KNOWN, repair="both")
print(repr(text))
print("calls:", [(c.name, c.arguments) for c in result.calls], "| failures:", [f.reason for f in result.failures])

# %% [markdown]
# **(b) Offer fewer tools.** Parse the measured replies again, but tell the parser that only
# `square_root` exists. A call of any other tool now fails as `unknown_tool`: the parser, not the
# model, decides which names count.

# %%
for row in rows[:4]:
    result = protocol.extract_calls(row["reply"], {"square_root"}, repair="both")
    print(f"{row['question']:34} calls={[c.name for c in result.calls]} failures={[f.reason for f in result.failures]}")

# %% [markdown]
# ## Other frameworks
#
# Frameworks use native tool calls (lesson 4) wherever an API offers them, so a text protocol
# is rarely visible in them. LangChain's older ReAct-style agents worked as this lesson does: a
# prompt asked for `Action:` and `Action Input:` lines, and a parser read them back out of the
# text, failing in the same ways when the model drifted from the format.

# %% [markdown]
# ## Summary
#
# - The string protocol is a convention in the prompt plus a parser in your code: the tools
#   are sentences, a call is text in `<tool>` tags, and the API knows nothing about it.
# - The classic regex + `json.loads` parser survives only text around the tag; it breaks on
#   fences, single quotes, trailing commas, missing tags, several calls, unquoted keys and
#   arguments sent as a string.
# - Hand repair fixes the common drifts, but every fix must leave the inside of strings alone;
#   `json_repair` handles much more. Neither makes a call *correct* — only parsable.
# - Find out where a model fails — in the JSON, or in deciding to call and in what it puts in
#   the call — by counting, as in section 6, instead of assuming.
#
# Next, lesson 3 sends tool results back to the model in this same protocol, and sees the
# conversation get messy; lesson 4 then puts this protocol under a grammar and measures it
# beside native tool calls.
#
# Labs: open `labs/02_extract_regex.py` (a regex that survives the drifts) and
# `labs/02_json_repair.py` (repair almost-JSON without damaging strings).
