"""The Playground tab: chat with a few demo tools and watch every round of the loop.

Each question runs one turn of ``toolkit.loop.run_turn``. The conversation so far and each
turn's record live in the session, so they survive the reruns every click causes.
"""

from __future__ import annotations

import json

import streamlit as st

from toolkit.app.backends import BackendChoice, open_backend
from toolkit.client import LabError
from toolkit.demo_tools import DEMO_TOOLS, demo_toolset
from toolkit.loop import format_trace, run_turn


def playground_tab(choice: BackendChoice) -> None:
    st.caption("Chat with a few demo tools (made-up data, instant, offline) and watch every "
               "round of the loop: the request, the reply, the calls and their results.")
    left, middle, right, last = st.columns(4)
    protocol = left.radio("Protocol", ["native", "string"], key="play_protocol", horizontal=True)
    tool_choice = middle.selectbox("tool_choice", ["auto", "required", "none"],
                                   key="play_tool_choice")
    names = right.multiselect("Tools offered", [t.name for t in DEMO_TOOLS],
                              [t.name for t in DEMO_TOOLS], key="play_tools")
    max_rounds = int(last.number_input("Max tool rounds", 0, 10, 3, key="play_rounds"))
    if st.button("Clear the conversation", key="play_clear"):
        st.session_state.chat_messages, st.session_state.chat_turns = [], []
        st.session_state.chat_error = None

    conversation = st.container()  # above the input box, though filled after it
    question = st.chat_input("Ask something, e.g. What's the weather in Beijing?",
                             key="play_input")
    if question:
        messages = [*st.session_state.chat_messages, {"role": "user", "content": question}]
        try:
            with conversation, st.spinner("The model is working…"):
                result = run_turn(open_backend(choice), messages, demo_toolset(names),
                                  protocol=protocol, tool_choice=tool_choice,
                                  max_rounds=max_rounds,
                                  request_options={"temperature": 0, "max_tokens": 200})
        except LabError as error:
            st.session_state.chat_error = str(error)
        else:
            st.session_state.chat_error = None
            st.session_state.chat_messages = result.messages
            # Plain data only in the session: the turn as a dict, with its trace as text.
            turn = result.to_dict()
            turn["question"], turn["trace"] = question, format_trace(result)
            st.session_state.chat_turns.append(turn)
    with conversation:
        for turn in st.session_state.chat_turns:
            show_turn(turn)
        if st.session_state.chat_error:
            st.error(st.session_state.chat_error)


def show_turn(turn: dict) -> None:
    """One question and its answer, with an expander per round of the loop and the trace."""
    with st.chat_message("user"):
        st.write(turn["question"])
    with st.chat_message("assistant"):
        answer = turn["final_text"]
        if turn["stop_reason"] == "immediate":
            value = json.dumps(turn["immediate_result"], ensure_ascii=False)
            answer = f"(returned directly) {value}"
        st.write(answer or f"({turn['stop_reason'].replace('_', ' ')})")
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
