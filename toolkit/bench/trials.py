"""What one trial of an experiment is: a case of the suite, the settings it runs under, and
the exact chat-completions request body that results.

An experiment changes one or two settings (the *factors*) and keeps the rest fixed, so the
difference in the rates can be put down to the factor. ``plan`` makes that grid of trials;
``build_request`` turns each trial into the body sent over the wire; ``order_for_prefix_reuse``
puts trials whose prompts begin the same way next to each other, because a server that keeps
the evaluated prompt (llama.cpp's KV cache, hosted "prompt caching") then skips most of the work.
"""
from __future__ import annotations

import json
import random
from itertools import product
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from toolkit.bench.suite import Case, Suite
from toolkit.protocol import DEFAULT_PREAMBLE, render_system_prompt

# The guidance a system prompt gives when it is switched on; it says nothing about any one tool.
GUIDANCE = DEFAULT_PREAMBLE
NEUTRAL_PREAMBLE = "You are a helpful assistant."


class Settings(BaseModel):
    """Everything about a trial that is not the case itself. Each field can be a factor."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str | None = None
    """None asks the backend's own model. A name asks another model at the same endpoint: the
    embedded endpoint serves the base SmolLM2 and its tool-tuned version side by side."""
    description: Literal["clear", "vague"] | dict[str, str] = "clear"
    """Tool descriptions: the suite's "clear" or "vague" ones, or your own text per tool name
    (tools left out of the dict keep their clear description)."""
    enums: bool = True
    """False turns every enum in the schemas into a free string."""
    names: Literal["real", "hidden"] = "real"
    """"hidden" sends every tool as ``tool_a``, ``tool_b``, ...: only its description then says
    what it does. Calls are mapped back to the real names before they are scored."""
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    tool_choice: Literal["auto", "none", "required", "expected"] = "auto"
    """"expected" forces the case's first expected function ("none" for a case that needs no call)."""
    distractors: int = Field(0, ge=0)
    """Extra tools the case does not need, added to the ones it offers."""
    protocol: Literal["native", "string"] = "native"
    """"native" sends ``tools``; "string" describes them in the system prompt as ``<tool>`` text."""
    parallel_tool_calls: bool | None = None
    """None leaves the field out, so the endpoint's default applies."""
    system_prompt: bool = False
    """A short system prompt that encourages tool use."""
    max_tokens: int = Field(96, ge=1)
    seed: int = 0
    """Seeds the distractor choice, the tool order and the sampling (plus the repeat index)."""


FACTORS: tuple[str, ...] = tuple(Settings.model_fields)


class Trial(NamedTuple):
    case_id: str
    settings: Settings
    repeat: int = 0


class Plan(list):
    """The trials of an experiment, in the order they were planned; ``factors`` names the
    settings that vary (first factor first) and ``suite`` is where the cases come from."""

    def __init__(self, trials=(), factors: tuple[str, ...] = (), suite: Suite | None = None):
        super().__init__(trials)
        self.factors = tuple(factors)
        self.suite = suite


def label(value: Any) -> Any:
    """A setting's value as a table cell or a chart category: a dict of texts is "custom",
    None (the field is not sent) is "endpoint default"."""
    if isinstance(value, dict):
        return "custom"
    if value is None:
        return "endpoint default"
    return value


def with_setting(settings: Settings, factor: str, value: Any) -> Settings:
    """A copy of ``settings`` with one field changed, checked like a new ``Settings``."""
    if factor not in FACTORS:
        raise ValueError(f"unknown factor {factor!r}; choose one of {', '.join(FACTORS)}")
    try:
        return Settings.model_validate({**settings.model_dump(), factor: value})
    except ValidationError as error:
        problem = error.errors()[0]["msg"]
        raise ValueError(f"{factor} = {value!r} is not a valid setting: {problem}") from None


# ---------------------------------------------------------------- one request

def tool_order(suite: Suite, seed: int) -> dict[str, int]:
    """A rank for every tool of the suite, shuffled once per seed.

    Every trial lists its tools in this one order, so two cases that offer the same tools send
    the very same list (a shared prompt prefix), and where the right tool sits in the list
    depends on the seed rather than on how the suite file happens to be written.
    """
    names = sorted(suite.tools)
    random.Random(f"tool-order:{seed}").shuffle(names)
    return {name: rank for rank, name in enumerate(names)}


def offered_tools(case: Case, suite: Suite, settings: Settings) -> list[str]:
    """The suite keys of the tools a trial offers: the case's own plus the distractors."""
    offered = set(case.tools)
    # The whole seeded order of candidates, so that k + 1 distractors are the k ones plus one.
    candidates = suite.distractors(case, _candidate_count(case, suite), seed=settings.seed)
    extra = [name for name in candidates if name not in offered]
    if settings.distractors > len(extra):
        raise ValueError(f"case {case.id!r} can take at most {len(extra)} distractors "
                         f"(asked for {settings.distractors})")
    rank = tool_order(suite, settings.seed)
    return sorted(offered | set(extra[:settings.distractors]), key=rank.__getitem__)


def _candidate_count(case: Case, suite: Suite) -> int:
    expected = {call.name for call in case.expected}
    return sum((tool.name or key) not in expected for key, tool in suite.tools.items())


def _description(settings: Settings, key: str, function_name: str) -> str:
    if isinstance(settings.description, dict):
        return settings.description.get(key) or settings.description.get(function_name) or "clear"
    return settings.description


def _letters(number: int) -> str:
    """0 -> a, 25 -> z, 26 -> aa: spreadsheet-style column names."""
    text = ""
    number += 1
    while number:
        number, digit = divmod(number - 1, 26)
        text = chr(ord("a") + digit) + text
    return text


def hidden_names(suite: Suite, seed: int) -> dict[str, str]:
    """Real function name -> the uninformative name sent when ``names`` is "hidden".

    Lettered in the seeded tool order, so the letter says nothing about the tool either.
    """
    rank = tool_order(suite, seed)
    return {(suite.tools[key].name or key): f"tool_{_letters(rank[key])}" for key in suite.tools}


def real_names(calls: list[dict], suite: Suite, settings: Settings) -> list[dict]:
    """The calls with hidden names turned back into the suite's, ready for scoring."""
    if settings.names != "hidden":
        return calls
    real = {hidden: name for name, hidden in hidden_names(suite, settings.seed).items()}
    return [{**call, "name": real.get(call.get("name"), call.get("name"))} for call in calls]


def tool_specs(case: Case, suite: Suite, settings: Settings) -> list[dict]:
    specs = []
    hidden = hidden_names(suite, settings.seed) if settings.names == "hidden" else {}
    for key in offered_tools(case, suite, settings):
        name = suite.tools[key].name or key
        spec = suite.tool_spec(key, _description(settings, key, name), enums=settings.enums)
        if hidden:
            spec["function"]["name"] = hidden[name]
        specs.append(spec)
    return specs


def forced_choice(case: Case, settings: Settings, suite: Suite | None = None) -> str | dict:
    """The ``tool_choice`` value to send; "expected" becomes the case's own first function."""
    if settings.tool_choice != "expected":
        return settings.tool_choice
    if not case.expected:
        return "none"  # the answer key wants no call, so that is what forcing it means
    name = case.expected[0].name
    if settings.names == "hidden" and suite is not None:
        name = hidden_names(suite, settings.seed).get(name, name)
    return {"type": "function", "function": {"name": name}}


def _string_rules(choice: str | dict, parallel: bool | None) -> list[str]:
    # The string protocol has no API field for these; the prompt can only ask.
    rules = []
    if choice == "none":
        rules.append("Do not call any tool in this reply.")
    elif choice == "required":
        rules.append("You must call at least one tool in this reply.")
    elif isinstance(choice, dict):
        rules.append(f"You must call the tool {choice['function']['name']} in this reply.")
    if parallel is False:
        rules.append("Call at most one tool in this reply.")
    return rules


def build_request(case: Case, suite: Suite, settings: Settings, repeat: int = 0) -> dict:
    """The chat-completions body for one trial, without ``model`` (the backend adds it)."""
    tools = tool_specs(case, suite, settings)
    choice = forced_choice(case, settings, suite)
    messages = [message.model_dump(exclude_none=True) for message in case.messages]
    if settings.protocol == "string":
        preamble = GUIDANCE if settings.system_prompt else NEUTRAL_PREAMBLE
        system = "\n\n".join([render_system_prompt(tools, preamble),
                              *_string_rules(choice, settings.parallel_tool_calls)])
    else:
        system = GUIDANCE if settings.system_prompt else None
    if system:
        messages = _with_system(messages, system)
    request: dict[str, Any] = {"messages": messages}
    if settings.protocol == "native":
        request["tools"] = tools
        request["tool_choice"] = choice
        if settings.parallel_tool_calls is not None:
            request["parallel_tool_calls"] = settings.parallel_tool_calls
    request["temperature"] = settings.temperature
    request["max_tokens"] = settings.max_tokens
    # Each repeat samples afresh, yet the whole run can be replayed from the seed.
    request["seed"] = settings.seed * 1000 + repeat
    return request


def _with_system(messages: list[dict], system: str) -> list[dict]:
    """Our system text first; a case's own system message follows it in the same message."""
    if messages and messages[0].get("role") == "system":
        own = messages[0].get("content") or ""
        return [{"role": "system", "content": f"{system}\n\n{own}" if own else system}, *messages[1:]]
    return [{"role": "system", "content": system}, *messages]


# ---------------------------------------------------------------- the grid

def pick_cases(suite: Suite, n: int) -> list[str]:
    """``n`` case ids spread over the categories (round robin, in file order)."""
    if n < 1:
        raise ValueError("the number of cases must be at least 1")
    by_category: dict[str, list[str]] = {}
    for case in suite.cases:
        by_category.setdefault(case.category, []).append(case.id)
    picked: list[str] = []
    for row in range(max(map(len, by_category.values()), default=0)):
        for ids in by_category.values():
            if row < len(ids) and len(picked) < n:
                picked.append(ids[row])
    return picked


def plan(suite: Suite, base: Settings, factor: str | None = None, values: list | None = None,
         second_factor: str | None = None, second_values: list | None = None,
         cases: list[str] | int | None = None, repeats: int = 1) -> Plan:
    """Every combination of the factor values, for every case, ``repeats`` times.

    ``cases`` is a list of case ids, a number (spread over the categories) or None (all).
    Repeats vary slowest and the factor values fastest: a run stopped half way has still
    tried every variant on the same cases, so the comparison stays fair.
    """
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    axes: list[tuple[str, list]] = []
    for name, options in ((factor, values), (second_factor, second_values)):
        if name is None:
            continue
        if not options:
            raise ValueError(f"give at least one value for the factor {name!r}")
        if any(name == seen for seen, _ in axes):
            raise ValueError("the two factors must differ")
        axes.append((name, list(options)))
    variants = []
    for combination in product(*(options for _, options in axes)):
        settings = base
        for (name, _), value in zip(axes, combination):
            settings = with_setting(settings, name, value)
        variants.append(settings)
    if cases is None:
        case_ids = [case.id for case in suite.cases]
    elif isinstance(cases, int):
        case_ids = pick_cases(suite, cases)
    else:
        case_ids = list(cases)
        for case_id in case_ids:
            suite.case(case_id)  # raises KeyError naming an unknown case
    trials = Plan(factors=tuple(name for name, _ in axes), suite=suite)
    for repeat in range(repeats):
        for case_id in case_ids:
            for settings in variants:
                trials.append(Trial(case_id, settings, repeat))
    for case_id in case_ids:  # fail now, not half way through a run
        for settings in variants:
            offered_tools(suite.case(case_id), suite, settings)
    return trials


def prefix_key(request: dict) -> tuple[str, str]:
    """What a prompt begins with: the system text, then the tools (as the template writes them)."""
    system = "\n".join(m.get("content") or "" for m in request["messages"] if m["role"] == "system")
    choice = request.get("tool_choice")
    tools = request.get("tools") or []
    if choice == "none":
        tools = []  # servers leave the tools out of the prompt when none may be called
    elif isinstance(choice, dict):
        tools = [t for t in tools if t["function"]["name"] == choice["function"]["name"]]
    return system, json.dumps(tools, ensure_ascii=False)


def order_for_prefix_reuse(trials: list[Trial], suite: Suite) -> list[Trial]:
    """The same trials, those with the same system prompt and tool list back to back.

    Groups are sorted by their prefix text too, so neighbouring groups share as long a
    beginning as they can; within a group the planned order is kept.
    """
    requests = [build_request(suite.case(t.case_id), suite, t.settings, t.repeat) for t in trials]
    order = sorted(range(len(trials)), key=lambda i: (prefix_key(requests[i]), i))
    return [trials[i] for i in order]
