"""The loop, driven by the scripted model: every rule checked on an exact script."""

import json
import logging
import threading
import time

import httpx
import openai
import pytest

from toolkit import fake
from toolkit.errors_for_model import ErrorPolicy, sanitize, truncate
from toolkit.lab_error import LabError
from toolkit.loop import run_turn
from toolkit.schema import InvocationContext, MemoryId
from toolkit.tools import ToolSet, tool
from toolkit.trace import TurnResult, format_trace, read_trace


@tool
def get_weather(city: str) -> str:
    """Current weather in a city.

    Args:
        city: the city's name
    """
    return f"Sunny, 21 C in {city}"


@tool
def add(a: int, b: int) -> int:
    """Add two whole numbers.

    Args:
        a: first number
        b: second number
    """
    return a + b


def user(text="What's the weather in Paris?"):
    return [{"role": "user", "content": text}]


def turn(model, tools=(get_weather, add), messages=None, **options) -> TurnResult:
    return run_turn(model.backend(), messages or user(), list(tools), **options)


def tool_messages(request):
    return [m for m in request["messages"] if m["role"] == "tool"]


# --- the basic loop -------------------------------------------------------------------------------


def test_a_call_then_an_answer():
    model = fake.ScriptedModel([fake.calls(fake.call("get_weather", {"city": "Paris"}, id="c1")),
                                fake.text("It is sunny in Paris.")])
    caller_messages = user()
    result = run_turn(model.backend(), caller_messages, [get_weather, add])

    assert result.stop_reason == "answered" and result.final_text == "It is sunny in Paris."
    assert len(result.rounds) == 2 and len(model.requests) == 2
    [execution] = result.tool_executions
    assert (execution.call_id, execution.name, execution.arguments) == ("c1", "get_weather", {"city": "Paris"})
    assert execution.value == execution.result_text == "Sunny, 21 C in Paris" and execution.ok
    assert [t["function"]["name"] for t in model.requests[0]["tools"]] == ["get_weather", "add"]
    assert tool_messages(model.requests[1]) == [
        {"role": "tool", "tool_call_id": "c1", "content": "Sunny, 21 C in Paris"}]
    assert [m["role"] for m in result.messages] == ["user", "assistant", "tool", "assistant"]
    assert caller_messages == user()  # the caller's list is not touched
    # the record holds the exact request that was sent
    assert result.rounds[1].request == model.requests[1]
    json.dumps(result.to_dict())  # everything is plain JSON


def test_results_are_rendered_for_the_model():
    @tool
    def nothing() -> None:
        """Do nothing."""

    @tool
    def record() -> dict:
        """A record."""
        return {"name": "Zoë", "n": 2}

    model = fake.ScriptedModel([fake.calls(fake.call("nothing", id="a"), fake.call("record", id="b")), "ok"])
    result = turn(model, [nothing, record])
    assert [e.result_text for e in result.tool_executions] == ["success", '{"name": "Zoë", "n": 2}']
    assert result.tool_executions[1].value == {"name": "Zoë", "n": 2}


def test_a_not_found_result_is_a_result_not_an_error():
    @tool
    def find_order(order_id: str) -> str:
        """Look up an order.

        Args:
            order_id: the order number
        """
        return f"No order {order_id} found."

    model = fake.ScriptedModel([fake.calls(fake.call("find_order", {"order_id": "X1"})), "There is no such order."])
    result = turn(model, [find_order])
    assert result.tool_executions[0].error is None
    assert result.tool_executions[0].result_text == "No order X1 found."


def test_request_options_tool_choice_and_parallel_flag():
    model = fake.ScriptedModel([fake.calls(fake.call("add", {"a": 1, "b": 2})), "3"])
    turn(model, tool_choice="required", parallel_tool_calls=False,
         request_options={"temperature": 0, "max_tokens": 50, "seed": 7})
    first, second = model.requests
    assert first["tool_choice"] == "required" and first["parallel_tool_calls"] is False
    assert second["tool_choice"] == "auto"  # a forced call every round would never let it answer
    assert first["temperature"] == 0 and first["max_tokens"] == 50 and first["seed"] == 7
    assert second["max_tokens"] == 50


def test_a_named_tool_choice_is_also_relaxed_after_the_first_round_but_none_is_kept():
    named = {"type": "function", "function": {"name": "add"}}
    model = fake.ScriptedModel([fake.calls(fake.call("add", {"a": 1, "b": 2})), "3"])
    turn(model, tool_choice=named)
    assert model.requests[0]["tool_choice"] == named and model.requests[1]["tool_choice"] == "auto"
    model = fake.ScriptedModel(["no tools today"])
    turn(model, tool_choice="none")
    assert model.requests[0]["tool_choice"] == "none"


def test_no_tools_means_no_tool_fields():
    model = fake.ScriptedModel(["hi"])
    turn(model, tools=[], tool_choice="auto", parallel_tool_calls=True)
    assert not {"tools", "tool_choice", "parallel_tool_calls"} & set(model.requests[0])


def test_request_options_may_not_override_the_loop():
    with pytest.raises(ValueError, match="messages"):
        turn(fake.ScriptedModel([]), request_options={"messages": []})


def test_an_empty_reply_stops_with_no_reply():
    result = turn(fake.ScriptedModel([fake.text("")]))
    assert result.stop_reason == "no_reply" and result.final_text is None


# --- the round limit ------------------------------------------------------------------------------


def test_max_rounds_stops_a_model_that_keeps_calling():
    always_calling = lambda request: fake.calls(fake.call("add", {"a": 1, "b": 1}))  # noqa: E731
    model = fake.ScriptedModel([always_calling] * 10)
    result = turn(model, max_rounds=3)
    assert result.stop_reason == "max_rounds" and result.final_text is None
    assert len(result.rounds) == 4 and len(result.tool_executions) == 3
    last = result.rounds[-1]
    assert last.calls and not last.executions and "not executed" in last.note
    # the unexecuted calls stay out of the history, which remains valid for the next turn
    assert result.messages[-1]["role"] == "tool"


def test_max_rounds_zero_executes_nothing():
    model = fake.ScriptedModel([fake.calls(fake.call("add", {"a": 1, "b": 1}))])
    result = turn(model, max_rounds=0)
    assert result.stop_reason == "max_rounds" and result.tool_executions == []


# --- several calls in one reply --------------------------------------------------------------------


def _racing_tools():
    """Two tools where the first call finishes last when both run at once."""
    second_done = threading.Event()
    log = {"finished": [], "threads": []}

    @tool
    def slow(x: int) -> str:
        """Slow.

        Args:
            x: a number
        """
        log["threads"].append(threading.current_thread().name)
        second_done.wait(5)  # concurrently, this waits until `fast` has finished
        time.sleep(0.2)
        log["finished"].append("slow")
        return f"slow {x}"

    @tool
    def fast(x: int) -> str:
        """Fast.

        Args:
            x: a number
        """
        log["threads"].append(threading.current_thread().name)
        time.sleep(0.3)
        log["finished"].append("fast")
        second_done.set()
        return f"fast {x}"

    return [slow, fast], log, second_done


def _two_calls():
    return fake.calls(fake.call("slow", {"x": 1}, id="id_slow"), fake.call("fast", {"x": 2}, id="id_fast"))


def test_concurrent_calls_send_results_matched_by_id_in_call_order():
    tools, log, _ = _racing_tools()
    model = fake.ScriptedModel([_two_calls(), "done"])
    result = turn(model, tools, concurrent=True)
    assert log["finished"] == ["fast", "slow"]  # they really did finish in reverse order
    assert threading.current_thread().name not in log["threads"]
    assert tool_messages(model.requests[1]) == [
        {"role": "tool", "tool_call_id": "id_slow", "content": "slow 1"},
        {"role": "tool", "tool_call_id": "id_fast", "content": "fast 2"}]
    assert [e.call_id for e in result.tool_executions] == ["id_slow", "id_fast"]


def test_sequential_calls_run_in_order_in_the_callers_thread():
    tools, log, second_done = _racing_tools()
    second_done.set()  # sequentially, `slow` would otherwise wait for a call that has not started
    model = fake.ScriptedModel([_two_calls(), "done"])
    turn(model, tools)
    assert log["finished"] == ["slow", "fast"]
    assert log["threads"] == [threading.current_thread().name] * 2
    assert [m["tool_call_id"] for m in tool_messages(model.requests[1])] == ["id_slow", "id_fast"]


def test_a_single_call_runs_in_the_callers_thread_even_when_concurrent():
    seen = []

    @tool
    def where() -> str:
        """Which thread."""
        seen.append(threading.current_thread().name)
        return "here"

    turn(fake.ScriptedModel([fake.calls(fake.call("where")), "ok"]), [where], concurrent=True)
    assert seen == [threading.current_thread().name]


# --- errors -----------------------------------------------------------------------------------------


def test_an_unknown_tool_is_reported_to_the_model_which_can_recover():
    model = fake.ScriptedModel([fake.calls(fake.call("get_wether", {"city": "Paris"}, id="c1")),
                                fake.calls(fake.call("get_weather", {"city": "Paris"}, id="c2")),
                                "Sunny."])
    result = turn(model)
    first = result.rounds[0].executions[0]
    assert first.error == "unknown_tool" and first.value is None
    assert "get_wether" in first.result_text and "get_weather, add" in first.result_text
    assert tool_messages(model.requests[1])[0]["content"] == first.result_text
    assert result.stop_reason == "answered" and result.rounds[1].executions[0].ok


@pytest.mark.parametrize("arguments, expected", [
    ('{"a": 1, "b": ', "not valid JSON"),
    ({"a": "one", "b": 2}, "a:"),
    ({"a": 1}, "b: required"),
])
def test_invalid_arguments_are_reported_and_the_tool_does_not_run(arguments, expected):
    ran = []

    @tool
    def adder(a: int, b: int) -> int:
        """Add.

        Args:
            a: first
            b: second
        """
        ran.append(True)
        return a + b

    model = fake.ScriptedModel([fake.calls(fake.call("adder", arguments)), "sorry"])
    execution = turn(model, [adder]).tool_executions[0]
    assert execution.error == "invalid_arguments" and execution.arguments is None and not ran
    assert expected in execution.result_text and expected in execution.error_detail


def test_a_failing_tool_sends_only_sanitised_text_and_logs_the_detail(caplog):
    @tool
    def read_config(name: str) -> str:
        """Read a config file.

        Args:
            name: which one
        """
        raise PermissionError(f"cannot open /srv/app/secrets/{name}.yaml with key "
                              "sk-abc123def456ghi789jkl and token=hunter2-lab-key")

    model = fake.ScriptedModel([fake.calls(fake.call("read_config", {"name": "db"})), "It failed."])
    model.api_key = "lab-endpoint-key-000"  # the backend's own key is redacted too
    with caplog.at_level(logging.WARNING, logger="toolkit.loop"):
        result = turn(model, [read_config])

    execution = result.tool_executions[0]
    sent = tool_messages(model.requests[1])[0]["content"]
    assert sent == execution.result_text and execution.error == "tool_error"
    assert "PermissionError" in sent and "cannot open" in sent
    for leak in ("/srv/app", "secrets/db", "sk-abc123", "hunter2", "Traceback", ".py", 'File "'):
        assert leak not in sent
    assert len(sent) <= 300
    assert "Traceback" in execution.error_detail and "sk-abc123def456ghi789jkl" in execution.error_detail
    assert "Traceback" in caplog.text and "read_config" in caplog.text


def test_the_backends_key_is_redacted_from_error_text():
    @tool
    def leaky() -> str:
        """Leak."""
        raise RuntimeError("upstream said: bad key lab-endpoint-key-000")

    model = fake.ScriptedModel([fake.calls(fake.call("leaky")), "x"])
    model.api_key = "lab-endpoint-key-000"
    assert "lab-endpoint-key-000" not in turn(model, [leaky]).tool_executions[0].result_text


def test_error_strategies_can_be_replaced():
    @tool
    def broken() -> str:
        """Broken."""
        raise ValueError("boom")

    policy = ErrorPolicy(tool_error=lambda error, name: "Tool execution failed.",
                         unknown_tool=lambda name, offered: "No such tool.")
    model = fake.ScriptedModel([fake.calls(fake.call("broken"), fake.call("nope")), "x"])
    result = turn(model, [broken], errors=policy)
    assert [e.result_text for e in result.tool_executions] == ["Tool execution failed.", "No such tool."]


def test_a_slow_tool_times_out_and_the_loop_does_not_wait_for_it():
    finished = threading.Event()

    @tool(timeout=0.2)
    def slow_lookup(query: str) -> str:
        """Slow.

        Args:
            query: what to look up
        """
        time.sleep(2)
        finished.set()
        return "too late"

    model = fake.ScriptedModel([fake.calls(fake.call("slow_lookup", {"query": "q"})), "It timed out."])
    result = turn(model, [slow_lookup])
    assert not finished.is_set()  # the turn is over while the tool still runs in the background
    execution = result.tool_executions[0]
    assert execution.error == "timeout" and "0.2 seconds" in execution.result_text
    assert result.stop_reason == "answered"


def test_a_fast_tool_with_a_timeout_returns_normally():
    @tool(timeout=5)
    def quick() -> str:
        """Quick."""
        return "done"

    result = turn(fake.ScriptedModel([fake.calls(fake.call("quick")), "ok"]), [quick])
    assert result.tool_executions[0].result_text == "done"


def test_long_results_are_truncated_with_a_marker():
    @tool
    def page() -> str:
        """A long page."""
        return "x" * 5000

    model = fake.ScriptedModel([fake.calls(fake.call("page")), "ok"])
    execution = turn(model, [page], result_limit=100).tool_executions[0]
    assert execution.result_text == "x" * 100 + "…[truncated 4900 characters]"
    assert execution.truncated_chars == 4900 and len(execution.value) == 5000
    assert tool_messages(model.requests[1])[0]["content"] == execution.result_text
    model = fake.ScriptedModel([fake.calls(fake.call("page")), "ok"])
    assert len(turn(model, [page], result_limit=None).tool_executions[0].result_text) == 5000


def test_a_backend_error_propagates():
    def fail(request):
        raise openai.APITimeoutError(request=httpx.Request("POST", "http://example.invalid/v1"))

    with pytest.raises(LabError, match="did not answer in time"):
        turn(fake.ScriptedModel([fail]))


# --- return behaviour -------------------------------------------------------------------------------


@tool(return_behavior="immediate")
def book_room(room: str) -> dict:
    """Book a room.

    Args:
        room: the room's name
    """
    return {"booked": room, "ref": 17}


@tool(return_behavior="immediate_if_last")
def close_ticket(ticket: int) -> str:
    """Close a ticket.

    Args:
        ticket: its number
    """
    return f"ticket {ticket} closed"


def test_an_immediate_tool_returns_its_raw_result_without_asking_the_model_again():
    model = fake.ScriptedModel([fake.calls(fake.call("book_room", {"room": "Blue"}, id="b1"))])
    result = turn(model, [book_room, get_weather])
    assert result.stop_reason == "immediate" and result.final_text is None
    assert result.immediate_result == {"booked": "Blue", "ref": 17}
    assert len(model.requests) == 1
    assert result.messages[-1] == {"role": "tool", "tool_call_id": "b1", "content": '{"booked": "Blue", "ref": 17}'}


def test_immediate_if_last_returns_only_when_it_is_the_last_call():
    last = fake.ScriptedModel([fake.calls(fake.call("get_weather", {"city": "Oslo"}),
                                          fake.call("close_ticket", {"ticket": 5}))])
    result = turn(last, [close_ticket, get_weather])
    assert result.stop_reason == "immediate" and result.immediate_result == "ticket 5 closed"

    not_last = fake.ScriptedModel([fake.calls(fake.call("close_ticket", {"ticket": 5}),
                                              fake.call("get_weather", {"city": "Oslo"})), "Done."])
    result = turn(not_last, [close_ticket, get_weather])
    assert result.stop_reason == "answered" and len(not_last.requests) == 2


def test_immediate_next_to_a_to_model_call_goes_back_to_the_model():
    model = fake.ScriptedModel([fake.calls(fake.call("book_room", {"room": "Red"}),
                                           fake.call("get_weather", {"city": "Oslo"})), "Booked; sunny."])
    assert turn(model, [book_room, get_weather]).stop_reason == "answered"


def test_a_failed_immediate_call_goes_back_to_the_model():
    model = fake.ScriptedModel([fake.calls(fake.call("book_room", {"rom": "Red"})),
                                fake.calls(fake.call("book_room", {"room": "Red"}))])
    result = turn(model, [book_room])
    assert result.rounds[0].executions[0].error == "invalid_arguments"
    assert result.stop_reason == "immediate" and len(result.rounds) == 2


# --- who may call what, and what the model never sees ----------------------------------------------


@tool
def delete_user(name: str) -> str:
    """Delete a user account.

    Args:
        name: the account
    """
    raise AssertionError("must never run for a guest")


def admin_tools(request):
    return [delete_user] if request.context and request.context.user == "admin" else []


def test_a_tool_withheld_by_a_provider_is_refused_whatever_the_model_writes():
    model = fake.ScriptedModel([fake.calls(fake.call("delete_user", {"name": "bob"})), "I can't."])
    result = turn(model, [get_weather], providers=[admin_tools], registry=[get_weather, delete_user],
                  context=InvocationContext(user="guest"))
    execution = result.tool_executions[0]
    assert execution.error == "not_offered" and execution.arguments is None
    assert [t["function"]["name"] for t in model.requests[0]["tools"]] == ["get_weather"]
    # worded like an unknown tool, so the model learns nothing about other users' tools
    assert execution.result_text.startswith("Error: there is no tool named 'delete_user'")


def test_without_a_registry_a_withheld_tool_is_simply_unknown():
    model = fake.ScriptedModel([fake.calls(fake.call("delete_user", {"name": "bob"})), "no"])
    result = turn(model, [get_weather], providers=[admin_tools])
    assert result.tool_executions[0].error == "unknown_tool"


def test_a_provider_offers_tools_for_this_turn_only():
    @tool
    def remove_user(name: str) -> str:
        """Remove a user.

        Args:
            name: the account
        """
        return f"{name} removed"

    provider = lambda request: [remove_user] if request.context.user == "admin" else []  # noqa: E731
    model = fake.ScriptedModel([fake.calls(fake.call("remove_user", {"name": "bob"})), "Done."])
    result = turn(model, [get_weather], providers=[provider], context=InvocationContext(user="admin"))
    assert result.tool_executions[0].result_text == "bob removed"
    assert "remove_user" in [t["function"]["name"] for t in model.requests[0]["tools"]]


def test_provider_sees_the_users_message_and_memory_id():
    seen = []
    provider = lambda request: seen.append(request) or []  # noqa: E731
    turn(fake.ScriptedModel(["hi"]), providers=[provider],
         context=InvocationContext(memory_id="m-1"), messages=user("book a room"))
    assert seen[0].user_message == "book a room" and seen[0].memory_id == "m-1"


def test_hidden_context_reaches_the_tool_and_never_a_request():
    received = {}

    @tool
    def my_orders(status: str, memory: MemoryId, ctx: InvocationContext) -> str:
        """List my orders.

        Args:
            status: open or closed
        """
        received.update(memory=memory, user=ctx.user, tenant=ctx.tenant)
        return "2 orders"

    context = InvocationContext(user="alice-7f3e", tenant="acme-tenant-x", trace_id="trace-9q",
                                memory_id="mem-5521", extra={"token": "perm-token-88"})
    model = fake.ScriptedModel([fake.calls(fake.call("my_orders", {"status": "open"})), "You have 2."])
    result = turn(model, [my_orders], context=context)
    assert received == {"memory": "mem-5521", "user": "alice-7f3e", "tenant": "acme-tenant-x"}
    wire = json.dumps(model.requests)
    for hidden in ("alice-7f3e", "acme-tenant-x", "trace-9q", "mem-5521", "perm-token-88", "memory", "ctx"):
        assert hidden not in wire
    assert result.stop_reason == "answered"


def test_a_model_cannot_fill_a_hidden_parameter():
    @tool
    def whoami(ctx: InvocationContext) -> str:
        """Who is asking."""
        return ctx.user or "nobody"

    model = fake.ScriptedModel([fake.calls(fake.call("whoami", {"ctx": {"user": "root"}})), "x"])
    execution = turn(model, [whoami], context=InvocationContext(user="carol")).tool_executions[0]
    assert execution.error == "invalid_arguments"


# --- the string protocol -----------------------------------------------------------------------------


def test_string_protocol_round_trip():
    model = fake.ScriptedModel([
        'Let me check. <tool>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool>',
        "It is sunny in Paris."])
    messages = [{"role": "system", "content": "Be brief."}, *user()]
    result = turn(model, messages=messages, protocol="string")

    assert result.stop_reason == "answered" and result.final_text == "It is sunny in Paris."
    first, second = model.requests
    assert "tools" not in first and "tool_choice" not in first
    system = first["messages"][0]
    assert system["role"] == "system" and system["content"].startswith("Be brief.")
    assert "### get_weather" in system["content"] and "<tool>" in system["content"]
    fed_back = second["messages"][-1]
    assert fed_back["role"] == "user" and '<tool_result name="get_weather">' in fed_back["content"]
    assert "Sunny, 21 C in Paris" in fed_back["content"]
    assert result.tool_executions[0].arguments == {"city": "Paris"}
    # the history keeps the caller's own system message, ready for the next turn
    assert result.messages[0] == {"role": "system", "content": "Be brief."}
    assert [m["role"] for m in result.messages] == ["system", "user", "assistant", "user", "assistant"]


def test_string_protocol_plain_text_is_the_answer():
    result = turn(fake.ScriptedModel(["Paris is in France."]), protocol="string")
    assert result.stop_reason == "answered" and len(result.rounds) == 1


def test_string_protocol_unreadable_call_gets_a_correction_and_counts_a_round():
    model = fake.ScriptedModel(['<tool>{"name": "get_weather", "arguments": [1, 2]}</tool>',
                                '<tool>{"name": "get_weather", "arguments": {"city": "Rome"}}</tool>',
                                "Sunny in Rome."])
    result = turn(model, protocol="string", max_rounds=2)
    assert result.rounds[0].corrections and not result.rounds[0].executions
    correction = model.requests[1]["messages"][-1]
    assert correction["role"] == "user" and "could not be read" in correction["content"]
    assert result.stop_reason == "answered" and len(result.tool_executions) == 1

    stuck = fake.ScriptedModel(['<tool>{"name": </tool>'] * 3)
    assert turn(stuck, protocol="string", max_rounds=2).stop_reason == "max_rounds"


def test_string_protocol_unknown_tool_is_refused_and_fed_back():
    model = fake.ScriptedModel(['<tool>{"name": "launch", "arguments": {}}</tool>', "ok"])
    result = turn(model, protocol="string")
    assert result.tool_executions[0].error == "unknown_tool"
    assert "no tool named 'launch'" in model.requests[1]["messages"][-1]["content"]


def test_string_protocol_asks_for_tool_choice_in_words_in_the_first_round_only():
    model = fake.ScriptedModel(['<tool>{"name": "add", "arguments": {"a": 1, "b": 2}}</tool>', "3"])
    turn(model, protocol="string", tool_choice="required")
    assert "must call at least one tool" in model.requests[0]["messages"][0]["content"]
    assert "must call" not in model.requests[1]["messages"][0]["content"]


def test_string_protocol_immediate_return():
    model = fake.ScriptedModel(['<tool>{"name": "book_room", "arguments": {"room": "Green"}}</tool>'])
    result = turn(model, [book_room], protocol="string")
    assert result.stop_reason == "immediate" and result.immediate_result["booked"] == "Green"


# --- records -------------------------------------------------------------------------------------------


def test_trace_file_has_one_parseable_line_per_round(tmp_path):
    path = tmp_path / "trace.jsonl"
    model = fake.ScriptedModel([fake.calls(fake.call("add", {"a": 2, "b": 3})), "5"])
    result = turn(model, trace_path=str(path))
    lines = read_trace(path)
    assert len(lines) == len(result.rounds) == 2
    assert lines[0]["executions"][0]["value"] == 5 and lines[0]["stop_reason"] is None
    assert lines[-1]["stop_reason"] == "answered" and lines[-1]["final_text"] == "5"
    assert lines[0]["turn_id"] == lines[1]["turn_id"]
    assert lines[1]["request"]["messages"][-1]["role"] == "tool"


def test_format_trace_tells_the_story():
    model = fake.ScriptedModel([fake.calls(fake.call("add", {"a": 2, "b": 3}), fake.call("nope")), "5"])
    text = format_trace(turn(model))
    assert "Round 1" in text and "Round 2" in text and "tools sent: get_weather, add" in text
    assert 'add({"a": 2, "b": 3})' in text and "-> 5" in text
    assert "unknown_tool" in text and "Final answer: 5" in text


def test_format_trace_of_an_immediate_turn():
    model = fake.ScriptedModel([fake.calls(fake.call("book_room", {"room": "Blue"}))])
    assert 'Returned directly: {"booked": "Blue", "ref": 17}' in format_trace(turn(model, [book_room]))


def test_usage_and_timings_are_recorded():
    asked = fake.calls(fake.call("add", {"a": 2, "b": 3}))
    asked.usage = (120, 14)
    answered = fake.text("5")
    answered.usage = (150, 2)
    result = turn(fake.ScriptedModel([asked, answered]))
    assert result.rounds[0].usage == {"prompt_tokens": 120, "completion_tokens": 14, "total_tokens": 134}
    assert result.usage == {"prompt_tokens": 270, "completion_tokens": 16, "total_tokens": 286}  # summed over rounds
    assert all(r.seconds >= r.model_seconds > 0 for r in result.rounds)


def test_a_toolset_works_as_well_as_a_list():
    result = run_turn(fake.ScriptedModel(["hi"]).backend(), user(), ToolSet([add]))
    assert result.rounds[0].tools_offered == ["add"]


# --- the helpers ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("raw, leak", [
    ('Traceback (most recent call last):\n  File "/x/y.py", line 3', "y.py"),
    ("failed reading C:\\Users\\bob\\app\\db.ini", "Users"),
    ("see ./local/cache/file.txt", "cache"),
    ("cannot parse app/conf/db.yaml", "conf"),
    ("GET https://internal.corp:8443/api/v2 failed", "internal.corp"),
    ("Authorization: Bearer abc.def.ghi", "abc.def"),
    ("password=letmein123", "letmein"),
    ("api_key: 'qwerty-42'", "qwerty"),
    ("key AKIAABCDEFGHIJKLMNOP", "AKIA"),
    ("token 0123456789abcdef0123456789abcdef01", "0123456789abcdef"),
])
def test_sanitize_removes_what_a_model_must_not_see(raw, leak):
    assert leak not in sanitize(raw)


def test_sanitize_redacts_a_named_secret_but_keeps_the_punctuation_after_it():
    assert sanitize("connect failed (api_key=abc123secret). Retry.") == "connect failed (api_key=<redacted>). Retry."
    assert sanitize("token=xyz]; next") == "token=<redacted>]; next"
    # Punctuation inside the value is part of the value: nothing of it is left behind.
    assert sanitize("api_key=sk-abc,def then") == "api_key=<redacted> then"


def test_sanitize_keeps_the_last_line_of_a_traceback():
    raw = ('Traceback (most recent call last):\n  File "/srv/app/tools.py", line 3, in f\n'
           '    open(path)\nFileNotFoundError: no such order file')
    assert sanitize(raw) == "FileNotFoundError: no such order file"


def test_sanitize_keeps_ordinary_text_and_caps_length():
    assert sanitize("ValueError: city must be one of Paris, Rome (km/h and/or °C)") == \
        "ValueError: city must be one of Paris, Rome (km/h and/or °C)"
    assert len(sanitize("word " * 200)) == 300
    assert sanitize("bad key s3cr3t-value", secrets=["s3cr3t-value"]) == "bad key <redacted>"


def test_truncate():
    assert truncate("abc", 5) == ("abc", 0)
    assert truncate("abcdef", 2) == ("ab…[truncated 4 characters]", 4)
    assert truncate("abcdef", None) == ("abcdef", 0)


# --- A call in disguise --------------------------------------------------------------------------

DISGUISED = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


def test_a_reply_whose_text_is_a_call_block_is_not_an_answer():
    model = fake.ScriptedModel([fake.text(DISGUISED)])
    result = turn(model)
    assert result.stop_reason == "call_in_text" and result.final_text is None
    assert result.tool_executions == []  # nothing asked for it to run
    assert "as text instead of in tool_calls" in format_trace(result)
    assert result.messages == user()  # the disguised call is not kept as the assistant's answer


def test_text_that_only_mentions_the_tag_is_still_an_answer():
    for answer in ("Use a <tool_call> block to call a tool.", "<tool_call>{not json}</tool_call>",
                   '<tool_call>{"city": "Paris"}</tool_call> has no name'):
        result = turn(fake.ScriptedModel([fake.text(answer)]))
        assert result.stop_reason == "answered", answer


def test_the_string_protocol_reads_its_own_tags_and_ignores_this_rule():
    result = turn(fake.ScriptedModel([fake.text(DISGUISED)]), protocol="string")
    assert result.stop_reason == "answered"  # <tool_call> is not the string protocol's tag


# ------------------------------------------------------------------------- the turn's options

def test_options_given_whole_or_as_keywords_run_the_same_turn():
    from toolkit.turn_options import TurnOptions

    def scripted():
        return fake.ScriptedModel([fake.calls(fake.call("get_weather", {"city": "Paris"})) for _ in range(3)])

    question = [{"role": "user", "content": "Weather in Paris?"}]
    whole = run_turn(scripted().backend(), question, [get_weather], TurnOptions(max_rounds=2))
    keywords = run_turn(scripted().backend(), question, [get_weather], max_rounds=2)
    # The object's value is changed by a keyword given beside it.
    both = run_turn(scripted().backend(), question, [get_weather], TurnOptions(max_rounds=2), max_rounds=1)
    assert whole.stop_reason == keywords.stop_reason == both.stop_reason == "max_rounds"
    assert len(whole.rounds) == len(keywords.rounds) == 3 and len(both.rounds) == 2


def test_an_unknown_option_is_an_error_that_lists_the_known_ones():
    model = fake.ScriptedModel([fake.text("hi")])
    with pytest.raises(TypeError, match=r"no option 'max_round'.*max_rounds"):
        run_turn(model.backend(), [{"role": "user", "content": "hi"}], [get_weather], max_round=2)
    assert not model.requests  # refused before anything was sent


@pytest.mark.parametrize("values, message", [
    ({"protocol": "xml"}, "protocol must be"),
    ({"max_rounds": -1}, "max_rounds must be"),
    ({"max_rounds": 1.5}, "max_rounds must be"),
    ({"max_workers": 0}, "max_workers must be"),
    ({"request_options": {"tools": []}}, "request_options may not set"),
])
def test_a_bad_option_is_refused_when_the_options_are_made(values, message):
    from toolkit.turn_options import TurnOptions

    with pytest.raises(ValueError, match=message):
        TurnOptions(**values)


def test_the_runner_gets_the_whole_options_object():
    from toolkit.execution import CallRunner
    from toolkit.messages import ToolCall
    from toolkit.turn_options import TurnOptions

    options = TurnOptions(result_limit=5, registry=["book_flight"], context=InvocationContext(user="ann"))
    runner = CallRunner(ToolSet([get_weather]), options)
    assert runner.run(ToolCall("1", "get_weather", '{"city": "Paris"}')).truncated_chars > 0  # the limit holds
    assert runner.run(ToolCall("2", "book_flight", "{}")).error == "not_offered"  # the registry's names
    assert runner.run(ToolCall("3", "nope", "{}")).error == "unknown_tool"
    assert options.registry == frozenset({"book_flight"})
