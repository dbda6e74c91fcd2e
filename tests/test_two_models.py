"""Three models behind the embedded endpoint: the base SmolLM2 and its two tool-tuned adapters.

A request picks one by ``model``, as with any hosted API; a name the endpoint does not serve
is a 404, not a silent fallback. Asserts on structure only, never on the words chosen.
"""

import json

import openai
import pytest

from toolkit.engine import (
    BASE_MODEL,
    EMBEDDED_MODELS,
    SECOND_TUNED_MODEL,
    TUNED_MODEL,
    Engine,
    ModelNotFound,
    embedded_models,
)
from toolkit.engine.model import ADAPTER, SECOND_ADAPTER, TUNED_MODELS, with_adapter

pytestmark = pytest.mark.embedded

LOOKUP = {"type": "function", "function": {
    "name": "fn_1", "description": "Look up the opening hours of a museum",
    "parameters": {"type": "object", "properties": {"museum": {"type": "string"}}, "required": ["museum"]}}}
ASK = [{"role": "user", "content": "When does the Louvre open?"}]


def test_the_adapters_ship_with_the_lab_and_are_small():
    for adapter in (ADAPTER, SECOND_ADAPTER):
        assert adapter.is_file(), "the tool-tuned adapters must be committed beside the engine"
        assert adapter.stat().st_size < 10_000_000
    assert list(embedded_models()) == list(EMBEDDED_MODELS) == [BASE_MODEL, TUNED_MODEL, SECOND_TUNED_MODEL]


def test_each_tuned_model_has_its_own_thresholds():
    # the second adapter's likelihoods sit on another scale: its thresholds were fitted apart
    first, second = TUNED_MODELS
    assert first.thresholds != second.thresholds


def test_a_tuned_model_whose_adapter_file_is_missing_is_not_served(tmp_path):
    assert list(embedded_models(with_adapter(TUNED_MODEL, tmp_path / "missing.gguf"))) == [BASE_MODEL, SECOND_TUNED_MODEL]
    assert list(embedded_models(())) == [BASE_MODEL]


def test_with_adapter_swaps_one_models_file_and_keeps_or_replaces_its_thresholds(tmp_path):
    from toolkit.engine.decide import Thresholds

    candidate = tmp_path / "candidate.gguf"
    kept = {model.name: model for model in with_adapter(SECOND_TUNED_MODEL, candidate)}
    assert kept[SECOND_TUNED_MODEL].adapter == str(candidate)
    assert kept[SECOND_TUNED_MODEL].thresholds == TUNED_MODELS[1].thresholds
    assert kept[TUNED_MODEL] == TUNED_MODELS[0]
    mine = Thresholds(call=-3.0, another_call=-1.0, after_results=-2.0)
    assert with_adapter(TUNED_MODEL, candidate, mine)[0].thresholds == mine
    with pytest.raises(ValueError, match="not a tuned model"):
        with_adapter(BASE_MODEL, candidate)


def test_models_lists_all_three_and_each_request_gets_the_model_it_names(embedded):
    assert [m.id for m in embedded.client.models.list().data] == [BASE_MODEL, TUNED_MODEL, SECOND_TUNED_MODEL]
    for name in EMBEDDED_MODELS:
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
    assert all(name in error["message"] for name in EMBEDDED_MODELS)
    # ...and the endpoint goes on serving
    assert embedded.client.chat.completions.create(model=BASE_MODEL, messages=ASK, max_tokens=3).choices


def test_the_engine_refuses_an_unknown_default_model():
    with pytest.raises(ModelNotFound, match="no embedded model is called"):
        Engine(model="SmolLM2-1.7B")


def test_connect_refuses_an_embedded_model_it_does_not_serve():
    from toolkit.client import connect
    from toolkit.lab_error import LabError

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
