"""What one trial of an experiment is: a case of the suite, the settings it runs under, and
the exact chat-completions request body that results.

An experiment changes one or two settings (the *factors*) and keeps the rest fixed, so the
difference in the rates can be put down to the factor. ``plan`` makes that grid of trials;
``build_request`` turns each trial into the body sent over the wire; ``order_for_prefix_reuse``
puts trials whose prompts begin the same way next to each other, because a server that keeps
the evaluated prompt (llama.cpp's KV cache, hosted "prompt caching") then skips most of the work.
"""
from __future__ import annotations

import functools
import json
import math
import random
from dataclasses import dataclass, replace
from itertools import product
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from toolkit.bench.suite_model import Case, Suite
from toolkit.engine import EMBEDDED_MODELS
from toolkit.messages import ToolCall, with_system_text
from toolkit.round_trip import request_for_round

# The guidance a system prompt gives when it is switched on: when to call a tool, which one,
# and what to do when none fits, as the source article advises. It names no tool, so it fits
# any tool list; it was written once, before it was measured, and is not tuned on the suite.
GUIDANCE = (
    "You are a helpful assistant with access to tools. When a question needs fresh or exact "
    "information (weather, prices, calculations, records), call a tool instead of answering from "
    "memory. Choose the one tool whose description matches the request, and take each argument's "
    "value from the user's own words. If no tool fits the request, do not call any tool: answer "
    "in plain text."
)
NEUTRAL_PREAMBLE = "You are a helpful assistant."


@dataclass(frozen=True)
class Knob:
    """How one setting is shown and compared: declared once, beside the field it describes.

    The app's Experiment tab, its factor lists and the charts' labels are all read from these,
    so a new setting is one field below with its ``Knob``. ``widget`` is the control the tab
    shows for a setting held fixed: "radio" or "select" (one of ``offered``), "toggle",
    "slider" or "number" (within ``low``..``high``, by ``step``), "names" (typed as text) or
    "none" (not on the page). ``compare`` is what the tab proposes when the setting is the
    factor: a list of values, or text for a setting typed as numbers or names. ``idle_when``
    names another setting and the value at which this one does nothing (``top_k`` while
    ``retrieval`` is off): the tab then leaves it out of the settings held fixed.
    """

    label: str
    widget: Literal["radio", "select", "toggle", "slider", "number", "names", "none"]
    offered: tuple = ()
    low: float | None = None
    high: float | None = None  # None: no upper bound
    step: float | None = None
    compare: Any = None
    idle_when: tuple[str, Any] | None = None

    @property
    def comparable(self) -> bool:
        return self.widget != "none"

    @property
    def numeric(self) -> bool:
        return self.widget in ("slider", "number")


def _in_range(value: float, knob: Knob) -> float:
    if knob.low is not None and value < knob.low:
        raise ValueError(f"must be at least {knob.low:g}")
    if knob.high is not None and value > knob.high:
        raise ValueError(f"must be at most {knob.high:g}")
    return value


class Settings(BaseModel):
    """Everything about a trial that is not the case itself. Each field can be a factor."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    description: Annotated[Literal["clear", "vague"] | dict[str, str], Knob(
        "tool descriptions", "radio", offered=("clear", "vague", "custom"), compare=["clear", "vague"])] = "clear"
    """Tool descriptions: the suite's "clear" or "vague" ones, or your own text per tool name
    (tools left out of the dict keep their clear description). The page's "custom" is the dict."""
    names: Annotated[Literal["real", "hidden"], Knob(
        "tool names", "select", offered=("real", "hidden"), compare=["real", "hidden"])] = "real"
    """"hidden" sends every tool as ``tool_a``, ``tool_b``, ...: only its description then says
    what it does. Calls are mapped back to the real names before they are scored."""
    enums: Annotated[bool, Knob("enum constraints", "toggle", offered=(True, False), compare=[True, False])] = True
    """False turns every enum in the schemas into a free string."""
    temperature: Annotated[float, Knob("temperature", "slider", low=0.0, high=2.0, step=0.1,
                                       compare="0, 1.0")] = 0.0
    tool_choice: Annotated[Literal["auto", "none", "required", "expected"], Knob(
        "tool_choice", "select", offered=("auto", "none", "required", "expected"),
        compare=["auto", "required"])] = "auto"
    """"expected" forces the case's first expected function ("none" for a case that needs no call)."""
    distractors: Annotated[int, Knob("distractor tools", "number", low=0, step=1, compare="0, 4")] = 0
    """Extra tools the case does not need, added to the ones it offers (no more than the suite
    has: ``plan`` says so before a run starts)."""
    protocol: Annotated[Literal["native", "string"], Knob(
        "protocol", "select", offered=("native", "string"), compare=["native", "string"])] = "native"
    """"native" sends ``tools``; "string" describes them in the system prompt as ``<tool>`` text."""
    parallel_tool_calls: Annotated[bool | None, Knob(
        "parallel_tool_calls", "select", offered=(None, True, False), compare=[None, False])] = None
    """None leaves the field out, so the endpoint's default applies."""
    system_prompt: Annotated[bool, Knob("system prompt", "toggle", offered=(False, True),
                                        compare=[False, True])] = False
    """A short system prompt (``GUIDANCE``) that says when to call a tool, which one, and what to
    do when none fits."""
    model: Annotated[str | None, Knob("model", "names", compare=", ".join(EMBEDDED_MODELS))] = None
    """None asks the backend's own model. A name asks another model at the same endpoint: the
    embedded endpoint serves the base SmolLM2 and its two tool-tuned versions side by side. Typed as
    names, and not fixed on the page when left out of the comparison: the sidebar's model is asked."""
    retrieval: Annotated[Literal["off", "tfidf", "embeddings"], Knob(
        "tool retrieval", "select", offered=("off", "tfidf", "embeddings"), compare=["off", "tfidf"])] = "off"
    """Offer only the ``top_k`` tools a retriever ranks closest to the question, among the case's
    tools and the distractors, as lesson 11's tool provider does: TF-IDF (``ToolRetriever``) or
    multilingual-e5 embeddings (``EmbeddingRetriever``). The retriever reads the names and
    descriptions sent, so descriptions (and hidden names) matter through it."""
    top_k: Annotated[int, Knob("retrieved tools (top_k)", "number", low=1, step=1, compare="1, 3",
                                   idle_when=("retrieval", "off"))] = 3
    """How many tools retrieval keeps (no more than the trial offers)."""
    max_tokens: Annotated[int, Knob("max_tokens", "none"), Field(ge=1)] = 96
    seed: Annotated[int, Knob("seed", "none")] = 0
    """Seeds the distractor choice, the tool order and the sampling (plus the repeat index)."""

    @field_validator("*")
    @classmethod
    def _within_range(cls, value: Any, info: ValidationInfo) -> Any:
        knob = KNOBS.get(info.field_name)
        if knob is not None and knob.numeric and isinstance(value, (int, float)):
            return _in_range(value, knob)
        return value


KNOBS: dict[str, Knob] = {}
"""Every setting's ``Knob``, in the order of the fields: the one table the app reads."""
for _name, _field in Settings.model_fields.items():
    KNOBS[_name] = next(item for item in _field.metadata if isinstance(item, Knob))

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


def show_value(value: Any) -> str:
    """A setting's value in words, as the app's widgets, charts and the effects table show it:
    "on"/"off" for a toggle, "custom" for a dict of texts, "endpoint default" for a field that
    is not sent (which the store reads back as NaN)."""
    value = label(value)
    if isinstance(value, float) and math.isnan(value):
        return "endpoint default"
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


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


def real_names(calls: list[ToolCall], suite: Suite, settings: Settings) -> list[ToolCall]:
    """The calls with hidden names turned back into the suite's, ready for scoring."""
    if settings.names != "hidden":
        return calls
    real = {hidden: name for name, hidden in hidden_names(suite, settings.seed).items()}
    return [replace(call, name=real.get(call.name, call.name)) for call in calls]


def tool_specs(case: Case, suite: Suite, settings: Settings) -> list[dict]:
    specs = []
    hidden = hidden_names(suite, settings.seed) if settings.names == "hidden" else {}
    for key in offered_tools(case, suite, settings):
        name = suite.tools[key].name or key
        spec = suite.tool_spec(key, _description(settings, key, name), enums=settings.enums)
        if hidden:
            spec["function"]["name"] = hidden[name]
        specs.append(spec)
    if settings.retrieval == "off":
        return specs
    if settings.top_k > len(specs):
        raise ValueError(f"case {case.id!r} offers {len(specs)} tools, fewer than top_k = {settings.top_k}; "
                         "add distractors or lower top_k")
    kept = _retrieved(settings.retrieval, json.dumps(specs, ensure_ascii=False), case.question, settings.top_k)
    return [spec for spec in specs if spec["function"]["name"] in kept]  # in the trial's own order


@functools.lru_cache(maxsize=256)
def _retrieved(kind: str, specs_json: str, question: str, k: int) -> frozenset[str]:
    """The names of the ``k`` tools the retriever ranks closest to the question (cached: the
    same trial's request is built more than once, and embeddings cost time)."""
    from toolkit import (
        retrieval,  # the embedding model loads only where it is asked for
    )

    specs = json.loads(specs_json)
    ranker = retrieval.ToolRetriever(specs) if kind == "tfidf" else retrieval.EmbeddingRetriever(specs)
    return frozenset(spec["function"]["name"] for spec in ranker.top_k(question, k, min_score=float("-inf")))


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


def build_request(case: Case, suite: Suite, settings: Settings, repeat: int = 0) -> dict:
    """The chat-completions body for one trial, without ``model`` (the backend adds it).

    A trial is the first round of a turn in which no tool runs: the request is the one the loop
    would send (``toolkit.round_trip.request_for_round``), for the case's messages and the tools
    the settings make of the suite's."""
    messages = [message.model_dump(exclude_none=True) for message in case.messages]
    if settings.system_prompt:
        messages = with_system_text(messages, GUIDANCE)
    elif settings.protocol == "string":
        # The tool prompt needs some opening line; this one says nothing about using tools.
        messages = with_system_text(messages, NEUTRAL_PREAMBLE)
    # Each repeat samples afresh, yet the whole run can be replayed from the seed.
    options = {"temperature": settings.temperature, "max_tokens": settings.max_tokens,
               "seed": settings.seed * 1000 + repeat}
    tools, choice = tool_specs(case, suite, settings), forced_choice(case, settings, suite)
    if isinstance(choice, dict) and choice["function"]["name"] not in {t["function"]["name"] for t in tools}:
        choice = "required"  # retrieval left the expected tool out: force a call, not a tool not offered
    return request_for_round(None, messages, tools, settings.protocol, options, choice,
                             settings.parallel_tool_calls)


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
    if any(settings.retrieval == "embeddings" for settings in variants):
        from toolkit.retrieval import EmbeddingsUnavailable, embedding_model

        try:
            embedding_model()
        except EmbeddingsUnavailable as error:
            raise ValueError(f"retrieval by embeddings cannot run here: {error}") from None
    for case_id in case_ids:  # fail now, not half way through a run
        for settings in variants:
            tool_specs(suite.case(case_id), suite, settings)
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


# Every setting's label comes from its declaration; the other columns a chart or a page can split
# by are properties of the case or the run.
FACTOR_LABELS = {**{name: knob.label for name, knob in KNOBS.items()},
                 "category": "case category", "language": "language", "run": "run"}


def factor_label(factor: str) -> str:
    """A setting or column as a page and a chart name it."""
    return FACTOR_LABELS.get(factor, factor.replace("_", " "))
