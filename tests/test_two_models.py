"""Two models behind the embedded endpoint: the base SmolLM2 and its tool-tuned adapter.

A request picks one by ``model``, as with any hosted API; a name the endpoint does not serve
is a 404, not a silent fallback. Asserts on structure only, never on the words chosen.
"""

import json

import openai
import pytest

from toolkit.engine import BASE_MODEL, TUNED_MODEL, Engine, ModelNotFound, embedded_models
from toolkit.engine.model import ADAPTER

pytestmark = pytest.mark.embedded

LOOKUP = {"type": "function", "function": {
    "name": "fn_1", "description": "Look up the opening hours of a museum",
    "parameters": {"type": "object", "properties": {"museum": {"type": "string"}}, "required": ["museum"]}}}
ASK = [{"role": "user", "content": "When does the Louvre open?"}]


def test_the_adapter_ships_with_the_lab_and_is_small():
    assert ADAPTER.is_file(), "the tool-tuned adapter must be committed beside the engine"
    assert ADAPTER.stat().st_size < 10_000_000
    assert list(embedded_models()) == [BASE_MODEL, TUNED_MODEL]


def test_without_its_adapter_file_only_the_base_model_is_served(tmp_path):
    assert list(embedded_models(tmp_path / "missing.gguf")) == [BASE_MODEL]
    assert list(embedded_models(None)) == [BASE_MODEL]


def test_models_lists_both_and_each_request_gets_the_model_it_names(embedded):
    assert [m.id for m in embedded.client.models.list().data] == [BASE_MODEL, TUNED_MODEL]
    for name in (BASE_MODEL, TUNED_MODEL):
        reply = embedded.client.chat.completions.create(
            model=name, messages=ASK, tools=[LOOKUP], tool_choice="required", max_tokens=40, temperature=0, seed=0)
        assert reply.model == name
        call = reply.choices[0].message.tool_calls[0]
        assert call.function.name == "fn_1"
        assert isinstance(json.loads(call.function.arguments)["museum"], str)


def test_the_tuned_model_streams_the_same_reply_it_gives_whole(embedded):
    body = dict(model=TUNED_MODEL, messages=ASK, tools=[LOOKUP], max_tokens=40, temperature=0, seed=0)
    whole = embedded.client.chat.completions.create(**body).choices[0]
    pieces = list(embedded.client.chat.completions.create(**body, stream=True))
    assert {p.model for p in pieces} == {TUNED_MODEL}
    text = "".join(p.choices[0].delta.content or "" for p in pieces if p.choices)
    arguments = "".join(call.function.arguments or "" for p in pieces if p.choices
                        for call in (p.choices[0].delta.tool_calls or []))
    assert text == (whole.message.content or "")
    assert arguments == "".join(c.function.arguments for c in whole.message.tool_calls or [])


def test_an_unknown_model_is_a_404_that_names_the_served_ones(embedded):
    with pytest.raises(openai.NotFoundError) as caught:
        embedded.client.chat.completions.create(model="gpt-4o", messages=ASK, max_tokens=5)
    error = caught.value.body
    assert error["code"] == "model_not_found" and error["param"] == "model"
    assert BASE_MODEL in error["message"] and TUNED_MODEL in error["message"]
    # ...and the endpoint goes on serving
    assert embedded.client.chat.completions.create(model=BASE_MODEL, messages=ASK, max_tokens=3).choices


def test_the_engine_refuses_an_unknown_default_model():
    with pytest.raises(ModelNotFound, match="no embedded model is called"):
        Engine(model="SmolLM2-1.7B")


def test_connect_refuses_an_embedded_model_it_does_not_serve():
    from toolkit.client import LabError, connect

    with pytest.raises(LabError, match="serves .* not 'tiny'"):
        connect(model="tiny")


def test_model_is_a_setting_an_experiment_can_compare(embedded, tmp_path):
    from toolkit.bench.experiment import run_experiment
    from toolkit.bench.store import Store
    from toolkit.bench.suite import load_suite
    from toolkit.bench.trials import Settings, pick_cases, plan

    suite = load_suite().filter(["simple"], ["en"])
    trials = plan(suite, Settings(tool_choice="required"), "model", [BASE_MODEL, TUNED_MODEL],
                  cases=pick_cases(suite, 1))
    with Store(tmp_path / "runs.db") as store:
        run_id = run_experiment(trials, embedded, store)
        rows = store.trials(run_id, full=True)
    sent = [json.loads(row["request"])["model"] for row in rows.to_dict("records")]
    assert sorted(sent) == [BASE_MODEL, TUNED_MODEL]
    assert sorted(json.loads(row["reply"])["model"] for row in rows.to_dict("records")) == [BASE_MODEL, TUNED_MODEL]
