"""Grader for labs/01_read_and_run.py: read a reply, refuse what is not offered, run the rest.

Besides the public cases, replies are made up while grading: tools with other names and other
results, new numbers and new text around the call, names never offered and arguments that are
not numbers. A table of the public replies, or code that knows only square_root and cube,
does not pass; ``grade(fn, seed=N)`` repeats a run.
"""

from __future__ import annotations

import math
import random

from labs.grading import ERROR_PREFIX, Hints, Report, attempt, case_seed, error_rule_note, follows_error_rule


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
# (case, reply text, words the error must contain, what was refused: the "name" or the "argument")
# - and no tool may run; every refusal follows the rule for error texts: it starts with "Error: "
REFUSALS: list[tuple[str, str, list[str], str]] = [
    ("a name that was never offered", "CALL os.remove(/etc/passwd)", ["os.remove"], "name"),
    ("a Python built-in is not a tool", "CALL print(1)", ["print"], "name"),
    ("an argument that is not a number", "CALL square_root(twelve)", ["twelve"], "argument"),
]


def _what_is_missing(got: str, words: list[str], refused: str, tools: dict) -> str | None:
    """What a refusal leaves out, or None. Quoting the reply back ("Error: CALL print(1)") names
    the tool and the argument but says neither what failed nor what to do next, so a refusal of
    a name must name the tools there are, and one of an argument must say it is not a number."""
    missing = [word for word in words if word not in got]
    if missing:
        return f"return an error text that contains {missing}, so the model can learn what went wrong"
    if refused == "argument" and "number" not in got.lower():
        return "say that the argument is not a number (the word 'number'), so the model knows what to fix"
    if refused == "name" and not any(name in got for name in tools):
        return (f"say which tools there are ({', '.join(sorted(tools))}), so the model knows what it can "
                "call instead")
    return None


def _expected(words: list[str], refused: str, tools: dict) -> str:
    """The shape of a right refusal, shown next to what came back."""
    what_next = "not a number" if refused == "argument" else " ".join(sorted(tools))
    return f"{ERROR_PREFIX}... {' '.join(words)} ... {what_next} ..."


# --- Replies made up while grading --------------------------------------------------------------

_MADE_UP_TOOLS = {"double": lambda x: 2 * x, "halve": lambda x: x / 2, "negate": lambda x: -x,
                  "square": lambda x: x * x, "add_ten": lambda x: x + 10, "triple": lambda x: 3 * x,
                  "absolute": abs, "floor": math.floor, "log10": math.log10, "cube_root": lambda x: x ** (1 / 3)}
_BEFORE = ["", "Sure! ", "Let me check. ", "好的，", "One moment: ", "I will use a tool.\n"]
_AFTER = ["", " - one moment.", " and then I will tell you.", "。", "\nThanks!"]
_ANSWERS = ["The answer is {n}.", "{n} is what you get.", "It comes to about {n}.", "结果是{n}。",
            "I think it is {n}, no tool needed."]
_NOT_OFFERED = ["os.system", "subprocess.run", "open", "exec", "shutil.rmtree", "delete_all"]
_NOT_NUMBERS = ["seven", "a dozen", "x", "twelve and a half", "一百", "n/a"]


def _number(rng: random.Random) -> str:
    return rng.choice([str(rng.randint(1, 9999)), f"{rng.randint(1, 999)}.{rng.choice(['5', '25', '75'])}"])


def made_up_cases(seed: int) -> tuple[list, list]:
    """Runs and refusals drawn afresh: (case, reply, tool names, expected) and (case, reply, tool
    names, words the error must contain, what was refused)."""
    rng = random.Random(seed)
    runs, refusals = [], []
    for index in range(4):
        names = rng.sample(sorted(_MADE_UP_TOOLS), rng.randint(2, 4))
        name, raw = rng.choice(names), _number(rng)
        spaces = rng.choice([("", ""), (" ", " "), ("", "  ")])
        text = f"{rng.choice(_BEFORE)}CALL {name}{spaces[0]}({spaces[1]}{raw}{spaces[1]}){rng.choice(_AFTER)}"
        runs.append((f"made-up case {index + 1}: a call to {name}", text, names,
                     str(_MADE_UP_TOOLS[name](float(raw)))))
    names = rng.sample(sorted(_MADE_UP_TOOLS), 2)
    runs.append(("made-up case 5: an answer is not a call", rng.choice(_ANSWERS).format(n=_number(rng)), names, None))
    names = rng.sample(sorted(_MADE_UP_TOOLS), 3)
    stranger = rng.choice(_NOT_OFFERED + [n for n in _MADE_UP_TOOLS if n not in names])
    refusals.append(("made-up case 6: a name that was never offered",
                     f"{rng.choice(_BEFORE)}CALL {stranger}({_number(rng)})", names, [stranger], "name"))
    word = rng.choice(_NOT_NUMBERS)
    refusals.append(("made-up case 7: an argument that is not a number",
                     f"CALL {rng.choice(names)}({word}){rng.choice(_AFTER)}", names, [word], "argument"))
    return runs, refusals


def _made_up_tools(names: list[str]) -> dict:
    return {name: _Spy(_MADE_UP_TOOLS[name]) for name in names}


def grade(run_reply, seed: int | None = None) -> Report:
    """Grade on the public replies and on replies made up from ``seed`` (a fresh one when None)."""
    seed = case_seed(seed)
    report = Report(f"Lab 01 - read a reply and run it (made-up cases from seed {seed})")
    runs, refusals = made_up_cases(seed)
    for case, text, names, expected in [(c, t, None, e) for c, t, e in CASES] + runs:
        tools = _tools() if names is None else _made_up_tools(names)
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
    for case, text, names, words, refused in [(c, t, None, w, r) for c, t, w, r in REFUSALS] + refusals:
        tools = _tools() if names is None else _made_up_tools(names)
        done, got = attempt(report, case, run_reply, text, tools)
        if not done:
            report.failures[-1].note += f"\n      input:    {text!r} (refuse it by returning a text starting with {ERROR_PREFIX!r})"
            continue
        ran = [name for name, spy in tools.items() if spy.calls]
        if ran:
            report.fail(case, f"the tool(s) {ran} ran, but this call must be refused\n      input:    {text!r}")
        elif not follows_error_rule(got):
            report.fail(case, f"{error_rule_note(got)}\n      input:    {text!r}", _expected(words, refused, tools), got)
        elif missing := _what_is_missing(got, words, refused, tools):
            report.fail(case, f"{missing}\n      input:    {text!r}", _expected(words, refused, tools), got)
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
