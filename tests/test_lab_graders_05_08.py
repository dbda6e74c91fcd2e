"""The graders of labs 05-08: they pass the reference solutions, report stubs as not done, and
fail typical wrong answers with feedback that names the failing case."""

import copy
import json
import re

from labs.grading import NotDoneYet


def stub(*args, **kwargs):
    raise NotDoneYet


def failing_cases(report) -> str:
    return "\n".join(f"{o.case}: {o.note} | expected {o.expected!r} | got {o.got!r}" for o in report.failures)


# --- Lab 05: a schema from a function ------------------------------------------------------------

class TestSchemaFromFunction:
    from labs.graders.schema_from_function import grade

    grade = staticmethod(grade)

    def test_solution_passes(self):
        from labs.solutions.schema_from_function import schema_from_function

        report = self.grade(schema_from_function)
        assert report.passed, str(report)

    def test_stub_is_not_done(self):
        report = self.grade(stub)
        assert not report.passed and "not done yet" in str(report)

    def test_python_type_names_instead_of_json_schema_types(self):
        from labs.solutions import schema_from_function as solution

        def python_names(fn):
            original = dict(solution.JSON_TYPES)
            solution.JSON_TYPES.update({float: "float", int: "int"})
            try:
                return solution.schema_from_function(fn)
            finally:
                solution.JSON_TYPES.clear()
                solution.JSON_TYPES.update(original)

        text = failing_cases(self.grade(python_names))
        assert "apply_operator: numbers, a Literal of symbols and an int default: differs at function.parameters.properties.a.type" in text
        assert "'number'" in text and "'float'" in text
        assert "get_weather" not in text  # only strings there: that case passes

    def test_every_parameter_required_and_no_additional_properties(self):
        from labs.solutions.schema_from_function import schema_from_function

        def everything_required(fn):
            schema = copy.deepcopy(schema_from_function(fn))
            parameters = schema["function"]["parameters"]
            parameters["required"] = list(parameters["properties"])
            del parameters["additionalProperties"]
            return schema

        report = self.grade(everything_required)
        text = failing_cases(report)
        assert "get_weather: a Literal with a default, and a long description: differs at function.parameters.required" in text
        assert "['city']" in text and "['city', 'unit']" in text
        assert len(report.failures) == len(report.outcomes)  # optional parameters everywhere

    def test_optional_written_as_its_inner_type(self):
        from labs.solutions import schema_from_function as solution

        original = solution.type_schema

        def no_union(annotation):
            import typing
            members = [m for m in typing.get_args(annotation) if m is not type(None)]
            if typing.get_origin(annotation) is typing.Union and len(members) == 1:
                return original(members[0])
            return original(annotation)

        solution.type_schema = no_union
        try:
            text = failing_cases(self.grade(solution.schema_from_function))
        finally:
            solution.type_schema = original
        assert "search_flights_any_day: Optional[int] = None and a bool default: differs at function.parameters.properties.max_stops.anyOf" in text


    def test_the_solution_passes_on_made_up_functions_whatever_the_seed(self):
        from labs.solutions.schema_from_function import schema_from_function

        for seed in range(40):
            report = self.grade(schema_from_function, seed=seed)
            assert report.passed, str(report)
            assert sum(o.case.startswith("made-up function") for o in report.outcomes) == 4

    def test_the_toolkits_own_builder_is_refused(self):
        from toolkit.tools import tool

        def toolkit_does_it(fn):
            return tool(fn).spec()

        report = self.grade(toolkit_does_it, seed=1)
        assert not report.passed
        assert "the schema is built by hand: your code refers to the toolkit's tool()" in failing_cases(report)

    def test_the_toolkits_builder_reached_without_a_name_still_fails(self):
        """No name to spot in the code: the builders are switched off while the function runs."""
        def hidden_toolkit(fn):
            import importlib
            return getattr(importlib.import_module("toolkit." + "tools"), "to" + "ol")(fn).spec()

        def hidden_pydantic(fn):
            import importlib
            import inspect
            import typing
            adapter = getattr(importlib.import_module("pyd" + "antic"), "TypeAdapter")
            hints = typing.get_type_hints(fn)
            return {"type": "function", "function": {"name": fn.__name__, "description": "", "parameters": {
                name: adapter(hints[name]).json_schema() for name in inspect.signature(fn).parameters}}}

        for shortcut in (hidden_toolkit, hidden_pydantic):
            report = self.grade(shortcut, seed=2)
            assert len(report.failures) == len(report.outcomes) == 10, str(report)
            assert "raised BuildItYourself: the lab asks you to build the schema yourself" in failing_cases(report)
        # and the grader leaves the builders as it found them
        from toolkit.tools import tool
        assert tool(self.grade.__globals__["get_weather"]).spec()["function"]["name"] == "get_weather"

    def test_a_table_of_the_public_functions_fails_the_made_up_ones(self):
        from labs.graders.schema_from_function import CASES
        from labs.solutions.schema_from_function import schema_from_function

        table = {function.__name__: schema_from_function(function) for _, function in CASES}

        def look_up(fn):
            return table[fn.__name__]

        report = self.grade(look_up, seed=3)
        failed = [o.case for o in report.failures]
        assert len(failed) == 4 and all(case.startswith("made-up function") for case in failed), failed

    def test_the_notebook_never_rebinds_hints_and_its_first_hint_cell_works_alone(self):
        """A demo variable called ``hints`` once shadowed the lab's hints, so a hint cell run
        before grading raised AttributeError. Run the hint cell in a fresh namespace."""
        import ast
        from pathlib import Path

        import jupytext

        path = Path(__file__).resolve().parent.parent / "labs" / "05_schema_from_function.py"
        cells = [cell.source for cell in jupytext.read(path).cells if cell.cell_type == "code"]
        for source in cells:
            for node in ast.walk(ast.parse(source)):
                assert not (isinstance(node, ast.Name) and node.id == "hints" and isinstance(node.ctx, ast.Store)), source
        grade_at = next(i for i, source in enumerate(cells) if "report = grade(" in source)
        first_hint = next(source for source in cells if "hints.next()" in source)
        namespace: dict = {}
        for source in cells[:grade_at]:  # everything a learner runs before grading, demo included
            exec(source, namespace)
        exec(first_hint, namespace)
        assert namespace["hints"].shown == 1


# --- Lab 07b: the checklist for a model that will not call ---------------------------------------

class TestWhyNoCall:
    from labs.graders.why_no_call import grade

    grade = staticmethod(grade)

    def test_solution_passes_whatever_the_seed(self):
        from labs.solutions.why_no_call import diagnose

        for seed in range(40):
            report = self.grade(diagnose, seed=seed)
            assert report.passed, str(report)

    def test_stub_is_not_done(self):
        report = self.grade(stub, seed=0)
        assert not report.passed and "not done yet" in str(report)

    def test_a_table_of_the_public_answers_fails_the_made_up_cases(self):
        from labs.graders.why_no_call import CASES

        table = {case.request()["messages"][-1]["content"] + str(case.system): case.expected for case in CASES}

        def lookup(backend, request):
            key = request["messages"][-1]["content"] + str(next(
                (m["content"] for m in request["messages"] if m["role"] == "system"), None))
            backend.chat(**request)
            backend.chat(**{**request, "tool_choice": "required"})
            return table.get(key, ["answered_in_text", "calls_when_forced"])

        for seed in range(5):
            text = failing_cases(self.grade(lookup, seed=seed))
            assert "made-up case" in text

    def test_findings_guessed_without_sending_anything_fail(self):
        from labs.solutions.why_no_call import diagnose

        class Silent:
            """A backend that answers like the real one would, without the grader seeing it."""
            def chat(self, **body):
                raise AssertionError("never called")

        def unsent(backend, request):
            findings = diagnose(Silent(), request) if not request.get("tools") else None
            if findings is not None:
                return findings
            found = [code for code in ("tool_choice_none",) if request.get("tool_choice") == "none"]
            return found + ["answered_in_text", "calls_when_forced"]

        text = failing_cases(self.grade(unsent, seed=3))
        assert "the request is right: the model chose text: send the request once as it is and once forced" in text

    def test_changing_the_given_request_is_refused(self):
        from labs.solutions.why_no_call import diagnose

        def in_place(backend, request):
            findings = diagnose(backend, request)
            request["tool_choice"] = "required"
            return findings

        text = failing_cases(self.grade(in_place, seed=0))
        assert "diagnose changed the request it was given" in text

    def test_a_forced_retry_with_other_messages_is_refused(self):
        from labs.solutions.why_no_call import diagnose

        def rewritten(backend, request):
            class Rewriting:
                def chat(self, **body):
                    if body.get("tool_choice") == "required":
                        body = {**body, "messages": body["messages"][-1:] + [{"role": "user", "content": "Call a tool!"}]}
                    return backend.chat(**body)
            return diagnose(Rewriting(), request)

        text = failing_cases(self.grade(rewritten, seed=0))
        assert "each with the same messages and tools" in text

    def test_a_refusal_of_required_is_its_own_finding(self):
        from labs.solutions.why_no_call import diagnose

        def swallow(backend, request):
            class Quiet:
                def chat(self, **body):
                    try:
                        return backend.chat(**body)
                    except Exception:
                        return backend.chat(**{**body, "tool_choice": "auto"})
            return diagnose(Quiet(), request)

        assert "an endpoint that refuses 'required': missed: forcing_refused" in failing_cases(self.grade(swallow, seed=0))


# --- Lab 08: a concurrent executor that answers by id ----------------------------------------------

class TestConcurrentExecution:
    from labs.graders.concurrent_execution import grade

    grade = staticmethod(grade)

    def test_solution_passes(self):
        from labs.solutions.concurrent_execution import execute_concurrently

        report = self.grade(execute_concurrently)
        assert report.passed, str(report)

    def test_stub_is_not_done(self):
        report = self.grade(stub)
        assert not report.passed and "not done yet" in str(report)

    def test_pool_map_in_call_order_never_needs_the_ids_and_is_caught(self):
        """The answer that skips the concept: map keeps the calls' order, so results are paired
        by position and handed on only once all are done."""
        from concurrent.futures import ThreadPoolExecutor

        from toolkit.messages import tool_result
        from toolkit.tools import render_result

        def mapped(calls, tools_by_name, on_result, max_workers=4):
            def run_one(call):
                function = tools_by_name.get(call.name)
                if function is None:
                    return "Error: no such tool"
                try:
                    return render_result(function(**call.parsed_arguments()))
                except Exception as error:
                    return f"Error: {error}"

            if not calls:
                return []
            with ThreadPoolExecutor(max_workers=max_workers) as pool:
                texts = list(pool.map(run_one, calls))
            messages = [tool_result(call.id, text) for call, text in zip(calls, texts)]
            for message in messages:
                on_result(message)
            return messages

        report = self.grade(mapped)
        text = failing_cases(report)
        assert ("each result handed to on_result as its tool finished, under its own id: the lookups for "
                "['Shenzhen', 'Guangzhou', 'Beijing'] waited 1 s for results that were finished but not handed on") in text
        assert {o.case for o in report.failures} == {  # everything else about it is right
            "each result handed to on_result as its tool finished, under its own id",
            "made-up case 1: each result handed to on_result as its tool finished, under its own id"}

    def test_solution_passes_whatever_the_seed(self):
        from labs.solutions.concurrent_execution import execute_concurrently

        for seed in range(3):
            report = self.grade(execute_concurrently, seed=seed)
            assert report.passed, str(report)
            assert sum(o.case.startswith("made-up case") for o in report.outcomes) == 5

    def test_results_matched_by_their_city_instead_of_the_id_fail_the_made_up_ones(self):
        """Each finished result is matched to the call that asked for its city: no ids needed while
        every city is asked once, as in the public cases; a made-up round asks for one city twice."""
        from concurrent.futures import ThreadPoolExecutor, as_completed

        from toolkit.messages import tool_result
        from toolkit.tools import render_result

        def by_city(calls, tools_by_name, on_result, max_workers=4):
            def run_one(call):
                function = tools_by_name.get(call.name)
                try:
                    return function(**call.parsed_arguments())
                except Exception as error:
                    return f"Error: {error}"

            messages = {}
            with ThreadPoolExecutor(max_workers=max(1, min(max_workers, len(calls) or 1))) as pool:
                futures = [pool.submit(run_one, call) for call in calls]
                for future in as_completed(futures):
                    value = future.result()
                    if isinstance(value, dict):
                        call = next(c for c in calls if json.loads(c.arguments).get("city") == value["city"])
                    else:  # an error: the first failing call still without a message
                        call = next(c for c in calls if c.name != "get_weather" and c.id not in messages)
                    messages[call.id] = tool_result(call.id, render_result(value))
                    on_result(messages[call.id])
            return [messages[call.id] for call in calls if call.id in messages]

        report = self.grade(by_city, seed=4)
        failed = [o.case for o in report.failures]
        assert failed and all(case.startswith("made-up case") for case in failed), failed
        assert any(case.startswith("made-up case 2") for case in failed)

    def test_an_error_without_the_prefix_is_rejected(self):
        """A failed call reported as bare exception text: the model cannot tell it from a result."""
        from labs.solutions import concurrent_execution as solution
        from toolkit.messages import tool_result

        def bare_errors(calls, tools_by_name, on_result, max_workers=4):
            def unprefixed(message):
                text = message["content"]
                if text.startswith("Error: "):
                    text = text[len("Error: "):]
                return tool_result(message["tool_call_id"], text)

            results = solution.execute_concurrently(calls, tools_by_name, lambda m: on_result(unprefixed(m)),
                                                    max_workers)
            return [unprefixed(message) for message in results]

        text = failing_cases(self.grade(bare_errors))
        assert "failed: its message should say so: start the text with 'Error: '" in text

    def test_sequential_execution_is_caught_by_the_overlap_count(self):
        from labs.solutions import concurrent_execution as solution

        class OneThread(solution.ThreadPoolExecutor):
            def __init__(self, max_workers=None, **kwargs):
                super().__init__(max_workers=1, **kwargs)

        original = solution.ThreadPoolExecutor
        solution.ThreadPoolExecutor = OneThread
        try:
            report = self.grade(solution.execute_concurrently)
        finally:
            solution.ThreadPoolExecutor = original
        text = failing_cases(report)
        assert "the four lookups ran at the same time: at most 1 tool ran at any moment" in text
        assert "four lookups that finish in a different order than they were called:" not in text  # order is still right

    def test_results_in_finishing_order_are_caught(self):
        from concurrent.futures import ThreadPoolExecutor, as_completed

        from toolkit.messages import tool_result
        from toolkit.tools import render_result

        def as_they_finish(calls, tools_by_name, on_result, max_workers=4):
            if not calls:
                return []
            messages = []
            with ThreadPoolExecutor(max_workers=max_workers) as pool:
                futures = {pool.submit(tools_by_name[c.name], **c.parsed_arguments()): c for c in calls}
                for f in as_completed(futures):
                    messages.append(tool_result(futures[f].id, render_result(f.result())))
                    on_result(messages[-1])
            return messages

        text = failing_cases(self.grade(as_they_finish))
        assert ("four lookups that finish in a different order than they were called: every id is there, "
                "but in a different order") in text
        assert "'call_2'" in text  # Shanghai, the fastest, came back first
        assert "each result handed to on_result as its tool finished" not in text  # that part is right

    def test_results_paired_by_position_with_finishing_order_are_caught(self):
        from concurrent.futures import ThreadPoolExecutor, as_completed

        from toolkit.messages import tool_result
        from toolkit.tools import render_result

        def zipped(calls, tools_by_name, on_result, max_workers=4):
            if not calls:
                return []
            messages = []
            with ThreadPoolExecutor(max_workers=max_workers) as pool:
                futures = [pool.submit(tools_by_name[c.name], **c.parsed_arguments()) for c in calls]
                for call, future in zip(calls, as_completed(futures)):  # the i-th to finish, as the i-th call
                    messages.append(tool_result(call.id, render_result(future.result())))
                    on_result(messages[-1])
            return messages

        text = failing_cases(self.grade(zipped))
        assert "the content under id call_9 is not the result of that call" in text
        assert ("each result handed to on_result as its tool finished, under its own id: on_result: the "
                "content under id call_9 is not the result of that call") in text

    def test_handed_on_but_wrong_ids_in_the_callback_alone_are_caught(self):
        """Right list, but on_result told positions: it got the i-th finished result as call i."""
        from labs.solutions.concurrent_execution import execute_concurrently

        def mislabelled(calls, tools_by_name, on_result, max_workers=4):
            handed = []

            def relabel(message):
                call = calls[len(handed)]
                handed.append(call.id)
                on_result({**message, "tool_call_id": call.id})

            return execute_concurrently(calls, tools_by_name, relabel, max_workers)

        text = failing_cases(self.grade(mislabelled))
        assert "on_result: the content under id call_9 is not the result of that call" in text


# --- Lab 06a: the loop, with results matched by id --------------------------------------------------

def _loop(*, own_ids=False, ignore_limit=False, keep_unrun_reply=False, crash_on_unknown=False,
          failure_text=None, unknown_text=None, crash_on_bad_arguments=False):
    """The reference loop with one typical mistake switched on. ``failure_text(error, name)``
    words what a tool that raises sends back (by default the toolkit's cleaned line);
    ``unknown_text(name, tools_by_name)`` what a made-up tool gets (by default the toolkit's)."""
    from toolkit.errors_for_model import sanitize, tool_error_text, unknown_tool_text
    from toolkit.messages import assistant_from_reply, calls_of, tool_result
    from toolkit.tools import render_result

    def failed(error, name):
        return failure_text(error, name) if failure_text else sanitize(tool_error_text(error, name))

    def run_turn_safely(client, messages, tools_by_name, max_rounds):
        history, rounds = list(messages), 0
        specs = [each.spec() for each in tools_by_name.values()]
        while True:
            message = client.chat(messages=history, tools=specs).choices[0].message
            calls = calls_of(message)
            if not calls:
                history.append(assistant_from_reply(message))
                return history, "answered"
            if rounds == max_rounds and not ignore_limit:
                if keep_unrun_reply:
                    history.append(assistant_from_reply(message))
                return history, "max_rounds"
            history.append(assistant_from_reply(message))
            for index, call in enumerate(calls):
                if crash_on_unknown or call.name in tools_by_name:
                    chosen = tools_by_name[call.name]  # a KeyError here is the crash_on_unknown mistake
                    if crash_on_bad_arguments:
                        arguments = chosen.validate(call.arguments)  # outside the try: bad arguments crash
                    try:
                        text = render_result(chosen.run(arguments) if crash_on_bad_arguments
                                             else chosen.invoke(call.arguments))
                    except Exception as error:
                        text = failed(error, call.name)
                elif unknown_text:
                    text = unknown_text(call.name, tools_by_name)
                else:
                    text = unknown_tool_text(call.name, list(tools_by_name))
                history.append(tool_result(f"call_{index}" if own_ids else call.id, text))
            rounds += 1

    return run_turn_safely


class TestLoopWithIds:
    from labs.graders.loop_with_ids import grade

    grade = staticmethod(grade)

    def test_solution_passes(self):
        from labs.solutions.loop_with_ids import run_turn_safely

        report = self.grade(run_turn_safely)
        assert report.passed, str(report)

    def test_stub_is_not_done(self):
        report = self.grade(stub)
        assert not report.passed and "not done yet" in str(report)

    def test_the_solution_sends_a_failing_tool_a_sanitised_error(self):
        """The reference must do what lesson 9 teaches: no raw exception text to the model."""
        from labs.solutions.loop_with_ids import run_turn_safely
        from toolkit import fake
        from toolkit.tools import tool

        @tool
        def read_report(name: str) -> str:
            """Read one report.

            Args:
                name: The report's name.
            """
            raise OSError(f"cannot open /srv/reports/{name}.csv with key sk-live-3f9a8b7c6d5e4f3a2b1c")

        model = fake.ScriptedModel([fake.calls(fake.call("read_report", {"name": "q3"}, id="call_r")),
                                    fake.text("Sorry.")])
        history, stop = run_turn_safely(model.backend(), [{"role": "user", "content": "q3?"}],
                                         {"read_report": read_report}, 3)
        sent = next(m["content"] for m in history if m["role"] == "tool")
        assert stop == "answered" and sent.startswith("Error: ") and "read_report" in sent and "OSError" in sent
        assert len(sent) <= 300 and "Traceback" not in sent
        assert "/srv" not in sent and "sk-live" not in sent, sent

    def test_the_mistake_switches_alone_pass(self):
        assert self.grade(_loop()).passed

    def test_ids_made_up_by_the_loop(self):
        text = failing_cases(self.grade(_loop(own_ids=True)))
        assert ("one call, then an answer: message 2 should be: tool result for id call_1: "
                '\'{"city": "Beijing", "condition": "sunny", "temperature": 24, "unit": "celsius"}\' '
                "(the tool_call_id must be the id of the call it answers") in text
        assert "ids in no particular order, two different tools: message 2" in text
        assert "an answer straight away" not in text

    def test_no_round_limit(self):
        text = failing_cases(self.grade(_loop(ignore_limit=True)))
        assert "a model that never stops asking (max_rounds=3): your loop kept asking the model: 21 requests and still going" in text

    def test_the_unrun_reply_is_kept(self):
        text = failing_cases(self.grade(_loop(keep_unrun_reply=True)))
        assert "a model that never stops asking (max_rounds=3): the last reply's calls were not run" in text
        assert "a model that never stops asking (max_rounds=0): the last reply's calls were not run" in text

    def test_a_made_up_tool_crashes_the_loop(self):
        text = failing_cases(self.grade(_loop(crash_on_unknown=True)))
        assert re.search(r"a tool that does not exist \(\w+, with [\w, ]+ offered\): raised KeyError", text), text

    def test_raw_exception_text_is_rejected(self):
        """The old reference's mistake: the exception's own words, prefixed, go to the model."""
        text = failing_cases(self.grade(_loop(failure_text=lambda error, name: f"Error: {name} failed: {error}")))
        assert "a tool that raises (its message holds a host, a file and a key): never send raw exception text" in text
        assert "sk-live-3f9a8b7c6d5e4f3a" in text and "/srv/reports/conf/db.yaml" in text
        assert "a tool that does not exist" not in text

    def test_a_traceback_is_rejected(self):
        import traceback

        loop = _loop(failure_text=lambda error, name: "Error: " + "".join(traceback.format_exception(error)))
        text = failing_cases(self.grade(loop))
        assert "never send raw exception text or a traceback" in text and "'Traceback'" in text

    def test_the_solution_passes_whatever_the_seed(self):
        from labs.solutions.loop_with_ids import run_turn_safely

        for seed in range(30):
            report = self.grade(run_turn_safely, seed=seed)
            assert report.passed, str(report)
            assert any(o.case.startswith("arguments that are wrong") for o in report.outcomes)

    def test_a_bare_error_for_an_unknown_tool_is_rejected(self):
        report = self.grade(_loop(unknown_text=lambda name, tools: "Error: "), seed=4)
        text = failing_cases(report)
        assert "a tool that does not exist (" in text and "say which tool does not exist: name" in text
        assert len(report.failures) == 1

    def test_a_fixed_list_of_tools_for_an_unknown_tool_is_rejected(self):
        def fixed(name, tools):
            return f"Error: there is no tool named {name!r}. Available tools: get_weather, calculate."

        texts = [failing_cases(self.grade(_loop(unknown_text=fixed), seed=seed)) for seed in range(12)]
        assert any("name the tools that exist, so the model can pick one of them" in text for text in texts)
        assert all("a tool that raises" not in text for text in texts)

    def test_wrong_arguments_that_crash_the_loop_are_rejected(self):
        report = self.grade(_loop(crash_on_bad_arguments=True), seed=5)
        text = failing_cases(report)
        assert "arguments that are wrong (" in text and "raised ToolArgumentsError" in text
        assert len(report.failures) == 1

    def test_a_lowercase_error_is_rejected(self):
        from toolkit.errors_for_model import sanitize, tool_error_text

        def lowercase(error, name):
            return sanitize(tool_error_text(error, name)).replace("Error: ", "error: ", 1)

        text = failing_cases(self.grade(_loop(failure_text=lowercase)))
        assert "a tool that raises (its message holds a host, a file and a key): start the text with exactly 'Error: '" in text


# --- Lab 07: a client default and a per-request override -------------------------------------------

class TestToolChoiceDefault:
    from labs.graders.tool_choice_default import grade

    grade = staticmethod(grade)

    def test_solution_passes(self):
        from labs.solutions.tool_choice_default import choose_tool_choice

        report = self.grade(choose_tool_choice)
        assert report.passed, str(report)

    def test_stub_is_not_done(self):
        report = self.grade(stub)
        assert not report.passed and "not done yet" in str(report)

    def test_solution_passes_whatever_the_seed(self):
        from labs.solutions.tool_choice_default import choose_tool_choice

        for seed in range(10):
            report = self.grade(choose_tool_choice, seed=seed)
            assert report.passed, str(report)
            assert sum(o.case.startswith("made-up case") for o in report.outcomes) == 7

    def test_a_table_of_the_public_cases_fails_the_made_up_ones(self):
        from labs.graders.tool_choice_default import CASES, RAISES

        table = {repr(case[1:5]): case[5] for case in CASES}

        def look_up(default, override, tool_names, round_index):
            expected = table.get(repr((default, override, tool_names, round_index)), "auto")
            if expected == RAISES:
                raise ValueError(f"{default!r} {override!r}")
            return expected

        report = self.grade(look_up, seed=9)
        failed = [o.case for o in report.failures]
        assert failed and all(case.startswith("made-up case") for case in failed), failed
        assert "made-up case 4: no tools" in failing_cases(report)  # "auto" for a request without tools

    def test_forcing_kept_on_every_request(self):
        from labs.solutions.tool_choice_default import choose_tool_choice

        text = failing_cases(self.grade(lambda d, o, t, r: choose_tool_choice(d, o, t, 0)))
        assert "after the first request, 'required' becomes 'auto': a forcing choice must not outlive" in text
        assert "after the first request, 'none' stays 'none'" not in text

    def test_default_wins_and_nothing_is_checked(self):
        def default_first(default, override, tool_names, round_index):
            return default if default is not None else override

        text = failing_cases(self.grade(default_first))
        assert "a per-request override wins over the default: the request's own tool_choice" in text
        assert ("a named function that is not being sent: this is a mistake in the caller's code: "
                "raise ValueError") in text


# --- Lab 06b: a guard against repeated calls -------------------------------------------------------

class TestLoopGuard:
    from labs.graders.loop_guard import grade

    grade = staticmethod(grade)

    def test_solution_passes(self):
        from labs.solutions.loop_guard import call_key, guard_repeats

        report = self.grade(call_key, guard_repeats)
        assert report.passed, str(report)

    def test_stub_is_not_done(self):
        report = self.grade(stub, stub)
        assert not report.passed and "not done yet" in str(report)

    def test_solution_passes_whatever_the_seed(self):
        from labs.solutions.loop_guard import call_key, guard_repeats

        for seed in range(10):
            report = self.grade(call_key, guard_repeats, seed=seed)
            assert report.passed, str(report)
            assert sum("made-up case" in o.case for o in report.outcomes) == 5

    def test_a_table_of_the_public_calls_fails_the_made_up_ones(self):
        from labs.graders.loop_guard import KEY_CASES

        keys = {}  # each public call's text -> the key of the call it is the same as
        for _, first, second, same in KEY_CASES:
            keys[first.name, first.arguments] = (first.name, first.arguments)
            keys[second.name, second.arguments] = keys[first.name, first.arguments] if same else (second.name, second.arguments)

        def look_up(call):
            return keys.get((call.name, call.arguments), (call.name, call.arguments))

        def public_ids(calls, counts, limit):  # refuses the ids the public cases refuse
            counts[calls[0].name] = counts.get(calls[0].name, 0) + 1
            return {c.id: f"Error: {c.name} was called again; use the result you have."
                    for c in calls if c.id in ("call_r3", "call_y", "c4")}

        report = self.grade(look_up, public_ids, seed=8)
        failed = [o.case for o in report.failures]
        assert failed and all("made-up case" in case for case in failed), failed
        assert any(case.startswith("call_key: made-up case") for case in failed)
        assert any(case.startswith("made-up case: a turn of") for case in failed)

    def test_raw_text_as_the_key(self):
        from labs.solutions import loop_guard as solution

        def raw_key(call):
            return call.name, call.arguments

        original = solution.call_key
        solution.call_key = raw_key  # guard_repeats looks the name up at call time
        try:
            text = failing_cases(self.grade(raw_key, solution.guard_repeats))
        finally:
            solution.call_key = original
        assert "call_key: key order and spacing do not matter: these are the same call and need the same key" in text
        assert "two identical calls in one reply, limit 1: the second is refused: wrong calls refused" in text

    def test_a_refusal_without_the_error_prefix_is_rejected(self):
        from labs.solutions.loop_guard import call_key

        def polite(calls, counts, limit):  # counts right, but the refusal does not say it is an error
            refusals = {}
            for call in calls:
                counts[call_key(call)] = counts.get(call_key(call), 0) + 1
                if counts[call_key(call)] > limit:
                    refusals[call.id] = f"You already called {call.name}; use its result."
            return refusals

        text = failing_cases(self.grade(call_key, polite))
        assert "start the text with 'Error: '" in text

    def test_a_refusal_with_a_bare_error_word_is_rejected(self):
        from labs.solutions.loop_guard import call_key, guard_repeats

        def bare(calls, counts, limit):
            return {call_id: text.replace("Error: ", "Error ", 1)
                    for call_id, text in guard_repeats(calls, counts, limit).items()}

        text = failing_cases(self.grade(call_key, bare))
        assert "start the text with exactly 'Error: '" in text

    def test_every_broken_call_given_the_same_key(self):
        """Swallowing the parse error with a constant key: no crash, so it used to pass."""
        import json

        from labs.solutions.loop_guard import guard_repeats

        def lumped(call):
            try:
                return call.name, json.dumps(json.loads(call.arguments), sort_keys=True, ensure_ascii=False)
            except ValueError:
                return "invalid"

        text = failing_cases(self.grade(lumped, guard_repeats))
        assert ("call_key: arguments that are not JSON do not crash it, and still tell calls apart: two "
                "different broken texts are different calls, but they got the same key") in text
        assert "key order and spacing" not in text

    def test_broken_arguments_keyed_by_tool_name_only(self):
        import json

        from labs.solutions.loop_guard import guard_repeats

        def name_only(call):
            try:
                return call.name, json.dumps(json.loads(call.arguments), sort_keys=True, ensure_ascii=False)
            except ValueError:
                return call.name, None

        text = failing_cases(self.grade(name_only, guard_repeats))
        assert "two different broken texts are different calls, but they got the same key" in text

    def test_broken_arguments_never_equal(self):
        import json

        from labs.solutions.loop_guard import guard_repeats

        def unique(call):
            try:
                return call.name, json.dumps(json.loads(call.arguments), sort_keys=True, ensure_ascii=False)
            except ValueError:
                return call.name, call.id  # never a repeat: a model looping on broken JSON is never stopped

        text = failing_cases(self.grade(unique, guard_repeats))
        assert "the same broken text twice is the same call, so they need the same key" in text

    def test_a_refusal_that_only_names_the_tool_is_rejected(self):
        from labs.solutions.loop_guard import call_key, guard_repeats

        def name_only(calls, counts, limit):  # refuses the right calls, says nothing of why or what next
            return {call_id: f"Error: {call.name}" for call in calls
                    for call_id in guard_repeats([call], counts, limit)}

        report = self.grade(call_key, name_only, seed=0)
        text = failing_cases(report)
        assert not report.passed
        assert "the same call in three rounds, limit 2: the third is refused (round 3): say what failed: the call is a repeat" in text
        assert "made-up case: a turn of" in text
        assert all(o.passed for o in report.outcomes if o.case.startswith("call_key"))

        def no_next_step(calls, counts, limit):  # says what failed, not what to do instead
            return {call_id: f"Error: {call.name} was already called with these arguments." for call in calls
                    for call_id in guard_repeats([call], counts, limit)}

        text = failing_cases(self.grade(call_key, no_next_step, seed=0))
        assert "say what to do next: tell the model to use the result it already has" in text
        assert self.grade(call_key, guard_repeats, seed=0).passed

    def test_a_key_that_loses_which_value_belongs_to_which_parameter_is_rejected(self):
        import json

        from labs.solutions.loop_guard import guard_repeats

        def names_and_values_apart(call):  # same names, same values: the pairing is lost
            try:
                arguments = json.loads(call.arguments)
            except ValueError:
                return call.name, call.arguments.strip()
            values = sorted(json.dumps(value, sort_keys=True, ensure_ascii=False) for value in arguments.values())
            return call.name, tuple(sorted(arguments)), tuple(values)

        report = self.grade(names_and_values_apart, guard_repeats, seed=0)
        assert [o.case for o in report.failures] == ["call_key: two parameters that swap values are a different call",
                                                     "call_key: two numbers that swap parameters are a different call"]
        assert ("these are different calls and need different keys: keep each value with the name of its "
                "parameter") in failing_cases(report)

    def test_off_by_one_limit(self):
        from labs.solutions.loop_guard import call_key, guard_repeats

        def refuses_at_the_limit(calls, counts, limit):
            return guard_repeats(calls, counts, limit - 1)

        text = failing_cases(self.grade(call_key, refuses_at_the_limit))
        assert "the same call in three rounds, limit 2: the third is refused (round 2): wrong calls refused" in text
