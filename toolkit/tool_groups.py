"""Too many tools for one request: a router picks a group, the group's agent picks the tool.

One answer to a long tool list is to group related tools into sub-agents. A ``ToolGroup`` is a
name, a line on what it handles, and its few tools. Answering then takes two model calls:

1. the **router** is offered one hand-off tool per group (``weather_agent``, ``travel_agent``,
   ...), with no arguments: the question itself is what gets handed over, so the router only
   has to choose;
2. the chosen group's **agent** is asked the same question, offered only that group's tools.

Each call chooses among a few tools instead of all of them, at the price of a second request
and of a router that can send the question to the wrong group (whose agent then cannot
answer it).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,58}$")  # room for "_agent" within OpenAI's 64 characters


@dataclass(frozen=True)
class ToolGroup:
    """A sub-agent: ``tools`` are OpenAI tool specs (``{"type": "function", "function": ...}``)."""

    name: str
    description: str
    tools: tuple[dict, ...]

    @property
    def handoff_name(self) -> str:
        return f"{self.name}_agent"

    def handoff_tool(self) -> dict:
        """The router's tool for this group: what the group handles, and which tools it has
        (a model that reads names more than descriptions gets the names too)."""
        names = ", ".join(spec["function"]["name"] for spec in self.tools)
        return {"type": "function", "function": {
            "name": self.handoff_name,
            "description": f"{self.description} Hands the request to the agent with these tools: {names}.",
            "parameters": {"type": "object", "properties": {}}}}


def check_groups(groups: Sequence[ToolGroup]) -> None:
    """Raise one ``ValueError`` naming every problem: a bad or repeated name, an empty group."""
    problems, seen = [], set()
    if not groups:
        problems.append("give at least one group")
    for group in groups:
        if not _NAME.match(group.name):
            problems.append(f"group name {group.name!r} must be 1-58 letters, digits, '_' or '-'")
        if group.name in seen:
            problems.append(f"group name {group.name!r} is used twice")
        seen.add(group.name)
        if not group.tools:
            problems.append(f"group {group.name!r} has no tools")
    if problems:
        raise ValueError("these tool groups cannot be routed:\n- " + "\n- ".join(problems))


def route(backend: Any, messages: list[dict], groups: Sequence[ToolGroup], **options: Any) -> tuple[ToolGroup | None, Any]:
    """Ask the router which group should answer: (the group, or None when the reply hands over
    to no group, and the router's reply). A hand-off is forced (``tool_choice="required"``),
    one per reply; ``options`` go into the request (``temperature``, ``seed``, ``max_tokens``)."""
    check_groups(groups)
    reply = backend.chat(messages=messages, tools=[group.handoff_tool() for group in groups],
                         **{**options, "tool_choice": "required", "parallel_tool_calls": False})
    calls = reply.choices[0].message.tool_calls or []
    by_name = {group.handoff_name: group for group in groups}
    return (by_name.get(calls[0].function.name) if calls else None), reply


def ask_group(backend: Any, messages: list[dict], group: ToolGroup, **options: Any) -> Any:
    """The group's agent: the same question, offered only the group's tools."""
    return backend.chat(messages=messages, tools=list(group.tools), **options)


@dataclass(frozen=True)
class Routed:
    group: ToolGroup | None
    router_reply: Any
    reply: Any | None  # the agent's reply; None when the router chose no group


def ask_routed(backend: Any, messages: list[dict], groups: Sequence[ToolGroup], router_options: dict | None = None,
               **options: Any) -> Routed:
    """Route, then ask the chosen group's agent: both model calls and what they chose."""
    group, router_reply = route(backend, messages, groups, **(router_options or options))
    reply = ask_group(backend, messages, group, **options) if group is not None else None
    return Routed(group, router_reply, reply)
