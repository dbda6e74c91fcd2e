"""Grader for labs/06_loop_with_ids.py: the tool loop, with results matched to calls by id.

Every case runs the learner's ``run_turn_safely`` against the scripted fake model, whose replies are
written by hand: one call, several calls in one reply, ids in no particular order, two rounds,
a tool that does not exist, arguments that are wrong, a tool that raises, and a model that never stops
asking. The fake records every request, so the grader can check what was *sent back* to the model,
not only what was returned.

The made-up tool's name, the tools offered with it and the wrong arguments are drawn while
grading, so an error text written for one case (a fixed tool list, a fixed name) does not pass.
"""

from __future__ import annotations

import json
import random
from typing import Any

from labs.grading import ERROR_PREFIX, Hints, Report, attempt, case_seed, error_rule_note, follows_error_rule
from toolkit import fake
from toolkit.demo_tools import calculate, demo_toolset, get_weather
from toolkit.tools import render_result, tool

# --- The tools (toolkit Tools: .spec() for the request, .invoke(arguments) to run) -------------

tools_by_name = {each.name: each for each in (get_weather, calculate)}  # the demo tools

# A tool that fails the way real code does: its exception names an internal host, a file and a key.
_LEAKS = ("10.0.3.7", "/srv/reports/conf/db.yaml", "sk-live-3f9a8b7c6d5e4f3a", "Traceback")


@tool
def export_report(customer_id: str, month: str) -> str:
    """Export a customer's monthly report and return the download link.

    Args:
        customer_id: Customer number, e.g. C-2048.
        month: Month as YYYY-MM.
    """
    raise ConnectionError("could not reach postgres://reports@10.0.3.7:5432 (settings in "
                          "/srv/reports/conf/db.yaml, api_key=sk-live-3f9a8b7c6d5e4f3a)")


def _result(tool_name: str, arguments: dict) -> str:
    return render_result(tools_by_name[tool_name].invoke(arguments))


# --- Reading messages, whatever form the learner kept them in ----------------------------------


def _get(message: Any, key: str) -> Any:
    return message.get(key) if isinstance(message, dict) else getattr(message, key, None)


def _calls_in(message: Any) -> list[tuple[str, str, str]]:
    calls = []
    for call in _get(message, "tool_calls") or []:
        function = _get(call, "function")
        calls.append((_get(call, "id"), _get(function, "name"), _get(function, "arguments")))
    return calls


def _summary(message: Any) -> tuple:
    """What matters in a message: role, text, tool_call_id, calls (id, name, arguments)."""
    role = _get(message, "role")
    if role == "assistant":
        return ("assistant", _get(message, "content") or None, tuple(_calls_in(message)))
    if role == "tool":
        return ("tool", _get(message, "tool_call_id"), _get(message, "content"))
    return (role, _get(message, "content"))


def _describe(summary: tuple) -> str:
    if summary[0] == "assistant" and summary[2]:
        return "assistant asking for " + ", ".join(f"{name} (id {call_id})" for call_id, name, _ in summary[2])
    if summary[0] == "assistant":
        return f"assistant text {summary[1]!r}"
    if summary[0] == "tool":
        return f"tool result for id {summary[1]}: {summary[2]!r}"
    return f"{summary[0]} {summary[1]!r}"


# --- Cases ---------------------------------------------------------------------------------------

USER = {"role": "user", "content": "北京和上海今天天气怎么样？"}


def _assistant_calls(*calls: tuple[str, str, dict]) -> tuple:
    return ("assistant", None, tuple((i, n, json.dumps(a, ensure_ascii=False)) for i, n, a in calls))


def _tool(call_id: str, name: str, arguments: dict) -> tuple:
    return ("tool", call_id, _result(name, arguments))


def _cases() -> list[dict]:
    """Each case: a script, max_rounds, the expected history (summaries), stop reason and request count."""
    bj, sh = {"city": "Beijing"}, {"city": "Shanghai"}
    root, plus = {"expression": "sqrt(144)"}, {"expression": "12 + 5"}
    cases = [
        {"case": "an answer straight away (no tool needed)",
         "script": [fake.text("你好！今天想查点什么？")], "max_rounds": 3,
         "history": [("user", USER["content"]), ("assistant", "你好！今天想查点什么？", ())],
         "stop": "answered", "requests": 1},
        {"case": "one call, then an answer",
         "script": [fake.calls(fake.call("get_weather", bj, id="call_1")), fake.text("Beijing: sunny, 24 °C.")],
         "max_rounds": 3,
         "history": [("user", USER["content"]), _assistant_calls(("call_1", "get_weather", bj)),
                     _tool("call_1", "get_weather", bj), ("assistant", "Beijing: sunny, 24 °C.", ())],
         "stop": "answered", "requests": 2},
        {"case": "two calls in one reply (Beijing and Shanghai)",
         "script": [fake.calls(fake.call("get_weather", bj, id="call_bj"), fake.call("get_weather", sh, id="call_sh")),
                    fake.text("北京晴，上海多云。")],
         "max_rounds": 3,
         "history": [("user", USER["content"]),
                     _assistant_calls(("call_bj", "get_weather", bj), ("call_sh", "get_weather", sh)),
                     _tool("call_bj", "get_weather", bj), _tool("call_sh", "get_weather", sh),
                     ("assistant", "北京晴，上海多云。", ())],
         "stop": "answered", "requests": 2},
        {"case": "ids in no particular order, two different tools",
         "script": [fake.calls(fake.call("calculate", root, id="call_z9"),
                               fake.call("get_weather", sh, id="call_a1")),
                    fake.text("12, and Shanghai is cloudy.")],
         "max_rounds": 3,
         "history": [("user", USER["content"]),
                     _assistant_calls(("call_z9", "calculate", root), ("call_a1", "get_weather", sh)),
                     _tool("call_z9", "calculate", root), _tool("call_a1", "get_weather", sh),
                     ("assistant", "12, and Shanghai is cloudy.", ())],
         "stop": "answered", "requests": 2},
        {"case": "two rounds: a square root, then an addition",
         "script": [fake.calls(fake.call("calculate", root, id="call_r1")),
                    fake.calls(fake.call("calculate", plus, id="call_r2")),
                    fake.text("√144 + 5 = 17")],
         "max_rounds": 3,
         "history": [("user", USER["content"]),
                     _assistant_calls(("call_r1", "calculate", root)),
                     _tool("call_r1", "calculate", root),
                     _assistant_calls(("call_r2", "calculate", plus)),
                     _tool("call_r2", "calculate", plus),
                     ("assistant", "√144 + 5 = 17", ())],
         "stop": "answered", "requests": 3},
    ]
    return cases


def _run(report: Report, case: str, run_turn_safely, script: list, max_rounds: int, tools: dict | None = None):
    model = fake.ScriptedModel(list(script))
    done, value = attempt(report, case, run_turn_safely, model.backend(), [dict(USER)],
                          dict(tools or tools_by_name), max_rounds)
    if not done and "ScriptExhausted" in report.failures[-1].note:
        report.failures[-1].note = (f"your loop kept asking the model: {len(model.requests)} requests "
                                    f"and still going, although max_rounds={max_rounds}. Stop when the "
                                    f"model asks for tools after max_rounds rounds have run")
    return done, value, model


def _unpack(report: Report, case: str, value: Any):
    if (isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], list)
            and isinstance(value[1], str)):
        return value
    report.fail(case, "return a tuple (history, stop_reason): the list of messages and "
                      "'answered' or 'max_rounds'", "(list, str)", repr(value)[:80])
    return None


def _compare_history(report: Report, case: str, expected: list[tuple], history: list) -> bool:
    got = [_summary(message) for message in history]
    for index, wanted in enumerate(expected):
        if index >= len(got):
            report.fail(case, f"the history stops after {len(got)} messages; message {index} should be: "
                              f"{_describe(wanted)}", len(expected), len(got))
            return False
        if got[index] != wanted:
            note = f"message {index} should be: {_describe(wanted)}"
            if wanted[0] == "tool" and got[index][0] == "tool" and got[index][1] != wanted[1]:
                note += " (the tool_call_id must be the id of the call it answers, copied from the reply)"
            elif wanted[0] == "tool" and got[index][0] == "tool":
                note += " (the content is not the result of that call: is it under the right id?)"
            report.fail(case, note, _describe(wanted), _describe(got[index]))
            return False
    if len(got) > len(expected):
        report.fail(case, f"there are extra messages after message {len(expected) - 1}",
                    len(expected), len(got))
        return False
    return True


def _check_requests(report: Report, case: str, model: fake.ScriptedModel, expected_count: int,
                    history: list, tools: dict | None = None) -> bool:
    offered = sorted(tools or tools_by_name)
    if len(model.requests) != expected_count:
        report.fail(case, "wrong number of requests to the model", expected_count, len(model.requests))
        return False
    for number, request in enumerate(model.requests, 1):
        sent = [t.get("function", {}).get("name") for t in request.get("tools") or []]
        if sorted(sent) != offered:
            report.fail(case, f"request {number} must offer every tool in its 'tools' field "
                              "([tool.spec() for tool in tools_by_name.values()])", offered, sorted(sent))
            return False
    # Each later request must carry everything so far: that is how the results reach the model.
    for number, request in enumerate(model.requests[1:], 2):
        sent = [_summary(message) for message in request.get("messages", [])]
        so_far = [_summary(message) for message in history][: len(sent)]
        if sent != so_far or not any(each[0] == "tool" for each in sent):
            report.fail(case, f"request {number} must send the whole history so far, tool results "
                              "included, so that the model can read them")
            return False
    return True


# --- Failures the loop must turn into text for the model, drawn while grading ---------------------

_MADE_UP_TOOLS = ["get_stock_price", "book_flight", "send_email", "search_web", "translate_text",
                  "get_news", "create_invoice", "weather_forecast", "lookup_user", "play_music"]


def _first_result(history: list, call_id: str) -> str | None:
    results = [each for each in (_summary(message) for message in history) if each[0] == "tool"]
    return results[0][2] if results and results[0][1] == call_id else None


def _no_result_note(history: list, call_id: str, why: str) -> tuple[str, str, str]:
    results = [each for each in (_summary(message) for message in history) if each[0] == "tool"]
    return why, f"tool result for id {call_id}: '{ERROR_PREFIX}...'", _describe(results[0]) if results else "no tool message"


def _grade_unknown_tool(report: Report, run_turn_safely, rng: random.Random) -> None:
    """A tool name the model made up: answered with an error that names it and the tools that
    exist (drawn here, so no fixed list fits), and the model is asked again."""
    offered = {each.name: each for each in rng.sample(list(demo_toolset()), rng.randint(2, 4))}
    name = rng.choice(_MADE_UP_TOOLS) + rng.choice(["", "", f"_v{rng.randint(2, 9)}"])
    call_id = f"call_{rng.randrange(16**6):06x}"
    case = f"a tool that does not exist ({name}, with {', '.join(offered)} offered)"
    script = [fake.calls(fake.call(name, {"query": rng.choice(["600519", "Paris", "tomorrow"])}, id=call_id)),
              fake.text("Sorry, I cannot do that with the tools I have.")]
    done, value, model = _run(report, case, run_turn_safely, script, 3, offered)
    if not done or not (unpacked := _unpack(report, case, value)):
        return
    history, stop = unpacked
    text = _first_result(history, call_id)
    missing = [each for each in offered if isinstance(text, str) and each not in text]
    wanted = f"{ERROR_PREFIX}there is no tool named {name!r}. Available tools: {', '.join(offered)}. ..."
    if text is None:
        report.fail(case, *_no_result_note(history, call_id, "the call to an unknown tool needs a tool message "
                                           "under its id, so the model learns the tool does not exist"))
    elif not follows_error_rule(text):
        report.fail(case, error_rule_note(text), wanted, text)
    elif name not in text:
        report.fail(case, f"say which tool does not exist: name {name!r}, the tool the model asked for", wanted, text)
    elif missing:
        report.fail(case, f"name the tools that exist, so the model can pick one of them: {missing} missing "
                          "(list the keys of tools_by_name, not a fixed list)", wanted, text)
    else:
        report.check(case, ("answered", 2), (stop, len(model.requests)),
                     "after the error, ask the model again and let it answer")


def _grade_wrong_arguments(report: Report, run_turn_safely, rng: random.Random) -> None:
    """Arguments the tool cannot take (wrong names, a wrong type, not JSON at all): the loop
    does not crash, tells the model which tool's call failed, and asks again."""
    tool_name, arguments, what = rng.choice([
        ("get_weather", {"town": rng.choice(["Beijing", "Lisbon", "上海"])}, "a parameter it does not have"),
        ("get_weather", {"city": rng.randint(1, 999)}, "a number where the city's name goes"),
        ("calculate", {"expr": f"{rng.randint(2, 99)} * {rng.randint(2, 99)}"}, "a parameter it does not have"),
        ("calculate", {"expression": [rng.randint(1, 9), rng.randint(1, 9)]}, "a list where the expression goes"),
        ("get_weather", '{"city": "' + rng.choice(["Beijing", "Paris"]) + '", "unit": ', "JSON cut off"),
        ("calculate", "{'expression': '" + str(rng.randint(2, 99)) + " + 1'}", "JSON in single quotes"),
    ])
    call_id = f"call_{rng.randrange(16**6):06x}"
    case = f"arguments that are wrong ({tool_name} with {what})"
    script = [fake.calls(fake.call(tool_name, arguments, id=call_id)), fake.text("Let me try that again.")]
    done, value, model = _run(report, case, run_turn_safely, script, 3)
    if not done or not (unpacked := _unpack(report, case, value)):
        return
    history, stop = unpacked
    text = _first_result(history, call_id)
    wanted = f"{ERROR_PREFIX}the tool {tool_name!r} failed (...)"
    if text is None:
        report.fail(case, *_no_result_note(history, call_id, "a call whose arguments are wrong still needs a tool "
                                           "message under its id: catch the error (tool.invoke raises it), the "
                                           "loop must not crash"))
    elif not follows_error_rule(text):
        report.fail(case, error_rule_note(text), wanted, text)
    elif tool_name not in text:
        report.fail(case, f"say which tool's call failed: name {tool_name!r}", wanted, text)
    elif "Traceback" in text or "\n" in text or len(text) > 300:
        report.fail(case, "one short line, at most 300 characters, cleaned by toolkit.errors_for_model.sanitize: "
                          "never a traceback", wanted, text)
    else:
        report.check(case, ("answered", 2), (stop, len(model.requests)),
                     "after the error, ask the model again and let it answer")


def grade(run_turn_safely, seed: int | None = None) -> Report:
    """Grade the loop; the made-up tool names and wrong arguments come from ``seed`` (fresh when None)."""
    seed = case_seed(seed)
    report = Report(f"Lab 06a - the loop, with results matched by id (made-up names from seed {seed})")
    for spec in _cases():
        case = spec["case"]
        done, value, model = _run(report, case, run_turn_safely, spec["script"], spec["max_rounds"])
        if not done:
            if report.failures[-1].note.startswith("not done yet"):
                return report
            continue
        unpacked = _unpack(report, case, value)
        if unpacked is None:
            continue
        history, stop = unpacked
        if (_compare_history(report, case, spec["history"], history)
                and _check_requests(report, case, model, spec["requests"], history)):
            report.check(case, spec["stop"], stop, "wrong stop reason")

    rng = random.Random(seed)
    _grade_unknown_tool(report, run_turn_safely, rng)
    _grade_wrong_arguments(report, run_turn_safely, rng)

    # A tool that raises: the model is told it failed, in a short clean text; the details stay here.
    case = "a tool that raises (its message holds a host, a file and a key)"
    script = [fake.calls(fake.call("export_report", {"customer_id": "C-2048", "month": "2025-05"}, id="call_e")),
              fake.text("Sorry, the export failed.")]
    failing = {**tools_by_name, "export_report": export_report}
    done, value, model = _run(report, case, run_turn_safely, script, 3, failing)
    if done and (unpacked := _unpack(report, case, value)):
        history, stop = unpacked
        results = [each for each in (_summary(message) for message in history) if each[0] == "tool"]
        text = results[0][2] if results and results[0][1] == "call_e" else None
        leaked = [piece for piece in _LEAKS if isinstance(text, str) and piece in text]
        if text is None:
            report.fail(case, "a call whose tool raises still needs a tool message under its id (catch the "
                              "exception; the loop must not crash)", f"tool result for id call_e: '{ERROR_PREFIX}...'",
                        _describe(results[0]) if results else "no tool message")
        elif not follows_error_rule(text):
            report.fail(case, error_rule_note(text), f"{ERROR_PREFIX}...", text)
        elif leaked:
            report.fail(case, "never send raw exception text or a traceback to the model: it showed "
                              f"{leaked}. Send a short text that says which tool failed, cleaned with "
                              "toolkit.errors_for_model.sanitize (lesson 9); the details belong in your log",
                        f"{ERROR_PREFIX}the tool 'export_report' failed ...", text)
        elif "export_report" not in text or len(text) > 300:
            report.fail(case, "name the tool that failed, in at most 300 characters",
                        f"{ERROR_PREFIX}the tool 'export_report' failed ...", text)
        else:
            report.check(case, ("answered", 2), (stop, len(model.requests)),
                         "after the error, ask the model again and let it answer")

    # A model that never stops asking.
    for rounds in (3, 0):
        case = f"a model that never stops asking (max_rounds={rounds})"
        script = [fake.calls(fake.call("get_weather", {"city": "Beijing"}, id=f"call_loop_{n}")) for n in range(20)]
        done, value, model = _run(report, case, run_turn_safely, script, rounds)
        if not done or not (unpacked := _unpack(report, case, value)):
            continue
        history, stop = unpacked
        got = [_summary(message) for message in history]
        executed = sum(each[0] == "tool" for each in got)
        if len(model.requests) != rounds + 1:
            report.fail(case, f"ask the model at most max_rounds + 1 = {rounds + 1} times: {rounds} "
                              "round(s) of tools, then one more request whose calls are not run",
                        rounds + 1, len(model.requests))
        elif executed != rounds:
            report.fail(case, "run the tools of max_rounds rounds, no more", rounds, executed)
        elif got and got[-1][0] == "assistant" and got[-1][2]:
            report.fail(case, "the last reply's calls were not run, so do not append that reply: a "
                              "history ending in calls without results is refused by the next request",
                        "last message: a tool result" if rounds else "last message: the user's",
                        _describe(got[-1]))
        else:
            report.check(case, "max_rounds", stop, "wrong stop reason")
    return report


hints = Hints([
    "The shape: history = list(messages); then loop: reply = client.chat(messages=history, "
    "tools=[t.spec() for t in tools_by_name.values()]); message = reply.choices[0].message. "
    "No tool_calls? Append the text answer and return (history, 'answered'). Otherwise run every "
    "call, append the results, count the round, and ask again.",
    "toolkit.messages helps: calls_of(message) gives ToolCall objects (.id, .name, .arguments); "
    "assistant_from_reply(message) is the dict to append before the results; tool_result(call.id, "
    "text) is one result message. Run a call with tools_by_name[call.name].invoke(call.arguments) "
    "and turn the value into text with render_result. An unknown name gets "
    "tool_result(call.id, f'Error: there is no tool named {call.name!r}. Available tools: ...') with the "
    "names in tools_by_name. Wrap the run in try/except (invoke raises on wrong arguments too): a tool "
    "that raises gets sanitize(tool_error_text(error, call.name)) from toolkit.errors_for_model, never str(error) "
    "or a traceback.",
    "Count rounds: rounds = 0 before the loop. After reading the calls of a reply: if rounds == "
    "max_rounds: return history, 'max_rounds' (without appending that reply). Else append "
    "assistant_from_reply(message), append one tool_result per call IN THE CALLS' ORDER with "
    "call.id, rounds += 1, and go round again.",
])
