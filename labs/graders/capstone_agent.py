"""Grader for labs/15_capstone_agent.py: an agent of the learner's own, graded on conversations.

The learner writes ``shop_tools(shop)`` (three or four tools over a small shop: order statuses,
the weather in a few cities, stock counts) and ``run_agent(backend, question, tools)``, which
runs one conversation and returns its messages. The grader makes up a shop and the questions
while it grades (``case_seed``): the order id, city or product asked about and the value in the
shop are new every time, so only an agent that really asks the model, runs the call the model
asked for and feeds its result back can pass. ``grade(..., seed=N)`` repeats a grading.

Three kinds of conversation:

- **answer**: the right tool is called with the right argument (seen from the shop's side: it was
  asked about that id, city or product), its result goes back to the model, and the model's
  final text states the value the shop holds;
- **refusal**: a question no tool can answer gets no tool call and a text reply;
- **not found**: the shop has no such order, city or product; the tool's result says so, and so
  does the model's answer, with no value made up.

Everything is judged from the traffic: every request the agent sends goes through a recording
client, at temperature 0 with a fixed seed, so a grading repeats. An answer the model did not
write, a lookup the model did not ask for, an answer asked for without the result: each fails
with the step that went wrong and what the model wrote. A request that holds the model to text
the agent chose (a grammar in ``extra_body``, a ``response_format``) is refused.
"""

from __future__ import annotations

import copy
import json
import random
import re
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, Literal

from labs.grading import Hints, Outcome, Report, attempt, case_seed
from toolkit.client import Backend
from toolkit.lab_error import LabError
from toolkit.tools import Tool

MODEL_SEED = 0  # every request of a grading is sent with this seed, at temperature 0
MAX_TOKENS = 200  # a request may ask for fewer; more would only make grading slow

STATUSES = ("shipped", "delivered", "packed", "cancelled", "returned", "delayed")
CONDITIONS = ("sunny", "cloudy", "rainy", "windy", "foggy", "snowy")
CITIES = ("Paris", "Lima", "Oslo", "Cairo", "Madrid", "Lisbon", "Dublin", "Vienna", "Nairobi",
          "Seoul", "Toronto", "Sydney", "Berlin", "Rome", "Prague", "Athens")
PRODUCTS = ("kettle", "desk lamp", "yoga mat", "teapot", "backpack", "notebook", "umbrella",
            "office chair", "water bottle", "headphones", "toaster", "alarm clock")

_ORDER_QUESTIONS = ("Where is my order {key}?", "What is the status of order {key}?",
                    "Can you check my order {key} for me?", "I'd like an update on order {key}.")
_WEATHER_QUESTIONS = ("What is the weather in {key}?", "How is the weather in {key} today?",
                      "What's the temperature in {key} right now?", "Tell me the weather in {key}.")
_STOCK_QUESTIONS = ("How many units of {key} are in stock?", "What is the stock count for {key}?",
                    "How many {key} items do we have in stock?", "Check the stock of {key}, please.")
_OFF_TOPIC = ("Write a short poem about {topic}.", "Tell me a joke about {topic}.",
              "Who invented {invention}?", "What is the capital of {country}?",
              "Translate '{phrase}' into French.")
_FILLERS = {"topic": ("the sea", "cats", "autumn", "mountains", "coffee", "the moon"),
            "invention": ("the telephone", "the printing press", "the light bulb", "penicillin"),
            "country": ("Canada", "Japan", "Kenya", "Chile", "Norway", "Egypt"),
            "phrase": ("good morning", "thank you", "see you soon", "happy birthday")}

# What an answer or a tool result may say when nothing was found (any case, any of these).
NOT_FOUND = re.compile(
    r"not\s+(?:be\s+)?found|\b(?:no|nothing)\b[^.\n]{0,40}?\b(?:found|available)|(?:could\s*not|couldn'?t|can\s*not|can'?t|unable\s+to)\s+"
    r"(?:find|locate)|(?:does\s*not|doesn'?t)\s+exist|no (?:such|record|data|information)|"
    r"\bunknown\b|(?:is\s*n[o']t|not)\s+available|not (?:in|on) (?:our|the) (?:system|records|list)", re.IGNORECASE)


# --- The shop the learner's tools read ------------------------------------------------------------


@dataclass
class Lookup:
    """One question the shop was asked: in which table, about what, and whether it knew."""

    table: Literal["orders", "weather", "stock"]
    asked: str
    found: bool


def _same(a: Any, b: str) -> bool:
    """Keys match whatever the case, spacing, punctuation, a plural 's' or an article ("the desk lamps")."""
    norm = lambda text: re.sub(r"[^0-9a-z]", "", re.sub(r"^(?:the|a|an)\s+", "", str(text).strip().casefold())).removesuffix("s")
    return norm(a) == norm(b)


class Shop:
    """Order statuses, the weather in some cities and stock counts; ``None`` where it has none.

    Every lookup is recorded in ``lookups``, which is how the grader sees which tool ran with
    which argument, whatever the learner named the tools.
    """

    def __init__(self, orders: dict[str, str], weather: dict[str, tuple[str, int]], stock: dict[str, int]):
        self.orders, self.weather_by_city, self.stock_by_product = orders, weather, stock
        self.lookups: list[Lookup] = []

    def _find(self, table: str, entries: dict, key: Any):
        match = next((value for name, value in entries.items() if _same(key, name)), None)
        self.lookups.append(Lookup(table, str(key), match is not None))
        return match

    def order_status(self, order_id: str) -> str | None:
        """The status of an order ("shipped", "delivered", ...), or None: no such order."""
        return self._find("orders", self.orders, order_id)

    def weather(self, city: str) -> dict | None:
        """``{"condition": "rainy", "celsius": 12}`` for a city, or None: no data for it."""
        found = self._find("weather", self.weather_by_city, city)
        return None if found is None else {"condition": found[0], "celsius": found[1]}

    def stock(self, product: str) -> int | None:
        """How many units of a product are in stock, or None: no such product."""
        return self._find("stock", self.stock_by_product, product)


def sample_shop() -> Shop:
    """A shop to try the agent on in the lab; grading makes up another one."""
    return Shop({"A1001": "shipped", "B2002": "delivered"}, {"Paris": ("rainy", 14), "Tokyo": ("sunny", 22)},
                {"kettle": 12, "desk lamp": 3})


# --- The conversations ------------------------------------------------------------------------------


@dataclass
class Conversation:
    """One question, what it needs, and the values an answer must (or must not) state."""

    name: str
    kind: Literal["answer", "refusal", "not_found"]
    question: str
    table: str | None = None
    key: str | None = None
    values: tuple[str, ...] = ()  # an answer states at least one of these
    invented: tuple[str, ...] = ()  # a "not found" answer states none of these

    @property
    def title(self) -> str:
        return f"{self.name}: {self.question!r}"


def made_up_conversations(seed: int, answers: int = 3, refusals: int = 2,
                          not_found: int = 2) -> tuple[Shop, list[Conversation]]:
    """A shop and conversations drawn from ``seed``: the same seed, the same grading."""
    if not 0 <= not_found <= len(("orders", "weather", "stock")):
        raise ValueError(f"not_found must be 0 to 3 (one per table), not {not_found}")
    rng = random.Random(seed)
    order_ids = []
    while len(order_ids) < 4 + not_found:
        key = f"{rng.choice('ABCDEFGHKMNPRSTX')}{rng.randrange(1000, 10000)}"
        order_ids = order_ids if key in order_ids else order_ids + [key]
    cities, products = rng.sample(CITIES, 4 + not_found), rng.sample(PRODUCTS, 4 + not_found)
    shop = Shop({key: rng.choice(STATUSES) for key in order_ids[:4]},
                {city: (rng.choice(CONDITIONS), rng.randrange(2, 36)) for city in cities[:4]},
                {product: rng.randrange(2, 96) for product in products[:4]})

    def asked(table: str, key: str) -> tuple[str, tuple[str, ...]]:
        if table == "orders":
            return rng.choice(_ORDER_QUESTIONS).format(key=key), (shop.orders.get(key, ""),)
        if table == "weather":
            condition, celsius = shop.weather_by_city.get(key, ("", 0))
            return rng.choice(_WEATHER_QUESTIONS).format(key=key), (str(celsius), condition)
        return rng.choice(_STOCK_QUESTIONS).format(key=key), (str(shop.stock_by_product.get(key, "")),)

    conversations = []
    tables = ["orders", "weather", "stock"]
    for index in range(answers):
        table = tables[index % 3]
        key = rng.choice({"orders": order_ids[:4], "weather": cities[:4], "stock": products[:4]}[table])
        question, values = asked(table, key)
        conversations.append(Conversation(f"answer from the {table}", "answer", question, table, key, values))
    for index in range(refusals):
        template = rng.choice(_OFF_TOPIC)
        filled = template.format(**{slot: rng.choice(options) for slot, options in _FILLERS.items()})
        conversations.append(Conversation("no tool can answer", "refusal", filled))
    for index, table in enumerate(rng.sample(tables, not_found)):  # keys 4 and on are not in the shop
        key = {"orders": order_ids, "weather": cities, "stock": products}[table][4 + index]
        question, _ = asked(table, key)
        invented = {"orders": STATUSES, "weather": CONDITIONS, "stock": ()}[table]
        conversations.append(Conversation(f"nothing in the {table}", "not_found", question, table, key,
                                          invented=invented))
    return shop, conversations


# --- What the agent sent and got, recorded --------------------------------------------------------------


@dataclass
class Exchange:
    request: dict
    content: str | None
    calls: list[tuple[str, str]] = field(default_factory=list)  # (name, raw arguments)


def _written_for_the_model(request: dict) -> str | None:
    """Why a request may not be sent, or None. A GBNF ``grammar`` (which the embedded endpoint
    honours in ``extra_body``, even with tool_choice "none") or a ``response_format`` schema can
    hold the model to text the agent composed, and then the "model's" answer is the agent's. The
    capstone grades what the model writes on its own; the reference sends none of these."""
    extra = request.get("extra_body")
    if extra:
        fields = ", ".join(map(str, extra)) if isinstance(extra, dict) else type(extra).__name__
        return (f"the agent sent extra_body ({fields}): the capstone grades what the model writes on its own, "
                "so send every request without extra_body")
    if request.get("grammar") is not None:
        return ("the agent sent a grammar: the capstone grades what the model writes on its own, so send every "
                "request without one")
    shape = request.get("response_format")
    if shape is not None and (not isinstance(shape, dict) or shape.get("type") != "text"):
        return ("the agent sent a response_format: the capstone grades what the model writes on its own, so send "
                "every request without one")
    return None


class _RecordingClient:
    """Stands in for the openai client: pins temperature and seed, records every exchange, and
    refuses a request that tells the model what to write (``refused`` keeps why, so an agent that
    catches the error still fails)."""

    def __init__(self, inner: Any):
        self.inner, self.exchanges, self.refused = inner, [], []
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self.create))
        self.api_key = getattr(inner, "api_key", None)

    def create(self, **request: Any) -> Any:
        if request.get("stream"):
            raise LabError("Grading reads whole replies: send the requests without stream=True.")
        if why := _written_for_the_model(request):
            self.refused.append(why)
            raise LabError(why[0].upper() + why[1:] + ".")
        request = {**request, "temperature": 0, "seed": MODEL_SEED,
                   "max_tokens": min(request.get("max_tokens") or MAX_TOKENS, MAX_TOKENS)}
        reply = self.inner.chat.completions.create(**request)
        message = reply.choices[0].message if reply.choices else None
        self.exchanges.append(Exchange(copy.deepcopy(request), message.content if message else None,
                                       [(c.function.name, c.function.arguments) for c in (message.tool_calls or [])]
                                       if message else []))
        return reply


def recording(backend: Backend) -> tuple[Backend, _RecordingClient]:
    """A backend like ``backend`` whose every request is recorded; and the recorder."""
    client = _RecordingClient(backend.client)
    return Backend(client=client, model=backend.model, base_url=backend.base_url,
                   embedded=backend.embedded, api=backend.api), client


# --- The checks ---------------------------------------------------------------------------------------------


def _states(text: str, value: str) -> bool:
    if not value:
        return False
    if value.isdigit():
        return re.search(rf"(?<![\d.]){value}(?![\d])", text) is not None
    return re.search(rf"\b{re.escape(value)}\b", text, re.IGNORECASE) is not None


def _argument_values(raw: str) -> list[str]:
    try:
        arguments = json.loads(raw or "{}")
    except json.JSONDecodeError:
        return []
    return [str(value) for value in arguments.values()] if isinstance(arguments, dict) else []


def _shown(calls: list[tuple[str, str]]) -> str:
    return ", ".join(f"{name}({arguments})" for name, arguments in calls) or "no call"


def _final_answer(messages: Any) -> str | None:
    """The text of the last message, if it is the assistant's text; None otherwise."""
    if not isinstance(messages, list) or not messages or not isinstance(messages[-1], dict):
        return None
    last = messages[-1]
    content = last.get("content")
    if last.get("role") != "assistant" or last.get("tool_calls") or not isinstance(content, str) or not content.strip():
        return None
    return content


def _carries(request: dict, value: str, question: str) -> bool:
    """Does the request hold ``value`` in a message other than the question and the model's own?"""
    for message in request.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str) and message.get("role") in ("tool", "user") and content != question \
                and (_states(content, value) if value else NOT_FOUND.search(content)):
            return True
    return False


@dataclass
class Problem:
    """What went wrong in one conversation, and whose doing it was.

    ``slip`` is True for the model's own choices (which tool, which argument, what it wrote),
    which even a well-built agent around a 135M model meets now and then; False for the agent's
    part (asking the model, running the calls it asked for, feeding results back, returning the
    model's answer), which an agent either does or does not.
    """

    note: str
    slip: bool


def _fault(note: str) -> Problem:
    return Problem(note, slip=False)


def _slip(note: str) -> Problem:
    return Problem(note, slip=True)


def judge(conversation: Conversation, lookups: list[Lookup], exchanges: list[Exchange], messages: Any) -> Problem | None:
    """What went wrong in one conversation, in words a learner can act on; None if nothing."""
    if not exchanges:
        return _fault("your agent never asked the model: every call and every answer must come from the model")
    answer = _final_answer(messages)
    if answer is None:
        last = messages[-1] if isinstance(messages, list) and messages else messages
        return _fault(f"return the conversation's messages, ending with the model's answer "
                      f"(role 'assistant', text, no tool_calls); the last one was {last!r}"[:400])
    written = next((each for each in reversed(exchanges) if (each.content or "").strip() == answer.strip()), None)
    if written is None:
        return _fault(f"the last message is not a reply the model wrote ({answer!r}): return the model's own "
                      f"answer; the model's last reply was {exchanges[-1].content!r}")
    calls = [call for each in exchanges for call in each.calls]

    if conversation.kind == "refusal":
        if calls or lookups:
            return _slip(f"no tool can answer this, but the model called {_shown(calls)}"
                         f"{' and the shop was asked about ' + repr(lookups[0].asked) if lookups else ''}: "
                         "the answer should be text with no call (descriptions that say what each tool is for, "
                         "or offering only the tools a question is about, help the model tell)")
        return None

    key, table = conversation.key, conversation.table
    matched = [each for each in lookups if each.table == table and _same(each.asked, key)]
    asked_for = [call for call in calls if any(_same(value, key) for value in _argument_values(call[1]))]
    if not matched:
        if not calls:
            return _slip(f"step 1, the call: the model called no tool; it wrote {answer!r}")
        if asked_for:
            return _slip(f"step 1, the call: the model called {_shown(asked_for)}, but the shop's {table} were "
                         f"never asked about {key!r}: either that tool is not the {table} one (make names and "
                         "descriptions tell the tools apart) or it does not look up the argument it is given")
        return _slip(f"step 1, the call: this question needs the shop's {table} looked up for {key!r}; the model "
                     f"called {_shown(calls)}")
    if not asked_for:
        return _fault(f"step 1, the call: the shop's {table} were asked about {key!r}, but the model never asked "
                      f"for a call with it (it called {_shown(calls)}): run the calls the model asks for, not your own")
    value = conversation.values[0] if conversation.kind == "answer" else ""
    called_at = next(i for i, each in enumerate(exchanges) if any(call in asked_for for call in each.calls))
    if not any(_carries(each.request, value, conversation.question) for each in exchanges[called_at + 1:]):
        wanted = f"the value {value!r}" if value else "that nothing was found"
        return _fault(f"step 2, the result: no request after the call carried the tool's result back to the model "
                      f"with {wanted}: append it as a role 'tool' message with the call's id, then ask again")
    if not _carries(written.request, value, conversation.question):
        return _fault("step 3, the answer: the model wrote the answer from messages without the tool's result; "
                      "ask for the answer with the result in the messages")
    if conversation.kind == "answer":
        if not any(_states(answer, each) for each in conversation.values):
            return _slip(f"step 3, the answer: the model wrote {answer!r}, which does not state the value from "
                         f"the result ({' or '.join(repr(each) for each in conversation.values)})")
        return None
    if not NOT_FOUND.search(answer):
        return _slip(f"step 3, the answer: the model wrote {answer!r}, which does not say that nothing was found")
    made_up = [each for each in conversation.invented if _states(answer, each)]
    made_up += [number for number in re.findall(r"\d+", answer) if number not in conversation.question]
    if made_up:
        return _slip(f"step 3, the answer: nothing was found, but the model wrote {answer!r}, which states "
                     f"{made_up[0]!r} as if it were known")
    return None


def _tools_problem(tools: Any) -> str | None:
    if not isinstance(tools, (list, tuple)) or not all(isinstance(each, Tool) for each in tools):
        return ("shop_tools must return a list of toolkit tools (made with @tool or Tool.from_spec), "
                f"not {type(tools).__name__}")
    if not 3 <= len(tools) <= 4:
        return f"shop_tools must return three or four tools, not {len(tools)}"
    if len({each.name for each in tools}) != len(tools):
        return "two of the tools share a name: the model could not tell them apart"
    return None


SLIPS_ALLOWED = 3  # of the seven conversations: the reference stays within it in about 9 gradings of 10


@dataclass
class MarkedReport(Report):
    """A report that forgives the model a few slips and the agent no fault.

    A grading passes when every failure is a slip of the model's (``Problem.slip``), there are
    at most ``slips_allowed`` of them, and each kind of conversation passed in full at least
    once, so every step was seen working. A 135M model gets a call or an answer wrong now and
    then whatever the agent does; an agent that skips a step fails wherever that step was needed.
    """

    slips_allowed: int = SLIPS_ALLOWED
    slips: list[Outcome] = field(default_factory=list)  # the failures that were the model's slips
    kinds_needed: set[str] = field(default_factory=set)
    kinds_shown: set[str] = field(default_factory=set)

    def slip(self, case: str, note: str) -> None:
        self.fail(case, note)
        self.slips.append(self.outcomes[-1])

    @property
    def faults(self) -> list[Outcome]:
        return [each for each in self.failures if not any(each is slip for slip in self.slips)]

    @property
    def passed(self) -> bool:
        return (bool(self.outcomes) and not self.faults and len(self.slips) <= self.slips_allowed
                and self.kinds_needed <= self.kinds_shown)

    def __str__(self) -> str:
        lines = [super().__str__()]
        if self.failures and not self.faults:
            lines.append(f"  The model slipped in {len(self.slips)} (up to {self.slips_allowed} allowed); "
                         "your agent did its part in every conversation.")
        if not self.faults and (missing := sorted(self.kinds_needed - self.kinds_shown)):  # faults come first
            lines.append(f"  No {' and no '.join(kind.replace('_', ' ') for kind in missing)} conversation "
                         "passed in full: each kind must pass at least once.")
        return "\n".join(lines)


def grade(shop_tools, run_agent, seed: int | None = None, backend: Backend | None = None) -> MarkedReport:
    """Grade the learner's tools and agent on conversations made up from ``seed``.

    ``backend`` is the model to grade on: the embedded one when not given.
    """
    seed = case_seed(seed)
    report = MarkedReport(f"Lab 15 - a capstone agent (made-up cases: seed {seed})")
    shop, conversations = made_up_conversations(seed)
    report.kinds_needed = {each.kind for each in conversations}
    done, tools = attempt(report, "shop_tools", shop_tools, shop)
    if not done:
        return report
    if problem := _tools_problem(tools):
        report.fail("shop_tools", problem)
        return report
    if backend is None:
        from toolkit.client import connect

        backend = connect()
    for conversation in conversations:
        shop.lookups.clear()
        graded, recorder = recording(backend)
        done, messages = attempt(report, conversation.title, run_agent, graded, conversation.question, list(tools))
        if not done:
            if report.failures[-1].note.startswith("not done yet"):
                return report
            continue
        if recorder.refused:  # the agent caught the refusal and went on: the request still counts
            report.fail(conversation.title, recorder.refused[0])
            continue
        problem = judge(conversation, list(shop.lookups), recorder.exchanges, messages)
        if problem is None:
            report.ok(conversation.title)
            report.kinds_shown.add(conversation.kind)
        elif problem.slip:
            report.slip(conversation.title, problem.note)
        else:
            report.fail(conversation.title, problem.note)
    return report


hints = Hints([
    "Each tool calls one method of the shop with its argument and returns a sentence the model can "
    "copy: 'Order A1001 is shipped.'; when the shop returns None, say so: 'No order A1001 was found.'",
    "SmolLM2-135M picks tools by their names and is easily led astray by the others on offer. Offering "
    "only the tools a question is about (lesson 11: toolkit.retrieval.ToolRetriever(tools).top_k(question, "
    "k=1, min_score=...)) and none for an unrelated question helps it most.",
    "With one tool offered, ask for the call with tool_choice='required', run it, then ask for the "
    "answer with the result in the messages and tool_choice='none' (lesson 7), so the model must write text.",
])
