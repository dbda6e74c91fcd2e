"""Reference solution for labs/07_why_no_call.py."""

from __future__ import annotations

import copy

from toolkit.lab_error import LabError

FORBIDDING = ("do not use", "don't use", "never use", "never call", "without tools",
              "without using tools", "不要使用", "不要调用")


def diagnose(backend, request: dict) -> list[str]:
    """The findings of the checklist, in its order, for a request that got no tool call."""
    findings = []
    tools = request.get("tools") or []
    if not tools:
        return ["tools_missing"]  # nothing else can be checked: the model was offered nothing
    if request.get("tool_choice") == "none":
        findings.append("tool_choice_none")
    for tool in tools:
        description = (tool.get("function") or {}).get("description") or ""
        if len(description.split()) < 4:
            findings.append("description_too_short")
            break
    for message in request.get("messages", []):
        if message.get("role") == "system" and any(
                phrase in (message.get("content") or "").lower() for phrase in FORBIDDING):
            findings.append("system_prompt_forbids")
            break
    message = backend.chat(**copy.deepcopy(request)).choices[0].message
    if message.content and not message.tool_calls:
        findings.append("answered_in_text")
    forced = {**copy.deepcopy(request), "tool_choice": "required"}
    try:
        reply = backend.chat(**forced)
    except LabError:
        findings.append("forcing_refused")
    else:
        if reply.choices[0].message.tool_calls:
            findings.append("calls_when_forced")
    return findings
