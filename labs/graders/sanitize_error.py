"""Grader for labs/09_sanitize_error.py: turn an exception into text that is safe for a model.

Besides the cases below, the grader makes up errors while it grades, like lesson 9's database
failure: a connection URL with a user, a password and a host, a key after ``api_key=`` or on its
own, a value after ``password:``, a long key with no ``sk-``, none of them in ``secrets``. They
are new every time, so only redaction by pattern passes.
"""

from __future__ import annotations

import random
import string

from labs.grading import Hints, Report, attempt, case_seed

LIMIT = 300
ELLIPSIS = "…"  # one character, U+2026
KEY = "sk-live-3f9a8b7c6d5e4f3a2b1c"
DB_PASSWORD = "Hx9-wombat-42"
SIGNING_KEY = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"  # no sk- to give it away


def _with_traceback_inside() -> Exception:
    """An error whose message carries a whole traceback, as wrapped errors from workers do."""
    inner = (
        "Traceback (most recent call last):\n"
        '  File "/srv/reports/app/export.py", line 88, in export\n'
        "    rows = db.fetch(customer_id)\n"
        '  File "/srv/reports/app/db.py", line 12, in fetch\n'
        "    raise TimeoutError('query took too long')\n"
        "TimeoutError: query took too long"
    )
    return RuntimeError(f"export worker failed:\n{inner}")


# (case, exception, secrets, words that must remain, fragments that must be gone)
CASES: list[tuple[str, BaseException, list[str], list[str], list[str]]] = [
    ("a plain error keeps its type and message",
     ValueError("order id must look like A1024"), [],
     ["ValueError", "order id must look like A1024"], []),
    ("a Unix path is removed, the reason stays",
     FileNotFoundError(2, "No such file or directory", "/srv/app/conf/db.yaml"), [],
     ["FileNotFoundError", "No such file or directory"], ["/srv/app/conf/db.yaml", "/srv", "db.yaml"]),
    ("a Windows path is removed",
     PermissionError(r"access denied to C:\Users\ops\secrets\token.txt"), [],
     ["PermissionError", "access denied"], [r"C:\Users", "token.txt"]),
    ("a secret from the list is removed",
     ConnectionError(f"upstream rejected key {KEY} for tenant acme"), [KEY],
     ["ConnectionError", "upstream rejected key"], [KEY, KEY[:12]]),
    ("a password inside a URL is removed",
     ConnectionError(f"could not reach postgres://reports:{DB_PASSWORD}@10.0.3.7:5432/reports"), [DB_PASSWORD],
     ["ConnectionError", "could not reach"], [DB_PASSWORD]),
    ("a traceback inside the message is removed",
     _with_traceback_inside(), [],
     ["RuntimeError", "export worker failed"], ["Traceback", 'File "', "line 88", "/srv/reports"]),
    ("an error without a message still says what it is",
     TimeoutError(), [], ["TimeoutError"], []),
    ("lesson 9's database error, nothing listed: the URL, its password and host and the key go",
     ConnectionError("could not reach postgres://reports:Hx9@10.0.3.7:5432/reports "
                     "(settings in /srv/reports/conf/db.yaml, api_key=sk-live-3f9a8b7c6d5e4f3a)"), [],
     ["ConnectionError", "could not reach", "settings in"],
     ["Hx9", "10.0.3.7", "postgres://", "sk-live", "3f9a8b7c6d5e4f3a", "/srv"]),
    ("Chinese text survives",
     LookupError("订单 A9999 不存在"), [], ["LookupError", "订单 A9999 不存在"], []),
    ("a password after 'password:' is removed, nothing listed",
     PermissionError("login refused for svc_export (password: Tr0ub4dor-77) by the reports server"), [],
     ["PermissionError", "login refused for svc_export", "by the reports server"], ["Tr0ub4dor-77", "Tr0ub4dor"]),
    ("a long key without 'sk-' is removed, nothing listed",
     ConnectionError(f"upstream refused the signing key {SIGNING_KEY} (expired)"), [],
     ["ConnectionError", "upstream refused the signing key", "expired"], [SIGNING_KEY, SIGNING_KEY[:16]]),
    # The word "password" with no value, and short ids and names, are the message, not secrets.
    ("ordinary words stay, even the word password",
     ValueError("password must be at least 12 characters long for user reports_admin (order A1024)"), [],
     ["ValueError", "password must be at least 12 characters long for user reports_admin (order A1024)"], []),
]

def _token(rng: random.Random, size: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(rng.choice(alphabet) for _ in range(size))


def _long_key(rng: random.Random) -> str:
    """A key with no prefix, only its length gives it away: 32 to 48 letters and digits, both."""
    key = [rng.choice(string.digits), rng.choice(string.ascii_letters)]
    key += [rng.choice(string.ascii_lowercase + string.digits) for _ in range(rng.randint(30, 46))]
    rng.shuffle(key)
    return "".join(key)


def made_up_cases(seed: int) -> list[tuple[str, BaseException, list[str], list[str], list[str]]]:
    """Errors like lesson 9's, with new URLs, passwords, hosts and keys, none of them listed."""
    rng = random.Random(seed)
    scheme = rng.choice(["postgres", "postgresql", "mysql", "redis", "mongodb", "amqp"])
    user, password = rng.choice(["reports", "app", "admin", "svc_export", "etl"]), _token(rng, rng.randint(6, 14))
    host = rng.choice([".".join(str(rng.randint(1, 254)) for _ in range(4)),
                       f"db-{_token(rng, 5, string.ascii_lowercase)}.internal"])
    url = f"{scheme}://{user}:{password}@{host}:{rng.randint(1024, 65000)}/{rng.choice(['reports', 'orders', 'main'])}"
    key = "sk-" + rng.choice(["live-", "proj-", ""]) + _token(rng, rng.randint(16, 32))
    named = rng.choice(["api_key", "token", "password", "access_token"])
    value = _token(rng, rng.randint(8, 20))
    error_type = rng.choice([ConnectionError, TimeoutError, RuntimeError, OSError])
    reason = rng.choice(["could not reach the orders database", "lost the connection to the cache",
                         "login refused by the reports server"])
    where = rng.choice(["while exporting", "during the nightly sync", "for tenant acme"])
    cases = [
        (f"a made-up database error: {reason}, with a URL nobody listed",
         error_type(f"{reason} at {url} {where}"), [],
         [error_type.__name__, reason, where], [password, host, f"{scheme}://", f"{user}:"]),
        (f"a made-up error with {named}= and a key nobody listed",
         error_type(f"{reason} ({named}={value}, fallback key {key}) {where}"), [],
         [error_type.__name__, reason, where, named], [value, key, key[3:]]),
        ("a made-up error with everything at once",
         error_type(f"{reason}: {url} (settings in /etc/{rng.choice(['app', 'svc'])}/db.yaml, "
                    f"{named}={value}) {where}"), [],
         [error_type.__name__, reason, where], [password, host, value, "/etc/"]),
    ]
    # Drawn last, so that a seed still makes the same first three.
    spoken, long_key = _token(rng, rng.randint(8, 16)), _long_key(rng)
    return cases + [
        ("a made-up error with 'password: ...' and a key without 'sk-', nobody listed",
         error_type(f"{reason} (password: {spoken}, key {long_key}) {where}"), [],
         [error_type.__name__, reason, where, "password"], [spoken, long_key, long_key[:16]]),
    ]


LONG = ValueError("row " + ", ".join(f"{n}: bad value" for n in range(600)))


def _short(text: str, width: int = 240) -> str:
    return text if len(text) <= width else f"{text[:width]}... ({len(text)} characters)"


def _check(report: Report, case: str, got, keep: list[str], gone: list[str], must_cut: bool = False,
           may_cut: bool = False) -> None:
    """``must_cut``: the message is too long even once cleaned, so the text must end in the
    ellipsis; ``may_cut``: it is long before cleaning, so an ellipsis is not wrong either."""
    if isinstance(got, str) and len(got) > LIMIT:
        shown = _short(got)
    else:
        shown = got
    if not isinstance(got, str):
        report.fail(case, f"should return a str, got {type(got).__name__}", "a str", got)
        return
    for fragment in gone:
        if fragment in got:
            report.fail(case, f"{fragment!r} must not reach the model, but it is still there",
                        f"text without {fragment!r}", shown)
            return
    for word in keep:
        if word not in got:
            report.fail(case, f"{word!r} is gone, but the model needs it to understand what failed",
                        f"text containing {word!r}", shown)
            return
    if "\n" in got or "\r" in got:
        report.fail(case, "the text should be one line (join the lines with spaces)", "no line breaks", shown)
        return
    if len(got) > LIMIT:
        report.fail(case, f"the text is {len(got)} characters long; cap it at {LIMIT}",
                    f"at most {LIMIT} characters", f"{len(got)} characters")
        return
    if must_cut and not got.endswith(ELLIPSIS):
        report.fail(case, f"the text was cut, but nothing says so: end it with {ELLIPSIS!r} (one character) "
                          "so that the model knows there was more", f"... ending in {ELLIPSIS!r}", shown)
        return
    if must_cut and len(got) < LIMIT - 20:
        report.fail(case, f"the text is cut to {len(got)} characters: use the room, cut at {LIMIT} "
                          f"(that is {LIMIT - 1} characters and {ELLIPSIS!r})", f"about {LIMIT} characters",
                    f"{len(got)} characters")
        return
    if not (must_cut or may_cut) and got.endswith(ELLIPSIS):
        report.fail(case, f"this message is short and was not cut, so it must not end with {ELLIPSIS!r}",
                    "no ellipsis", shown)
        return
    report.ok(case)


def grade(sanitize_error, seed: int | None = None) -> Report:
    """Grade on the public cases and on errors made up from ``seed`` (a fresh one when None)."""
    seed = case_seed(seed)
    report = Report(f"Lab 09 - sanitize an error for the model (made-up errors from seed {seed})")
    for case, error, secrets, keep, gone in CASES + made_up_cases(seed):
        done, got = attempt(report, case, sanitize_error, error, list(secrets))
        if not done:
            if report.failures[-1].note.startswith("not done yet"):
                return report  # one "not done yet" says it all
            continue
        raw = f"{type(error).__name__}: {error}"
        _check(report, case, got, keep, gone, may_cut=len(raw) > LIMIT)
    case = f"a very long message is cut to at most {LIMIT} characters, ending in {ELLIPSIS}"
    done, got = attempt(report, case, sanitize_error, LONG, [])
    if done:
        _check(report, case, got, ["ValueError", "row 0: bad value"], [], must_cut=True)
    return report


hints = Hints([
    "Build the text as f\"{type(exc).__name__}: {exc}\" (just the type name when str(exc) is "
    "empty), then clean it step by step: secrets, traceback, paths, whitespace, length. Run the "
    "grader after each step to see which cases start to pass.",
    "Replace each secret with str.replace(secret, \"<redacted>\") first, before anything can "
    "break it apart. For the traceback, cut from \"Traceback (most recent call last):\" to the "
    "end of the text. For paths, re.sub with two patterns: Unix paths r\"(?:/[\\w.@+-]+)+\" and "
    "Windows paths r\"[A-Za-z]:\\\\[^\\s'\\\"]*\"; replace them with \"<path>\". Secrets nobody listed go by "
    "pattern, before the paths: URLs r\"\\b[a-z][a-z0-9+.-]*://\\S+\" -> \"<url>\"; r\"\\bsk-[A-Za-z0-9_-]{6,}\" "
    "-> \"<redacted>\"; a run of 32 or more letters and digits, r\"\\b[A-Za-z0-9_-]{32,}\\b\", -> \"<redacted>\"; "
    "and the value after api_key=, token=, password= or password: -> \"<redacted>\".",
    "Finish with \" \".join(text.split()) to make one line, and if len(text) > 300 keep "
    "text[:299] + \"…\". Check the order: the traceback must go before you join the lines, "
    "and a path inside a URL (postgres://user:pw@host/db) is still a path once the secret is gone.",
])
