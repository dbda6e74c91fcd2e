"""The list of MCP server commands the app may start, without Streamlit."""

import pytest

from toolkit.app.mcp_commands import LAB_SERVER, allowed_commands, check_allowed, is_allowed
from toolkit.lab_error import LabError


def test_only_the_lab_server_is_allowed_by_default():
    assert allowed_commands({}) == [LAB_SERVER]
    assert is_allowed("python -m toolkit.mcp_server", {})
    assert is_allowed("  python   -m 'toolkit.mcp_server' ", {})  # words compared, not spacing or quotes
    for command in ("python -m toolkit.mcp_server --port 1", "sh -c 'touch x'", "python", "", "   "):
        assert not is_allowed(command, {}), command


def test_the_environment_adds_commands_separated_by_semicolons():
    environ = {"LAB_MCP_COMMANDS": " npx -y server-everything ;; python my_server.py;python -m toolkit.mcp_server"}
    assert allowed_commands(environ) == [LAB_SERVER, "npx -y server-everything", "python my_server.py"]
    assert is_allowed("npx -y server-everything", environ)
    assert not is_allowed("npx -y server-everything --evil", environ)


def test_an_unreadable_command_is_refused_not_an_error():
    assert not is_allowed("python 'unclosed", {"LAB_MCP_COMMANDS": "python 'unclosed"})


def test_the_refusal_says_how_to_allow_the_command():
    with pytest.raises(LabError) as refused:
        check_allowed("rm -rf /tmp/x", {})
    message = str(refused.value)
    assert message.startswith("Not started: `rm -rf /tmp/x`")
    assert 'LAB_MCP_COMMANDS="rm -rf /tmp/x" streamlit run app.py' in message
    check_allowed(LAB_SERVER, {})  # no error
