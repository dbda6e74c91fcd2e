"""The Playground tab: chat with a few demo tools and watch every round of the loop.

Each question runs one turn of ``toolkit.loop.run_turn``. The conversation so far and each
turn's record live in the session, so they survive the reruns every click causes.

The tools come from the lab itself or from an MCP server started from a command
(``toolkit.mcp_tools``). The server is started to list its tools when the command changes, and
again for each question, then stopped: nothing outlives a rerun but plain data.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from typing import Iterator

import streamlit as st

from toolkit.app.backends import BackendChoice, open_backend
from toolkit.app.mcp_commands import allowed_commands, check_allowed
from toolkit.app.shared_mode import shared_mode
from toolkit.demo_tools import DEMO_TOOLS, demo_toolset
from toolkit.lab_error import LabError
from toolkit.loop import run_turn
from toolkit.mcp_tools import McpTools
from toolkit.tools import ToolSet
from toolkit.trace import STOPPED, format_trace

DEMO, MCP = "demo tools", "MCP server"
DEFAULT_MCP_COMMAND = "python -m toolkit.mcp_server"
# Offered in the input box: a question the default embedded model answers end to end (a call,
# the result, an answer), so a first try on the page as it opens shows the whole loop. Beijing
# would show the spelling the caption warns about instead.
EXAMPLE_QUESTION = "What's the weather in Paris?"
PLAYGROUND_REQUEST = {"temperature": 0, "max_tokens": 200}  # every request of a Playground turn
BEIJING_SPELLING = ("The embedded models write `B Beijing` when asked about Beijing (lesson 2 says why), "
                    "and the weather tool knows no such city: read each call's arguments.")


def playground_tab(choice: BackendChoice) -> None:
    st.caption("Chat with a few demo tools (made-up data, instant, offline) and watch every "
               "round of the loop: the request, the reply, the calls and their results."
               + (" " + BEIJING_SPELLING if choice.kind == "embedded" else ""))
    source, command, available = tool_source()
    left, middle, right, last = st.columns(4)
    protocol = left.radio("Protocol", ["native", "string"], key="play_protocol", horizontal=True)
    tool_choice = middle.selectbox("tool_choice", ["auto", "required", "none"],
                                   key="play_tool_choice")
    # One widget per source (and per server command), so that a choice of tools made for
    # one never meets the options of another.
    names = right.multiselect("Tools offered", available, available,
                              key="play_tools" if source == DEMO else f"play_mcp_tools:{command}")
    max_rounds = int(last.number_input("Max tool rounds", 0, 10, 3, key="play_rounds"))
    if st.button("Clear the conversation", key="play_clear"):
        st.session_state.chat_messages, st.session_state.chat_turns = [], []
        st.session_state.chat_error = None

    conversation = st.container()  # above the input box, though filled after it
    question = st.chat_input(f"Ask something, e.g. {EXAMPLE_QUESTION}", key="play_input")
    if question and source == MCP and not available:
        # The server's error is on the page already; running the turn would only repeat it.
        st.session_state.chat_error = ("Nothing was asked: the MCP server offers no tools. "
                                       "Fix its command (see the error above) and ask again.")
    elif question:
        messages = [*st.session_state.chat_messages, {"role": "user", "content": question}]
        try:
            with conversation, st.spinner("The model is working…"), \
                    offered_tools(source, names, command) as tools:
                result = run_turn(open_backend(choice), messages, tools,
                                  protocol=protocol, tool_choice=tool_choice,
                                  max_rounds=max_rounds,
                                  request_options={"temperature": 0, "max_tokens": 200})
        except LabError as error:  # the endpoint failed, or the MCP server did
            st.session_state.chat_error = str(error)
        else:
            st.session_state.chat_error = None
            st.session_state.chat_messages = result.messages
            # Plain data only in the session: the turn as a dict, with its trace as text.
            turn = result.to_dict()
            turn["question"], turn["trace"] = question, format_trace(result)
            turn["tools_from"] = f"the MCP server `{command}`" if source == MCP else None
            st.session_state.chat_turns.append(turn)
    with conversation:
        for turn in st.session_state.chat_turns:
            show_turn(turn)
        if st.session_state.chat_error:
            st.error(st.session_state.chat_error)


def tool_source() -> tuple[str, str, list[str]]:
    """Where the tools come from: the source, the MCP server's command, and the tool names
    on offer (none when the server cannot be used; its error is shown)."""
    if shared_mode():  # served to a room: no program is started from what an attendee types
        st.caption("Tools from the lab's demo tools (shared mode: MCP servers are off).")
        return DEMO, "", [each.name for each in DEMO_TOOLS]
    source = st.radio("Tools from", [DEMO, MCP], key="play_source", horizontal=True,
                      help="The lab's demo tools, run in the app, or the tools of any MCP "
                           "server that speaks stdio, started from a command.")
    if source == DEMO:
        return source, "", [each.name for each in DEMO_TOOLS]
    command = st.text_input(
        "MCP server command", DEFAULT_MCP_COMMAND, key="play_mcp_command",
        help="A program and its arguments, as in a shell. The lab starts it, lists its tools, "
             "and starts it again for each question. `python` means the lab's own Python. "
             "Only the commands whoever runs the app allowed are started: "
             + "; ".join(f"`{each}`" for each in allowed_commands()) + ".")
    listing = st.session_state.get("mcp_listing")
    reload = st.button("Reload the server's tools", key="play_mcp_reload")
    if reload or not listing or listing["command"] != command:
        with st.spinner(f"Starting `{command}` to list its tools…"):
            listing = list_server_tools(command)
        st.session_state.mcp_listing = listing
    if listing["error"]:
        st.error(listing["error"])
        return source, command, []
    st.caption(f"The MCP server {listing['server']!r} offers {len(listing['names'])} tool(s): "
               f"{', '.join(listing['names'])}. It is started for each question and stopped "
               "after it.")
    return source, command, listing["names"]


def list_server_tools(command: str) -> dict:
    """The names an MCP server lists, as plain data for the session, or its error."""
    try:
        check_allowed(command)  # before anything runs: the page starts only allowed programs
        with McpTools(command) as server:
            return {"command": command, "names": server.names, "server": server.server_name,
                    "error": None}
    except LabError as error:
        return {"command": command, "names": [], "server": None, "error": str(error)}


@contextmanager
def offered_tools(source: str, names: list[str], command: str) -> Iterator[ToolSet]:
    """The tools for one turn; an MCP server runs for as long as the turn does."""
    if source == DEMO:
        yield demo_toolset(names)
        return
    check_allowed(command)
    with McpTools(command) as server:
        yield ToolSet(each for each in server.toolset if each.name in names)


def show_turn(turn: dict) -> None:
    """One question and its answer, with an expander per round of the loop and the trace."""
    with st.chat_message("user"):
        st.write(turn["question"])
    with st.chat_message("assistant"):
        answer = turn["final_text"]
        if turn["stop_reason"] == "immediate":
            value = json.dumps(turn["immediate_result"], ensure_ascii=False)
            answer = f"(returned directly) {value}"
        if answer:
            st.write(answer)
        else:  # a turn that did not end in an answer says why, in words
            st.warning(STOPPED.get(turn["stop_reason"], STOPPED["no_reply"]))
        if turn.get("tools_from"):
            st.caption(f"Tools from {turn['tools_from']}")
        for each in turn["rounds"]:
            calls = ", ".join(c["function"]["name"] for c in each["calls"]) or "no call"
            with st.expander(f"Round {each['index']}: {calls} · {each['seconds']:.1f} s"):
                st.markdown("Request")
                st.json(each["request"], expanded=1)
                st.markdown("Reply")
                st.json({"finish_reason": each["finish_reason"], "content": each["reply_text"],
                         "tool_calls": each["calls"] or None, "usage": each["usage"]})
                if each["executions"]:
                    st.markdown("Tool results")
                    st.json([{"call_id": e["call_id"], "name": e["name"],
                              "arguments": e["arguments"], "result_text": e["result_text"],
                              "error": e["error"]} for e in each["executions"]])
                for correction in each["corrections"]:
                    st.warning(correction)
                if each["note"]:
                    st.caption(each["note"])
        with st.expander("Trace"):
            st.code(turn["trace"], language=None)
