"""Grader for labs/10_better_descriptions.py: descriptions that help a model pick the right tool.

Two parts. First, checks that need no model, and that grade the lab on the embedded model: each
description says what its tool does (in the words of its job), when to use it (a "use it when"
clause, not any sentence with "for" in it), never tells the model not to use the tool for its
own job ("never use this to add numbers"), names every parameter the tool takes in backticks or
quotes (so the article "a" is not the parameter ``a``), and says how the tool differs from the
other two (their job, or their name). Then a small experiment on the
configured backend (the embedded model unless LAB_BASE_URL is set): the same cases with the
suite's vague descriptions and with yours, in one run, ``tool_choice="required"`` so that every
reply is a choice among the tools.

On the embedded model the experiment is shown but not graded: SmolLM2-135M picks the same tool
whatever the descriptions say (clear and vague descriptions score the same on the whole suite),
so no comparison on it could tell a good description from a bad one. On any other endpoint it is
graded against the baseline: your rate must be at least 80% and must beat the vague baseline's,
unless both are at 100%; a description that changes nothing fails.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from labs.grading import Hints, Report, attempt

TOOL_NAMES = ("calculate", "square_root", "convert_currency")
CASES = ("multiple-en-square-root-256", "multiple-en-multiply", "multiple-zh-square-root-144",
         "multiple-zh-subtract", "enum-en-divide")
MIN_WORDS, MAX_CHARS = 8, 1024
STRONG_TARGET = 0.8
# "Use it when the user asks ...", "use this tool for ...", "whenever ...", "if the user ...",
# "用于...", "当...时": a clause about *when*, not just any "for" or "if".
WHEN_TO_USE = re.compile(
    r"\buse\s+(?:it|this(?:\s+tool)?|me)?\s*(?:only\s+)?(?:when|whenever|for|if|to)\b"
    r"|\b(?:when|whenever|if)\s+(?:the\s+)?(?:user|question|someone|you)\b|用于|适用于|当.{0,30}时",
    re.IGNORECASE | re.DOTALL)
# The words of each tool's job: a description says what its tool does in them, and says how it
# differs from the others by naming another tool or another tool's job.
JOB = {
    "calculate": re.compile(r"arithmetic|\b(?:add|subtract|multipl|divi|plus|minus|times|sum|product)"
                            r"|加|减|乘|除", re.IGNORECASE),
    "square_root": re.compile(r"square[\s_-]*roots?|\bsqrt|平方根|开方", re.IGNORECASE),
    "convert_currency": re.compile(r"currenc|exchange|\bmoney|汇率|货币|换成|兑换", re.IGNORECASE),
}
JOB_EXAMPLE = {"calculate": "add, subtract, multiply or divide", "square_root": "square root",
               "convert_currency": "convert money between currencies"}
# A description is read clause by clause. A clause that says "not", "never", "don't", "no" (or 不要,
# 不能, 别, 勿 ...) before the words of the tool's own job tells the model *not* to use the tool
# for its job: a contradiction, not a description. Its job and its "when" must be said in a
# clause without such a word.
CLAUSE_BREAK = re.compile(r"[.;:!?,\n()\[\]。，；：！？、（）]|\bbut\b", re.IGNORECASE)
NEGATION = re.compile(r"\b(?:never|not|no|cannot|avoid|\w+n['’]t)\b|不要|不能|不用|不可|别|勿|禁止|不适用|并非",
                      re.IGNORECASE)


def parameter_named(parameter: str, text: str) -> bool:
    """Is ``parameter`` named as a parameter: in backticks or quotes, `a` or 'a' or "a"? A bare
    word is not enough: the article "a" would count as the parameter ``a``."""
    return re.search(rf"[`'\"“‘]{re.escape(parameter)}[`'\"”’]", text) is not None


def _clauses(text: str) -> list[str]:
    return [clause.strip() for clause in CLAUSE_BREAK.split(text) if clause.strip()]


def _negated(clause: str) -> bool:
    return NEGATION.search(clause) is not None


def _contradiction(name: str, text: str) -> str | None:
    """The first clause that tells the model not to use ``name`` for its own job, if any."""
    for clause in _clauses(text):
        found = NEGATION.search(clause)
        if found and JOB[name].search(clause[found.end():]):
            return clause
    return None


def _misdirection(name: str, text: str) -> tuple[str, str] | None:
    """(clause, other tool) for a "use it when" clause that gives ``name`` another tool's job only."""
    for clause in _clauses(text):
        if _negated(clause) or not WHEN_TO_USE.search(clause) or JOB[name].search(clause):
            continue
        for other in TOOL_NAMES:
            if other != name and JOB[other].search(clause):
                return clause, other
    return None


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


def _problem(name: str, text: str, parameters: list[str]) -> tuple[str, str] | None:
    """What a good description of ``name`` lacks: (what is expected, advice), or None."""
    positive = [clause for clause in _clauses(text) if not _negated(clause)]
    if clause := _contradiction(name, text):
        return ("no clause against the tool's own job", f"{clause!r} tells the model not to use {name} "
                f"for its own job ({JOB_EXAMPLE[name]!r}): say what it does and when to use it, and keep "
                "'not' and 'never' for the other tools' jobs (put limits on the arguments instead)")
    if not any(JOB[name].search(clause) for clause in positive):
        return ("what the tool does", f"say what {name} does, in the words of its job "
                f"(e.g. {JOB_EXAMPLE[name]!r}), in a sentence without 'not' or 'never'")
    if not any(WHEN_TO_USE.search(clause) for clause in positive):
        return ("when to use it", "say when to use the tool, as a clause about the user's question: "
                "\"Use it when the user asks ...\" (a bare 'for' or 'if' elsewhere does not count, nor "
                "does a 'do not use it when')")
    if found := _misdirection(name, text):
        return ("when to use it, for its own job", f"{found[0]!r} tells the model to use {name} for "
                f"the job of {found[1]}: say when to use {name} for its own job ({JOB_EXAMPLE[name]!r})")
    missing = [p for p in parameters if not parameter_named(p, text)]
    if missing:
        return ("every parameter named", f"name each parameter, in backticks or quotes (`{parameters[0]}`), "
                f"and say what it holds and in what form; missing: {missing} (parameters: {parameters}). "
                "A bare word does not count: the article 'a' is not the parameter `a`")
    others = [other for other in TOOL_NAMES if other != name]
    if not any(JOB[other].search(text) or other in text for other in others):
        return ("how it differs from the others", f"the tools overlap: say what {name} is *not* "
                f"for, naming another tool or its job ({' or '.join(others)})")
    return None


def check_texts(report: Report, descriptions, vague: dict[str, str],
                parameters: dict[str, list[str]] | None = None) -> bool:
    """The checks that need no model. True when all pass."""
    parameters = parameters or {name: [] for name in TOOL_NAMES}
    if not isinstance(descriptions, dict):
        report.fail("a dict of descriptions", f"return a dict of tool name -> description, "
                    f"got {type(descriptions).__name__}", "dict", type(descriptions).__name__)
        return False
    ok = True
    for name in TOOL_NAMES:
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
        elif sum(other == text for other in descriptions.values()) > 1:
            report.fail(case, "the same text describes another tool too: each tool needs its own",
                        "a text of its own", text)
            ok = False
        elif problem := _problem(name, text, parameters[name]):
            report.fail(case, problem[1], problem[0], text)
            ok = False
        else:
            report.ok(case)
    extra = sorted(set(descriptions) - set(TOOL_NAMES))
    if extra:
        report.fail("only these three tools", f"unknown tool name(s) {extra}; describe {list(TOOL_NAMES)}",
                    list(TOOL_NAMES), sorted(descriptions))
        ok = False
    return ok


def grade(describe_tools, backend=None, store_path: str | Path | None = None) -> MeasuredReport:
    """Grade the descriptions; ``backend`` defaults to ``toolkit.client.connect()``."""
    from toolkit.bench.experiment import run_experiment
    from toolkit.bench.rates import rate_table
    from toolkit.bench.store import Store
    from toolkit.bench.suite import lesson_suite
    from toolkit.bench.trials import Settings, plan

    report = MeasuredReport("Lab 10b - better tool descriptions")
    done, descriptions = attempt(report, "descriptions", describe_tools)
    if not done:
        return report
    suite = lesson_suite()
    vague = {name: suite.tools[name].vague for name in TOOL_NAMES}
    parameters = {name: list(suite.tools[name].parameters["properties"]) for name in TOOL_NAMES}
    if not check_texts(report, descriptions, vague, parameters):
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
    table = rate_table(results, "description").set_index("description")
    mine, baseline = table.loc["custom"], table.loc["vague"]
    won, lost = int(mine["selection_successes"]), int(baseline["selection_successes"])
    ceiling = won == lost == int(mine["n"])
    beats = won > lost or ceiling
    target = (f"at least {STRONG_TARGET:.0%}, and more right picks than the vague baseline "
              f"({lost}/{int(baseline['n'])}) unless both are at 100%")
    report.measurements += [
        f"measured on {backend.label}, {len(trials)} trials, tool_choice=required, one call per reply, temperature 0:",
        f"  your descriptions: right tool {_rate_text(mine)}",
        f"  vague baseline:    right tool {_rate_text(baseline)}",
    ]
    if backend.embedded:
        # Not graded: a 135M model picks the same whatever the descriptions say (clear and vague
        # score the same on the whole suite), so no rule on these rates could be fair.
        report.measurements.append(
            "  not graded on the embedded model: it picks the same tools whatever the descriptions "
            "say, so the two rates differ by luck, if at all. The checks above grade this lab; point "
            "LAB_BASE_URL at a stronger model to see descriptions matter, and to have this graded")
        return report
    report.measurements.append(f"  target:            {target}")
    if mine["selection_rate"] >= STRONG_TARGET and beats:
        report.ok("selection rate beats the vague baseline")
    else:
        why = ("the model picked the right tool no more often with your descriptions than with the "
               "vague ones" if not beats else f"the model picked the right tool in under {STRONG_TARGET:.0%} of the cases")
        report.fail("selection rate beats the vague baseline",
                    f"{why}; make the 'when to use it' part sharper, and say how the tools differ",
                    target, _rate_text(mine))
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
    "For example: calculate -> 'Apply one arithmetic operation to two numbers: `a` `operator` `b`, "
    "where `operator` is add, subtract, multiply or divide. Use it for questions such as \"what is "
    "12 times 7\" or \"15减去8\"; not for square roots or currency.' Write square_root (its "
    "parameter is `x`) and convert_currency (`amount`, `from_currency`, `to_currency`: ISO codes "
    "such as USD) the same way, each parameter in backticks.",
])
