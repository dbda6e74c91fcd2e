"""The graders of labs 09-13: they pass the reference solutions, report stubs as not done, and
fail typical wrong answers with feedback that names the failing case."""

import json
import re

import pytest

from labs.grading import NotDoneYet


def stub(*args, **kwargs):
    raise NotDoneYet


def sanitizer_that_also(*rules: tuple[str, str]):
    """A lab 09 answer that is right about the listed secrets, tracebacks, paths and the length
    cut, and finds other secrets only by ``rules`` (pattern, replacement): the wrong answers
    differ in what they find by its look, so each test names just that."""
    def sanitize(exc, secrets):
        text = f"{type(exc).__name__}: {exc}" if str(exc).strip() else type(exc).__name__
        for secret in secrets:
            text = text.replace(secret, "<redacted>")
        text = re.sub(r"Traceback \(most recent call last\):.*", "", text, flags=re.DOTALL)
        for pattern, replacement in rules:
            text = re.sub(pattern, replacement, text)
        text = re.sub(r"[A-Za-z]:\\[^\s'\"]*", "<path>", text)
        text = re.sub(r"(?<![\w:/])(?:/[\w.@+-]+)+/?", "<path>", text)
        text = " ".join(text.split()).rstrip(" :")
        return text if len(text) <= 300 else text[:299] + "…"

    return sanitize


def failing_cases(report) -> str:
    return "\n".join(f"{o.case}: {o.note}" for o in report.failures)


# --- Lab 09: sanitize an error -------------------------------------------------------------------

class TestSanitizeError:
    from labs.graders.sanitize_error import grade

    grade = staticmethod(grade)

    def test_solution_passes(self):
        from labs.solutions.sanitize_error import sanitize_error

        report = self.grade(sanitize_error)
        assert report.passed, str(report)

    def test_stub_is_not_done(self):
        report = self.grade(stub)
        assert not report.passed and "not done yet" in str(report)

    def test_the_raw_message_leaks_and_loses_the_type(self):
        report = self.grade(lambda exc, secrets: str(exc))
        text = failing_cases(report)
        assert "a plain error keeps its type and message: 'ValueError' is gone" in text
        assert "a Unix path is removed" in text and "'/srv/app/conf/db.yaml' must not reach the model" in text

    def test_type_and_message_cut_to_length_still_leaks_secrets_and_tracebacks(self):
        report = self.grade(lambda exc, secrets: f"{type(exc).__name__}: {exc}"[:300])
        text = failing_cases(report)
        assert "a secret from the list is removed" in text and "sk-live" in text
        assert "a traceback inside the message is removed: 'Traceback' must not reach the model" in text
        assert "a plain error" not in text  # that case passes

    def test_a_cut_without_the_ellipsis_is_caught(self):
        from labs.solutions import sanitize_error as solution

        def silent_cut(exc, secrets):
            text = solution.sanitize_error(exc, secrets)
            return text[:-1] + "x" if text.endswith("…") else text  # a plain text[:300]

        report = self.grade(silent_cut)
        text = failing_cases(report)
        assert "a very long message is cut to at most 300 characters, ending in …: the text was cut, but nothing says so" in text
        assert len(report.failures) == 1

    def test_three_dots_or_an_ellipsis_on_every_text_are_caught(self):
        from labs.solutions.sanitize_error import sanitize_error

        dots = self.grade(lambda exc, secrets: sanitize_error(exc, secrets).replace("…", "")[:297] + "..."
                           if sanitize_error(exc, secrets).endswith("…") else sanitize_error(exc, secrets))
        assert "ending in …: the text was cut, but nothing says so" in failing_cases(dots)
        always = failing_cases(self.grade(lambda exc, secrets: sanitize_error(exc, secrets).rstrip("…")[:299] + "…"))
        assert "a plain error keeps its type and message: this message is short and was not cut" in always
        assert "a very long message" not in always

    def test_cutting_far_below_the_limit_is_caught(self):
        from labs.solutions.sanitize_error import sanitize_error

        def cut_short(exc, secrets):
            text = sanitize_error(exc, secrets)
            return text[:80] + "…" if text.endswith("…") else text

        text = failing_cases(self.grade(cut_short))
        assert "the text is cut to 81 characters: use the room" in text

    def test_the_old_200_character_limit_is_caught(self):
        """The toolkit cuts at 300; a sanitizer that still cuts at 200 wastes the room."""
        from labs.solutions.sanitize_error import sanitize_error

        def cut_at_200(exc, secrets):
            text = sanitize_error(exc, secrets)
            return text[:199] + "…" if len(text) > 200 else text

        text = failing_cases(self.grade(cut_at_200))
        assert "the text is cut to 200 characters: use the room, cut at 300" in text

    def test_the_solution_passes_whatever_the_seed(self):
        from labs.solutions.sanitize_error import sanitize_error

        for seed in range(60):
            report = self.grade(sanitize_error, seed=seed)
            assert report.passed, str(report)
            assert sum(o.case.startswith("a made-up") for o in report.outcomes) == 4

    def test_redacting_only_the_listed_secrets_is_rejected(self):
        """Tracebacks, paths, listed secrets and the cut, all right, but nothing found by its look:
        lesson 9's message keeps its database URL, password, host and key."""
        listed_secrets_only = sanitizer_that_also()

        report = self.grade(listed_secrets_only, seed=11)
        text = failing_cases(report)
        assert "lesson 9's database error, nothing listed: the URL, its password and host and the key go: 'Hx9' must not reach the model" in text
        assert "a made-up database error" in text and "a made-up error with everything at once" in text
        assert "a made-up error with" in text and "and a key nobody listed" in text
        assert all(o.case.startswith(("lesson 9's", "a made-up", "a password after", "a long key without"))
                   for o in report.failures), text

    def test_redacting_only_sk_keys_and_name_equals_value_is_rejected(self):
        """URLs, api_key=..., sk-... keys, paths and tracebacks all go, but a value after
        "password:" and a long key with no sk- prefix reach the model."""
        sk_keys_only = sanitizer_that_also((r"\b[a-z][a-z0-9+.-]*://\S+", "<url>"),
                                           (r"\b(api_key|access_token|token|password)=[^\s,)]+", r"\1=<redacted>"),
                                           (r"\bsk-[A-Za-z0-9_-]{6,}", "<redacted>"))

        for seed in range(5):
            report = self.grade(sk_keys_only, seed=seed)
            text = failing_cases(report)
            assert "a password after 'password:' is removed, nothing listed: 'Tr0ub4dor-77' must not reach the model" in text
            assert "a long key without 'sk-' is removed, nothing listed: '9f86d081" in text
            assert "a made-up error with 'password: ...' and a key without 'sk-', nobody listed" in text
            assert len(report.failures) == 3, text  # everything else it does is right

    def test_redacting_the_word_password_itself_loses_the_message(self):
        from labs.solutions.sanitize_error import sanitize_error

        def no_word_after_password(exc, secrets):  # takes whatever follows "password", value or not
            return re.sub(r"(?i)\bpassword\b\W*\S+", "password <redacted>", sanitize_error(exc, secrets))

        report = self.grade(no_word_after_password, seed=0)
        assert [o.case for o in report.failures] == ["ordinary words stay, even the word password"], str(report)
        assert "is gone, but the model needs it to understand what failed" in failing_cases(report)

    def test_stripping_everything_loses_the_useful_message(self):
        report = self.grade(lambda exc, secrets: type(exc).__name__)
        assert "'order id must look like A1024' is gone" in failing_cases(report)


# --- Lab 10a: BFCL scoring -----------------------------------------------------------------------

class TestBfclScoring:
    from labs.graders.bfcl_scoring import CASES, grade

    grade = staticmethod(grade)

    def test_solution_passes(self):
        from labs.solutions.bfcl_scoring import score

        report = self.grade(score)
        assert report.passed, str(report)

    def test_expected_reasons_agree_with_the_toolkit_checker(self):
        from toolkit.bench.scoring import check
        from toolkit.bench.suite_model import Case, ExpectedCall

        for name, expected, call, reason in self.CASES:
            case = Case(id="lab", category="simple", language="en", question="q", tools=[expected["name"]],
                        expected=[ExpectedCall(name=expected["name"], arguments=expected["arguments"])])
            verdict = check(case, [call], schemas={expected["name"]: expected["parameters"]})
            assert verdict.reason == reason, name

    def test_made_up_reasons_agree_with_the_toolkit_checker(self):
        from labs.graders.bfcl_scoring import made_up_cases
        from toolkit.bench.scoring import check
        from toolkit.bench.suite_model import Case, ExpectedCall

        for seed in range(20):
            for name, expected, call, reason in made_up_cases(seed):
                case = Case(id="lab", category="simple", language="en", question="q", tools=[expected["name"]],
                            expected=[ExpectedCall(name=expected["name"], arguments=expected["arguments"])])
                verdict = check(case, [call], schemas={expected["name"]: expected["parameters"]})
                assert verdict.reason == reason, (seed, name)

    def test_solution_passes_whatever_the_seed(self):
        from labs.solutions.bfcl_scoring import score

        for seed in range(10):
            report = self.grade(score, seed=seed)
            assert report.passed, str(report)
            assert sum(o.case.startswith("made-up case") for o in report.outcomes) == 8

    def test_a_table_of_the_public_cases_fails_the_made_up_ones(self):
        table = {(json.dumps(expected, sort_keys=True), json.dumps(made, sort_keys=True)): reason
                 for _, expected, made, reason in self.CASES}

        def look_up(expected, call):
            return table.get((json.dumps(expected, sort_keys=True), json.dumps(call, sort_keys=True)))

        report = self.grade(look_up, seed=12)
        failed = [o.case for o in report.failures]
        # None ("passes") is the table's default, so every made-up call that should fail fails
        assert failed == [f"made-up case {n}: {reason}" for n, reason in enumerate(
            ["wrong_tool", "unparsable", "missing_required", "unexpected_parameter", "wrong_type",
             "value_not_accepted"], start=3)], failed

    def test_stub_is_not_done(self):
        assert "not done yet" in str(self.grade(stub))

    def test_exact_string_comparison_misses_normalisation(self):
        from labs.solutions import bfcl_scoring as solution

        def exact(expected, call):
            original = solution.normalise
            solution.normalise = lambda text: text  # no case folding, no punctuation stripping
            try:
                return solution.score(expected, call)
            finally:
                solution.normalise = original

        text = failing_cases(self.grade(exact))
        assert "case and spaces do not matter: this call should pass" in text
        assert "punctuation does not matter" in text

    def test_bool_counted_as_int_and_strict_numbers(self):
        def careless(expected, call):
            arguments = call["arguments"]
            arguments = json.loads(arguments) if isinstance(arguments, str) else arguments
            if call["name"] != expected["name"]:
                return "wrong_tool"
            for name, value in arguments.items():
                wanted = expected["parameters"]["properties"].get(name, {}).get("type")
                python = {"string": str, "integer": int, "number": float}.get(wanted)
                if python and not isinstance(value, python):
                    return "wrong_type"
            return None

        text = failing_cases(self.grade(careless))
        assert "an int where a number is expected: this call should pass" in text
        assert "a bool where an integer is expected: this call should fail with 'wrong_type'" in text


# --- Lab 10b: better descriptions ----------------------------------------------------------------

def _scripted_backend(right_when, embedded=False):
    """A scripted model that picks the expected tool when ``right_when(descriptions, question)`` is true,
    and the other offered tool otherwise: it makes the measurement part of the grader exact."""
    from toolkit import fake
    from toolkit.bench.suite import load_suite

    suite = load_suite()
    by_question = {case.question: case for case in suite}

    def reply(request):
        question = next(m["content"] for m in request["messages"] if m["role"] == "user")
        case = by_question[question]
        descriptions = {t["function"]["name"]: t["function"]["description"] for t in request["tools"]}
        wanted = case.reference_calls()[0]
        if right_when(descriptions, question):
            return fake.calls(fake.call(wanted["name"], wanted["arguments"]))
        other = next(name for name in descriptions if name != wanted["name"])
        return fake.calls(fake.call(other, {}))

    backend = fake.ScriptedModel([reply] * 50).backend()
    backend.embedded = embedded  # the grader's rule depends on it
    return backend


class TestBetterDescriptions:
    from labs.graders.better_descriptions import grade

    grade = staticmethod(grade)

    @staticmethod
    def solution():
        from labs.solutions.better_descriptions import describe_tools

        return describe_tools

    def test_stub_is_not_done_and_runs_nothing(self):
        report = self.grade(stub, backend=object())  # any model call would fail on this backend
        assert "not done yet" in str(report)

    def test_one_word_descriptions_fail_before_any_experiment(self):
        vague = lambda: {"calculate": "Does maths.", "square_root": "Square root.", "convert_currency": "Money."}
        report = self.grade(vague, backend=object())
        text = str(report)
        assert "description of calculate: only 2 word(s)" in text
        assert "no experiment yet" in text

    def test_a_missing_tool_is_named(self):
        partial = lambda: {name: text for name, text in self.solution()().items() if name != "square_root"}
        text = str(self.grade(partial, backend=object()))
        assert "description of square_root: missing or empty" in text

    def test_descriptions_with_for_and_nothing_else_fail_before_any_experiment(self):
        """The wrong answer the old check let through: long enough, and a "for" in each."""
        generic = lambda: {
            "calculate": "A helpful tool for doing calculations on numbers when they are needed.",
            "square_root": "A helpful tool for the square root of numbers, good for maths homework.",
            "convert_currency": "A helpful tool for working with money and foreign currencies today.",
        }
        report = self.grade(generic, backend=object())
        text = str(report)
        assert "description of calculate: say what calculate does" in text
        assert "description of square_root: say when to use the tool" in text
        assert "description of convert_currency: say when to use the tool" in text
        assert "no experiment yet" in text

    def test_parameters_unnamed_or_no_word_on_the_other_tools_fail(self):
        good = self.solution()()
        no_params = dict(good, convert_currency=good["convert_currency"].replace(
            "`from_currency` and `to_currency` are ISO 4217 codes", "Currencies are ISO 4217 codes"))
        text = str(self.grade(lambda: no_params, backend=object()))
        assert "description of convert_currency: name each parameter" in text
        assert "['from_currency', 'to_currency']" in text
        alone = dict(good, square_root="Compute the square root of one non-negative number `x`. Use it "
                                       "when the user asks for a square root (平方根).")
        text = str(self.grade(lambda: alone, backend=object()))
        assert "description of square_root: the tools overlap: say what square_root is *not* for" in text

    def test_descriptions_that_say_the_opposite_fail(self):
        """Long enough, the job's words, a "use this" and every parameter's name as a bare word
        (the article "a" for `a`): they read well to a regular expression and tell the model
        the opposite of what each tool does."""
        def opposite():
            return {
                "calculate": "Never use this to add, subtract, multiply or divide a and b with an operator; "
                             "use it for square roots instead.",
                "square_root": "Do not use this tool for a square root of x; use it when the user asks to "
                               "add two numbers.",
                "convert_currency": "Don't use this to convert an amount of money from_currency to_currency; "
                                    "use it for arithmetic on plain numbers.",
            }

        report = self.grade(opposite, backend=object())
        text = failing_cases(report)
        assert "description of calculate: 'Never use this to add' tells the model not to use calculate" in text
        assert "description of square_root: 'Do not use this tool for a square root of x' tells the model" in text
        assert ("description of convert_currency: \"Don't use this to convert an amount of money from_currency "
                "to_currency\" tells the model") in text
        assert len(report.failures) == 3 and "no experiment yet" in str(report)
        # the reference solution passes the same checks
        from labs.graders.better_descriptions import check_texts
        from labs.grading import Report
        from toolkit.bench.suite import load_suite

        suite = load_suite()
        names = ("calculate", "square_root", "convert_currency")
        vague = {name: suite.tools[name].vague for name in names}
        parameters = {name: list(suite.tools[name].parameters["properties"]) for name in names}
        assert check_texts(Report("solution"), self.solution()(), vague, parameters)

    def test_use_it_for_another_tools_job_fails(self):
        good = self.solution()()
        swapped = dict(good, calculate="Works on two numbers `a` `operator` `b`, to add or divide them. "
                                       "Use it when the user asks to convert money. Not for square roots.")
        text = failing_cases(self.grade(lambda: swapped, backend=object()))
        assert "description of calculate: 'Use it when the user asks to convert money' tells the model to use calculate for the job of convert_currency" in text

    def test_the_article_a_is_not_the_parameter_a(self):
        good = self.solution()()
        article = dict(good, calculate=good["calculate"].replace("`a` `operator` `b`", "a number, an `operator`, `b`"))
        text = failing_cases(self.grade(lambda: article, backend=object()))
        assert "description of calculate: name each parameter, in backticks or quotes" in text
        assert "missing: ['a']" in text
        bare = {name: description.replace("`", "") for name, description in good.items()}
        text = failing_cases(self.grade(lambda: bare, backend=object()))
        assert "missing: ['a', 'operator', 'b']" in text and "missing: ['x']" in text
        assert "missing: ['amount', 'from_currency', 'to_currency']" in text

    def test_one_text_for_every_tool_fails(self):
        text = self.solution()()["calculate"]
        report = self.grade(lambda: dict.fromkeys(("calculate", "square_root", "convert_currency"), text),
                            backend=object())
        assert "the same text describes another tool too" in str(report)

    def test_measured_rate_below_the_baseline_fails_with_n_and_interval(self, tmp_path):
        backend = _scripted_backend(right_when=lambda d, q: len(d["calculate"].split()) < 5)  # vague wins
        report = self.grade(self.solution(), backend=backend, store_path=tmp_path / "runs.sqlite")
        text = str(report)
        assert not report.passed
        assert "selection rate beats the vague baseline" in text
        assert re.search(r"your descriptions: right tool 0/5 = 0% \[95% Wilson 0%, \d+%\]", text)
        assert "vague baseline:    right tool 5/5 = 100%" in text

    def test_no_improvement_over_the_baseline_fails(self, tmp_path):
        """The model is right on the same questions whatever the descriptions: nothing gained."""
        backend = _scripted_backend(right_when=lambda d, q: "平方根" not in q)  # 4 of 5, both ways
        report = self.grade(self.solution(), backend=backend, store_path=tmp_path / "runs.sqlite")
        text = str(report)
        assert not report.passed
        assert ("selection rate beats the vague baseline: the model picked the right tool no more often "
                "with your descriptions than with the vague ones") in text
        assert "your descriptions: right tool 4/5 = 80%" in text and "vague baseline:    right tool 4/5 = 80%" in text

    def test_measured_rate_at_target_passes_and_shows_the_measurement(self, tmp_path):
        backend = _scripted_backend(right_when=lambda d, q: len(d["calculate"].split()) >= 5)  # yours win
        report = self.grade(self.solution(), backend=backend, store_path=tmp_path / "runs.sqlite")
        assert report.passed, str(report)
        assert "right tool 5/5 = 100%" in str(report) and "at least 80%" in str(report)

    def test_both_at_the_ceiling_passes(self, tmp_path):
        backend = _scripted_backend(right_when=lambda d, q: True)
        report = self.grade(self.solution(), backend=backend, store_path=tmp_path / "runs.sqlite")
        assert report.passed, str(report)

    def test_on_the_embedded_model_the_measurement_is_shown_not_graded(self, tmp_path):
        backend = _scripted_backend(right_when=lambda d, q: len(d["calculate"].split()) < 5, embedded=True)
        report = self.grade(self.solution(), backend=backend, store_path=tmp_path / "runs.sqlite")
        text = str(report)
        assert report.passed, text  # the text checks are the grade there
        assert "your descriptions: right tool 0/5" in text and "not graded on the embedded model" in text
        assert "selection rate" not in text

    @pytest.mark.embedded
    def test_solution_passes_on_the_embedded_model(self, tmp_path):
        report = self.grade(self.solution(), store_path=tmp_path / "runs.sqlite")  # connect()
        assert report.passed, str(report)


# --- Lab 11: permission provider -----------------------------------------------------------------

class TestPermissionProvider:
    from labs.graders.permission_provider import (
        ROLES,
        STATIC,
        delete_user,
        grade,
        reset_password,
    )

    grade = staticmethod(grade)

    @staticmethod
    def solution():
        from labs.solutions.permission_provider import admin_tools, run_call

        return admin_tools, run_call

    def test_solution_passes(self):
        report = self.grade(*self.solution())
        assert report.passed, str(report)

    def test_stub_is_not_done(self):
        assert "not done yet" in str(self.grade(stub, stub))
        assert "not done yet" in str(self.grade(self.solution()[0], stub))

    def test_solution_passes_whatever_the_seed_and_the_role_table_is_left_as_it_was(self):
        before = {user: set(roles) for user, roles in self.ROLES.items()}
        for seed in range(10):
            report = self.grade(*self.solution(), seed=seed)
            assert report.passed, str(report)
            assert sum(o.case.startswith("made-up case") for o in report.outcomes) == 8
        assert self.ROLES == before

    def test_a_provider_that_knows_the_public_users_by_name_fails_the_made_up_ones(self):
        _, run_call = self.solution()
        by_name = {"alice": [self.delete_user, self.reset_password], "erin": [self.delete_user, self.reset_password],
                   "dave": [self.reset_password]}

        def known_users(request):  # the public role table written out instead of looked up
            return by_name.get(request.context.user if request.context else None)

        report = self.grade(known_users, run_call, seed=3)
        failed = [o.case for o in report.failures]
        assert failed and all(case.startswith("made-up case") for case in failed), failed
        assert "did not offer ['delete_user', 'reset_password']" in failing_cases(report)

    def test_offering_everything_to_everyone_fails_and_the_tool_runs(self):
        _, run_call = self.solution()
        text = failing_cases(self.grade(lambda request: [self.delete_user, self.reset_password], run_call))
        assert "bob (no role): offered ['delete_user', 'reset_password'] to a user who may not use them" in text
        assert "bob names delete_user anyway: delete_user ran for a user it was not offered to" in text

    def test_a_run_call_that_looks_tools_up_everywhere_is_caught(self):
        """The right provider, but calls run from a registry of every tool: hiding alone."""
        from labs.graders.permission_provider import EVERY_TOOL
        from toolkit.tools import render_result

        admin_tools, _ = self.solution()
        registry = {each.name: each for each in EVERY_TOOL}

        def run_anything(call, request, provider):
            if call.name not in registry:
                return f"Error: there is no tool named {call.name!r}."
            return render_result(registry[call.name].invoke(call.arguments))

        report = self.grade(admin_tools, run_anything)
        text = failing_cases(report)
        assert "bob names delete_user anyway: delete_user ran for a user it was not offered to" in text
        assert "a request without a context names reset_password: reset_password ran" in text
        assert "alice (admin) may delete" not in text
        assert all(o.passed for o in report.outcomes[:7])  # the provider itself is right

    def test_a_refusal_that_admits_the_tool_exists_is_caught(self):
        from labs.solutions.permission_provider import run_call as right

        admin_tools, _ = self.solution()

        def telling(call, request, provider):
            if call.name in ("delete_user", "reset_password") and call.name not in tools_for(provider, request):
                return f"Error: you are not allowed to use {call.name}; ask an administrator."
            return right(call, request, provider)

        def tools_for(provider, request):
            from toolkit.tools import tools_for_turn
            return tools_for_turn(self.STATIC, [provider], request).names

        text = failing_cases(self.grade(admin_tools, telling))
        assert ("bob names delete_user anyway: the refusal of delete_user differs from the refusal of "
                "drop_database, a tool that does not exist") in text

    def test_a_refusal_without_the_error_prefix_is_caught(self):
        from labs.solutions.permission_provider import run_call as right

        admin_tools, _ = self.solution()

        def unmarked(call, request, provider):  # the same words for both, but not marked as an error
            text = right(call, request, provider)
            return text.replace("Error: t", "T", 1) if text.startswith("Error: ") else text

        text = failing_cases(self.grade(admin_tools, unmarked))
        assert "bob names delete_user anyway: a refusal is what the model reads instead of a result: start the text with 'Error: '" in text
        assert "bob may look up an order" not in text

    def test_the_refusal_cases_depend_on_the_learners_provider(self):
        """The grader hands run_call the learner's provider: a right run_call cannot save a wrong one."""
        from labs.solutions.permission_provider import run_call as right

        def everyone_sees_everything(request):
            return [self.delete_user, self.reset_password]

        text = failing_cases(self.grade(everyone_sees_everything, right))
        assert "bob names delete_user anyway: delete_user ran" in text  # the provider is what decides

    def test_reading_the_user_without_checking_for_a_context_crashes_on_that_case(self):
        roles = self.ROLES

        def careless(request):
            tools = []
            if "admin" in roles.get(request.context.user, set()):
                tools.append(self.delete_user)
            if roles.get(request.context.user, set()) & {"admin", "support"}:
                tools.append(self.reset_password)
            return tools

        text = failing_cases(self.grade(careless, self.solution()[1]))
        assert "a request without a context: raised AttributeError" in text
        assert "a request without a context names reset_password: raised AttributeError" in text
        assert "alice (admin)" not in text  # that case passes

    def test_admins_only_forgets_support(self):
        roles = self.ROLES
        admins_only = (lambda request: [self.delete_user, self.reset_password]
                       if request.context and "admin" in roles.get(request.context.user, set()) else None)
        text = failing_cases(self.grade(admins_only, self.solution()[1]))
        assert "dave (support): did not offer ['reset_password']" in text
        assert "dave (support) may reset a password: this user may use reset_password" in text


# --- Lab 12: assemble a stream -------------------------------------------------------------------

class TestAssembleStream:
    from labs.graders.assemble_stream import grade

    grade = staticmethod(grade)

    def test_solution_passes(self):
        from labs.solutions.assemble_stream import assemble

        report = self.grade(assemble)
        assert report.passed, str(report)

    def test_solution_agrees_with_the_scripted_models_own_stream(self):
        from labs.solutions.assemble_stream import assemble
        from toolkit import fake

        model = fake.ScriptedModel([fake.calls(fake.call("get_weather", {"city": "北京"}, id="c1"),
                                               fake.call("calculate", {"expression": "sqrt(2)"}, id="c2"), content="OK ")])
        stream = model.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}], stream=True)
        assert assemble(stream) == {"content": "OK ", "finish_reason": "tool_calls", "tool_calls": [
            {"id": "c1", "name": "get_weather", "arguments": '{"city": "北京"}'},
            {"id": "c2", "name": "calculate", "arguments": '{"expression": "sqrt(2)"}'}]}

    def test_stub_is_not_done(self):
        assert "not done yet" in str(self.grade(stub))

    def test_solution_passes_whatever_the_seed(self):
        from labs.solutions.assemble_stream import assemble

        for seed in range(10):
            report = self.grade(assemble, seed=seed)
            assert report.passed, str(report)
            assert sum(o.case.startswith("made-up case") for o in report.outcomes) == 5

    def test_a_table_of_the_public_streams_fails_the_made_up_ones(self):
        from labs.graders.assemble_stream import CASES

        def fingerprint(chunks):
            return json.dumps([chunk.model_dump() for chunk in chunks], sort_keys=True)

        table = {fingerprint(chunks): expected for _, chunks, expected in CASES}
        report = self.grade(lambda chunks: table[fingerprint(list(chunks))], seed=1)
        failed = [o.case for o in report.failures]
        assert len(failed) == 5 and all(case.startswith("made-up case") for case in failed), failed

    def test_arguments_sent_with_the_name_are_not_dropped(self):
        """The public streams send a call's name with empty arguments; some servers send the first
        fragment (or all of it) with the name, and made-up streams sometimes do."""
        from labs.solutions.assemble_stream import assemble

        def head_without_arguments(chunks):
            def dropped(chunk):
                chunk = chunk.model_copy(deep=True)  # the grader's chunks stay as they were
                for piece in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
                    if piece.id and piece.function:
                        piece.function.arguments = ""  # "the first piece only names the call"
                return chunk
            return assemble(dropped(chunk) for chunk in chunks)

        reports = [self.grade(head_without_arguments, seed=seed) for seed in range(10)]
        assert not all(report.passed for report in reports)
        assert all(o.case.startswith("made-up case") for report in reports for o in report.failures)

    def test_appending_to_the_last_call_breaks_interleaved_calls(self):
        def last_call(chunks):
            calls, text, finish = [], "", None
            for chunk in chunks:
                if not chunk.choices:
                    continue
                delta, finish = chunk.choices[0].delta, chunk.choices[0].finish_reason or finish
                text += delta.content or ""
                for piece in delta.tool_calls or []:
                    if piece.id:
                        calls.append({"id": piece.id, "name": piece.function.name, "arguments": ""})
                    calls[-1]["arguments"] += piece.function.arguments or ""
            return {"content": text or None, "tool_calls": calls, "finish_reason": finish}

        text = failing_cases(self.grade(last_call))
        assert text.startswith("two calls interleaved: 'tool_calls' differs")

    def test_forgetting_the_usage_chunk_crashes_on_that_case(self):
        from labs.solutions.assemble_stream import assemble

        def no_skip(chunks):
            return assemble(chunk if chunk.choices else chunk.choices[0] for chunk in chunks)

        text = failing_cases(self.grade(no_skip))
        assert "a usage chunk with no choices at the end: raised IndexError" in text


# --- Lab 13: parse call blocks -------------------------------------------------------------------

class TestCallParser:
    from labs.graders.call_parser import grade

    grade = staticmethod(grade)

    def test_solution_passes(self):
        from labs.solutions.call_parser import parse_calls

        report = self.grade(parse_calls)
        assert report.passed, str(report)

    def test_stub_is_not_done(self):
        assert "not done yet" in str(self.grade(stub))

    def test_solution_passes_whatever_the_seed(self):
        from labs.solutions.call_parser import parse_calls

        for seed in range(10):
            report = self.grade(parse_calls, seed=seed)
            assert report.passed, str(report)
            assert sum(o.case.startswith("made-up case") for o in report.outcomes) == 5

    def test_a_table_of_the_public_texts_fails_the_made_up_ones(self):
        from labs.graders.call_parser import CASES
        from labs.solutions.call_parser import parse_calls

        table = {text: parse_calls(text) for _, text in CASES}
        report = self.grade(lambda text: table.get(text, (text, [])), seed=2)
        failed = [o.case for o in report.failures]
        assert failed == ["made-up case 2: calls", "made-up case 3: calls", "made-up case 4: calls, the last one cut off",
                          "made-up case 5: a call whose closing tag is missing"], failed

    def test_splitting_on_the_tag_fails_on_a_tag_inside_a_string(self):
        """Splitting the text at every <tool_call> passes the public texts; a made-up argument
        that holds the tag (or the closing tag) as text breaks it."""
        def split_on_tags(text):
            if not text.lstrip().startswith("<tool_call>"):
                return text, []
            calls = []
            for piece in text.split("<tool_call>")[1:]:
                try:
                    value = json.loads(piece.replace("</tool_call>", ""))
                except json.JSONDecodeError:
                    break
                calls.append({"name": value["name"], "arguments": json.dumps(value["arguments"], ensure_ascii=False)})
            return (None, calls) if calls else (text, [])

        reports = [self.grade(split_on_tags, seed=seed) for seed in range(5)]
        assert all(not report.passed for report in reports)
        assert all(o.case.startswith("made-up case") for report in reports for o in report.failures)

    def test_a_regex_that_needs_the_closing_tag(self):
        def needs_close(text):
            found = re.findall(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", text, re.S)
            calls = [{"name": json.loads(f)["name"], "arguments": json.dumps(json.loads(f)["arguments"])}
                     for f in found]
            return (None, calls) if calls else (text, [])

        text = failing_cases(self.grade(needs_close))
        assert text.startswith("closing tag missing after a complete call: the content differ")

    def test_parsed_arguments_instead_of_json_text(self):
        from labs.solutions.call_parser import parse_calls

        def parsed(text):
            content, calls = parse_calls(text)
            return content, [{"name": c["name"], "arguments": json.loads(c["arguments"])} for c in calls]

        text = failing_cases(self.grade(parsed))
        assert "one call: 'arguments' should stay a JSON string" in text
