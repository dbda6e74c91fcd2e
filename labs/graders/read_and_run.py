"""Grader for labs/01_read_and_run.py: read a reply, refuse what is not offered, run the rest."""

from __future__ import annotations

import math

from labs.grading import ERROR_PREFIX, Hints, Report, attempt, error_rule_note, follows_error_rule


class _Spy:
    """A tool that remembers whether it ran, so the grader can check nothing else did."""

    def __init__(self, function):
        self.function, self.calls = function, []

    def __call__(self, value):
        self.calls.append(value)
        return self.function(value)


def _tools() -> dict:
    return {"square_root": _Spy(math.sqrt), "cube": _Spy(lambda x: x ** 3)}


# (case, reply text, what run_reply must return; None = "no call, this is an answer")
CASES: list[tuple[str, str, str | None]] = [
    ("a plain answer is not a call", "The square root of 49 is 7.", None),
    ("a Chinese answer is not a call", "100的平方根是10。", None),
    ("one call", "CALL square_root(144)", "12.0"),
    ("a call with text around it", "Sure! CALL square_root(10000) - one moment.", "100.0"),
    ("spaces inside the call", "CALL  cube ( 3 )", "27.0"),
    ("a decimal argument", "CALL square_root(2.25)", "1.5"),
]
# (case, reply text, words the error must contain) - and no tool may run; every refusal follows
# the rule for error texts: it starts with "Error: "
REFUSALS: list[tuple[str, str, list[str]]] = [
    ("a name that was never offered", "CALL os.remove(/etc/passwd)", ["os.remove"]),
    ("a Python built-in is not a tool", "CALL print(1)", ["print"]),
    ("an argument that is not a number", "CALL square_root(twelve)", ["twelve"]),
]


def grade(run_reply) -> Report:
    report = Report("Lab 01 - read a reply and run it")
    for case, text, expected in CASES:
        tools = _tools()
        done, got = attempt(report, case, run_reply, text, tools)
        if not done:
            if report.failures[-1].note.startswith("not done yet"):
                return report
            report.failures[-1].note += f"\n      input:    {text!r}"
            continue
        if got != expected:
            why = ("this text has no CALL line, so return None" if expected is None
                   else "return the tool's result as text, str(result)")
            report.fail(case, f"{why}\n      input:    {text!r}", expected, got)
        else:
            report.ok(case)
    for case, text, words in REFUSALS:
        tools = _tools()
        done, got = attempt(report, case, run_reply, text, tools)
        if not done:
            report.failures[-1].note += f"\n      input:    {text!r} (refuse it by returning a text starting with {ERROR_PREFIX!r})"
            continue
        ran = [name for name, spy in tools.items() if spy.calls]
        if ran:
            report.fail(case, f"the tool(s) {ran} ran, but this call must be refused\n      input:    {text!r}")
        elif not follows_error_rule(got):
            report.fail(case, f"{error_rule_note(got)}\n      input:    {text!r}",
                        f"{ERROR_PREFIX}... {' '.join(words)} ...", got)
        elif not all(word in got for word in words):
            report.fail(case, f"return an error text that contains {words}, so the model can learn what went "
                              f"wrong\n      input:    {text!r}", f"{ERROR_PREFIX}... {' '.join(words)} ...", got)
        else:
            report.ok(case)
    return report


hints = Hints([
    "Three stages, three steps. Decide: `re.search` for a CALL line and return None when there is "
    "none. Arguments: take the name and the text between the parentheses from the match's groups. "
    "Execute: only through the `tools` dict, never `eval`.",
    "The pattern `CALL\\s+([A-Za-z_][\\w.]*)\\s*\\(([^)]*)\\)` captures the name (dots allowed, so that "
    "`os.remove` is read and then refused) and the raw argument text. `.strip()` the argument before "
    "`float(...)`, and catch `ValueError` for arguments that are not numbers.",
    "`if name not in tools: return f\"Error: there is no tool named {name!r}. Call one of {list(tools)}.\"`; "
    "then `try: value = float(raw) except ValueError: return f\"Error: the argument {raw!r} is not a number. "
    "Write digits, e.g. CALL square_root(144).\"`; "
    "finally `return str(tools[name](value))`.",
])
