"""The Playground with tools from an MCP server, driven by Streamlit's AppTest.

Turns run on the scripted model (``LAB_APP_BACKEND=scripted``): it calls the first tool it is
offered, so these tests show the call going through the server, never a model's skill.
"""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_runs import open_tab

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
SERVERS = Path(__file__).resolve().parent / "mcp_servers"


@pytest.fixture
def scripted(tmp_path, monkeypatch):
    monkeypatch.setenv("LAB_RUNS_DB", str(tmp_path / "runs.sqlite"))
    monkeypatch.setenv("LAB_APP_BACKEND", "scripted")
    for name in ("LAB_BASE_URL", "LAB_MODEL", "LAB_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def texts(elements) -> list[str]:
    return [str(element.value) for element in elements]


def open_playground_on_mcp() -> AppTest:
    at = open_tab(AppTest.from_file(APP, default_timeout=120), "Playground")
    at.radio(key="play_source").set_value("MCP server").run()
    assert not at.exception
    return at


def offered(at: AppTest) -> list[str]:
    return [box for box in at.multiselect if box.label == "Tools offered"][0].value


def test_a_turn_with_tools_from_the_mcp_server(scripted):
    at = open_playground_on_mcp()
    assert at.text_input(key="play_mcp_command").value == "python -m toolkit.mcp_server"
    assert not at.error
    assert offered(at) == ["get_weather", "calculate", "get_order_status", "convert_currency"]
    assert any("tool-calling-lab" in text and "4 tool(s)" in text for text in texts(at.caption))

    at.chat_input(key="play_input").set_value("What's the weather in Paris?").run()
    assert not at.exception and not at.error
    [turn] = at.session_state["chat_turns"]
    execution = turn["rounds"][0]["executions"][0]
    assert execution["name"] == "get_weather" and execution["error"] is None
    assert execution["result_text"].startswith('{"city"')  # the server's JSON, not an error
    assert any(text.startswith("Tools from the MCP server") for text in texts(at.caption))
    assert any(label.startswith("Round 1: get_weather") for label in
               [expander.label for expander in at.expander])


def test_a_server_that_cannot_start_shows_one_error_and_asks_nothing(scripted, monkeypatch):
    command = f"python {SERVERS / 'exits_at_once.py'}"
    monkeypatch.setenv("LAB_MCP_COMMANDS", command)
    at = open_playground_on_mcp()
    at.text_input(key="play_mcp_command").set_value(command).run()
    assert not at.exception
    [error] = texts(at.error)
    assert "exited before it answered initialize" in error and "exits_at_once.py" in error
    assert "configuration file is missing" in error and "Traceback" not in error
    assert offered(at) == []

    at.chat_input(key="play_input").set_value("What's the weather in Paris?").run()
    assert not at.exception
    assert at.session_state["chat_turns"] == []
    assert any(text.startswith("Nothing was asked") for text in texts(at.error))


def test_a_command_that_is_not_found_names_itself(scripted, monkeypatch):
    monkeypatch.setenv("LAB_MCP_COMMANDS", "no-such-mcp-server --stdio")
    at = open_playground_on_mcp()
    at.text_input(key="play_mcp_command").set_value("no-such-mcp-server --stdio").run()
    assert not at.exception
    [error] = texts(at.error)
    assert error.startswith("Cannot start the MCP server `no-such-mcp-server --stdio`")


def test_switching_back_to_the_demo_tools_keeps_the_conversation(scripted):
    at = open_playground_on_mcp()
    at.chat_input(key="play_input").set_value("What's 2 + 2?").run()
    at.radio(key="play_source").set_value("demo tools").run()
    assert not at.exception
    assert offered(at) == ["get_weather", "calculate", "get_order_status", "convert_currency"]
    at.chat_input(key="play_input").set_value("And the weather in Tokyo?").run()
    turns = at.session_state["chat_turns"]
    assert len(turns) == 2
    assert turns[0]["tools_from"].startswith("the MCP server") and turns[1]["tools_from"] is None


def test_a_typed_command_that_was_not_allowed_runs_nothing(scripted, tmp_path):
    planted = tmp_path / "planted"
    command = f"sh -c 'touch {planted}'"
    at = open_playground_on_mcp()
    at.text_input(key="play_mcp_command").set_value(command).run()
    assert not at.exception
    [error] = texts(at.error)
    assert error.startswith(f"Not started: `{command}` is not an MCP server command this app allows")
    assert "LAB_MCP_COMMANDS" in error and "python -m toolkit.mcp_server" in error
    assert offered(at) == []
    at.chat_input(key="play_input").set_value("What's the weather in Paris?").run()
    assert not at.exception and at.session_state["chat_turns"] == []
    assert not planted.exists()


def test_a_command_the_app_was_started_with_is_allowed(scripted, monkeypatch):
    command = f"python {SERVERS / 'exits_at_once.py'}"
    monkeypatch.setenv("LAB_MCP_COMMANDS", f"python -m other_server; {command}")
    at = open_playground_on_mcp()
    at.text_input(key="play_mcp_command").set_value(command).run()
    [error] = texts(at.error)
    assert "exited before it answered initialize" in error  # it was started: the server itself failed
