"""A stand-in model for testing the app: ``LAB_APP_BACKEND=scripted``.

It calls the first tool it is offered (or the one ``tool_choice`` names) with made-up
arguments that fit the schema, and answers in prose once tool results come back. It exists so
the app can be driven end to end without any model; its figures mean nothing.
``scripted:fail-after=N`` makes it fail like an unreachable endpoint from the (N+1)-th request
on, to show how the page copes with a run that breaks halfway.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolkit.client import Backend

SCRIPTED_NOTE = ("A scripted model answers (LAB_APP_BACKEND=scripted): it calls the first tool "
                 "it is offered with made-up arguments. Its figures mean nothing.")


def scripted_mode() -> str | None:
    """The ``LAB_APP_BACKEND`` value when it asks for the scripted model, else None."""
    value = os.environ.get("LAB_APP_BACKEND", "").strip()
    return value if value.startswith("scripted") else None


def scripted_backend(mode: str = "scripted") -> Backend:
    """The scripted model as a backend (see the module docstring)."""
    import httpx
    import openai

    from toolkit import fake  # only the scripted mode needs these

    fail_after = int(mode.split("fail-after=", 1)[1]) if "fail-after=" in mode else None
    model = fake.ScriptedModel()

    def reply(request: dict):
        model.add(reply)  # always one reply queued: the script never runs out
        if fail_after is not None and len(model.requests) > fail_after:
            raise openai.APIConnectionError(
                request=httpx.Request("POST", "http://scripted.invalid/v1/chat/completions"))
        return _scripted_reply(request)

    return model.add(reply).backend()


def _scripted_reply(request: dict):
    from toolkit import fake

    messages = request.get("messages") or []
    last = messages[-1] if messages else {}
    if last.get("role") == "tool":
        results = [m.get("content") or "" for m in messages if m.get("role") == "tool"]
        return fake.text("Here is what the tools said: " + " | ".join(results[-3:]))
    tools = request.get("tools") or []
    choice = request.get("tool_choice", "auto")
    if not tools or choice == "none":
        return fake.text("I can answer that without a tool.")
    spec = tools[0]["function"]
    if isinstance(choice, dict):
        spec = next((t["function"] for t in tools
                     if t["function"]["name"] == choice["function"]["name"]), spec)
    return fake.calls(fake.call(spec["name"], example_arguments(spec.get("parameters") or {})))


def example_arguments(schema: dict) -> dict:
    """Arguments that fit a parameters schema: the required properties, each with a plain
    value of its type (the first enum value where there is one)."""
    arguments = {}
    properties = schema.get("properties") or {}
    for name in schema.get("required") or list(properties)[:1]:
        arguments[name] = _example_value(properties.get(name) or {})
    return arguments


def _example_value(schema: dict) -> Any:
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) and kind else kind
    if kind == "object":
        return example_arguments(schema)
    plain = {"integer": 1, "number": 1.0, "boolean": True, "array": [], "null": None}
    return plain.get(kind, "Paris")
