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
# # Lab 09 — Sanitize an error before the model sees it
#
# Goes with lesson 9 (`lessons/09_errors.py`).
#
# When a tool raises, the loop sends the model a short text instead of crashing. The
# exception's own message is a bad candidate: it can hold a traceback, the server's file
# paths, a database URL with its password, an API key. The model needs to know *what kind* of
# failure happened and roughly *why*; it must never see how your system is built.
#
# Write `sanitize_error(exc, secrets)` that returns **one line of at most 300 characters** that:
#
# - starts with the exception's type name (`"ConnectionError: ..."`), or is just the type name
#   when the exception has no message;
# - keeps the message's useful words (English or Chinese);
# - contains none of the strings in `secrets`;
# - contains no secret that nobody listed, found by its look as lesson 9's `sanitize` finds it:
#   a URL (`postgres://reports:Hx9@10.0.3.7:5432/reports`, with its user, password and host)
#   becomes `<url>`; the value after `api_key=`, `token=`, `password=` (or `:`) becomes
#   `<redacted>`, and so does a key that looks like one (`sk-...`, or a run of 32 or more
#   letters and digits with no prefix at all); the word `password` with no value after it, and
#   short ids such as `A1024`, are ordinary words and stay;
# - contains no traceback (`Traceback (most recent call last): ...` inside a message);
# - contains no file path, Unix (`/srv/app/conf/db.yaml`) or Windows (`C:\Users\...`);
# - is cut to 300 characters when longer: the first 299 and then `…` (one character, U+2026,
#   not three dots), so that the model knows there was more; a text that was not cut does not
#   end with `…`.
#
# The loop then puts your line inside the text the model reads, and that text follows the
# rule for every error text sent to a model (the same in every lab and in the toolkit): it
# starts with `"Error: "` (capital E, colon, space) and says what to do next, for example
# `Error: the tool 'export_report' failed (ConnectionError: could not reach <url>). Try other
# arguments, or tell the user it did not work.` The 300-character limit is the toolkit's too.
#
# Use the `re` module; no other library. (The toolkit's own version is
# `toolkit.errors_for_model.sanitize`, which cleans a text where yours starts from the
# exception itself; don't peek before you try.)

# %%
import re

from labs.grading import NotDoneYet


# %% tags=["exercise"]
def sanitize_error(exc: BaseException, secrets: list[str]) -> str:
    """One safe line for the model: the exception's type and message, without tracebacks,
    file paths or secrets, at most 300 characters."""
    raise NotDoneYet


# %% [markdown]
# Try it on the error from the lesson: a database failure whose message names a host, a file
# and a key.

# %%
KEY = "sk-live-3f9a8b7c6d5e4f3a"
sample = ConnectionError(f"could not reach the reports database (settings in /srv/reports/conf/db.yaml, key {KEY})")
try:
    print(sanitize_error(sample, secrets=[KEY]))
except NotDoneYet:
    print("not done yet: write sanitize_error above, then run this cell again")

# %% [markdown]
# ## Grade
#
# Thirteen errors you can read in the grader, and four it makes up as it grades (new URLs, hosts,
# passwords and keys every time, none of them in `secrets`). For each failure the grader says
# which fragment must not reach the model, or which useful word went missing, and shows what
# your function returned. The report shows the seed of the made-up errors:
# `grade(sanitize_error, seed=...)` makes the same ones again.

# %%
from labs.graders.sanitize_error import grade, hints

report = grade(sanitize_error)
report

# %% [markdown]
# ## Hints
#
# Each cell reveals one more hint, from a gentle nudge to nearly the answer.

# %%
hints.next()

# %%
hints.next()

# %%
hints.next()
