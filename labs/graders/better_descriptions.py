"""Grader for labs/10_better_descriptions.py: descriptions that help a model pick the right tool.

Two parts. First, checks that need no model: a description for each tool, long enough to say
what the tool does and when to use it. Then a small experiment on the configured backend (the
embedded model unless LAB_BASE_URL is set): the same cases with the suite's vague descriptions
and with yours, in one run, ``tool_choice="required"`` so that every reply is a choice among
the tools. Your descriptions must not do measurably worse than the vague ones: the 95% Wilson
interval of your selection rate must reach the vague baseline's interval. That is all a model
that ignores descriptions (the embedded one) can show at n = 5; on any other endpoint your rate
must also be at least 80%.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from labs.grading import Hints, Report, attempt

TOOLS = ("calculate", "square_root", "convert_currency")
CASES = ("multiple-en-square-root-256", "multiple-en-multiply", "multiple-zh-square-root-144",
         "multiple-zh-subtract", "enum-en-divide")
MIN_WORDS, MAX_CHARS = 8, 1024
STRONG_TARGET = 0.8
WHEN_WORDS = re.compile(r"\b(use|when|for|if)\b|用于|当|时", re.IGNORECASE)


class MeasuredReport(Report):
    """A report that also shows what was measured, pass or fail."""

    measurements: list[str]

    def __init__(self, lab: str):
        super().__init__(lab)
        self.measurements = []

    def __str__(self) -> str:
        text = super().__str__()
        return text + ("\n" + "\n".join(self.measurements) if self.measurements else "")


def _rate_text(row) -> str:
    return (f"{int(row['selection_successes'])}/{int(row['n'])} = {row['selection_rate']:.0%} "
            f"[95% Wilson {row['selection_low']:.0%}, {row['selection_high']:.0%}]")


def check_texts(report: Report, descriptions, vague: dict[str, str]) -> bool:
    """The checks that need no model. True when all pass."""
    if not isinstance(descriptions, dict):
        report.fail("a dict of descriptions", f"return a dict of tool name -> description, "
                    f"got {type(descriptions).__name__}", "dict", type(descriptions).__name__)
        return False
    ok = True
    for name in TOOLS:
        text = descriptions.get(name)
        case = f"description of {name}"
        if not isinstance(text, str) or not text.strip():
            report.fail(case, "missing or empty: every tool needs one", "a non-empty str", text)
            ok = False
        elif len(text.split()) < MIN_WORDS:
            report.fail(case, f"only {len(text.split())} word(s): say what the tool does, when to "
                        f"use it and what its arguments look like (at least {MIN_WORDS} words)",
                        f">= {MIN_WORDS} words", text)
            ok = False
        elif len(text) > MAX_CHARS:
            report.fail(case, f"{len(text)} characters: keep it under {MAX_CHARS} (it is sent, "
                        "and paid for, with every request)", f"<= {MAX_CHARS} characters", len(text))
            ok = False
        elif text.strip() == vague[name]:
            report.fail(case, "this is the vague description itself", "your own text", text)
            ok = False
        elif not WHEN_WORDS.search(text):
            report.fail(case, "say when to use the tool (e.g. \"Use it when the user asks ...\")",
                        "a sentence about when to use it", text)
            ok = False
        else:
            report.ok(case)
    extra = sorted(set(descriptions) - set(TOOLS))
    if extra:
        report.fail("only these three tools", f"unknown tool name(s) {extra}; describe {list(TOOLS)}",
                    list(TOOLS), sorted(descriptions))
        ok = False
    return ok


def grade(describe_tools, backend=None, store_path: str | Path | None = None) -> MeasuredReport:
    """Grade the descriptions; ``backend`` defaults to ``toolkit.client.connect()``."""
    from toolkit.experiment import Settings, Store, plan, rates, run_experiment
    from toolkit.suite import load_suite

    report = MeasuredReport("Lab 10b - better tool descriptions")
    done, descriptions = attempt(report, "descriptions", describe_tools)
    if not done:
        return report
    suite = load_suite()
    vague = {name: suite.tools[name].vague for name in TOOLS}
    if not check_texts(report, descriptions, vague):
        report.measurements.append("(no experiment yet: fix the descriptions above first)")
        return report

    if backend is None:
        from toolkit.client import connect

        backend = connect()
    base = Settings(tool_choice="required", parallel_tool_calls=False, temperature=0.0, max_tokens=48)
    trials = plan(suite, base, "description", ["vague", dict(descriptions)], cases=list(CASES))
    store = Store(store_path or Path(tempfile.mkdtemp()) / "lab10.sqlite")
    try:
        run_id = run_experiment(trials, backend, store, name="lab 10: better descriptions")
        results = store.trials(run_id)
        run = store.run(run_id)
    finally:
        store.close()
    if run["status"] != "finished" or len(results) != len(trials):
        report.fail("the experiment ran", f"the run ended {run['status']!r} after {len(results)} of "
                    f"{len(trials)} trials: {run['error'] or 'no error recorded'}")
        return report
    table = rates(results, "description").set_index("description")
    mine, baseline = table.loc["custom"], table.loc["vague"]
    # Not measurably worse: your interval must reach the baseline's. At n = 5 only a large gap
    # is beyond noise, which is all a model that ignores descriptions can show.
    reaches_baseline = mine["selection_high"] >= baseline["selection_low"]
    strong_enough = backend.embedded or mine["selection_rate"] >= STRONG_TARGET
    target = (f"your 95% interval must reach the vague baseline's (from {baseline['selection_low']:.0%})"
              + ("" if backend.embedded else f", and your rate must be at least {STRONG_TARGET:.0%}"))
    report.measurements += [
        f"measured on {backend.label}, {len(trials)} trials, tool_choice=required, one call per reply, temperature 0:",
        f"  your descriptions: right tool {_rate_text(mine)}",
        f"  vague baseline:    right tool {_rate_text(baseline)}",
        f"  target:            {target}",
    ]
    if backend.embedded:
        report.measurements.append(
            "  (a 135M model picks the same whatever the descriptions say: at this n the two rates "
            "differ mostly by luck; point LAB_BASE_URL at a stronger model to see descriptions matter)")
    if reaches_baseline and strong_enough:
        report.ok("selection rate reaches the target")
    else:
        report.fail("selection rate reaches the target",
                    "the model picked the right tool less often with your descriptions; make the "
                    "'when to use it' part sharper, and say how the tools differ",
                    target, f"{mine['selection_rate']:.0%} {_rate_text(mine)}")
    return report


hints = Hints([
    "Each description should answer three questions: what does the tool do, when should it be "
    "used (and when not), and what do its arguments look like. The seed's example: not 'takes "
    "one number and returns a result' but 'computes the square root of a non-negative number; "
    "use it when the user asks for a square root'.",
    "The three tools overlap: calculate does arithmetic on two numbers, square_root takes one, "
    "convert_currency works with money. Say in each description which questions belong to the "
    "*other* tools ('not for square roots'), and mention words users actually type, in English "
    "and Chinese (plus, times, 平方根, 换成).",
    "For example: calculate -> 'Apply one arithmetic operation (add, subtract, multiply or "
    "divide) to two numbers a and b. Use it for questions such as \"what is 12 times 7\" or "
    "\"15减去8\"; not for square roots or currency.' Write square_root and convert_currency the "
    "same way.",
])
