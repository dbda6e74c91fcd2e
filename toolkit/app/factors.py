"""The settings an experiment can compare, as the app offers them.

``toolkit.bench.trials`` defines what each setting does to a request; this module only says which
of them the page offers, which values its widgets propose, and how those values read on screen.
"""

from __future__ import annotations

from typing import Any

from toolkit.engine import EMBEDDED_MODELS

COMPARABLE = ("description", "names", "enums", "temperature", "tool_choice", "distractors", "protocol",
              "parallel_tool_calls", "system_prompt", "model")
CHOICES: dict[str, tuple] = {
    "description": ("clear", "vague", "custom"),
    "names": ("real", "hidden"),
    "enums": (True, False),
    "tool_choice": ("auto", "none", "required", "expected"),
    "protocol": ("native", "string"),
    "parallel_tool_calls": (None, True, False),
    "system_prompt": (False, True),
}
"""The values offered for each setting picked from a list."""

NUMERIC = {"temperature": dict(low=0.0, high=2.0, whole=False),
           "distractors": dict(low=0, high=16, whole=True)}
"""Settings typed as numbers instead, with the range ``inputs.parse_numbers`` accepts."""

NAMED = {"model"}
"""Settings typed as names separated by commas: models served at the sidebar's endpoint. Not
fixed on the page when left out of the comparison: the sidebar's model is asked then."""

QUICK = {"categories": ["simple", "multiple"], "languages": ["en"], "cases": 6,
         "factor": "description", "values": ["clear", "vague"], "fixed": {}}
"""The experiment the page is set up for when it opens: 12 trials, under a minute on the
embedded model. Everything else is left as OpenAI's API leaves it (``tool_choice`` "auto",
parallel calls at the endpoint's default): the embedded engine decides between a call and
text itself and stops after the calls it finds worth making, so the defaults show what a
client that sets nothing gets."""

def quick_plan(suite):
    """The trials of :data:`QUICK`, planned as the Run button plans them on an untouched page."""
    from toolkit.bench.trials import Settings, pick_cases, plan

    chosen = suite.filter(QUICK["categories"], QUICK["languages"])
    return plan(suite, Settings(**QUICK["fixed"]), QUICK["factor"], QUICK["values"],
                cases=pick_cases(chosen, min(QUICK["cases"], len(chosen))))


DEFAULT_COMPARE = {"description": QUICK["values"], "names": ["real", "hidden"], "enums": [True, False],
                   "temperature": "0, 1.0", "tool_choice": ["auto", "required"],
                   "distractors": "0, 4", "protocol": ["native", "string"],
                   "parallel_tool_calls": [None, False], "system_prompt": [False, True],
                   "model": ", ".join(EMBEDDED_MODELS)}
"""The values proposed when a setting is picked as the factor to compare: text for the
numeric settings (a text box), a list for the others (a multiselect)."""


def show_value(value: Any) -> str:
    """A setting's value as a widget shows it."""
    if value is True:
        return "on"
    if value is False:
        return "off"
    if value is None:
        return "endpoint default"
    return str(value)
