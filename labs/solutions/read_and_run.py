"""Reference solution for labs/01_read_and_run.py."""

import re

CALL_LINE = re.compile(r"CALL\s+([A-Za-z_][\w.]*)\s*\(([^)]*)\)")


def run_reply(text: str, tools: dict) -> str | None:
    found = CALL_LINE.search(text)
    if not found:
        return None  # stage 1: the model decided to answer in text
    name, raw_argument = found.group(1), found.group(2).strip()  # stage 2: what it wrote
    if name not in tools:
        return f"Error: there is no tool named {name!r}. Call one of {sorted(tools)}, or answer in words."
    try:
        argument = float(raw_argument)
    except ValueError:
        return f"Error: the argument {raw_argument!r} is not a number. Write it in digits, e.g. 144."
    return str(tools[name](argument))  # stage 3: our code runs the function
