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
# # Lesson 15 — A conversation that changes the world
#
# *The course's terms are defined, each with the lesson that teaches it, in the [glossary](../docs/glossary.md).*
#
# Every lesson so far asked one question and read one answer. Real agents live longer: the
# user speaks again, and what the model did a turn ago is still there. A file it moved stays
# moved; an order it placed stays placed. This lesson lets the user speak a second and a third
# time, and checks the model the way BFCL's multi-turn categories do: not by the calls it
# wrote, but by **the state of the world it leaves behind**.
#
# ## What you will learn
#
# - a conversation of several user turns, built by hand: one message list that grows, one
#   world whose state carries over from turn to turn;
# - why a checker that compares *states* sees what one that compares *calls* cannot, and the
#   other way round;
# - two turns where the right move is **not** to call: a function that is missing, and a value
#   the user never gave (the model should ask);
# - the same on one of BFCL's real conversations, with the toolkit: the simulated APIs loaded
#   from the `bfcl-eval` wheel, the loop inside each turn, a verdict per turn and the first
#   failure in words.
#
# The model is the embedded `SmolLM2-135M-Instruct+tools` (the first tool-tuned adapter),
# temperature 0 and a fixed seed, so the run below repeats. Its outputs are its own: read them
# with the prose, which says what this run shows.

# %%
import copy
import json

from toolkit.bench.multi_turn_apis import World, api_classes, cached_wheel, toolset
from toolkit.bench.multi_turn_check import judge_conversation
from toolkit.bench.multi_turn_data import import_multi_turn
from toolkit.bench.multi_turn_run import run_case, trajectory
from toolkit.client import connect
from toolkit.engine import TUNED_MODEL

backend = connect(model=TUNED_MODEL)
SETTINGS = {"temperature": 0, "seed": 0, "max_tokens": 96}
print(backend.label)

# %% [markdown]
# ## 1. A world with state
#
# A pantry: it holds a count per item, and three methods change or read it. Nothing here is
# about models yet: it is the kind of object BFCL's simulated APIs are (a file system, a
# trading account, a car), only small enough to read in one glance.

# %%
class Pantry:
    def __init__(self):
        self.items = {"rice": 2}      # public state: what a state check compares
        self._log = []                # private: the checker never looks here

    def add_item(self, item: str, count: int) -> str:
        self.items[item] = self.items.get(item, 0) + count
        self._log.append(("add", item, count))
        return json.dumps({"item": item, "now": self.items[item]})

    def take_item(self, item: str, count: int) -> str:
        if self.items.get(item, 0) < count:
            return json.dumps({"error": f"only {self.items.get(item, 0)} {item} in the pantry"})
        self.items[item] -= count
        self._log.append(("take", item, count))
        return json.dumps({"item": item, "now": self.items[item]})

    def list_items(self) -> str:
        return json.dumps(self.items)


def pantry_tool(name, description, properties, required):
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": properties, "required": required}}}


ITEM = {"item": {"type": "string", "description": "what to store, e.g. apples"},
        "count": {"type": "integer", "description": "how many"}}
PANTRY_TOOLS = [pantry_tool("add_item", "Put some of an item into the pantry.", ITEM, ["item", "count"]),
                pantry_tool("take_item", "Take some of an item out of the pantry.", ITEM, ["item", "count"]),
                pantry_tool("list_items", "List what is in the pantry and how many of each.", {}, [])]

# %% [markdown]
# ## 2. Three user turns, by hand
#
# One list of messages for the whole conversation. Each turn appends the user's words and
# then runs the loop of lesson 6 until the model answers in text. A call reaches a method by
# its name, and only a public one among the tools offered this turn (`_log`, `__init__` or a
# method not offered are never run): the model's text chooses *which* method runs, never
# *what code* runs.

# %%
def dispatch(world, name, arguments, offered=None):
    """Run one call on ``world``: a public method among those offered, keyword arguments, any
    failure as text."""
    allowed = offered is None or name in offered
    method = getattr(world, name, None) if allowed and not name.startswith("_") else None
    if not callable(method):
        return json.dumps({"error": f"no function {name}"})
    try:
        return method(**arguments)
    except TypeError as error:                  # wrong or missing arguments
        return json.dumps({"error": str(error)})


def one_turn(world, messages, tools, max_rounds=3):
    """The loop for one user turn; returns the calls made, as (name, arguments)."""
    made = []
    for _ in range(max_rounds):
        reply = backend.chat(messages=messages, tools=tools, **SETTINGS).choices[0].message
        messages.append(reply.model_dump(exclude_none=True))
        if not reply.tool_calls:
            return made
        for call in reply.tool_calls:
            arguments = json.loads(call.function.arguments or "{}")
            made.append((call.function.name, arguments))
            offered = {tool["function"]["name"] for tool in tools}
            messages.append({"role": "tool", "tool_call_id": call.id,
                             "content": dispatch(world, call.function.name, arguments, offered)})
    return made


pantry, messages = Pantry(), []
for words in ["Put 3 apples in the pantry.", "Now take one apple out of the pantry.",
              "What is in the pantry now?"]:
    messages.append({"role": "user", "content": words})
    made = one_turn(pantry, messages, PANTRY_TOOLS)
    print(f"user: {words}\n  calls: {made}\n  pantry now: {pantry.items}\n  "
          f"answer: {messages[-1].get('content')!r}\n")

# %% [markdown]
# The pantry object is the same from the first turn to the last, so what the model did in turn
# 1 is what turn 2 works on, and nothing resets between turns.
#
# Read this run turn by turn. In turn 1 the model called `list_items`, then `take_item` for
# three apples instead of `add_item`. The pantry refused (no apple to take), so it still holds
# only rice, and the answer passes on both tools' replies, the refusal included: the words
# match the world, but the world is not what the user asked for. In turn 2 it tried to take
# one apple, was refused again, and wrote text that imitates a tool's reply carrying that
# error. In turn 3 it made no call and wrote an imitation of `list_items`'s reply; the two rice
# in it happen to be right. A checker that only saw that the model called tools would count
# turns 1 and 2 as work done; one that looks at the pantry sees that no apple was ever put in.
# That is the idea of the next section.

# %% [markdown]
# ## 3. Compare states, not calls
#
# What should the pantry hold after those three turns? Run the *answer's* calls on a fresh
# pantry and compare. Here are two made-up trajectories (written by hand, not by a model) to
# see what each kind of checker says:

# %%
ANSWER = [[("add_item", {"item": "apples", "count": 3})], [("take_item", {"item": "apples", "count": 1})],
          [("list_items", {})]]
DETOUR = [[("add_item", {"item": "apples", "count": 2}), ("add_item", {"item": "apples", "count": 1})],
          [("take_item", {"item": "apples", "count": 1})], [("list_items", {})]]
WRONG_ORDER = [[("take_item", {"item": "apples", "count": 1}), ("add_item", {"item": "apples", "count": 3})],
               [], [("list_items", {})]]


def replay(turns):
    world, states = Pantry(), []
    for calls in turns:
        for name, arguments in calls:
            dispatch(world, name, arguments)
        states.append(copy.deepcopy(world.items))
    return states


def same_calls(turns):
    return turns == ANSWER


def same_states(turns):
    return replay(turns) == replay(ANSWER)


for label, turns in [("the answer", ANSWER), ("a detour: 2 + 1 apples", DETOUR),
                     ("the same calls, the take first", WRONG_ORDER)]:
    print(f"{label:32s} calls match: {same_calls(turns)!s:5s}  states match: {same_states(turns)!s:5s}  "
          f"states: {replay(turns)}")

# %% [markdown]
# Comparing calls fails the detour, though the pantry ends exactly as it should: there are
# many ways to reach a state, and an answer key lists one. Comparing states passes it. The
# third trajectory makes the same two changes but takes the apple *before* there is one: the
# take fails, and after turn 1 the pantry holds 3 apples where it should hold 3, but after
# turn 2 it still holds 3 where it should hold 2. A state check after **every** turn catches
# that; a check of the final state alone could miss a wrong path that happens to end well.
#
# BFCL checks both halves: the state after each turn, and that every *result* the answer's
# calls returned was also returned to the model (so a read such as `list_items` cannot be
# skipped). Its verdict fails the whole conversation at the first bad turn.

# %% [markdown]
# ## 4. When the right move is not to call
#
# Two kinds of turn in BFCL's multi-turn data have an empty answer: the model should make no
# call at all.
#
# - **A missing function** (`miss_func`): the user asks for something no offered function can
#   do. Here the pantry can only add, so "take one apple out" has no function; the right move
#   is to say so. BFCL then offers the function in a later turn, with the user saying "I have
#   updated some more functions you can choose from. What about now?".
# - **A missing value** (`miss_param`): "put some apples in the pantry" does not say how many;
#   the right move is to ask.

# %%
only_add = [PANTRY_TOOLS[0], PANTRY_TOOLS[2]]
pantry, messages = Pantry(), [{"role": "user", "content": "Put 3 apples in the pantry."}]
made = one_turn(pantry, messages, only_add)
print("put 3 apples:", made or "no call", "| pantry:", pantry.items)
messages.append({"role": "user", "content": "Now take one apple out of the pantry."})
made = one_turn(pantry, messages, only_add)
print("no take_item offered:", made or "no call", "|", messages[-1].get("content"))
messages.append({"role": "user", "content": "I have updated some more functions you can choose from. What about now?"})
made = one_turn(pantry, messages, PANTRY_TOOLS)
print("take_item offered now:", made or "no call", "| pantry:", pantry.items)

pantry, messages = Pantry(), [{"role": "user", "content": "Put some apples in the pantry."}]
made = one_turn(pantry, messages, PANTRY_TOOLS)
print("how many is never said:", made or "no call", "|", messages[-1].get("content"))

# %% [markdown]
# Read each line against the right move: no call, then a call once the function exists, and a
# question where the count is missing. A model that calls anyway has done something the user
# did not ask for; with a value it made up, it has changed the world on a guess.
#
# In this run the model added no apples in the first turn (it listed the pantry), so the world
# was already off before the missing function mattered. With `take_item` missing it made no
# call, the right move, but it did not say why either: its text imitates a call, in tags of
# its own (`<tool_request>`), asking `list_items` for an apple. Once `take_item` was offered it
# made no call: wrong, since that turn's answer needs one. Where the count was missing it did
# not ask: it called `list_items`, then `take_item` with a count of 2 it made up, taking where
# the user said put. That turn fails the lab's per-turn check (a call where none should be);
# the pantry is unchanged only because it held no apple to take. BFCL's `miss_func` and
# `miss_param` categories measure exactly these turns.
#
# (BFCL's own verdict does not look at these turns: its checker skips a turn whose answer is
# empty, only running the model's calls so that later states are right. The lab's judge keeps
# BFCL's verdict and also judges each turn on its own, where a call on such a turn fails it.)

# %% [markdown]
# ## 5. The same with the toolkit, on one of BFCL's conversations
#
# The toolkit does all of the above for BFCL's 800 multi-turn cases:
# `toolkit.bench.multi_turn_data` reads a category from the wheel, `multi_turn_apis` loads the
# simulated API classes from it (never copying them, never `eval`-ing a model's text) and
# offers each documented function as a lab tool, `multi_turn_run` runs each user turn with the
# lab's loop, and `multi_turn_check.judge_conversation` replays what the model called beside
# the answer. One of the first cases that uses a single API (its function documents fit the
# model's 4,096-token context):

# %%
suite = import_multi_turn(cached_wheel(), "multi_turn_base")
classes = api_classes(suite.apis, suite.docs)
case = next(case for case in suite.cases if case.classes == ("GorillaFileSystem",) and len(case.turns) == 2)
world = World(case, classes)
print(case.id, "|", len(toolset(world, case.functions)), "functions offered")
for index, turn in enumerate(case.turns):
    print(f"turn {index + 1}: {turn[0]['content']}\n  answer: {list(case.ground_truth[index])}")

# %%
run = run_case(backend, case, classes, settings=SETTINGS)
verdict = judge_conversation(case, trajectory(run), classes)
for turn, judged in zip(run.turns, verdict.turns):
    calls = [f"{c['name']}({c['arguments']})" for step in turn.steps for c in step]
    print(f"turn {turn.index + 1}: {'right' if judged.ok else 'wrong'}; called {calls or 'nothing'}")
    if judged.reason:
        print("   ", judged.reason)
print(f"\nBFCL's verdict: {'pass' if verdict.valid else 'fail'}; turns right on their own: "
      f"{verdict.turns_right} of {len(verdict.turns)}")

# %% [markdown]
# Compare the calls with the answer above. In turn 1 the model searched with
# `path='/home/user/test/test.txt'`, a path it made up, where the answer searches the current folder for files *named* `test`: a search changes
# nothing, so the states still match, but the list of matching files the answer's call got back
# never reached the model, and the judge says so. In turn 2 it made no call where the answer
# moves into the folder and copies two files. BFCL's verdict fails the conversation at turn 1;
# the per-turn view shows that neither turn was right on its own either. When the calls do
# change the world wrongly, the judge's sentence names the file or folder that is missing or
# where it should not be, read from the two worlds rather than the two call lists.
#
# ## Summary
#
# - A multi-turn conversation is one message list and one world that both carry over; the
#   loop runs inside each user turn.
# - Checking the state after every turn passes any path to the right world and fails a wrong
#   path even when the calls look right; BFCL adds that every result of the answer's calls
#   reached the model.
# - Some turns are right only with no call: a missing function, a missing value (ask).
# - The toolkit runs BFCL's four multi-turn categories this way; `python -m
#   toolkit.bench.multi_turn_run multi_turn_base --cases 20` measures a model on them, and
#   the app's Experiment tab opens any conversation turn by turn.
#
# **Lab:** `labs/15_state_check.py`: write the state check, graded on APIs and trajectories
# the grader makes up while it grades. Then the capstone, `labs/15_capstone_agent.py`: an agent
# of your own, graded on conversations it has never seen.
