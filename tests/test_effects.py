"""The effects table: one row per (model, setting) from a run's trials, and the app's sentence."""
import json

import pandas as pd

from toolkit.bench.effects import EFFECTS_FILE, SETTINGS_MEASURED, effect_note, effect_row, load_effects
from toolkit.bench.trials import KNOBS, Settings

MODEL = "SmolLM2-135M-Instruct"


def trials(setting, outcomes: dict) -> pd.DataFrame:
    """Trials of one setting: for each value, a list of (right tool, right arguments)."""
    return pd.DataFrame([{setting: value, "selection_ok": tool, "arguments_ok": arguments}
                         for value, pairs in outcomes.items() for tool, arguments in pairs])


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


def test_values_read_back_as_the_app_shows_them_including_a_none_stored_as_nan():
    frame = trials("parallel_tool_calls", {None: [(True, True)] * 3, False: [(True, False)] * 3})
    frame["parallel_tool_calls"] = frame["parallel_tool_calls"].astype(object).where(
        frame["parallel_tool_calls"].notna(), float("nan"))
    row = effect_row("parallel_tool_calls", (None, False), frame, MODEL, ["parallel"], {})
    assert row["values"] == ["endpoint default", "off"] and row["arguments_points"] == -100


def test_the_note_says_moved_only_when_the_intervals_separate():
    apart = effect_row("names", ("real", "hidden"), trials("names", {
        "real": [(True, True)] * 12, "hidden": [(False, False)] * 12}), MODEL, ["simple"], {})
    close = effect_row("description", ("clear", "vague"), trials("description", {
        "clear": [(True, True)] * 4 + [(False, False)] * 2, "vague": [(True, False)] * 3 + [(False, False)] * 3}),
        MODEL, ["simple"], {})
    assert "moved the right-tool rate by -100 points" in effect_note(MODEL, "names", [apart, close])
    assert "within what chance allows" in effect_note(MODEL, "description", [apart, close])
    assert effect_note("another-model", "names", [apart]) is None
    assert effect_note(MODEL, "enums", [apart]) is None


def test_a_missing_table_is_no_rows_and_the_shipped_table_is_well_formed(tmp_path):
    assert load_effects(tmp_path / "absent.json") == []
    rows = load_effects()
    assert EFFECTS_FILE.exists() and rows, "benchmarks/effects_table.py --write has not been run"
    assert len({(row["model"], row["setting"]) for row in rows}) == len(rows)  # one row each
    for row in rows:
        assert row["setting"] in SETTINGS_MEASURED
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
    from toolkit.app.factors import show_value as the_apps
    from toolkit.bench.trials import show_value

    assert the_apps is show_value
    assert [show_value(v) for v in (True, False, None, float("nan"), {"x": "y"}, 0.5, "vague")] == \
        ["on", "off", "endpoint default", "endpoint default", "custom", "0.5", "vague"]
