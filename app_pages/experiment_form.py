"""The Experiment tab's harder widgets: each turns what the learner picks or types into
experiment settings, and reports anything unusable.

A problem is shown next to its widget at once and also appended to ``problems``, the list the
tab checks before it runs anything: so a typo never starts a run, and the learner sees where
to fix it without pressing Run first.
"""

from __future__ import annotations

import json

import streamlit as st

from toolkit.app.factors import (
    CHOICES,
    COMPARABLE,
    DEFAULT_COMPARE,
    NAMED,
    NUMERIC,
    QUICK,
)
from toolkit.app.inputs import (
    InputProblem,
    parse_numbers,
    parse_schema,
    tools_of,
    with_parameters,
)
from toolkit.bench.suite_model import Suite
from toolkit.bench.trials import KNOBS, Settings, factor_label, show_value


def value_picker(where, factor: str, slot: str, problems: list[str]) -> list:
    """The values to compare for one factor: typed as numbers or picked from a list."""
    label = f"Values of {factor_label(factor)}"
    if factor in NUMERIC:
        text = where.text_input(label, DEFAULT_COMPARE[factor], key=f"{slot}_{factor}",
                                help="Numbers separated by commas.")
        try:
            return parse_numbers(text, factor_label(factor), **NUMERIC[factor])
        except InputProblem as problem:
            where.error(str(problem))
            problems.append(str(problem))
            return []
    if factor in NAMED:
        text = where.text_input(label, DEFAULT_COMPARE[factor], key=f"{slot}_{factor}",
                                help="Model names served at the sidebar's endpoint, separated by commas.")
        names = list(dict.fromkeys(name.strip() for name in text.split(",") if name.strip()))
        if not names:
            problems.append(f"Name at least one value of {factor_label(factor)}.")
            where.error(problems[-1])
        return names
    chosen = where.multiselect(label, CHOICES[factor], DEFAULT_COMPARE[factor],
                               format_func=show_value, key=f"{slot}_{factor}")
    if not chosen:
        problems.append(f"Pick at least one value of {factor_label(factor)}.")
        where.error(problems[-1])
    return chosen


def fixed_settings(varied: set[str]) -> dict:
    """A widget for every setting that is not compared, of the kind its ``Knob`` names, set to
    the setting's default; returns their values."""
    fixed: dict = {}
    columns = st.columns(4)
    widgets = [name for name in COMPARABLE if name not in varied and name not in NAMED]
    defaults = Settings(**QUICK["fixed"])
    for index, name in enumerate(widgets):
        where, knob, default = columns[index % 4], KNOBS[name], getattr(defaults, name)
        if knob.idle_when and fixed.get(knob.idle_when[0], getattr(defaults, knob.idle_when[0])) == knob.idle_when[1]:
            fixed[name] = default  # it does nothing at the other setting's value, so it is not shown
            continue
        # An API's own field name keeps its spelling; a label in words starts with a capital.
        label = knob.label if "_" in knob.label and knob.label == name else knob.label[0].upper() + knob.label[1:]
        key = f"fixed_{name}"
        if knob.widget == "radio":
            fixed[name] = where.radio(label, knob.offered, knob.offered.index(default), key=key,
                                      horizontal=True, format_func=show_value)
        elif knob.widget == "toggle":
            fixed[name] = where.toggle(label, value=default, key=key)
        elif knob.widget == "slider":
            fixed[name] = where.slider(label, knob.low, knob.high, default, knob.step, key=key)
        elif knob.widget == "number":
            fixed[name] = int(where.number_input(label, int(knob.low), None if knob.high is None else int(knob.high),
                                                 default, int(knob.step), key=key))
        else:  # "select"
            fixed[name] = where.selectbox(label, knob.offered, knob.offered.index(default), key=key,
                                          format_func=show_value)
    return fixed


def custom_texts(suite: Suite, problems: list[str]) -> tuple[dict[str, str], Suite]:
    """Custom descriptions (one text area per tool) and an optional custom schema.
    Returns the descriptions and the suite to run (with the custom schema, if any)."""
    tools = tools_of(suite)
    descriptions: dict[str, str] = {}
    with st.expander("Custom descriptions (used where the description is “custom”)"):
        st.caption("Write your own description for each tool the chosen cases offer. Tools "
                   "added as distractors keep their clear description.")
        for name in tools:
            text = st.text_area(name, suite.tools[name].clear, key=f"description_{name}",
                                height=80)
            if text.strip():
                descriptions[name] = text.strip()
    runnable = suite
    with st.expander("Custom JSON schema for one tool (optional)"):
        st.caption("Change what the model is shown for a tool's parameters. The answer key "
                   "stays the same, so renaming or dropping a parameter shows up as failures.")
        tool = st.selectbox("Tool", ["(none)", *tools], key="schema_tool")
        if tool != "(none)":
            text = st.text_area("Parameters schema (JSON)",
                                json.dumps(suite.tools[tool].parameters, indent=2,
                                           ensure_ascii=False),
                                key=f"schema_{tool}", height=260)
            try:
                runnable = with_parameters(suite, tool, parse_schema(text, tool))
            except InputProblem as problem:
                st.error(str(problem))
                problems.append(str(problem))
    return descriptions, runnable
