"""Grader for labs/07_why_no_call.py: the checklist for "the model won't call my tool".

Each case is a request that got no call and a scripted endpoint that behaves a known way:
under ``tool_choice="required"`` it either calls a tool or refuses the field, as an endpoint
without ``required`` does; otherwise it answers in text. The findings the checklist must give
follow from how the case was built, not from the learner's code. Besides the public cases,
cases are made up at grading time (tool names, descriptions, system prompts and faults drawn
afresh), so a table of the public answers cannot pass; ``grade(fn, seed=N)`` repeats a run.

The grader also checks what was *sent*: the forced retry carries the same messages and tools
with ``tool_choice`` set to ``"required"``, and the learner's request is left as it was.
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass, field

from labs.grading import Hints, Report, attempt, case_seed
from toolkit import fake
from toolkit.lab_error import LabError

ORDER = ("tools_missing", "tool_choice_none", "description_too_short", "system_prompt_forbids",
         "answered_in_text", "forcing_refused", "calls_when_forced")
# The phrases the lab lists for a system prompt that forbids tools (in any case).
FORBIDDING = ("do not use", "don't use", "never use", "never call", "without tools",
              "without using tools", "不要使用", "不要调用")


@dataclass
class Scenario:
    """One request that got no call, and how the endpoint behind it behaves."""

    name: str
    question: str
    tools: list[dict] = field(default_factory=list)
    system: str | None = None
    tool_choice: str | None = None
    refuses_required: bool = False
    expected: list[str] = field(default_factory=list)

    def request(self) -> dict:
        messages = ([{"role": "system", "content": self.system}] if self.system else []) + \
                   [{"role": "user", "content": self.question}]
        body = {"messages": messages, "max_tokens": 64, "temperature": 0}
        if self.tools:
            body["tools"] = self.tools
        if self.tool_choice is not None:
            body["tool_choice"] = self.tool_choice
        return body

    def endpoint(self) -> fake.ScriptedModel:
        def reply(request: dict):
            if request.get("tool_choice") == "required":
                if self.refuses_required:
                    raise LabError("scripted://fake rejected the request (400): tool_choice 'required' "
                                   "is not supported by this model")
                name = request["tools"][0]["function"]["name"]
                return fake.calls(fake.call(name, {}))
            return fake.text("I can answer that myself: it is probably fine.")
        return fake.ScriptedModel([reply] * 6)  # more than the checklist needs


def spec(name: str, description: str) -> dict:
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}


WEATHER = spec("get_weather", "Get the current weather in one city. Use it when the user asks about weather.")
ORDERS = spec("get_order_status", "Look up where an order is, by its id, such as A1001.")


def _findings(*found: str) -> list[str]:
    return [code for code in ORDER if code in found]


CASES = [
    Scenario("no tools in the request", "What is the weather in Beijing?",
             expected=_findings("tools_missing")),
    Scenario("tool_choice 'none' was sent", "What is the weather in Beijing?", [WEATHER], tool_choice="none",
             expected=_findings("tool_choice_none", "answered_in_text", "calls_when_forced")),
    Scenario("a one-word description", "Where is my order A1002?", [ORDERS, spec("get_weather", "Weather.")],
             expected=_findings("description_too_short", "answered_in_text", "calls_when_forced")),
    Scenario("a system prompt that forbids tools", "What is the weather in Beijing?", [WEATHER],
             system="You are a friendly assistant. Do not use tools; answer from what you know.",
             expected=_findings("system_prompt_forbids", "answered_in_text", "calls_when_forced")),
    Scenario("a system prompt in Chinese that forbids calls", "北京天气怎么样？", [WEATHER],
             system="你是一个友好的助手。不要调用任何工具。",
             expected=_findings("system_prompt_forbids", "answered_in_text", "calls_when_forced")),
    Scenario("the request is right: the model chose text", "What is the weather in Beijing?", [WEATHER, ORDERS],
             expected=_findings("answered_in_text", "calls_when_forced")),
    Scenario("an endpoint that refuses 'required'", "Where is my order A1001?", [ORDERS],
             refuses_required=True, expected=_findings("answered_in_text", "forcing_refused")),
]

_NAMES = ["find_flight", "convert_currency", "lookup_invoice", "check_stock", "book_room", "send_reminder",
          "get_exchange_rate", "search_recipes", "parcel_status", "get_forecast"]
_QUESTIONS = ["Can you check this for me?", "What does it say for tomorrow?", "请帮我查一下。",
              "Look it up, please.", "How much is it now?"]
_FRIENDLY = ["You are a helpful assistant.", "Keep answers short.", "你是一个助手。", "Be polite."]
_FORBIDDING_SENTENCES = {"do not use": "Do not use the tools.", "don't use": "Don't use any tool.",
                         "never use": "Never use tools.", "never call": "Never call a function.",
                         "without tools": "Answer without tools.",
                         "without using tools": "Reply without using tools.",
                         "不要使用": "不要使用工具。", "不要调用": "不要调用任何函数。"}


def made_up_scenarios(seed: int, count: int = 6) -> list[Scenario]:
    """Cases drawn afresh: tools, wording and faults a table of the public cases cannot hold."""
    rng = random.Random(seed)
    cases = []
    for index in range(count):
        names = rng.sample(_NAMES, rng.randint(1, 3))
        short = rng.random() < 0.4
        tools = [spec(name, f"Use it to {name.replace('_', ' ')} when the user asks for it, by city.")
                 for name in names]
        if short:
            where = rng.randrange(len(tools))
            tools[where] = spec(names[where], rng.choice(["", "Helper.", "Does things.", "A tool"]))
        no_tools = rng.random() < 0.15
        forbids = rng.random() < 0.4
        system = rng.choice(_FRIENDLY)
        if forbids:
            sentence = rng.choice(list(_FORBIDDING_SENTENCES.values()))
            system = f"{system} {sentence if rng.random() < 0.5 else sentence.upper()}"
        choice_none = rng.random() < 0.3
        refuses = rng.random() < 0.3
        found = ["tools_missing"] if no_tools else [
            *(["tool_choice_none"] if choice_none else []), *(["description_too_short"] if short else []),
            *(["system_prompt_forbids"] if forbids else []), "answered_in_text",
            "forcing_refused" if refuses else "calls_when_forced"]
        cases.append(Scenario(f"made-up case {index + 1}", rng.choice(_QUESTIONS),
                              [] if no_tools else tools, system=system,
                              tool_choice="none" if choice_none else rng.choice([None, "auto"]),
                              refuses_required=refuses, expected=_findings(*found)))
    return cases


def grade(diagnose, seed: int | None = None) -> Report:
    seed = case_seed(seed)
    report = Report(f"Lab 07b - why won't the model call my tool? (made-up cases: seed {seed})")
    for case in CASES + made_up_scenarios(seed):
        model = case.endpoint()
        request = case.request()
        sent_as = copy.deepcopy(request)
        done, got = attempt(report, case.name, diagnose, model.backend(), request)
        if not done:
            if report.failures[-1].note.startswith("not done yet"):
                return report
            continue
        if request != sent_as:
            report.fail(case.name, "diagnose changed the request it was given: copy it before you "
                                   "change tool_choice", sent_as, request)
            continue
        if not report.check(case.name, case.expected, got, _why(case, got)):
            continue
        if case.tools:
            forced = [sent for sent in model.requests if sent.get("tool_choice") == "required"]
            plain = [sent for sent in model.requests if sent.get("tool_choice") != "required"]
            same = lambda sent: sent.get("messages") == sent_as["messages"] and sent.get("tools") == sent_as["tools"]
            if not forced or not all(same(sent) for sent in forced) or not plain or not all(same(sent) for sent in plain):
                report.outcomes.pop()
                report.fail(case.name, "send the request once as it is and once forced with "
                                       "tool_choice='required', each with the same messages and tools",
                            "one request as given and one with tool_choice 'required'",
                            [sent.get("tool_choice") for sent in model.requests])
    return report


def _why(case: Scenario, got) -> str:
    if not isinstance(got, list):
        return "return a list of finding codes, in the checklist's order"
    if "tools_missing" in case.expected:
        return "with no tools in the request there is nothing else to check: return ['tools_missing'] alone"
    missing = [code for code in case.expected if code not in got]
    extra = [code for code in got if code not in case.expected]
    if missing:
        return f"missed: {', '.join(missing)}"
    if extra:
        return f"not so in this case: {', '.join(map(str, extra))}"
    return f"the findings are right but not in the checklist's order: {', '.join(ORDER)}"


hints = Hints([
    "Go down the list in order and append each code that applies. Only the last two steps send "
    "anything: the request as it is, then a copy with tool_choice='required'.",
    "A short description: fewer than 4 words after .split() (an empty one counts). A forbidding "
    "system prompt: a 'system' message whose content, lower-cased, holds one of the listed phrases.",
    "Copy before changing: forced = {**copy.deepcopy(request), 'tool_choice': 'required'}. An "
    "endpoint that refuses the field raises LabError: catch it and append 'forcing_refused'.",
])
