"""Which MCP server commands the app may start: only those whoever started the app allowed.

The Playground can take its tools from an MCP server that it starts from a command. A command
is a program run on the machine that serves the app, and a page served to a room is open to
everyone in it: a command box that starts whatever is typed into it lets any attendee run any
program there. So the page starts a command only when it is on the list below; anything else
is refused before anything runs, with a sentence that tells the person running the app how to
allow it.

The list is the lab's own server, plus whatever ``LAB_MCP_COMMANDS`` holds when the app starts
(commands separated by ``;``), for example::

    LAB_MCP_COMMANDS="python my_server.py; npx -y @modelcontextprotocol/server-everything" streamlit run app.py

Commands are compared word by word as a shell splits them, so spacing and quoting do not
matter, but every word does: ``python my_server.py --debug`` is another command.
"""

from __future__ import annotations

import os
import shlex

from toolkit.lab_error import LabError

ENV = "LAB_MCP_COMMANDS"
LAB_SERVER = "python -m toolkit.mcp_server"


def _words(command: str) -> tuple[str, ...] | None:
    try:
        return tuple(shlex.split(command))
    except ValueError:  # an unclosed quote: not a command anyone allowed
        return None


def allowed_commands(environ: dict[str, str] | None = None) -> list[str]:
    """The lab's own server, then the commands in ``LAB_MCP_COMMANDS``, each once."""
    listed = (environ if environ is not None else os.environ).get(ENV, "")
    commands = [LAB_SERVER] + [part.strip() for part in listed.split(";") if part.strip()]
    return list(dict.fromkeys(commands))


def is_allowed(command: str, environ: dict[str, str] | None = None) -> bool:
    words = _words(command)
    return bool(words) and words in {_words(each) for each in allowed_commands(environ)}


def check_allowed(command: str, environ: dict[str, str] | None = None) -> None:
    """Raise ``LabError`` with one message when ``command`` may not be started."""
    if is_allowed(command, environ):
        return
    raise LabError(
        f"Not started: `{command}` is not an MCP server command this app allows, and the page "
        f"starts no other program. Whoever runs the app can allow it by starting the app with "
        f"{ENV} set, e.g. {ENV}=\"{command}\" streamlit run app.py (several commands are "
        f"separated by ;). Allowed now: {'; '.join(allowed_commands(environ))}.")
