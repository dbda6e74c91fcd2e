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


def fixed_settings(varied: set[str]) -> tuple[dict, int, int, int]:
    """Every setting that is not compared, at the value the learner left it (the default at
    first), and the repeats, seed and max_tokens: ``(fixed, repeats, seed, max_tokens)``.

    Their widgets sit in an expander drawn only while open, each of the kind its ``Knob``
    names; closed, one line says what is held fixed. The values live in plain session state,
    so they hold while the expander is closed and come back when it opens."""
    kept: dict = st.session_state.setdefault("held_fixed", {})
    defaults = Settings(**QUICK["fixed"])
    box = st.expander("Change what is held fixed", key="fixed_open", on_change="rerun")
    if box.open:
        with box:
            fixed_widgets(varied, kept, defaults)
    fixed: dict = {}
    for name in COMPARABLE:
        if name in varied or name in NAMED:
            continue
        knob = KNOBS[name]
        idle_on = knob.idle_when and fixed.get(knob.idle_when[0], getattr(defaults, knob.idle_when[0]))
        if knob.idle_when and idle_on == knob.idle_when[1]:
            fixed[name] = getattr(defaults, name)  # it does nothing at the other setting's value
        else:
            fixed[name] = kept.get(name, getattr(defaults, name))
    repeats, seed, max_tokens = (kept.get(name, default) for name, default in RUN_DEFAULTS.items())
    if not box.open:
        st.caption("Held fixed: " + ", ".join(f"{factor_label(name)} {show_value(value)}" for name, value in fixed.items()
                                              if not isinstance(value, dict))
                   + f"; {repeats} repeat(s), seed {seed}, max_tokens {max_tokens}.")
    return fixed, repeats, seed, max_tokens


RUN_DEFAULTS = {"repeats": 1, "seed": 0, "max_tokens": 96}
"""What every run is told besides its settings, at the page's defaults."""


def fixed_widgets(varied: set[str], kept: dict, defaults: Settings) -> None:
    """A widget for every setting that is not compared, and for repeats, seed and max_tokens;
    what each says goes into ``kept``."""
    columns = st.columns(4)
    widgets = [name for name in COMPARABLE if name not in varied and name not in NAMED]
    for index, name in enumerate(widgets):
        where, knob = columns[index % 4], KNOBS[name]
        default = kept.get(name, getattr(defaults, name))
        if knob.idle_when and kept.get(knob.idle_when[0], getattr(defaults, knob.idle_when[0])) == knob.idle_when[1]:
            continue  # it does nothing at the other setting's value, so it is not shown
        # An API's own field name keeps its spelling; a label in words starts with a capital.
        label = knob.label if "_" in knob.label and knob.label == name else knob.label[0].upper() + knob.label[1:]
        key = f"fixed_{name}"
        if knob.widget == "radio":
            kept[name] = where.radio(label, knob.offered, knob.offered.index(default), key=key,
                                     horizontal=True, format_func=show_value)
        elif knob.widget == "toggle":
            kept[name] = where.toggle(label, value=default, key=key)
        elif knob.widget == "slider":
            kept[name] = where.slider(label, knob.low, knob.high, default, knob.step, key=key)
        elif knob.widget == "number":
            kept[name] = int(where.number_input(label, int(knob.low), None if knob.high is None else int(knob.high),
                                                default, int(knob.step), key=key))
        else:  # "select"
            kept[name] = where.selectbox(label, knob.offered, knob.offered.index(default), key=key,
                                         format_func=show_value)
    left, middle, right = st.columns(3)
    kept["repeats"] = int(left.number_input("Repeats", 1, 20, kept.get("repeats", 1), key="repeats",
                                            help="Each case runs this many times per setting."))
    kept["seed"] = int(middle.number_input("Seed", 0, 10**6, kept.get("seed", 0), key="seed",
                                           help="Seeds the sampling, the distractor choice and the "
                                                "order of tools. Change it to draw fresh samples."))
    kept["max_tokens"] = int(right.number_input("max_tokens", 16, 1024, kept.get("max_tokens", 96), key="max_tokens"))


def custom_texts(suite: Suite, problems: list[str]) -> tuple[dict[str, str], Suite]:
    """Custom descriptions (one text area per tool) and an optional custom schema.
    Returns the descriptions and the suite to run (with the custom schema, if any).

    Both sit in expanders that draw their widgets only while open (``on_change="rerun"``): a
    closed one costs the page nothing. What the learner wrote is kept in plain session state,
    so it still applies, and comes back, when the expander is closed and opened again."""
    tools = tools_of(suite)
    written: dict[str, str] = st.session_state.setdefault("custom_descriptions", {})
    box = st.expander("Custom descriptions (used where the description is “custom”)",
                      key="descriptions_open", on_change="rerun")
    if box.open:
        with box:
            st.caption("Write your own description for each tool the chosen cases offer. Tools "
                       "added as distractors keep their clear description.")
            for name in tools:
                written[name] = st.text_area(name, written.get(name, suite.tools[name].clear),
                                             key=f"description_{name}", height=80)
    descriptions = {name: text.strip() for name in tools
                    if (text := written.get(name, suite.tools[name].clear)).strip()}

    schema: dict[str, str] = st.session_state.setdefault("custom_schema", {"tool": "(none)"})
    box = st.expander("Custom JSON schema for one tool (optional)", key="schema_open", on_change="rerun")
    if box.open:
        with box:
            st.caption("Change what the model is shown for a tool's parameters. The answer key "
                       "stays the same, so renaming or dropping a parameter shows up as failures.")
            choices = ["(none)", *tools]
            schema["tool"] = st.selectbox("Tool", choices, choices.index(schema["tool"]) if schema["tool"] in choices
                                          else 0, key="schema_tool")
            if schema["tool"] != "(none)":
                tool = schema["tool"]
                schema[tool] = st.text_area("Parameters schema (JSON)",
                                            schema.get(tool, json.dumps(suite.tools[tool].parameters, indent=2,
                                                                        ensure_ascii=False)),
                                            key=f"schema_{tool}", height=260)
    tool = schema["tool"]
    if tool == "(none)" or tool not in tools:
        return descriptions, suite
    try:
        return descriptions, with_parameters(suite, tool, parse_schema(schema[tool], tool))
    except InputProblem as problem:
        st.error(str(problem))  # under the expander when it is closed, inside it when open
        problems.append(str(problem))
        return descriptions, suite
