# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lab 10b — Write descriptions that help the model choose
#
# Goes with lesson 10 (`lessons/10_description_quality.py`).
#
# Three tools overlap: `calculate` (arithmetic on two numbers), `square_root` and
# `convert_currency`. Their vague descriptions, printed below, give a model little to go on.
# Write better ones: say what each tool does, **when** to use it (and when not), and what its
# arguments look like. These three are the bench's scenario-suite tools
# (`toolkit/bench/scenarios/tools.json`), since the measurement below runs the suite's own
# questions: the suite's `calculate` takes `a`, `operator` and `b`, where the lessons' demo
# `calculate` takes one `expression`.
#
# The grader first checks your texts. Each one must:
#
# - be your own text, at least 8 words and under 1024 characters, and not the same as another
#   tool's;
# - say **what the tool does**, in the words of its job (adding, subtracting, multiplying or
#   dividing; a square root; converting money between currencies — English or Chinese);
# - say **when to use it**, as a clause about the user's question: "Use it when the user asks
#   …", "use this tool for …", "用于…" (a bare "for" or "if" elsewhere in a sentence does not count);
# - never tell the model **not** to use the tool for its own job: the grader reads the text clause
#   by clause (between commas, full stops and the like), and a clause with "not", "never",
#   "don't", "no" (or 不要, 不能, 别 …) before the words of the tool's own job fails ("Never use
#   this to add numbers" for `calculate`); the job and the "when" must be said in clauses
#   without those words, and a "use it when" clause must be about the tool's own job, not
#   another's;
# - **name every parameter** the tool takes (printed below: `a`, `operator`, `b`; `x`;
#   `amount`, `from_currency`, `to_currency`), each in backticks or quotes (`` `a` ``, `'x'`), and
#   say what it holds and in what form; a bare word does not count, since the article "a" is
#   not the parameter `a`;
# - say **how it differs** from the other two: what it is *not* for, naming another tool or its
#   job ("not for square roots").
#
# Then it **measures**: it runs five questions from the lab's suite twice on the configured
# backend — once with the vague descriptions, once with yours — with `tool_choice="required"`,
# so that every reply is a choice among the tools, and reports how often the right tool was
# chosen, with n and a 95% Wilson interval.
#
# - On the embedded SmolLM2-135M (the default) the measurement is shown but **not graded**:
#   its picks do not follow the descriptions (clear and vague ones score the same on the whole
#   suite), so the two rates differ by luck, if at all, and no rule on them could tell a good
#   description from a bad one. There the checks above are the grade.
# - Pointed at a stronger model (`LAB_BASE_URL`, `LAB_MODEL`, `LAB_API_KEY`), the measurement is
#   graded against the baseline: your rate must be at least 80% **and** beat the vague
#   descriptions' rate (unless both are at 100%). A description that changes nothing fails.
#
# The experiment takes 10 model calls (about 15–30 s on the embedded model).

# %%
from labs.grading import NotDoneYet
from toolkit.bench.suite import lesson_suite

suite = lesson_suite()
for name in ("calculate", "square_root", "convert_currency"):
    tool = suite.tools[name]
    print(f"{name:<17} vague: {tool.vague!r}")
    print(f"{'':<17} parameters: {list(tool.parameters['properties'])}")


# %% tags=["exercise"]
def describe_tools() -> dict[str, str]:
    """Your description for each of the three tools, by tool name."""
    raise NotDoneYet


# %% [markdown]
# Look at what you wrote next to the suite's vague text before you grade it:

# %%
try:
    for name, text in describe_tools().items():
        print(f"{name}:\n  vague: {suite.tools[name].vague}\n  yours: {text}\n")
except NotDoneYet:
    print("not done yet: write describe_tools above, then run this cell again")

# %% [markdown]
# ## Grade (runs the experiment)

# %%
from labs.graders.better_descriptions import grade, hints

report = grade(describe_tools)
report

# %% [markdown]
# ## Hints

# %%
hints.next()

# %%
hints.next()

# %%
hints.next()
