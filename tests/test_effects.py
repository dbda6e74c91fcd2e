"""The effects table: one row per (model, setting) from a run's trials, and the app's sentence."""
import json
from pathlib import Path

import pandas as pd

from toolkit.bench.effects import (
    EFFECTS_FILE,
    SETTINGS_MEASURED,
    discordance,
    effect_note,
    effect_row,
    load_effects,
)
from toolkit.bench.trials import KNOBS, Settings

MODEL = "SmolLM2-135M-Instruct"
BENCH_PAGE = Path(__file__).resolve().parent.parent / "docs" / "bench.md"  # where the effects tables are shown


def trials(setting, outcomes: dict) -> pd.DataFrame:
    """Trials of one setting: for each value, a list of (right tool, right arguments), the n-th
    of each list on case n (so the values are paired case by case)."""
    return pd.DataFrame([{setting: value, "selection_ok": tool, "arguments_ok": arguments,
                          "case_id": f"case-{n}", "repeat": 0, "seed": 0}
                         for value, pairs in outcomes.items() for n, (tool, arguments) in enumerate(pairs)])


def test_every_measured_setting_is_a_bench_setting_with_values_it_accepts():
    for name, (values, categories, fixed) in SETTINGS_MEASURED.items():
        assert name in KNOBS and len(values) == 2 and categories
        for value in values:
            Settings(**{**fixed, name: value})  # raises if the value is not one the setting takes


def test_a_row_counts_both_values_and_says_whether_the_intervals_separate():
    frame = trials("protocol", {"native": [(True, True)] * 11 + [(False, False)], "string": [(False, False)] * 12})
    row = effect_row("protocol", ("native", "string"), frame, MODEL, ["simple"], {})
    assert row["cases"] == 12 and row["values"] == ["native", "string"]
    assert [p["successes"] for p in row["selection"]] == [11, 0]
    assert row["selection_points"] == -92 and row["selection_separate"]
    assert row["markdown"].startswith("| protocol | native vs string | 12 | 11/12 [65%, 99%] vs 0/12 [0%, 24%]")
    paired = row["selection_paired"]
    assert (paired["only_first"], paired["only_second"], paired["pairs"]) == (11, 0, 12)
    assert paired["real"] and paired["p"] < 0.001 and paired["method"] == "McNemar"
    assert row["markdown"].endswith("| -92 [-99, -55], p < 0.001 (11 / 0) | -92 [-99, -55], p < 0.001 (11 / 0) | tool, arguments |")


def test_a_row_is_paired_even_where_the_intervals_overlap():
    # temperature 0 against 1.0 on 30 cases: arguments 16 against 8, 10 lost and 2 gained
    outcomes = {0.0: [(True, True)] * 16 + [(True, False)] * 14,
                1.0: [(True, True)] * 6 + [(True, False)] * 10 + [(True, True)] * 2 + [(True, False)] * 12}
    row = effect_row("temperature", (0.0, 1.0), trials("temperature", outcomes), MODEL, ["simple"], {})
    assert not row["arguments_separate"]  # the Wilson intervals overlap...
    assert row["arguments_paired"]["real"] and round(row["arguments_paired"]["p"], 3) == 0.039  # ...the pair does not
    assert not row["selection_paired"]["real"] and row["selection_paired"]["p"] == 1
    note = effect_note(MODEL, "temperature", [row])
    assert "the right arguments -27 points" in note and "p 0.039: a real change" in note
    assert "the right tool +0 points" in note and "p 1: within chance" in note


def test_values_read_back_as_the_app_shows_them_including_a_none_stored_as_nan():
    frame = trials("parallel_tool_calls", {None: [(True, True)] * 3, False: [(True, False)] * 3})
    frame["parallel_tool_calls"] = frame["parallel_tool_calls"].astype(object).where(
        frame["parallel_tool_calls"].notna(), float("nan"))
    row = effect_row("parallel_tool_calls", (None, False), frame, MODEL, ["parallel"], {})
    assert row["values"] == ["endpoint default", "off"] and row["arguments_points"] == -100


def test_the_note_says_real_only_where_the_paired_test_does():
    apart = effect_row("names", ("real", "hidden"), trials("names", {
        "real": [(True, True)] * 12, "hidden": [(False, False)] * 12}), MODEL, ["simple"], {})
    close = effect_row("description", ("clear", "vague"), trials("description", {
        "clear": [(True, True)] * 4 + [(False, False)] * 2, "vague": [(True, False)] * 3 + [(False, False)] * 3}),
        MODEL, ["simple"], {})
    assert "the right tool -100 points [-100, -66], p < 0.001: a real change" in effect_note(MODEL, "names", [apart, close])
    assert "the right tool -17 points" in effect_note(MODEL, "description", [apart, close])
    assert "within chance" in effect_note(MODEL, "description", [apart, close])
    assert effect_note("another-model", "names", [apart]) is None
    assert effect_note(MODEL, "enums", [apart]) is None


def test_discordance_is_the_share_of_cases_the_setting_changed_in_its_busiest_aspect():
    row = effect_row("description", ("clear", "vague"), trials("description", {
        "clear": [(True, True)] * 4 + [(False, False)] * 2, "vague": [(True, False)] * 3 + [(False, False)] * 3}),
        MODEL, ["simple"], {})
    assert discordance(MODEL, "description", [row]) == (4 / 6, "arguments")
    assert discordance(MODEL, "enums", [row]) is None
    unpaired = {key: value for key, value in row.items() if not key.endswith("_paired")}
    assert discordance(MODEL, "description", [unpaired]) is None
    assert "not compared case by case" in effect_note(MODEL, "description", [unpaired])


def test_a_missing_table_is_no_rows_and_the_shipped_table_is_well_formed(tmp_path):
    assert load_effects(tmp_path / "absent.json") == []
    rows = load_effects()
    assert EFFECTS_FILE.exists() and rows, "benchmarks/effects_table.py --write has not been run"
    assert len({(row["model"], row["setting"]) for row in rows}) == len(rows)  # one row each
    for row in rows:
        assert row["setting"] in SETTINGS_MEASURED
        assert "selection_paired" in row and "arguments_paired" in row, (row["model"], row["setting"])
        assert all(p["n"] == row["cases"] for p in row["selection"] + row["arguments"])
        assert effect_note(row["model"], row["setting"], rows).startswith(f"Measured on {row['model']}")
    json.dumps(rows)


def test_a_row_keeps_the_right_values_per_parameter_kind_under_each_value():
    frame = trials("enums", {True: [(True, True)] * 2, False: [(True, False)] * 2})
    parameters = pd.DataFrame([{"enums": True, "kind": "enum", "values": 2, "right": 2},
                               {"enums": False, "kind": "enum", "values": 2, "right": 0},
                               {"enums": False, "kind": "free text", "values": 2, "right": 1}])
    row = effect_row("enums", (True, False), frame, MODEL, ["enum"], {}, parameters)
    assert row["parameters"] == {"on": {"enum": {"right": 2, "values": 2}},
                                 "off": {"enum": {"right": 0, "values": 2}, "free text": {"right": 1, "values": 2}}}


def test_a_value_is_worded_once_for_the_app_and_the_table():
    from toolkit.bench.trials import show_value
    from toolkit.bench.trials import show_value as the_apps

    assert the_apps is show_value
    assert [show_value(v) for v in (True, False, None, float("nan"), {"x": "y"}, 0.5, "vague")] == \
        ["on", "off", "endpoint default", "endpoint default", "custom", "0.5", "vague"]


def test_the_bench_page_shows_the_stored_paired_rows_of_the_default_model_as_they_are():
    readme = BENCH_PAGE.read_text("utf-8")
    rows = [row for row in load_effects() if row["model"] == MODEL and "selection_paired" in row]
    assert len(rows) == len(SETTINGS_MEASURED)
    for row in rows:
        assert row["markdown"] in readme, row["setting"]


def test_the_bench_page_shows_the_tuned_models_paired_rows_as_they_are_stored():
    from toolkit.engine import BASE_MODEL

    readme = BENCH_PAGE.read_text("utf-8")
    rows = [row for row in load_effects() if row["model"] != BASE_MODEL and "selection_paired" in row]
    assert {row["model"] for row in rows} == {f"{BASE_MODEL}+tools", f"{BASE_MODEL}+tools2"}
    for row in rows:
        # setting, values, cases, right tool, right arguments, then the two paired cells and the verdict
        cells = [cell.strip() for cell in row["markdown"].strip("| \n").split(" | ")]
        line = " | ".join([row["model"].removeprefix(BASE_MODEL), *cells[:2], *cells[5:]])
        assert f"| {line} |" in readme, (row["model"], row["setting"])


def test_the_sidebar_detail_quotes_the_first_tuned_models_stored_argument_effects():
    from toolkit.app.backends import EMBEDDED_DETAIL
    from toolkit.engine import BASE_MODEL

    rows = {row["setting"]: row for row in load_effects() if row["model"] == f"{BASE_MODEL}+tools"}
    description, enums = rows["description"], rows["enums"]["arguments_paired"]
    # "Clear and vague descriptions move neither its choice of tool nor its arguments more than chance"
    assert not description["selection_paired"]["real"] and not description["arguments_paired"]["real"]
    assert enums["real"]  # "real by McNemar's test"
    assert f"the suite's {enums['pairs']} enum questions" in EMBEDDED_DETAIL
    assert f"switching enums off costs it {-enums['points']} points of right arguments" in EMBEDDED_DETAIL


def test_the_sidebar_detail_quotes_the_stored_names_rows_of_all_three_models():
    from toolkit.app.backends import EMBEDDED_DETAIL
    from toolkit.engine import BASE_MODEL

    def rates(model: str) -> tuple[str, str, int]:
        row = next(row for row in load_effects() if row["model"] == model and row["setting"] == "names")
        assert "selection_paired" in row and not row["fixed"]
        real, hidden = (f"{pair['rate']:.0%}" for pair in row["selection"])
        return real, hidden, row["cases"]

    tuned_real, tuned_hidden, cases = rates(f"{BASE_MODEL}+tools")
    base_real, base_hidden, base_cases = rates(BASE_MODEL)
    detail = " ".join(EMBEDDED_DETAIL.split())
    assert cases == base_cases and f"the suite's {cases} simple and multiple questions" in detail
    assert f"hiding the names takes its right tools from {tuned_real} to {tuned_hidden}" in detail
    assert f"where the base model falls from {base_real} to {base_hidden}" in detail
    second_real, second_hidden, second_cases = rates(f"{BASE_MODEL}+tools2")
    assert (second_cases == cases and f"on the same {cases} questions, hiding them takes its right tools from "
            f"{second_real} to {second_hidden}") in detail


def test_the_sidebar_detail_quotes_the_second_tuned_models_recorded_descriptions_with_names_hidden():
    from toolkit.app.backends import EMBEDDED_DETAIL
    from toolkit.engine import BASE_MODEL

    recorded = json.loads((Path(__file__).resolve().parent.parent / "data" / "descriptions_names_hidden.json")
                          .read_text(encoding="utf-8"))
    row = next(row for row in recorded["rows"] if row["model"] == f"{BASE_MODEL}+tools2")
    assert row["values"] == ["clear", "vague"] and not row["selection_paired"]["real"]  # "does not read descriptions"
    clear, vague = (f"{rate['rate']:.0%}" for rate in row["selection"])
    assert f"clear ones give it {clear} right tools and vague ones {vague}" in " ".join(EMBEDDED_DETAIL.split())
