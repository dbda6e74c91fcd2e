"""Reference solution for labs/06_loop_with_ids.py."""

from __future__ import annotations

import logging

from toolkit.errors_for_model import sanitize, tool_error_text
from toolkit.messages import assistant_from_reply, calls_of, tool_result
from toolkit.tools import render_result

log = logging.getLogger(__name__)


def run_turn_safely(client, messages: list[dict], tools_by_name: dict,
                    max_rounds: int) -> tuple[list[dict], str]:
    """Ask, run the calls, send the results back by id, ask again; stop on an answer or at max_rounds."""
    history = list(messages)
    specs = [each.spec() for each in tools_by_name.values()]
    rounds = 0
    while True:
        reply = client.chat(messages=history, tools=specs)
        message = reply.choices[0].message
        calls = calls_of(message)
        if not calls:
            history.append(assistant_from_reply(message))
            return history, "answered"
        if rounds == max_rounds:
            return history, "max_rounds"  # these calls are not run, so the reply is not kept
        history.append(assistant_from_reply(message))
        for call in calls:
            tool = tools_by_name.get(call.name)
            if tool is None:
                text = (f"Error: there is no tool named {call.name[:64]!r}. Available tools: "
                        f"{', '.join(tools_by_name)}. Call one of them, or answer without a tool.")
            else:
                try:
                    text = render_result(tool.invoke(call.arguments))
                except Exception as error:
                    # The full story goes to the log (configure logging to see it); the model
                    # gets one short, cleaned line.
                    log.info("tool %s failed", call.name, exc_info=True)
                    text = sanitize(tool_error_text(error, call.name))
            history.append(tool_result(call.id, text))
        rounds += 1
