"""Each experiment setting is declared once, with its ``Knob``; the app's lists, the form's
widgets and the charts' labels are read from there. These tests fail when a setting is missing
from any of them, or when what a knob proposes is not a value its setting accepts."""
import pytest
from pydantic import ValidationError
from streamlit.testing.v1 import AppTest

from toolkit.app.factors import CHOICES, COMPARABLE, DEFAULT_COMPARE, NAMED, NUMERIC
from toolkit.app.inputs import parse_numbers
from toolkit.bench.trials import FACTOR_LABELS, KNOBS, Knob, Settings, factor_label, with_setting
from toolkit.engine import EMBEDDED_MODELS


def test_every_setting_declares_a_knob():
    assert list(KNOBS) == list(Settings.model_fields)
    assert all(isinstance(knob, Knob) for knob in KNOBS.values())


@pytest.mark.parametrize("name", list(KNOBS))
def test_each_setting_is_in_every_list_the_app_and_the_charts_use(name):
    knob = KNOBS[name]
    assert factor_label(name) == FACTOR_LABELS[name] == knob.label
    if not knob.comparable:
        assert name not in COMPARABLE and name not in DEFAULT_COMPARE
        return
    assert name in COMPARABLE and name in DEFAULT_COMPARE
    # exactly one way of entering its values
    assert [name in CHOICES, name in NUMERIC, name in NAMED].count(True) == 1, name


@pytest.mark.parametrize("name", COMPARABLE)
def test_what_a_knob_offers_and_proposes_is_accepted_by_its_setting(name):
    knob, base = KNOBS[name], Settings()
    if name in NUMERIC:
        values = parse_numbers(knob.compare, name, **NUMERIC[name])
    elif name in NAMED:
        values = [part.strip() for part in knob.compare.split(",")]
        assert set(values) <= set(EMBEDDED_MODELS)
    else:
        values = list(knob.compare)
        assert set(values) <= set(knob.offered)
        values += list(knob.offered)
    for value in values:
        value = {"get_weather": "Weather now."} if value == "custom" else value
        assert getattr(with_setting(base, name, value), name) == value


@pytest.mark.parametrize("name", [name for name, knob in KNOBS.items() if knob.numeric])
def test_a_numeric_setting_refuses_values_outside_its_declared_range(name):
    knob = KNOBS[name]
    with pytest.raises(ValidationError, match="at least"):
        Settings(**{name: knob.low - 1})
    if knob.high is not None:
        with pytest.raises(ValidationError, match="at most"):
            Settings(**{name: knob.high + 1})
        with pytest.raises(ValueError, match=f"{name}.*not a valid setting"):
            with_setting(Settings(), name, knob.high + 1)


def _form():
    import streamlit as st

    from app_pages.experiment_form import fixed_settings

    st.session_state["fixed_open"] = True  # the expander that draws the widgets, opened
    st.session_state["fixed"] = fixed_settings(set())[0]


def test_the_form_shows_one_widget_per_fixed_setting_set_to_its_default():
    app = AppTest.from_function(_form).run(timeout=30)
    assert not app.exception
    fixed = app.session_state["fixed"]
    assert list(fixed) == [name for name in COMPARABLE if name not in NAMED]
    defaults = Settings()
    assert fixed == {name: getattr(defaults, name) for name in fixed}
    # the widget kinds the knobs name
    assert {w.key for w in app.slider} == {f"fixed_{n}" for n, k in KNOBS.items() if k.widget == "slider"}
    assert {w.key for w in app.toggle} == {f"fixed_{n}" for n, k in KNOBS.items() if k.widget == "toggle"}
    idle = {f"fixed_{n}" for n, k in KNOBS.items() if k.idle_when and getattr(defaults, k.idle_when[0]) == k.idle_when[1]}
    assert idle == {"fixed_top_k"}  # top_k does nothing while retrieval is off, its default
    # and, beside the settings, what every run is told: repeats, seed, max_tokens
    numbers = {f"fixed_{n}" for n, k in KNOBS.items() if k.widget == "number"} - idle
    assert {w.key for w in app.number_input} == numbers | {"repeats", "seed", "max_tokens"}
    assert {w.key for w in app.radio} == {f"fixed_{n}" for n, k in KNOBS.items() if k.widget == "radio"}
    assert {w.key for w in app.selectbox} == {f"fixed_{n}" for n, k in KNOBS.items() if k.widget == "select"}


def test_the_form_returns_what_the_learner_changed():
    app = AppTest.from_function(_form).run(timeout=30)
    app.slider(key="fixed_temperature").set_value(0.7)
    app.toggle(key="fixed_enums").set_value(False)
    app.selectbox(key="fixed_tool_choice").set_value("required")
    app.run(timeout=30)
    fixed = app.session_state["fixed"]
    assert (fixed["temperature"], fixed["enums"], fixed["tool_choice"]) == (0.7, False, "required")
    Settings(**fixed)  # and they make valid settings
