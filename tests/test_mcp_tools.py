"""MCP servers as tool providers: the demo server, the client that turns its listing into lab
tools, the loop running them, and every way a server can fail.

The misbehaving servers are small scripts in ``tests/mcp_servers/``. The loop runs on the
scripted fake (exact replies) except in the one test marked ``embedded``, which checks only the
shape of the turn.
"""

import json
import sys
from pathlib import Path

import pytest

from toolkit import fake
from toolkit.demo_tools import demo_toolset, get_weather
from toolkit.lab_error import LabError
from toolkit.loop import run_turn
from toolkit.mcp_tools import McpServerError, McpToolError, McpTools, parse_command
from toolkit.schema import ToolArgumentsError
from toolkit.tools import ToolSet, render_result

SERVERS = Path(__file__).resolve().parent / "mcp_servers"
DEMO = "python -m toolkit.mcp_server"


def misbehaving(mode: str) -> list[str]:
    return ["python", str(SERVERS / "misbehaving.py"), mode]


@pytest.fixture(scope="module")
def demo_server():
    with McpTools(DEMO) as server:
        yield server


def ask(question: str) -> list[dict]:
    return [{"role": "user", "content": question}]


# --------------------------------------------------------------------- listing and calling


def test_the_server_lists_the_demo_tools_exactly_as_a_toolset_gives_them(demo_server):
    assert demo_server.specs() == demo_toolset().specs()
    assert demo_server.names == ["get_weather", "calculate", "get_order_status", "convert_currency"]
    assert demo_server.server_name == "tool-calling-lab"


def test_a_call_goes_to_the_server_and_comes_back_as_the_local_tool_would_render_it(demo_server):
    remote = demo_server.toolset.get("get_weather")
    assert remote.invoke('{"city": "Paris"}') == render_result(get_weather(city="Paris"))
    assert json.loads(remote.invoke({"city": "Tokyo", "unit": "fahrenheit"}))["temperature"] == 68
    assert demo_server.call("calculate", {"expression": "12 * (3 + 4)"}) == "84"


def test_arguments_are_checked_against_the_listed_schema_before_anything_is_sent(demo_server):
    remote = demo_server.toolset.get("convert_currency")
    with pytest.raises(ToolArgumentsError) as problem:
        remote.validate({"amount": "ten", "from_currency": "USD", "to_currency": "XYZ"})
    assert any("amount" in each for each in problem.value.problems)
    assert any("to_currency" in each for each in problem.value.problems)
    # the server checks too, for clients that do not
    with pytest.raises(McpToolError, match="invalid arguments"):
        demo_server.call("get_weather", {"town": "Paris"})


def test_a_tool_that_fails_on_the_server_raises_its_error_text(demo_server):
    with pytest.raises(McpToolError, match="not an arithmetic expression"):
        demo_server.call("calculate", {"expression": "2 *"})


def test_the_server_can_serve_only_some_tools():
    with McpTools([*DEMO.split(), "calculate", "get_weather"]) as server:
        assert server.names == ["get_weather", "calculate"]


def test_a_plausible_but_wrong_listing_is_not_the_demo_one():
    # the comparison above would notice a changed description or schema
    changed = demo_toolset().specs()
    changed[0]["function"]["parameters"]["properties"]["city"]["description"] = "A city."
    assert changed != demo_toolset().specs()


# --------------------------------------------------------------------- in the loop


def test_run_turn_runs_mcp_tools_and_turns_every_failure_into_error_text(demo_server):
    model = fake.ScriptedModel([
        fake.calls(fake.call("get_weather", {"city": "Paris"}, id="ok"),
                   fake.call("get_stock_price", {"symbol": "ACME"}, id="unknown"),
                   fake.call("get_weather", {"city": 3}, id="bad"),
                   fake.call("calculate", {"expression": "2 *"}, id="fails")),
        fake.text("Paris is cloudy."),
    ])
    result = run_turn(model.backend(), ask("Weather in Paris?"), demo_server.toolset)

    assert result.stop_reason == "answered" and result.final_text == "Paris is cloudy."
    sent = model.requests[0]["tools"]
    assert sent == demo_toolset().specs()
    executions = {each.call_id: each for each in result.rounds[0].executions}
    assert executions["ok"].error is None
    assert executions["ok"].result_text == render_result(get_weather(city="Paris"))
    assert executions["unknown"].error == "unknown_tool"
    assert executions["bad"].error == "invalid_arguments"
    assert executions["fails"].error == "tool_error"
    for call_id in ("unknown", "bad", "fails"):
        assert executions[call_id].result_text.startswith("Error: ")
    assert "not an arithmetic expression" in executions["fails"].result_text
    tool_messages = [m for m in model.requests[1]["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["ok", "unknown", "bad", "fails"]


def test_an_mcp_server_can_be_a_tool_provider_beside_static_tools(demo_server):
    model = fake.ScriptedModel([fake.calls(fake.call("calculate", {"expression": "2 + 2"})),
                                fake.text("4.")])
    local = ToolSet()
    result = run_turn(model.backend(), ask("2 + 2?"), local, providers=[demo_server])
    assert result.rounds[0].tools_offered == demo_server.names
    assert result.rounds[0].executions[0].result_text == "4"


def test_a_server_that_dies_mid_turn_becomes_an_error_for_the_model_and_the_turn_ends():
    model = fake.ScriptedModel([fake.calls(fake.call("echo", {"text": "hi"})),
                                fake.calls(fake.call("echo", {"text": "again"})),
                                fake.text("The echo service is down.")])
    with McpTools(misbehaving("dies-on-call")) as server:
        result = run_turn(model.backend(), ask("Echo hi"), server.toolset)
        first, second = (each.executions[0] for each in result.rounds[:2])
        assert result.stop_reason == "answered"
        assert first.error == second.error == "tool_error"
        assert "stopped during a call" in first.error_detail and "is not running" in second.error_detail
        assert first.result_text.startswith("Error: the tool 'echo' failed (McpServerError")
        assert "dies-on-call" in first.error_detail and "out of memory" in first.error_detail
        with pytest.raises(McpServerError, match="is not running"):
            server.call("echo", {"text": "once more"})


def test_a_call_the_server_never_answers_times_out_into_error_text():
    model = fake.ScriptedModel([fake.calls(fake.call("echo", {"text": "hi"})), fake.text("Sorry.")])
    with McpTools(misbehaving("hang-call"), call_timeout=1) as server:
        result = run_turn(model.backend(), ask("Echo hi"), server.toolset)
    execution = result.rounds[0].executions[0]
    assert execution.error == "tool_error" and execution.result_text.startswith("Error: ")
    assert "did not answer a call to 'echo' within 1 s" in execution.error_detail


def test_an_error_result_from_a_hand_written_server_reaches_the_model():
    model = fake.ScriptedModel([fake.calls(fake.call("echo", {"text": "fail"})), fake.text("No.")])
    with McpTools(misbehaving("good")) as server:
        result = run_turn(model.backend(), ask("Echo fail"), server.toolset)
    execution = result.rounds[0].executions[0]
    assert execution.error == "tool_error" and "the tool failed on 'fail'" in execution.result_text


def test_the_server_stops_when_the_block_ends():
    with McpTools(misbehaving("good")) as server:
        assert server.call("echo", {"text": "hi"}) == "hi"
    with pytest.raises(McpServerError, match="is not running"):
        server.call("echo", {"text": "hi"})
    server.close()  # a second close does nothing


# --------------------------------------------------------------------- servers that cannot be used


@pytest.mark.parametrize("command, words", [
    (["no-such-mcp-server-program"], "Cannot start"),
    (["python", str(SERVERS / "exits_at_once.py")], "exited before it answered initialize"),
    (misbehaving("hang-initialize"), "did not answer initialize within 2 s"),
    (misbehaving("hang-list"), "did not answer tools/list within 2 s"),
    (misbehaving("no-name"), "tools.1.name"),
    (misbehaving("not-object"), "inputSchema"),
    (misbehaving("bad-schema"), "'broken'"),
])
def test_a_server_that_cannot_be_used_raises_one_error_naming_its_command(command, words):
    # A short time-out only where the server hangs: the others must fail for their own reason,
    # however slowly a busy machine starts them.
    hangs = any(mode.startswith("hang") for mode in command)
    with pytest.raises(McpServerError) as error:
        McpTools(command, startup_timeout=2 if hangs else 60).start()
    message = str(error.value)
    assert isinstance(error.value, LabError)
    assert words in message
    assert f"`{command[0]}" in message  # the command as given, "python" and not a long path
    assert "Traceback" not in message


def test_a_server_that_exits_at_once_is_quoted_from_its_stderr():
    with pytest.raises(McpServerError, match="configuration file is missing"):
        McpTools(["python", str(SERVERS / "exits_at_once.py")]).start()


def test_commands_are_split_like_a_shell_and_python_means_this_interpreter():
    assert parse_command("python -m toolkit.mcp_server 'a b'") == [
        sys.executable, "-m", "toolkit.mcp_server", "a b"]
    assert parse_command(["node", "server.js"]) == ["node", "server.js"]
    with pytest.raises(McpServerError, match="empty"):
        parse_command("   ")


# --------------------------------------------------------------------- the embedded model


@pytest.mark.embedded
def test_a_forced_call_on_the_embedded_model_runs_through_the_mcp_server(embedded, demo_server):
    result = run_turn(embedded, ask("What's the weather in Beijing?"), demo_server.toolset,
                      tool_choice={"type": "function", "function": {"name": "get_weather"}},
                      max_rounds=1, request_options={"max_tokens": 60, "temperature": 0, "seed": 0})
    first = result.rounds[0]
    assert first.calls and all(call.name == "get_weather" for call in first.calls)
    assert [each.call_id for each in first.executions] == [call.id for call in first.calls]
    # the model may fill the city well or badly; either way the server's answer, or the
    # lab's error text, is what comes back
    assert all(each.result_text for each in first.executions)
    assert all(each.error in (None, "invalid_arguments") for each in first.executions)
    assert result.stop_reason in {"answered", "max_rounds", "no_reply"}
