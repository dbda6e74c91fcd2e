"""All 17 tools at once, or a router that picks a group and the group's agent that picks the tool?

    python benchmarks/tool_groups.py                    # every one-call case of four categories
    python benchmarks/tool_groups.py --cases 8 --out -  # a quick look, nothing written

The source article's first answer to too many tools is to group related tools into sub-agents.
This puts the suite's 17 tools into six groups (``GROUPS``, written once from what each tool
does, before any measurement) and asks each question two ways, with ``toolkit.tool_groups``:

- **all at once**: the 17 tools in one request, as the distractor sweep's last level;
- **routed**: a router offered one hand-off tool per group, then the chosen group's agent
  offered only that group's one to five tools.

Both are forced to make one call (``tool_choice="required"``, ``parallel_tool_calls=false``),
temperature 0, seed 0, so that choosing is the first thing that can go wrong. The cases are the
suite's questions with exactly one expected call in the ``simple``, ``multiple``, ``enum`` and
``nested`` categories (58; ``--cases`` takes fewer, spread over the categories). Where the router
chose the wrong group, the right group's agent is asked too: that is what a perfect router would
have given, so the loss can be put down to routing or to the agent.

It prints each rate with its 95% Wilson interval, the paired counts (right one way only) and the
prompt tokens, and writes them with every question's outcome to ``data/tool_groups.json``, which
lesson 11 reads. These are the lab's own scenarios, held out: the groups were not tuned on them.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from the repository root, like the others here

from toolkit.bench.experiment import CUT_OFF, UNPARSABLE, read_calls, tool_names  # noqa: E402
from toolkit.bench.rates import wilson_interval  # noqa: E402
from toolkit.bench.scoring import CutOff, check  # noqa: E402
from toolkit.bench.suite import lesson_suite
from toolkit.bench.suite_model import Case, Suite  # noqa: E402
from toolkit.bench.trials import pick_cases, tool_order  # noqa: E402
from toolkit.client import connect  # noqa: E402
from toolkit.tool_groups import ToolGroup, ask_group, check_groups, route  # noqa: E402

# Each group: what it handles, and its tools. Every tool of the suite is in exactly one.
GROUPS = {
    "weather": ("Weather: the current weather in a city.", ["get_weather"]),
    "maths": ("Arithmetic: add, subtract, multiply, divide, square roots.", ["calculate", "square_root"]),
    "money": ("Money: currency conversion and stock prices.", ["convert_currency", "get_stock_price"]),
    "orders": ("The shop: search its products; list, track and cancel the user's orders.",
               ["search_products", "list_orders", "get_order_status", "cancel_order"]),
    "travel": ("Travel: book hotels and flights, look up existing bookings.",
               ["book_hotel", "book_flight", "get_booking_details"]),
    "office": ("Office work: meetings, emails, reminders, translations, customer reports.",
               ["schedule_meeting", "send_email", "set_reminder", "translate_text", "export_report"]),
}
CATEGORIES = ["simple", "multiple", "enum", "nested"]
OPTIONS = {"tool_choice": "required", "parallel_tool_calls": False, "temperature": 0.0, "seed": 0, "max_tokens": 96}
DEFAULT_OUT = Path("data") / "tool_groups.json"


def suite_groups(suite: Suite, groups: dict = GROUPS, seed: int = 0) -> list[ToolGroup]:
    """``groups`` as ``ToolGroup``s of the suite's clear specs, each group's tools in the seeded
    order every request of the bench uses; a tool in no group or in two is refused."""
    placed = [name for _, names in groups.values() for name in names]
    missing, twice = sorted(set(suite.tools) - set(placed)), sorted({n for n in placed if placed.count(n) > 1})
    if missing or twice or set(placed) - set(suite.tools):
        raise ValueError(f"every tool of the suite must be in one group: in none {missing}, in two {twice}, "
                         f"not in the suite {sorted(set(placed) - set(suite.tools))}")
    rank = tool_order(suite, seed)
    made = [ToolGroup(name, text, tuple(suite.tool_spec(key) for key in sorted(keys, key=rank.__getitem__)))
            for name, (text, keys) in groups.items()]
    check_groups(made)
    return made


def verdict(case: Case, reply) -> dict:
    """What one reply chose and how it scored against the case's answer key."""
    calls, _, parse_error = read_calls(reply, "native")
    judged = check(case, calls, parse_error=parse_error)
    chosen = (CUT_OFF if isinstance(parse_error, CutOff) else UNPARSABLE) if parse_error else tool_names(calls)
    return {"chosen": chosen, "selection_ok": judged.selection_ok, "arguments_ok": judged.arguments_ok,
            "reason": judged.reason, "prompt_tokens": reply.usage.prompt_tokens}


def rate(outcomes: list[bool]) -> dict:
    successes, n = sum(outcomes), len(outcomes)
    low, high = wilson_interval(successes, n)
    return {"successes": successes, "n": n, "rate": round(successes / n, 4) if n else None,
            "low": round(low, 4), "high": round(high, 4)}


def paired(first: list[bool], second: list[bool]) -> dict[str, int]:
    pairs = list(zip(first, second))
    return {"only_all_at_once": sum(a and not b for a, b in pairs), "only_routed": sum(b and not a for a, b in pairs),
            "both": sum(a and b for a, b in pairs), "neither": sum(not a and not b for a, b in pairs)}


def cell(r: dict) -> str:
    return f"{r['successes']:>2}/{r['n']:<2} {r['rate']:4.0%} [{r['low']:4.0%}, {r['high']:4.0%}]"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=None, help="how many cases, spread over the categories")
    parser.add_argument("--model", default=None, help="a model the endpoint serves (default: its own)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help=f"JSON result (default {DEFAULT_OUT}; - for none)")
    args = parser.parse_args(argv)

    suite = lesson_suite()
    groups = suite_groups(suite)
    group_of = {spec["function"]["name"]: group for group in groups for spec in group.tools}
    every_tool = [spec for group in groups for spec in group.tools]
    every_tool.sort(key=lambda spec: tool_order(suite, OPTIONS["seed"])[spec["function"]["name"]])
    one_call = suite.filter(CATEGORIES)
    one_call = Suite(suite.tools, tuple(c for c in one_call.cases if len(c.expected) == 1), suite.source)
    cases = [suite.case(case_id) for case_id in pick_cases(one_call, args.cases or len(one_call.cases))]
    backend = connect(model=args.model) if args.model else connect()
    options = dict(OPTIONS)
    print(f"{len(cases)} cases, {len(groups)} groups, {len(every_tool)} tools, on {backend.label}", file=sys.stderr)
    started, rows = time.perf_counter(), {case.id: {} for case in cases}

    def messages(case: Case) -> list[dict]:
        return [message.model_dump(exclude_none=True) for message in case.messages]

    # Three passes, each of requests that begin alike (the same tools), so that the engine reuses
    # the evaluated prompt from one request to the next.
    for number, case in enumerate(cases, 1):
        reply = backend.chat(messages=messages(case), tools=every_tool, **options)
        rows[case.id]["all_at_once"] = verdict(case, reply)
        print(f"all at once {number}/{len(cases)} after {time.perf_counter() - started:.0f} s: {case.id} "
              f"{rows[case.id]['all_at_once']['chosen']}", file=sys.stderr, flush=True)
    for number, case in enumerate(cases, 1):
        group, reply = route(backend, messages(case), groups, **options)
        right = group_of[case.expected[0].name]
        rows[case.id].update(right_group=right.name, routed_to=group.name if group else None,
                             router_prompt_tokens=reply.usage.prompt_tokens)
        print(f"router {number}/{len(cases)} after {time.perf_counter() - started:.0f} s: {case.id} -> "
              f"{group.name if group else None} (right: {right.name})", file=sys.stderr, flush=True)
    # Each question's agent: the group it was routed to, and the right group where that differs.
    wanted = {(rows[case.id][key], case.id) for case in cases for key in ("routed_to", "right_group")
              if rows[case.id][key]}
    group_rank = {group.name: rank for rank, group in enumerate(groups)}
    case_rank = {case.id: rank for rank, case in enumerate(cases)}
    asks = sorted(wanted, key=lambda ask: (group_rank[ask[0]], case_rank[ask[1]]))
    by_name, agent = {group.name: group for group in groups}, {}
    for number, (name, case_id) in enumerate(asks, 1):
        agent[name, case_id] = verdict(suite.case(case_id), ask_group(backend, messages(suite.case(case_id)),
                                                                      by_name[name], **options))
        print(f"agent {number}/{len(asks)} after {time.perf_counter() - started:.0f} s: {name} {case_id} "
              f"{agent[name, case_id]['chosen']}", file=sys.stderr, flush=True)
    no_call = {"chosen": "(no group)", "selection_ok": False, "arguments_ok": False, "reason": "no_group",
               "prompt_tokens": 0}
    for case in cases:
        row = rows[case.id]
        row["routed"] = agent.get((row["routed_to"], case.id), no_call)
        row["perfect_router"] = agent[row["right_group"], case.id]
    seconds = time.perf_counter() - started

    ordered = [{"case_id": case.id, "category": case.category, "language": case.language, **rows[case.id]}
               for case in cases]
    summary = {
        "all_at_once": {aspect: rate([r["all_at_once"][f"{aspect}_ok"] for r in ordered])
                        for aspect in ("selection", "arguments")},
        "router_right_group": rate([r["routed_to"] == r["right_group"] for r in ordered]),
        "routed": {aspect: rate([r["routed"][f"{aspect}_ok"] for r in ordered]) for aspect in ("selection", "arguments")},
        "perfect_router": {aspect: rate([r["perfect_router"][f"{aspect}_ok"] for r in ordered])
                           for aspect in ("selection", "arguments")},
        "paired": {aspect: paired([r["all_at_once"][f"{aspect}_ok"] for r in ordered],
                                  [r["routed"][f"{aspect}_ok"] for r in ordered]) for aspect in ("selection", "arguments")},
        "mean_prompt_tokens": {
            "all_at_once": round(sum(r["all_at_once"]["prompt_tokens"] for r in ordered) / len(ordered), 1),
            "routed": round(sum(r["router_prompt_tokens"] + r["routed"]["prompt_tokens"] for r in ordered) / len(ordered), 1)},
    }
    print(f"\n{len(cases)} questions, {seconds:.0f} s")
    print(f"{'':<26} {'right tool':<24} right arguments")
    for label, key in (("all 17 tools at once", "all_at_once"), ("router, then group agent", "routed"),
                       ("a perfect router", "perfect_router")):
        print(f"{label:<26} {cell(summary[key]['selection']):<24} {cell(summary[key]['arguments'])}")
    print(f"router chose the right group {cell(summary['router_right_group'])}")
    print("paired:", summary["paired"])
    print("mean prompt tokens per question:", summary["mean_prompt_tokens"])
    if args.out != "-":
        command = "python benchmarks/tool_groups.py" + "".join(
            f" --{flag} {value}" for flag, value in (("cases", args.cases), ("model", args.model)) if value)
        record = {
            "what": "one forced call: all 17 suite tools at once, or a router over six groups then the group's agent",
            "command": command, "recorded": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
            "backend": backend.label, "model": args.model or backend.model,
            "options": OPTIONS, "groups": {group.name: {"description": group.description,  # tools in the order they were sent
                                     "tools": [spec["function"]["name"] for spec in group.tools]} for group in groups},
            "seconds": round(seconds), "summary": summary, "cases": ordered,
        }
        Path(args.out).write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
