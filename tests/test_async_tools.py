"""``async def`` tools in the loop: awaited to their result, their errors and time-outs turned into
results the model can read, run at the same time when the turn is concurrent, and usable from a
thread that already runs an event loop (a Jupyter cell's)."""

import asyncio
import threading

import pytest

from toolkit import fake
from toolkit.execution import CallRunner
from toolkit.loop import run_turn
from toolkit.messages import ToolCall
from toolkit.tools import Tool, ToolSet, tool


@tool
async def get_weather(city: str) -> dict:
    """Current weather in a city.

    Args:
        city: the city's name
    """
    await asyncio.sleep(0)  # a real await: the function is a coroutine that yields to its loop
    return {"city": city, "celsius": 21}


def turn(model, tools, **options):
    return run_turn(model.backend(), [{"role": "user", "content": "weather?"}], list(tools), **options)


def test_an_async_tool_is_awaited_and_its_result_sent_back():
    assert get_weather.is_async
    model = fake.ScriptedModel([fake.calls(fake.call("get_weather", {"city": "Paris"}, id="c1")), "21 C."])
    result = turn(model, [get_weather])
    execution = result.tool_executions[0]
    assert execution.value == {"city": "Paris", "celsius": 21} and execution.error is None
    assert {"role": "tool", "tool_call_id": "c1", "content": '{"city": "Paris", "celsius": 21}'} \
        in model.requests[1]["messages"]
    assert result.stop_reason == "answered"


def test_an_async_executor_of_a_spec_tool_is_awaited_too():
    async def executor(arguments, context):
        await asyncio.sleep(0)
        return f"found {arguments['q']}"

    spec = {"name": "search", "description": "Search.",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}}
    search = Tool.from_spec(spec, executor)
    assert search.is_async
    record = CallRunner(ToolSet([search])).run(ToolCall("1", "search", '{"q": "tea"}'))
    assert record.result_text == "found tea"


def test_an_async_tool_that_raises_becomes_an_error_result():
    @tool
    async def broken(city: str) -> str:
        """Always fails.

        Args:
            city: the city
        """
        await asyncio.sleep(0)
        raise RuntimeError("the weather service is down")

    model = fake.ScriptedModel([fake.calls(fake.call("broken", {"city": "Oslo"})), "Sorry."])
    execution = turn(model, [broken]).tool_executions[0]
    assert execution.error == "tool_error"
    assert "RuntimeError" in execution.error_detail and "the weather service is down" in execution.error_detail
    assert execution.result_text.startswith("Error")


def test_an_async_tool_past_its_timeout_is_cancelled_and_its_cleanup_runs():
    cleaned_up = threading.Event()

    @tool(timeout=0.2)
    async def slow_lookup(query: str) -> str:
        """Never answers by itself.

        Args:
            query: what to look up
        """
        try:
            await asyncio.Event().wait()  # nothing sets it: only a cancellation ends this
            return "too late"
        finally:
            cleaned_up.set()

    model = fake.ScriptedModel([fake.calls(fake.call("slow_lookup", {"query": "q"})), "It timed out."])
    result = turn(model, [slow_lookup])
    execution = result.tool_executions[0]
    assert execution.error == "timeout" and "0.2 seconds" in execution.result_text
    assert "cancelled" in execution.error_detail
    assert cleaned_up.is_set()  # cancelled, not left running: its finally block ran before the turn went on
    assert result.stop_reason == "answered"


def test_an_async_tool_that_ignores_cancellation_still_cannot_hold_the_turn():
    let_go = threading.Event()

    @tool(timeout=0.1)
    async def stubborn() -> str:
        """Swallows its cancellation and waits on a thread."""
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            await asyncio.to_thread(let_go.wait, 30)  # a cancellation cannot interrupt this
        return "finally"

    try:
        result = turn(fake.ScriptedModel([fake.calls(fake.call("stubborn")), "ok"]), [stubborn])
        assert result.tool_executions[0].error == "timeout"
        assert not let_go.is_set()  # the turn ended while the tool was still holding on
    finally:
        let_go.set()


def test_a_timeout_error_raised_by_the_tool_itself_is_the_tools_error_not_a_timeout():
    @tool(timeout=5)
    async def flaky() -> str:
        """Its HTTP client timed out."""
        raise TimeoutError("upstream did not answer")

    execution = turn(fake.ScriptedModel([fake.calls(fake.call("flaky")), "ok"]), [flaky]).tool_executions[0]
    assert execution.error == "tool_error" and "upstream did not answer" in execution.error_detail


def test_concurrent_async_tools_run_at_the_same_time():
    # Each tool waits at a barrier for two parties: it opens only if both run at once. Run one
    # after the other, the first would wait alone until the barrier's timeout broke it.
    barrier = threading.Barrier(2, timeout=10)

    @tool
    async def lookup(x: int) -> str:
        """Meets the other call at the barrier.

        Args:
            x: which call
        """
        await asyncio.to_thread(barrier.wait)
        return f"met {x}"

    calls = fake.calls(fake.call("lookup", {"x": 1}, id="a"), fake.call("lookup", {"x": 2}, id="b"))
    result = turn(fake.ScriptedModel([calls, "both"]), [lookup], concurrent=True)
    assert [e.result_text for e in result.tool_executions] == ["met 1", "met 2"]
    assert [e.call_id for e in result.tool_executions] == ["a", "b"]


def test_async_tools_work_from_a_thread_that_already_runs_an_event_loop():
    # A Jupyter cell runs inside the kernel's event loop, where asyncio.run refuses to start.
    async def a_cell():
        asyncio.get_running_loop()  # there is a loop running here, as in Jupyter
        model = fake.ScriptedModel([fake.calls(fake.call("get_weather", {"city": "Rome"})), "ok"])
        return turn(model, [get_weather])

    result = asyncio.run(a_cell())
    assert result.tool_executions[0].value == {"city": "Rome", "celsius": 21}


def test_a_plain_function_that_returns_an_awaitable_gets_a_clear_error():
    async def fetch():
        return "never awaited"

    @tool
    def disguised() -> str:
        """Returns a coroutine without being async def."""
        return fetch()

    execution = turn(fake.ScriptedModel([fake.calls(fake.call("disguised")), "ok"]), [disguised]).tool_executions[0]
    assert execution.error == "tool_error"
    assert "declare it async def" in execution.error_detail


@pytest.mark.parametrize("function, expected", [(get_weather.function, True), (len, False)])
def test_is_async_reads_the_function(function, expected):
    assert Tool.from_spec({"name": "t", "parameters": {"type": "object", "properties": {}}},
                          function).is_async is expected
