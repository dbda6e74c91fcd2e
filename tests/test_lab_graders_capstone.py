"""The capstone lab's grader: it passes an agent that does each step, reports the stub as not done,
and fails each shortcut (no model, calls made by the agent itself, tools that ignore their
arguments, answers written without the result or by the agent) with the step that went wrong.

Most tests run on a scripted endpoint that behaves like a model that does its job, so a failure
is the shortcut's, never the model's; the last ones grade the reference on the embedded model.
"""

import json
import re

import pytest

from labs.grading import NotDoneYet, case_seed
from labs.graders.capstone_agent import (NOT_FOUND, SLIPS_ALLOWED, MarkedReport, Shop, grade,
                                         made_up_conversations, recording, sample_shop)
from labs.solutions.capstone_agent import shop_tools, run_agent
from toolkit import fake
from toolkit.lab_error import LabError
from toolkit.messages import assistant_from_reply, calls_of, tool_result
from toolkit.tools import render_result, tool


def stub(*args, **kwargs):
    raise NotDoneYet


def failing_cases(report) -> str:
    return "\n".join(f"{o.case}: {o.note}" for o in report.failures)


def dutiful_model(seed: int, after_result=None, off_topic=None, unprompted=None) -> fake.ScriptedModel:
    """A scripted endpoint that does what a good model does: calls the one tool it is offered with
    the question's id, city or product, answers by repeating the tool's result, and answers an
    unrelated question in text. ``after_result(result_text)``, ``off_topic(request)`` and
    ``unprompted(conversation)`` (asked for an answer with no result in the messages) change
    one of those behaviours. Like the embedded endpoint, it writes what a grammar sent in
    ``extra_body`` allows: here, the one string of a grammar ``root ::= "..."``."""
    _, conversations = made_up_conversations(seed)
    by_question = {each.question: each for each in conversations}

    def reply(request):
        if grammar := (request.get("extra_body") or {}).get("grammar"):
            return fake.text(json.loads(grammar.split("::=", 1)[1]))
        messages = request["messages"]
        conversation = by_question[next(m["content"] for m in messages if m["role"] == "user")]
        if messages[-1]["role"] == "tool":
            result = messages[-1]["content"]
            return fake.text(after_result(result) if after_result else f"Here is what I found: {result}")
        if not request.get("tools") or request.get("tool_choice") == "none":
            if conversation.kind != "refusal" and unprompted:
                return fake.text(unprompted(conversation))
            return fake.text("Sorry, I cannot help with that.")
        if conversation.kind == "refusal" and off_topic:
            return off_topic(request)
        function = request["tools"][0]["function"]
        parameter = next(iter(function["parameters"]["properties"]))
        return fake.calls(fake.call(function["name"], {parameter: conversation.key}))

    return fake.ScriptedModel([reply] * 100)


def graded(seed=0, tools=shop_tools, agent=run_agent, **model_behaviour):
    model = dutiful_model(seed, **model_behaviour)
    return grade(tools, agent, seed=seed, backend=model.backend()), model


# --- The conversations ---------------------------------------------------------------------------


def test_the_same_seed_makes_the_same_grading_and_another_seed_another():
    first, again, other = made_up_conversations(3), made_up_conversations(3), made_up_conversations(4)
    assert [c.question for c in first[1]] == [c.question for c in again[1]]
    assert first[0].orders == again[0].orders
    assert [c.question for c in first[1]] != [c.question for c in other[1]]


def test_a_seed_from_the_environment_grades_every_run_alike_and_a_bad_one_is_named(monkeypatch):
    monkeypatch.setenv("LAB_CASE_SEED", "2000")
    assert case_seed() == 2000 and case_seed(7) == 7  # a seed passed in still wins
    report = grade(shop_tools, run_agent, backend=dutiful_model(2000).backend())  # no seed passed
    assert report.passed and str(report).startswith("Lab 15 - a capstone agent (made-up cases: seed 2000)")
    monkeypatch.setenv("LAB_CASE_SEED", "two thousand")
    with pytest.raises(ValueError, match="LAB_CASE_SEED must be a whole number"):
        case_seed()
    monkeypatch.delenv("LAB_CASE_SEED")
    assert case_seed() != case_seed()  # drawn afresh (two equal draws of 2**32: about never)


def test_each_kind_of_conversation_is_drawn_with_a_key_the_shop_has_or_lacks():
    for seed in range(20):
        shop, conversations = made_up_conversations(seed)
        kinds = [c.kind for c in conversations]
        assert kinds.count("answer") == 3 and kinds.count("refusal") == 2 and kinds.count("not_found") == 2
        for each in conversations:
            found = {"orders": shop.order_status, "weather": shop.weather, "stock": shop.stock}.get(each.table)
            if each.kind == "answer":
                assert found(each.key) is not None and each.key in each.question and each.values[0]
            if each.kind == "not_found":
                assert found(each.key) is None and each.key in each.question
        assert not shop.lookups or True  # lookups above are the test's own
    with pytest.raises(ValueError, match="not_found must be 0 to 3"):
        made_up_conversations(0, not_found=4)


def test_the_shop_matches_keys_whatever_the_case_and_records_every_lookup():
    shop = sample_shop()
    assert shop.order_status("a1001") == "shipped" and shop.stock("the Desk lamps") == 3
    assert shop.weather("PARIS") == {"condition": "rainy", "celsius": 14} and shop.weather("Oslo") is None
    assert [(each.table, each.found) for each in shop.lookups] == [
        ("orders", True), ("stock", True), ("weather", True), ("weather", False)]


def test_not_found_is_recognised_in_its_usual_wordings_only():
    for said in ("No order A1001 was found.", "I could not find that order.", "That product does not exist.",
                 "Sorry, I can't find any weather for Oslo.", "The kettle is not available.",
                 "Nothing was found for X1234.", "We have no umbrella items available."):
        assert NOT_FOUND.search(said), said
    for said in ("Your order A1001 is shipped.", "It is sunny, 14 degrees, in Paris.", "Found it: 12 units."):
        assert not NOT_FOUND.search(said), said


# --- What passes and what is not done ------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_an_agent_that_does_each_step_passes(seed):
    report, _ = graded(seed)
    assert report.passed, str(report)
    assert len(report.outcomes) == 7 and f"seed {seed}" in report.lab


def test_the_stub_is_not_done_and_nothing_is_sent():
    model = dutiful_model(0)
    report = grade(stub, stub, seed=0, backend=model.backend())
    assert not report.passed and "not done yet" in str(report) and model.requests == []
    report = grade(shop_tools, stub, seed=0, backend=model.backend())
    assert "not done yet" in str(report) and len(report.outcomes) == 1


def test_every_request_is_pinned_to_temperature_0_and_a_seed_and_a_token_cap():
    def hot_agent(backend, question, tools):
        reply = backend.chat(messages=[{"role": "user", "content": question}], temperature=1.5, seed=99, max_tokens=5000)
        return [{"role": "user", "content": question}, assistant_from_reply(reply.choices[0].message)]

    _, model = graded(0, agent=hot_agent)
    assert model.requests and all(r["temperature"] == 0 and r["seed"] == 0 and r["max_tokens"] == 200
                                  for r in model.requests)


# --- Bad input: one clear failure, nothing lost ----------------------------------------------------------


def test_tools_of_the_wrong_kind_or_number_fail_once_before_any_model_call():
    model = dutiful_model(0)
    for tools, said in ((lambda shop: shop_tools(shop)[:2], "three or four tools, not 2"),
                        (lambda shop: [t.spec() for t in shop_tools(shop)], "a list of toolkit tools"),
                        (lambda shop: [shop_tools(shop)[0]] * 3, "share a name")):
        report = grade(tools, run_agent, seed=0, backend=model.backend())
        assert [o.case for o in report.outcomes] == ["shop_tools"] and said in str(report), str(report)
        assert not report.passed and "passed in full" not in str(report)  # the fault is the message
    assert model.requests == []


def test_an_agent_that_raises_is_reported_with_its_line_and_the_other_conversations_are_graded():
    def fragile(backend, question, tools):
        if "order" in question:
            raise KeyError("order_id")
        return run_agent(backend, question, tools)

    report, _ = graded(1, agent=fragile)
    text = failing_cases(report)
    assert "raised KeyError: 'order_id' (line" in text and "of fragile)" in text
    assert len(report.outcomes) == 7 and any(o.passed for o in report.outcomes)


def test_an_agent_that_returns_no_messages_is_told_what_to_return():
    def silent(backend, question, tools):
        run_agent(backend, question, tools)
        return None

    assert "return the conversation's messages, ending with the model's answer" in failing_cases(graded(0, agent=silent)[0])


def test_a_streamed_request_is_refused_with_one_clear_error():
    def streaming(backend, question, tools):
        backend.chat(messages=[{"role": "user", "content": question}], stream=True)

    assert "send the requests without stream=True" in failing_cases(graded(0, agent=streaming)[0])


# --- The shortcuts ---------------------------------------------------------------------------------------------


def test_canned_answers_without_the_model_fail():
    def canned(backend, question, tools):
        return [{"role": "user", "content": question}, {"role": "assistant", "content": "Your order is shipped."}]

    report, model = graded(0, agent=canned)
    assert not report.passed and model.requests == []
    assert failing_cases(report).count("your agent never asked the model") == 7


def test_tools_called_by_the_agent_itself_from_the_question_fail():
    def by_regex(backend, question, tools):
        """Finds the id in the question and runs the tool itself; the model only phrases the answer."""
        messages = [{"role": "user", "content": question}]
        if match := re.search(r"order ([A-Z]\d{4})", question):
            result = tools[0].invoke({"order_id": match.group(1)})
            messages += [{"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_own", "type": "function", "function": {"name": tools[0].name, "arguments": "{}"}}]},
                tool_result("call_own", render_result(result))]
        reply = backend.chat(messages=messages).choices[0].message
        return messages + [assistant_from_reply(reply)]

    text = failing_cases(graded(0, agent=by_regex)[0])
    assert "the model never asked for a call with it" in text and "run the calls the model asks for" in text


def test_tools_that_ignore_their_arguments_and_return_a_constant_fail():
    def constant_tools(shop):
        @tool
        def get_order_status(order_id: str) -> str:
            """Get the status of an order by its id."""
            return "Order A1001 is shipped."

        @tool
        def get_city_weather(city: str) -> str:
            """Get the weather in a city."""
            return "The weather is sunny, 20 degrees."

        @tool
        def count_stock(product: str) -> str:
            """Count the units of a product in stock."""
            return "12 units are in stock."

        return [get_order_status, get_city_weather, count_stock]

    report, _ = graded(0, tools=constant_tools)
    text = failing_cases(report)
    assert "were never asked about" in text and "does not look up the argument it is given" in text
    assert all(o.passed for o in report.outcomes if "no tool can answer" in o.case)  # those need no tool


def test_an_answer_asked_for_without_the_tool_result_fails_even_when_it_is_right():
    def forgetful(backend, question, tools):
        messages = run_agent(backend, question, tools)
        if not any(m["role"] == "tool" for m in messages):
            return messages
        bare = [m for m in messages if m["role"] in ("system", "user")]
        reply = backend.chat(messages=bare).choices[0].message
        return messages[:-1] + [assistant_from_reply(reply)]

    def knows_anyway(conversation):  # the scripted model states the value all the same
        return f"It is {(conversation.values or ('not found',))[0]}."

    text = failing_cases(graded(0, agent=forgetful, unprompted=knows_anyway)[0])
    assert text.count("the model wrote the answer from messages without the tool's result") == 5


def test_an_answer_written_or_changed_by_the_agent_fails():
    def ghost_writer(backend, question, tools):
        messages = run_agent(backend, question, tools)
        results = [m["content"] for m in messages if m["role"] == "tool"]
        return messages[:-1] + [{"role": "assistant", "content": f"Done! {' '.join(results)}"}]

    text = failing_cases(graded(0, agent=ghost_writer)[0])
    assert text.count("the last message is not a reply the model wrote") == 7


def test_a_result_not_fed_back_fails_at_the_result_step():
    def no_results(backend, question, tools):
        """Runs the call the model asks for, then asks for the answer without its result."""
        messages = [{"role": "user", "content": question}]
        specs = [t.spec() for t in tools if t.name == "get_order_status"]
        message = backend.chat(messages=messages, tools=specs, tool_choice="required").choices[0].message
        for call in calls_of(message):
            tools[0].invoke(call.arguments)
        reply = backend.chat(messages=messages, tools=specs, tool_choice="none").choices[0].message
        return messages + [assistant_from_reply(message), assistant_from_reply(reply)]

    text = failing_cases(graded(0, agent=no_results, unprompted=lambda c: "Here it is.")[0])
    assert "answer from the orders" in text and "step 2, the result: no request after the call carried the tool's result back" in text


def grammar_writer(backend, question, tools):
    """Does every step, then has the model "write" an answer composed in code, under a grammar
    that allows that one text and nothing else."""
    messages = run_agent(backend, question, tools)[:-1]
    results = [m["content"] for m in messages if m["role"] == "tool"]
    answer = f"Here is what I found: {' '.join(results)}" if results else "Sorry, I cannot help with that."
    reply = backend.chat(messages=messages, extra_body={"grammar": f"root ::= {json.dumps(answer)}"})
    return messages + [assistant_from_reply(reply.choices[0].message)]


def test_an_answer_forced_by_a_grammar_in_extra_body_fails():
    """A model that never states the value passes nothing on its own; with the grammar it would
    pass everything, so the request is refused."""
    report, model = graded(0, agent=grammar_writer, after_result=lambda result: "I have checked it for you.")
    assert not report.passed and len(report.faults) == 7, str(report)
    assert failing_cases(report).count("raised LabError: The agent sent extra_body (grammar): the capstone "
                                       "grades what the model writes on its own") == 7
    assert not any("extra_body" in request for request in model.requests)  # never reached the model


def test_an_agent_that_catches_the_refusal_still_fails():
    def tries_quietly(backend, question, tools):
        try:
            return grammar_writer(backend, question, tools)
        except LabError:
            return run_agent(backend, question, tools)

    report, _ = graded(0, agent=tries_quietly)
    assert len(report.faults) == 7 and not report.passed
    assert all(o.note.startswith("the agent sent extra_body (grammar)") for o in report.faults)


def test_the_recording_client_refuses_what_tells_the_model_what_to_write_and_sends_nothing():
    model = dutiful_model(0)
    backend, recorder = recording(model.backend())
    question = [{"role": "user", "content": made_up_conversations(0)[1][0].question}]
    schema = {"type": "json_schema", "json_schema": {"name": "answer", "schema": {"const": "It is shipped."}}}
    for request, said in (({"extra_body": {"grammar": 'root ::= "It is shipped."'}}, "extra_body (grammar)"),
                          ({"extra_body": {"top_k": 1}}, "extra_body (top_k)"),
                          ({"response_format": schema}, "a response_format")):
        with pytest.raises(LabError, match=re.escape(f"The agent sent {said}: the capstone grades what the model "
                                                     "writes on its own")):
            backend.chat(messages=question, **request)
    assert model.requests == [] and recorder.exchanges == [] and len(recorder.refused) == 3
    backend.chat(messages=question, response_format={"type": "text"})  # plain text shapes nothing
    assert len(model.requests) == 1


# --- What a model gets wrong, reported step by step --------------------------------------------------------


def test_an_answer_without_the_value_names_the_value_and_quotes_the_model():
    report, _ = graded(0, after_result=lambda result: "I have checked it for you.")
    text = failing_cases(report)
    assert "step 3, the answer: the model wrote 'I have checked it for you.', which does not state the value" in text
    assert "does not say that nothing was found" in text


def test_a_value_made_up_when_nothing_was_found_fails():
    def invent(result):
        return "Nothing was found, but there are probably 12." if NOT_FOUND.search(result) else result

    text = failing_cases(graded(0, after_result=invent)[0])
    assert text.count("nothing was found, but the model wrote") == 2 and "which states '12' as if it were known" in text


def test_a_call_for_a_question_no_tool_can_answer_fails():
    def always_calls(request):
        return fake.calls(fake.call("get_city_weather", {"city": "Paris"}))

    def offers_everything(backend, question, tools):
        """Every tool on offer for every question; then an answer in text, whatever was called."""
        messages = [{"role": "user", "content": question}]
        reply = backend.chat(messages=messages, tools=[t.spec() for t in tools]).choices[0].message
        answer = backend.chat(messages=messages).choices[0].message
        return messages + [assistant_from_reply(reply), assistant_from_reply(answer)]

    text = failing_cases(graded(0, agent=offers_everything, off_topic=always_calls)[0])
    assert "no tool can answer this, but the model called get_city_weather" in text


def test_a_wrong_tool_or_a_wrong_argument_is_named_at_the_call_step():
    def wrong_tool(backend, question, tools):
        messages = [{"role": "user", "content": question}]
        offered = [tools[1]] if "order" in question else tools
        reply = backend.chat(messages=messages, tools=[t.spec() for t in offered], tool_choice="required")
        message = reply.choices[0].message
        messages.append(assistant_from_reply(message))
        for call in calls_of(message):
            try:
                text = render_result(offered[0].invoke(call.arguments))
            except ValueError as error:  # an order id is no city: the weather tool's pattern refuses it
                text = f"Error: {error}"
            messages.append(tool_result(call.id, text))
        answer = backend.chat(messages=messages, tool_choice="none").choices[0].message
        return messages + [assistant_from_reply(answer)]

    text = failing_cases(graded(0, agent=wrong_tool)[0])
    assert "step 1, the call: the model called get_city_weather" in text and "the shop's orders were never asked about" in text


# --- The mark: the model's slips forgiven up to a count, the agent's faults never ----------------------------


def slips_on(kind_of_result):
    """A model that answers one kind of result without its value ("I have checked it")."""
    def after_result(result):
        slipped = NOT_FOUND.search(result) if kind_of_result == "not found" else not NOT_FOUND.search(result)
        return "I have checked it for you." if slipped else f"Here is what I found: {result}"
    return after_result


def test_a_dutiful_grading_passes_with_no_slip_and_says_well_done():
    report, _ = graded(3)
    assert report.passed and report.slips == [] and "well done" in str(report)


def test_slips_of_the_model_up_to_the_allowance_pass_and_the_report_says_so():
    report, _ = graded(0, after_result=slips_on("not found"))
    assert len(report.slips) == 2 <= SLIPS_ALLOWED and report.faults == []
    assert not report.passed  # both "not found" conversations slipped: that kind never passed in full
    assert "No not found conversation passed in full" in str(report)

    answers_slip = 0
    def one_answer_slips(result):
        nonlocal answers_slip
        answers_slip += not NOT_FOUND.search(result)
        return "I have checked it for you." if answers_slip == 1 and not NOT_FOUND.search(result) else result
    report, _ = graded(0, after_result=one_answer_slips)
    assert len(report.slips) == 1 and report.passed
    assert f"The model slipped in 1 (up to {SLIPS_ALLOWED} allowed)" in str(report) and "well done" in str(report)


def test_more_slips_than_allowed_fail_even_with_every_kind_shown():
    def report_with(slips: int) -> MarkedReport:
        report = MarkedReport("a grading", kinds_needed={"answer", "refusal"})
        for kind in ("answer", "refusal"):
            report.ok(f"one {kind}")
            report.kinds_shown.add(kind)
        for index in range(slips):
            report.slip(f"answer {index}", "step 3, the answer: the model wrote 'Done.'")
        return report

    assert report_with(SLIPS_ALLOWED).passed
    assert not report_with(SLIPS_ALLOWED + 1).passed and report_with(SLIPS_ALLOWED + 1).faults == []

    every_answer_slips, _ = graded(0, after_result=slips_on("answer"))
    assert len(every_answer_slips.slips) == 3 and not every_answer_slips.passed
    assert "No answer conversation passed in full" in str(every_answer_slips)


def test_an_agent_that_never_offers_a_tool_fails_on_slips_it_caused():
    def no_tools(backend, question, tools):
        messages = [{"role": "user", "content": question}]
        return messages + [assistant_from_reply(backend.chat(messages=messages).choices[0].message)]

    report, _ = graded(0, agent=no_tools)
    assert len(report.slips) == 5 and not report.passed
    assert "the model called no tool" in failing_cases(report)


@pytest.mark.parametrize("fault, named", [
    ("ghost writer", "the last message is not a reply the model wrote"),
    ("answer without the result", "step 3, the answer: the model wrote the answer from messages without the tool's result"),
    ("no model", "your agent never asked the model")])
def test_one_fault_of_the_agent_fails_the_grading_whatever_passes_around_it(fault, named):
    """Faults are the agent's own: one, in an otherwise perfect grading, fails it."""
    first_question = made_up_conversations(0)[1][0].question

    def faulty_once(backend, question, tools):
        if question == first_question and fault == "no model":
            return [{"role": "user", "content": question}, {"role": "assistant", "content": "It is on its way."}]
        messages = run_agent(backend, question, tools)
        if question != first_question:
            return messages
        if fault == "ghost writer":
            return messages[:-1] + [{"role": "assistant", "content": messages[-1]["content"] + " Anything else?"}]
        without_result = [m for m in messages if m["role"] in ("system", "user")]
        return messages[:-1] + [assistant_from_reply(backend.chat(messages=without_result).choices[0].message)]

    report, _ = graded(0, agent=faulty_once, unprompted=lambda conversation: "It is on its way.")
    assert len(report.failures) == 1 and len(report.faults) == 1 and report.slips == []
    assert named in report.faults[0].note
    assert not report.passed and "well done" not in str(report)


def test_the_sample_shop_is_not_the_grading_shop():
    shop, _ = made_up_conversations(0)
    assert set(shop.orders).isdisjoint(sample_shop().orders) or shop.orders != sample_shop().orders
    assert isinstance(shop, Shop)


# --- On the embedded model --------------------------------------------------------------------------------


@pytest.mark.embedded
def test_on_the_embedded_model_the_reference_makes_no_fault_and_every_slip_names_its_step(embedded):
    """The reference offers no tool for an unrelated question, so no call can come back; it runs
    only the model's calls and asks for the answer with their results, so whatever the model
    gets wrong is a slip, reported at the call or the answer step."""
    report = grade(shop_tools, run_agent, seed=0, backend=embedded)
    assert len(report.outcomes) == 7 and report.faults == []
    assert all(o.passed for o in report.outcomes if o.case.startswith("no tool can answer"))
    assert all(re.match(r"step [13], ", o.note) for o in report.failures), str(report)


@pytest.mark.embedded
def test_a_grading_on_the_embedded_model_repeats_exactly(embedded):
    first = grade(shop_tools, run_agent, seed=1, backend=embedded)
    again = grade(shop_tools, run_agent, seed=1, backend=embedded)
    assert str(first) == str(again)
