"""Reference solution for labs/07_tool_choice_default.py."""

from __future__ import annotations

MODES = ("auto", "none", "required")


def choose_tool_choice(default, override, tool_names: list[str], round_index: int):
    """The tool_choice to send with this request, or None to leave the field out."""
    if not tool_names:
        return None  # APIs reject tool_choice without tools
    choice = override if override is not None else default
    if choice is None:
        return None
    if isinstance(choice, dict):
        name = (choice.get("function") or {}).get("name")
        if name not in tool_names:
            raise ValueError(f"tool_choice names {name!r}, but the tools sent are {tool_names}")
    elif choice not in MODES:
        raise ValueError(f"tool_choice {choice!r} must be one of {MODES} or a named function")
    forcing = choice == "required" or isinstance(choice, dict)
    return "auto" if forcing and round_index > 0 else choice
