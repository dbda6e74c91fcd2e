"""What changed between two values: the discordant cases, the marked difference of two trials,
two stored runs compared pair by pair, and the sentences about power before and after a run."""
import pandas as pd

from toolkit.app.pairs import changed_cases, marked_difference, paired_reading, runs_paired
from toolkit.bench.power import after_run, before_run


def run_trials(outcomes: dict[str, list[tuple[bool, bool]]]) -> pd.DataFrame:
    rows, next_id = [], 1
    for value, pairs in outcomes.items():
        for n, (tool, arguments) in enumerate(pairs):
            rows.append({"id": next_id, "case_id": f"case-{n}", "repeat": 0, "seed": 0, "description": value,
                         "selection_ok": tool, "arguments_ok": arguments, "reason": None if arguments else "wrong_tool",
                         "chosen_tools": "get_weather" if tool else "get_time"})
            next_id += 1
    return pd.DataFrame(rows)


def test_changed_cases_lists_only_the_discordant_pairs_with_both_trials():
    trials = run_trials({"clear": [(True, True), (True, True), (False, False)],
                         "vague": [(True, True), (False, False), (True, True)]})
    changed = changed_cases(trials, "description", "clear", "vague", "selection")
    assert changed["case_id"].tolist() == ["case-1", "case-2"]
    assert changed["changed"].tolist() == ["only clear right", "only vague right"]
    assert changed[["id_first", "id_second"]].values.tolist() == [[2, 5], [3, 6]]
    assert changed.loc[0, "chosen_tools_second"] == "get_time"


def test_changed_cases_of_an_unchanged_or_unpaired_run_is_empty_with_its_columns():
    same = run_trials({"clear": [(True, True)] * 2, "vague": [(True, True)] * 2})
    assert changed_cases(same, "description", "clear", "vague", "arguments").empty
    lonely = same[same["description"] == "clear"]
    assert list(changed_cases(lonely, "description", "clear", "vague", "arguments").columns)[:2] == ["case_id", "repeat"]


def test_marked_difference_shows_only_what_differs():
    first = {"tools": [{"description": "Get the current weather in one city."}], "temperature": 0}
    second = {"tools": [{"description": "Weather."}], "temperature": 0}
    marked = marked_difference(first, second, "clear", "vague")
    assert '-   "description": "Get the current weather in one city."' in marked
    assert '+   "description": "Weather."' in marked
    assert marked.startswith("--- clear\n+++ vague") and "temperature" in marked  # context lines
    assert marked_difference(first, first, "clear", "vague") == ""
    assert "(nothing)" in marked_difference(None, "text", "a", "b")


def test_paired_reading_says_one_value_only_and_otherwise_one_line_per_comparison():
    one = run_trials({"clear": [(True, True)]})
    assert paired_reading(one, "description") == ([], "Only clear has finished trials in this run: nothing to compare.")
    assert paired_reading(one.drop(columns="description"), "description")[1] == "One value only: nothing to compare in this run."
    differences, text = paired_reading(run_trials({"clear": [(True, True)] * 3, "vague": [(False, False)] * 3}),
                                       "description")
    assert len(differences) == 2 and text.count("\n- ") == 1 and text.startswith("- Right tool:")


def test_two_runs_are_paired_on_the_trials_they_share_and_the_rest_counted():
    matched = pd.DataFrame({"case_id": ["a", "b", "c", "d"],
                            "selection_ok_a": [True, True, False, True], "selection_ok_b": [False, False, False, None],
                            "arguments_ok_a": [True, False, False, True], "arguments_ok_b": [False, False, False, None]})
    selection, arguments = runs_paired(matched, "run 1", "run 2")
    assert (selection.pairs, selection.left_out, selection.only_first, selection.only_second) == (3, 1, 2, 0)
    assert arguments.only_first == 1 and "run 2 got the tool wrong in 2 cases that run 1 got right" in selection.sentence()
    assert runs_paired(matched.iloc[3:], "run 1", "run 2") == []


def test_power_before_a_run_names_the_reach_and_the_cases_a_goal_needs():
    text = before_run(30, 0.4, "on a model")
    assert text.startswith("Power: on a model it changed 40% of the answers; 30 paired cases show a difference of about")
    assert "a 10-point difference takes about 329 cases" in text
    assert "too few to show any difference" in before_run(10, 0.05, "on a model")
    assert before_run(30, 0.0, "on a model").startswith("Power: on a model this setting changed no answer at all")


def test_after_a_run_the_interval_is_read_and_a_goal_sized_in_cases_never_the_power_at_what_was_seen():
    assert after_run(-0.45, -0.09, 0.4, True).startswith("The plan was large enough")
    text = after_run(-0.08, 0.03, 0.4, False)
    assert text.startswith("The paired interval puts the difference between -8 and +3 points")
    assert "a 10-point difference takes about 329 cases" in text
    assert after_run(-0.08, 0.03, 0.4, False, clustered=True).endswith("+3 points.")
    assert after_run(-1.0, 1.0, 0.0, False) == "Too few cases to bound the difference."


def test_the_plan_power_sentence_reads_the_stored_row_and_names_its_values():
    from toolkit.bench.effects import effect_row, plan_power

    trials = pd.DataFrame([{"temperature": value, "selection_ok": True, "arguments_ok": ok, "case_id": f"c{n}",
                            "repeat": 0, "seed": 0}
                           for value, oks in ((0.0, [True] * 16 + [False] * 14),
                                              (1.0, [True] * 6 + [False] * 10 + [True] * 2 + [False] * 12))
                           for n, ok in enumerate(oks)])
    row = effect_row("temperature", (0.0, 1.0), trials, "m", ["simple"], {})
    text = plan_power("m", "temperature", 20, [row])
    assert text.startswith("Power: on m (0.0 vs 1.0, the arguments; the effects table) it changed 40% of the answers")
    assert plan_power("m", "enums", 20, [row]) is None and plan_power("m", "temperature", 0, [row]) is None


def test_plan_power_uses_the_discordance_of_the_plans_own_categories():
    from toolkit.bench.effects import discordance, effect_row

    # required loses every question that needs no tool and changes nothing on the others
    outcomes = {"auto": [("simple", True)] * 10 + [("irrelevance", True)] * 10,
                "required": [("simple", True)] * 10 + [("irrelevance", False)] * 10}
    trials = pd.DataFrame([{"tool_choice": value, "category": category, "selection_ok": ok, "arguments_ok": ok,
                            "case_id": f"c{n}", "repeat": 0, "seed": 0}
                           for value, rows in outcomes.items() for n, (category, ok) in enumerate(rows)])
    row = effect_row("tool_choice", ("auto", "required"), trials, "m", ["simple", "irrelevance"], {})
    assert row["selection_discordant_by_category"] == {"simple": [0, 10], "irrelevance": [10, 10]}
    assert discordance("m", "tool_choice", [row]) == (0.5, "selection")
    assert discordance("m", "tool_choice", [row], ["irrelevance"]) == (1.0, "selection")
    assert discordance("m", "tool_choice", [row], ["simple"])[0] == 0.0
    assert discordance("m", "tool_choice", [row], ["enum"]) == (0.5, "selection")  # not measured there: all
