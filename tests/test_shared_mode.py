"""Shared mode: the app served to a room uses the instructor's endpoint and starts no program."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from toolkit.app.shared_mode import describe, shared_choice, shared_mode

APP = str(Path(__file__).resolve().parent.parent / "app.py")
KEY = "sk-instructor-secret-123"


@pytest.fixture
def shared(tmp_path, monkeypatch):
    monkeypatch.setenv("LAB_RUNS_DB", str(tmp_path / "runs.sqlite"))
    monkeypatch.setenv("LAB_SHARED", "1")
    monkeypatch.setenv("LAB_BASE_URL", "https://models.example.org/v1/chat")
    monkeypatch.setenv("LAB_MODEL", "room-model")
    monkeypatch.setenv("LAB_API_KEY", KEY)
    monkeypatch.setenv("LAB_APP_BACKEND", "scripted")  # turns run on the scripted model: no network
    monkeypatch.delenv("LAB_MCP_COMMANDS", raising=False)


def page_text(at: AppTest) -> str:
    parts = [str(e.value) for group in (at.sidebar.info, at.info, at.caption, at.markdown, at.error, at.warning)
             for e in group]
    return " ".join(parts)


def test_nothing_in_the_sidebar_can_change_the_endpoint_and_the_key_is_never_shown(shared):
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception
    keys = {element.key for element in [*at.text_input, *at.radio, *at.selectbox]}
    assert not keys & {"backend_kind", "base_url", "model_name", "api_key", "embedded_model", "api"}
    [note] = [str(e.value) for e in at.sidebar.info]
    assert "room-model" in note and "models.example.org" in note
    assert KEY not in page_text(at) and "/v1/chat" not in note


def test_the_playground_offers_the_demo_tools_and_no_command_box(shared, tmp_path):
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception
    assert not [r for r in at.radio if r.key == "play_source"]
    assert not [t for t in at.text_input if t.key == "play_mcp_command"]
    assert any("MCP servers are off" in str(c.value) for c in at.caption)
    at.chat_input(key="play_input").set_value("What's the weather in Paris?").run()
    assert not at.exception
    [turn] = at.session_state["chat_turns"]
    assert turn["rounds"][0]["executions"][0]["name"] == "get_weather"


def test_the_mode_and_the_backend_come_from_the_environment_only():
    assert shared_mode({"LAB_SHARED": "1"}) and shared_mode({"LAB_SHARED": " Yes "})
    assert not shared_mode({}) and not shared_mode({"LAB_SHARED": "0"})
    remote = shared_choice({"LAB_BASE_URL": "http://10.0.0.5:8000/v1", "LAB_MODEL": "qwen", "LAB_API_KEY": KEY,
                            "LAB_API": "responses"})
    assert (remote.kind, remote.base_url, remote.model, remote.api_key, remote.api) == (
        "remote", "http://10.0.0.5:8000/v1", "qwen", KEY, "responses")
    assert KEY not in repr(remote) and KEY not in describe(remote)
    embedded = shared_choice({"LAB_API": "nonsense"})
    assert (embedded.kind, embedded.api) == ("embedded", "chat")
    assert "embedded SmolLM2-135M-Instruct" in describe(embedded)
