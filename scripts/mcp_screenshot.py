"""A screenshot of the Playground taking its tools from an MCP server, after a real turn on the
embedded model.

    python -m scripts.mcp_screenshot     # from the top of the repository; writes docs/screenshots/playground_mcp.png
    python -m scripts.mcp_screenshot --refused   # a command the app was not allowed to start: mcp_refused.png

Starts ``streamlit run app.py``, opens it in headless Chromium, chooses "MCP server" (the
default command, ``python -m toolkit.mcp_server``), sets tool_choice to "required" and one
round of tool calls, asks one question, opens the first round of the loop and saves the page.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from scripts.app_screenshots import OUT, answered, ask, first_round, full_page, open_tab, take
from scripts.browser import click, visible, wait_for_text, wait_until

QUESTION = "What's the weather in Shanghai?"


def choose_mcp_server(page) -> None:
    """The Playground, taking its tools from the MCP server (the default command), once it lists them."""
    open_tab(page, "Playground")
    click(visible(page.get_by_test_id("stRadio").get_by_text("MCP server", exact=True)),
          "the 'MCP server' choice")
    wait_for_text(page, "offers 4 tool(s)", 120, "the MCP server's tools")


def shoot(page) -> list[Path]:
    choose_mcp_server(page)
    # "required" for the first round, as in the other playground picture: under "auto" this
    # model mostly answers without calling, and there would be no call to show.
    tool_choice = visible(page.get_by_test_id("stSelectbox").filter(has_text=re.compile(r"^\s*tool_choice")))
    click(tool_choice.locator("input"), "the playground's tool_choice box")
    click(page.get_by_role("option", name="required", exact=True), "the 'required' option")
    page.wait_for_timeout(1000)
    # One round of tool calls is enough to show a call and its result, and on a busy machine
    # each round of this model can take minutes.
    rounds = visible(page.get_by_test_id("stNumberInput").filter(has_text="Max tool rounds"))
    for _ in range(2):
        click(rounds.get_by_test_id("stNumberInputStepDown"), "the max tool rounds' minus button")
        page.wait_for_timeout(1000)
    wait_until(page, lambda: rounds.locator("input").input_value() == "1", 30, "max tool rounds set to 1")
    ask(page, QUESTION)
    wait_until(page, lambda: answered(page), 1500, "the playground's answer")  # slow on a busy machine
    click(first_round(page), "the first round of the loop")  # request, reply, results
    wait_for_text(page, "finish_reason", 120, "the first round's request and reply")  # its JSON is drawn
    page.wait_for_timeout(2000)
    return [full_page(page, OUT / "playground_mcp.png")]


REFUSED_COMMAND = "sh -c 'touch /tmp/planted'"


def shoot_refused(page) -> list[Path]:
    """A command typed into the box that whoever runs the app did not allow: refused, never run."""
    choose_mcp_server(page)
    command = page.get_by_label("MCP server command", exact=True)  # not its "Help for ..." button
    click(command, "the MCP server command box")
    command.fill(REFUSED_COMMAND)
    command.press("Enter")
    wait_for_text(page, "Not started:", 60, "the refusal")
    page.wait_for_timeout(2000)
    return [full_page(page, OUT / "mcp_refused.png")]


def main() -> int:
    return take(shoot_refused if "--refused" in sys.argv[1:] else shoot)


if __name__ == "__main__":
    sys.exit(main())
