"""The settings an experiment can compare, as the app offers them.

``toolkit.bench.trials`` defines what each setting does to a request and declares, beside each
field, how it is shown (its ``Knob``); this module reads those declarations into the lists the
page uses, and says how values read on screen.
"""

from __future__ import annotations


from toolkit.bench.trials import KNOBS, Settings, pick_cases, plan

# Read from the settings' own declarations (``toolkit.bench.trials.KNOBS``): a setting added
# there appears in every list below, on the page and on the charts, with nothing to add here.
COMPARABLE = tuple(name for name, knob in KNOBS.items() if knob.comparable)
CHOICES: dict[str, tuple] = {name: knob.offered for name, knob in KNOBS.items() if knob.offered}
"""The values offered for each setting picked from a list."""

NUMERIC = {name: dict(low=knob.low, high=knob.high, whole=knob.widget == "number")
           for name, knob in KNOBS.items() if knob.numeric}
"""Settings typed as numbers instead, with the range ``inputs.parse_numbers`` accepts."""

NAMED = {name for name, knob in KNOBS.items() if knob.widget == "names"}
"""Settings typed as names separated by commas: models served at the sidebar's endpoint. Not
fixed on the page when left out of the comparison: the sidebar's model is asked then."""

QUICK = {"categories": ["simple", "multiple"], "languages": ["en"], "cases": 8,
         "factor": "protocol", "values": ["native", "string"], "fixed": {}}
"""The experiment the page is set up for when it opens: 16 trials, under a minute on the
embedded model, on a setting whose effect on that model is large enough for eight cases to
show it (``python -m toolkit.bench.experiment --factor protocol --values native string
--categories simple multiple --cases 12``: right tool 11/12 native, 0/12 string). Everything
else is left as OpenAI's API leaves it (``tool_choice`` "auto", parallel calls at the
endpoint's default), so the defaults show what a client that sets nothing gets. It stays on
protocol because none of descriptions, enums, temperature and tool_choice is real in a plan that
runs in a minute on two cores (``benchmarks/opening_plan.py``: within 60 s the clearest is
temperature on 12 cases, arguments p 0.062; temperature and tool_choice become real on 24 cases,
p 0.012 and 0.016 on the arguments, which take 105 and 110 s of model time)."""

LOOK_FOR = ("Look at the gap between the two bars: with `tools` in the request the endpoint's chat "
            "template and grammar hold the call's format, while the string protocol leaves the format "
            "to the prompt alone, and the embedded 135M model then mostly answers from memory instead of "
            "writing a `<tool>` call.")
"""What the opening experiment shows, in one sentence, shown under the factor while it is the one picked."""

ALSO_TRY: dict[str, tuple[str, list]] = {
    "description": ("Compare clear and vague descriptions instead", ["clear", "vague"]),
    "protocol": ("Compare native tool calls with the string protocol", ["native", "string"]),
}
"""One click away from the opening experiment: the button's words and the values it sets."""
ALSO_TRY = {factor: button for factor, button in ALSO_TRY.items() if factor != QUICK["factor"]}

ALSO_TRY_NOTE = {
    "description": "The same tools with a sentence on what each does and when to use it, or a word or two.",
    "protocol": "Tools sent in the request's `tools` field, or described in the prompt as `<tool>` text to write.",
}
"""What each button compares, where the effects table has not measured the model asked."""


def quick_plan(suite):
    """The trials of :data:`QUICK`, planned as the Run button plans them on an untouched page."""
    chosen = suite.filter(QUICK["categories"], QUICK["languages"])
    return plan(suite, Settings(**QUICK["fixed"]), QUICK["factor"], QUICK["values"],
                cases=pick_cases(chosen, min(QUICK["cases"], len(chosen))))


DEFAULT_COMPARE = {name: KNOBS[name].compare for name in COMPARABLE}
"""The values proposed when a setting is picked as the factor to compare: text for the
numeric and named settings (a text box), a list for the others (a multiselect)."""


