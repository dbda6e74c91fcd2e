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
# # Lesson 11 — Many tools: offer only the ones that fit the request
#
# A real assistant ends up with dozens of tools. Registering them all statically (every tool
# in every request) has three costs:
#
# - **tokens**: each tool's name, description and schema is read as prompt tokens on every
#   request, whether or not it is used;
# - **mistakes**: with more tools to choose from, a model has more ways to pick the wrong one
#   or fill in the wrong arguments;
# - **permissions**: some tools must not even be *visible* to some users.
#
# LangChain4j answers this with a `ToolProvider`: a function called at the start of every
# request that looks at the request (the user's message, the memory id, the invocation
# context) and returns the tools for this request only. The static tools and the provider's
# tools are merged. A second answer is **retrieval**: rank all tools by how similar their text
# is to the message and offer the top few.
#
# ## What you will learn
#
# - how to write tool providers: by message (booking tools only when the message asks for a
#   booking) and by user permission;
# - that a withheld tool must also be *refused* if the model names it anyway;
# - how a small TF-IDF retriever ranks tools for English and Chinese messages
#   (`toolkit/retrieval.py`), and where word matching stops working;
# - how many prompt tokens fewer tools save, counted from real replies.

# %%
import json

from toolkit import fake
from toolkit.client import connect
from toolkit.loop import run_turn
from toolkit.retrieval import ToolRetriever
from toolkit.schema import InvocationContext
from toolkit.suite import load_suite
from toolkit.tools import Tool, ToolRequest, ToolSet, tool, tools_for_turn

backend = connect(capture=True)


# %% [markdown]
# ## 1. A provider that looks at the message
#
# The static tools are always offered. The booking tools are made by hand from a spec and an
# executor (LangChain4j's `ToolSpecification` + `ToolExecutor`), and offered only when the
# message is about a booking.

# %%
@tool
def get_weather(city: str) -> str:
    """Get the current weather in one city.

    Args:
        city: City name in English, e.g. Beijing.
    """
    return json.dumps({"city": city, "condition": "sunny", "temp_c": 25})


BOOKINGS = {"B-12345": {"hotel": "West Lake Inn", "city": "Hangzhou", "nights": 2}}

get_booking_details = Tool.from_spec(
    {"name": "get_booking_details",
     "description": "Look up an existing booking by its booking number.",
     "parameters": {"type": "object",
                    "properties": {"booking_number": {"type": "string", "description": "Format B-12345"}},
                    "required": ["booking_number"]}},
    lambda arguments, context: BOOKINGS.get(arguments["booking_number"],
                                            f"No booking {arguments['booking_number']} found."),
)


@tool
def book_hotel(city: str, check_in: str, nights: int) -> str:
    """Book a hotel room.

    Args:
        city: City of the hotel.
        check_in: Check-in date, YYYY-MM-DD.
        nights: Number of nights, 1 or more.
    """
    return f"Booked {nights} night(s) in {city} from {check_in}: booking B-20001."


BOOKING_WORDS = ("book", "booking", "reserve", "预订", "订房", "酒店")


def booking_provider(request: ToolRequest):
    """Offer the booking tools only when the message mentions a booking; None offers nothing."""
    text = request.user_message.lower()
    if not any(word in text for word in BOOKING_WORDS):
        return None
    return [get_booking_details, book_hotel]


static = ToolSet([get_weather])
# the Chinese: Book me a hotel in Hangzhou, two nights from June 1
for message in ["What is the weather in Beijing?", "帮我预订杭州的酒店，6月1日入住两晚", "Show me booking B-12345"]:
    offered = tools_for_turn(static, [booking_provider], ToolRequest(message))
    print(f"{message:<32} -> {offered.names}")

# %% [markdown]
# `tools_for_turn` is what the loop calls at the start of each turn. Passing
# `providers=[booking_provider]` to `run_turn` does the same, and the request on the wire
# shows which tools were sent. One real request (the 135M model may or may not call a tool;
# what matters here is the `tools` list it was given):

# %%
result = run_turn(backend, [{"role": "user", "content": "Show me booking B-12345"}], static,
                  providers=[booking_provider], max_rounds=1, parallel_tool_calls=False,
                  request_options={"max_tokens": 32, "temperature": 0})
sent = result.rounds[0].request
print("tools in the request:", [t["function"]["name"] for t in sent["tools"]])
print("stop reason:", result.stop_reason, "| calls:", [(c.name, c.arguments) for c in result.rounds[0].calls])


# %% [markdown]
# ## 2. A provider that looks at the user
#
# The memory id and the invocation context (lessons 5 and 6) travel with the request but never
# reach the model. A provider can read them to decide who sees what. Here only support staff
# get `refund_order`.

# %%
@tool
def get_order_status(order_id: str) -> str:
    """Look up the status of one order.

    Args:
        order_id: Order number such as A1024.
    """
    return json.dumps({"order_id": order_id, "status": "shipped"})


@tool
def refund_order(order_id: str, amount: float) -> str:
    """Refund an order (support staff only).

    Args:
        order_id: Order number such as A1024.
        amount: Amount to refund, in yuan.
    """
    return f"Refunded {amount} for {order_id}."


ROLES = {"alice": {"support"}, "bob": set()}


def support_provider(request: ToolRequest):
    user = request.context.user if request.context else None
    return [refund_order] if "support" in ROLES.get(user, set()) else None


orders = ToolSet([get_order_status])
for user in ("alice", "bob", None):
    request = ToolRequest("Refund order A1024", context=InvocationContext(user=user))
    print(f"user={user!s:<6} -> {tools_for_turn(orders, [support_provider], request).names}")

# %% [markdown]
# Hiding a tool from the request is not enough. A model can *name* a tool it was not offered
# (it may have seen it earlier in the conversation, or simply invent it), and a loop that
# looks tools up in a global registry would run it. The toolkit's loop runs only the tools
# offered **this turn**; anything else gets the same answer as a tool that does not exist, so
# the model cannot even learn that other users have it.
#
# To show that exactly, the next cell uses the **scripted** fake model: it names
# `refund_order` for Bob on purpose, which no real model can be made to do on demand.

# %%
scripted = fake.ScriptedModel([
    fake.calls(fake.call("refund_order", {"order_id": "A1024", "amount": 99.0})),
    fake.text("Sorry, I cannot refund that order."),
])
result = run_turn(scripted.backend(), [{"role": "user", "content": "Refund order A1024"}], orders,
                  providers=[support_provider], context=InvocationContext(user="bob"),
                  registry=[get_order_status, refund_order])
execution = result.tool_executions[0]
# (the warning printed above is the loop's log line for the refused call; lesson 12 is about logs)
print("offered to bob:", result.rounds[0].tools_offered)
print("error kind:    ", execution.error)
print("model was told:", execution.result_text)
assert execution.error == "not_offered" and execution.value is None  # the refund never ran

# %% [markdown]
# ## 3. Retrieval: rank the tools by similarity to the message
#
# A provider with keyword lists gets long. The general version treats each tool as a tiny
# document and *searches* them. `toolkit/retrieval.py` does it without any dependency:
#
# 1. each tool's text = its name (twice), description, parameter names and descriptions,
#    enum values;
# 2. features = words (lower-cased, crudely stemmed: *booking* → *book*), character
#    trigrams of longer words, and for Chinese single characters plus character **bigrams**
#    (Chinese has no spaces, so "酒店" must be found inside "订酒店");
# 3. each feature is weighted by TF-IDF (rare features count more), and tools are ranked by
#    the cosine between their vector and the message's vector.
#
# Here are the 17 tools of the lab's scenario suite:

# %%
suite = load_suite()
all_specs = [suite.tool_spec(name) for name in suite.tools]
retriever = ToolRetriever(all_specs)
print(len(all_specs), "tools:", ", ".join(suite.tools))

queries = ["Book a hotel room in Hangzhou for two nights", "Which of my orders have shipped?",
           # the Chinese: Book me a hotel in Hangzhou
           "What is the square root of 2?", "帮我预订杭州的酒店", "I need somewhere to sleep in Hangzhou"]
for query in queries:
    top = ", ".join(f"{name} {score:.2f}" for name, score in retriever.scores(query)[:3])
    print(f"{query:<45} {top}")

# %% [markdown]
# The first three rank the right tool first. The last two show the limits of matching words:
#
# - the Chinese message scores 0 everywhere, because the suite's descriptions are English —
#   there is no shared character to match;
# - "somewhere to sleep" means a hotel, but shares no word with "Book a hotel room"; whatever
#   ranks first there got its score from an incidental word (`get_weather`'s description says
#   "the weather ... somewhere right now").
#
# **Change it and observe.** `keywords` adds words to a tool's index without changing what the
# model is sent. Give `book_hotel` some Chinese and some synonyms:

# %%
keyed = ToolRetriever(all_specs, keywords={
    "book_hotel": "预订 酒店 订房 住宿 sleep stay room",
    "get_weather": "天气 气温 下雨",
})
for query in queries[3:] + ["北京明天会下雨吗？"]:  # Will it rain in Beijing tomorrow?
    ranked = keyed.scores(query)
    top = ", ".join(f"{name} {score:.2f}" for name, score in ranked[:3])
    print(f"{query:<45} {top}")
print("\nrank of book_hotel for 'somewhere to sleep': before",
      [name for name, _ in retriever.scores(queries[4])].index("book_hotel") + 1,
      "after", [name for name, _ in keyed.scores(queries[4])].index("book_hotel") + 1)

# %% [markdown]
# The Chinese messages now find their tools. The synonyms help less: they move `book_hotel` up,
# but one incidental shared word can still outweigh them. Word matching counts words, not
# meaning.
#
# Production systems replace the bag of words with sentence embeddings, which do match
# "sleep" with "hotel" and Chinese with English. The shape of the solution stays the same:
# index the tools once, rank them per message, offer the top k. A retriever is just one more
# tool provider (`retriever.provider(k)`).
#
# ## 4. What fewer tools save, counted by the server
#
# Every reply reports `usage.prompt_tokens`. Send the same question once with all 17 tools
# and once with the top 3 the retriever picks (`max_tokens=1`: we only want the count, not
# an answer).

# %%
question = [{"role": "user", "content": "Book a hotel room in Hangzhou for two nights from 2025-06-01"}]
top3 = retriever.top_k(question[0]["content"], k=3)
counts = {}
for label, specs in (("all 17 tools", all_specs), ("top 3 retrieved", top3)):
    reply = backend.chat(messages=question, tools=specs, max_tokens=1, temperature=0)
    counts[label] = reply.usage.prompt_tokens
    print(f"{label:<16} prompt_tokens={reply.usage.prompt_tokens:>5}   tools={[t['function']['name'] for t in specs]}")
saved = counts["all 17 tools"] - counts["top 3 retrieved"]
print(f"\nsaved {saved} prompt tokens per request ({saved / counts['all 17 tools']:.0%}), "
      f"on every request of the conversation")

# %% [markdown]
# And here is the body that was sent last, trimmed: the `tools` list is all the model ever
# learns about your tools.

# %%
body = backend.last_exchange().request
print(json.dumps({**body, "tools": [t["function"]["name"] for t in body["tools"]]}, indent=2, ensure_ascii=False))
print(json.dumps(backend.last_exchange().response["usage"], indent=2))

# %% [markdown]
# Does the smaller list also make the model *choose* better? For a strong model, published
# experience (and the articles this lab's examples come from) says yes: fewer, more relevant tools mean fewer wrong
# picks. SmolLM2-135M's picks ignore the descriptions, so measuring it here would mostly show noise; the
# app's *distractor tools* factor runs that experiment on any endpoint you point it at.
#
# The retriever as a provider in the loop, with the retrieved tools visible in the trace:

# %%
runnable = ToolSet([get_weather, book_hotel, get_booking_details, get_order_status])
result = run_turn(backend, [{"role": "user", "content": "What's the weather in Shanghai?"}], ToolSet(),
                  providers=[ToolRetriever(runnable).provider(k=1)], max_rounds=1, parallel_tool_calls=False,
                  request_options={"max_tokens": 32, "temperature": 0})
print("tools offered:", result.rounds[0].tools_offered, "| stop reason:", result.stop_reason)

# %% [markdown]
# ## Summary
#
# - A tool provider is a function of the request: `ToolRequest(user_message, memory_id,
#   context)` → tools for this request (or None). The loop merges them with the static tools.
# - Decide by message (booking tools only for bookings) or by user (permissions from the
#   invocation context, which the model never sees).
# - Withholding is only half of permission: the loop must refuse a tool that was not offered,
#   and say so in the same words as for a tool that does not exist.
# - Retrieval ranks tools by similarity: TF-IDF over words and Chinese character bigrams works
#   for literal matches; keywords or embeddings cover synonyms and other languages.
# - Fewer tools means fewer prompt tokens on every request, as the server's own `usage` shows.
# - Fewer tools also means fewer wrong choices, and the weaker the model, the more that
#   matters. The base SmolLM2 picks among tools mostly by how their *names* echo the question:
#   with four tools on offer it picks right 77% of the time, and 13% once the names are hidden.
#   The endpoint's `SmolLM2-135M-Instruct+tools` (the same weights with an adapter the lab
#   trained on invented conversations) relies less on names: 37% with names hidden, but also
#   37% with real ones. It learned to distrust names more than it learned to read
#   descriptions; the README's "About the embedded model" has the figures, and the app's
#   `model` and `names` factors let you measure it yourself.
#
# Lab: open `labs/11_permission_provider.py`.
