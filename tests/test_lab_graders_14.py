"""The graders of lab 14: they pass the reference solutions, report stubs as not done, and fail
plausible wrong answers with feedback that names the case and the field."""

import json

from labs.grading import NotDoneYet


def stub(*args, **kwargs):
    raise NotDoneYet


def failing_cases(report) -> str:
    return "\n".join(f"{o.case}: {o.note}" for o in report.failures)


def table_of(cases, missing):
    """A learner's shortcut: the public cases' answers looked up by their input, ``missing`` else."""
    answers = {json.dumps(given, sort_keys=True): expected for _, given, expected in cases}
    return lambda given: answers.get(json.dumps(given, sort_keys=True), missing)


# --- Lab 14: chat history -> Responses items ---------------------------------------------------

class TestChatToResponses:
    from labs.graders.chat_to_responses import grade

    grade = staticmethod(grade)

    def test_solution_passes(self):
        from labs.solutions.chat_to_responses import to_input_items, to_response_tools

        report = self.grade(to_input_items, to_response_tools)
        assert report.passed, str(report)

    def test_stubs_are_not_done(self):
        report = self.grade(stub, stub)
        assert not report.passed and "not done yet" in str(report)

    def test_tools_left_nested_under_function_are_named(self):
        from labs.solutions.chat_to_responses import to_input_items

        report = self.grade(to_input_items, lambda specs: specs)
        text = failing_cases(report)
        assert "tools: one tool: a Responses tool is flat" in text
        assert not any(o.case.startswith("items:") for o in report.failures)

    def test_leaving_strict_out_is_caught(self):
        from labs.solutions import chat_to_responses as solution

        def strict_only_when_given(specs):
            tools = solution.to_response_tools(specs)
            return [{k: v for k, v in t.items() if k != "strict" or "strict" in s["function"]}
                    for t, s in zip(tools, specs)]

        report = self.grade(solution.to_input_items, strict_only_when_given)
        text = failing_cases(report)
        assert "tools: one tool: say 'strict'" in text and "takes a missing strict as on" in text
        assert "tools: strict stays on the tool" not in text  # the spec that says strict passes

    def test_keeping_tool_call_id_on_the_output_is_caught(self):
        from labs.solutions import chat_to_responses as solution

        def chat_spelling(messages):
            items = solution.to_input_items(messages)
            return [{"type": i["type"], "tool_call_id": i["call_id"], "output": i["output"]}
                    if i["type"] == "function_call_output" else i for i in items]

        report = self.grade(chat_spelling, solution.to_response_tools)
        text = failing_cases(report)
        assert "items: one call and its result: item 2 (function_call_output) should have exactly the keys" in text
        assert "extra: ['tool_call_id']; missing: ['call_id']" in text

    def test_one_item_per_assistant_message_is_caught(self):
        from labs.solutions import chat_to_responses as solution

        def first_call_only(messages):
            items = []
            for message in messages:
                if message.get("tool_calls"):
                    call = message["tool_calls"][0]  # a wrong answer: one item per reply
                    items.append({"type": "function_call", "call_id": call["id"],
                                  "name": call["function"]["name"], "arguments": call["function"]["arguments"]})
                else:
                    items.extend(solution.to_input_items([message]))
            return items

        report = self.grade(first_call_only, solution.to_response_tools)
        text = failing_cases(report)
        assert ("two calls in one reply become two items, results in the order they came: item 2 should have "
                "type 'function_call', not 'function_call_output'") in text
        assert "text and a call in one reply" in text  # the assistant's text was dropped too

    def test_parsed_arguments_are_caught(self):
        from labs.solutions import chat_to_responses as solution

        def parsed(messages):
            return [dict(i, arguments=json.loads(i["arguments"])) if i["type"] == "function_call" else i
                    for i in solution.to_input_items(messages)]

        report = self.grade(parsed, solution.to_response_tools)
        assert "arguments should be '{\"city\": \"Beijing\"}', not {'city': 'Beijing'}" in failing_cases(report)

    def test_solution_passes_whatever_the_seed(self):
        from labs.solutions.chat_to_responses import to_input_items, to_response_tools

        for seed in range(10):
            report = self.grade(to_input_items, to_response_tools, seed=seed)
            assert report.passed, str(report)
            assert sum("made-up case" in o.case for o in report.outcomes) == 4

    def test_a_table_of_the_public_cases_fails_the_made_up_ones(self):
        from labs.graders.chat_to_responses import ITEM_CASES, TOOL_CASES

        report = self.grade(table_of(ITEM_CASES, []), table_of(TOOL_CASES, []), seed=4)
        failed = [o.case for o in report.failures]
        assert len(failed) == 4 and all("made-up case" in case for case in failed), failed

    def test_the_grader_does_not_let_the_learner_change_its_cases(self):
        from labs.solutions import chat_to_responses as solution

        def destructive(messages):
            items = solution.to_input_items(messages)
            messages.clear()
            return items

        assert self.grade(destructive, solution.to_response_tools).passed


# --- Lab 14: MCP tools and results ------------------------------------------------------------

class TestMcpTools:
    from labs.graders.mcp_tools import grade

    grade = staticmethod(grade)

    def test_solution_passes(self):
        from labs.solutions.mcp_tools import result_text, to_openai_tool

        report = self.grade(to_openai_tool, result_text)
        assert report.passed, str(report)

    def test_stubs_are_not_done(self):
        report = self.grade(stub, stub)
        assert not report.passed and "not done yet" in str(report)

    def test_solution_passes_whatever_the_seed(self):
        from labs.solutions.mcp_tools import result_text, to_openai_tool

        for seed in range(10):
            report = self.grade(to_openai_tool, result_text, seed=seed)
            assert report.passed, str(report)
            assert sum("made-up case" in o.case for o in report.outcomes) == 6

    def test_a_table_of_the_public_cases_fails_the_made_up_ones(self):
        from labs.graders.mcp_tools import RESULT_CASES, TOOL_CASES

        report = self.grade(table_of(TOOL_CASES, None), table_of(RESULT_CASES, "(no output)"), seed=3)
        failed = [o.case for o in report.failures]
        assert failed and all("made-up case" in case for case in failed), failed
        assert {"tool: made-up case 1", "tool: made-up case 2"} <= {case.split(":", 2)[0] + ":" + case.split(":", 2)[1]
                                                                    for case in failed}

    def test_keeping_mcp_names_and_fields_is_caught(self):
        from labs.solutions.mcp_tools import result_text

        def as_listed(tool):
            return {"type": "function", "function": dict(tool)}

        report = self.grade(as_listed, result_text)
        text = failing_cases(report)
        assert "tool: a tool with a description: OpenAI calls the schema 'parameters'" in text
        assert "tool: extra MCP fields" in text

    def test_ignoring_is_error_is_caught(self):
        from labs.solutions import mcp_tools as solution

        def no_error_flag(result):
            return solution.result_text(dict(result, isError=False))

        report = self.grade(solution.to_openai_tool, no_error_flag, seed=0)
        text = failing_cases(report)
        assert "result: a failed call starts with Error:: isError is true" in text
        public = [o for o in report.failures if "made-up case" not in o.case]
        assert len(public) == 1  # the one that already says Error: passes either way

    def test_first_part_only_is_caught(self):
        from labs.solutions import mcp_tools as solution

        def first_part(result):
            content = result.get("content") or []
            return content[0]["text"] if content else "(no output)"

        report = self.grade(solution.to_openai_tool, first_part)
        text = failing_cases(report)
        assert "two text parts are joined by a new line" in text
        assert "an image is named, not pasted" in text
        assert "only structured content" in text
