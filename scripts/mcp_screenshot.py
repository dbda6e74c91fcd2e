"""A screenshot of the Playground taking its tools from an MCP server, after a real turn on the
embedded model.

    python -m scripts.mcp_screenshot     # from the top of the repository; writes docs/screenshots/playground_mcp.png
    python -m scripts.mcp_screenshot --refused   # a command the app was not allowed to start: mcp_refused.png

Starts ``streamlit run app.py``, opens it in headless Chromium, chooses "MCP server" (the
default command, ``python -m toolkit.mcp_server``), sets tool_choice to "required" and one
round of tool calls, asks one question, opens the first round of the loop and saves the page.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from scripts.app_screenshots import (ANSWERED, CLICK_TAB, FIRST_ROUND, FOCUS_CHAT, OUT, REQUIRED_OPTION,
                                     TOOL_CHOICE_BOX, full_page, open_app, take)
from scripts.browser import PAGE_TEXT

QUESTION = "What's the weather in Shanghai?"
MCP_OPTION = """[...document.querySelectorAll('[data-testid="stRadio"] label')]
  .find(l => l.offsetParent !== null && l.innerText.trim() === 'MCP server')"""
LISTED = f"{PAGE_TEXT}.includes('offers 4 tool(s)')"
ROUNDS_DOWN = """[...document.querySelectorAll('[data-testid="stNumberInput"]')]
  .filter(b => b.offsetParent !== null && b.innerText.includes('Max tool rounds'))
  .map(b => b.querySelector('[data-testid="stNumberInputStepDown"]')).pop()"""
ONE_ROUND = """[...document.querySelectorAll('[data-testid="stNumberInput"]')]
  .some(b => b.offsetParent !== null && b.innerText.includes('Max tool rounds')
             && b.querySelector('input').value === '1')"""
ROUND_SHOWN = f"{PAGE_TEXT}.includes('finish_reason')"  # the round's JSON has been drawn


async def shoot(debug_port: int, url: str) -> list[Path]:
    browser = await open_app(debug_port, url)
    await browser.wait_for(f"{CLICK_TAB}('Playground')", 30, "the Playground tab")
    await browser.click_at(MCP_OPTION, "the 'MCP server' choice")
    await browser.wait_for(LISTED, 120, "the MCP server's tools")
    # "required" for the first round, as in the other playground picture: under "auto" this
    # model mostly answers without calling, and there would be no call to show.
    await browser.click_at(TOOL_CHOICE_BOX, "the playground's tool_choice box")
    await browser.click_at(REQUIRED_OPTION, "the 'required' option")
    await asyncio.sleep(1)
    # One round of tool calls is enough to show a call and its result, and on a busy machine
    # each round of this model can take minutes.
    for _ in range(2):
        await browser.click_at(ROUNDS_DOWN, "the max tool rounds' minus button")
        await asyncio.sleep(1)
    await browser.wait_for(ONE_ROUND, 30, "max tool rounds set to 1")
    await browser.wait_for(FOCUS_CHAT, 60, "the chat box")
    await browser.type_and_enter(QUESTION)
    await browser.wait_for(ANSWERED, 1500, "the playground's answer")  # slow on a busy machine
    await browser.click_at(FIRST_ROUND, "the first round of the loop")  # request, reply, results
    await browser.wait_for(ROUND_SHOWN, 120, "the first round's request and reply")
    await asyncio.sleep(2)
    written = await full_page(browser, OUT / "playground_mcp.png")
    browser.connection.close()
    return [written]


REFUSED_COMMAND = "sh -c 'touch /tmp/planted'"
COMMAND_BOX = """(() => {
  const box = document.querySelector('input[aria-label="MCP server command"]');
  if (!box) return false;
  box.focus(); box.select();
  return document.activeElement === box;
})()"""
REFUSED = f"{PAGE_TEXT}.includes('Not started:')"


async def shoot_refused(debug_port: int, url: str) -> list[Path]:
    """A command typed into the box that whoever runs the app did not allow: refused, never run."""
    browser = await open_app(debug_port, url)
    await browser.wait_for(f"{CLICK_TAB}('Playground')", 30, "the Playground tab")
    await browser.click_at(MCP_OPTION, "the 'MCP server' choice")
    await browser.wait_for(LISTED, 120, "the MCP server's tools")
    await browser.wait_for(COMMAND_BOX, 30, "the MCP server command box")
    await browser.type_and_enter(REFUSED_COMMAND)
    await browser.wait_for(REFUSED, 60, "the refusal")
    await asyncio.sleep(2)
    written = await full_page(browser, OUT / "mcp_refused.png")
    browser.connection.close()
    return [written]


def main() -> int:
    return take(shoot_refused if "--refused" in sys.argv[1:] else shoot)


if __name__ == "__main__":
    sys.exit(main())
