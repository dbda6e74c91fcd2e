"""The experiment figures: the traces, their numbers, and words a learner can read."""
import pandas as pd
import pytest

from toolkit.bench.charts import accuracy_chart, confusion_chart, failure_chart
from toolkit.bench.rates import rate_table


def trials_frame():
    rows = []
    # clear: 8 right, 1 wrong tool, 1 no call; vague: 3 right, 4 wrong tool, 2 wrong value, 1 no call
    outcomes = {"clear": [None] * 8 + ["wrong_tool", "no_call"],
                "vague": [None] * 3 + ["wrong_tool"] * 4 + ["value_not_accepted"] * 2 + ["no_call"]}
    for description, reasons in outcomes.items():
        for index, reason in enumerate(reasons):
            chosen = {"wrong_tool": "set_volume", "no_call": "(no call)"}.get(reason, "get_weather")
            rows.append({"description": description, "enums": index % 2 == 0, "reason": reason,
                         "selection_ok": reason in (None, "value_not_accepted"), "arguments_ok": reason is None,
                         "expected_tools": "get_weather", "chosen_tools": chosen})
    return pd.DataFrame(rows)


def test_accuracy_chart_has_one_bar_trace_per_aspect_with_wilson_error_bars():
    table = rate_table(trials_frame(), ["description"])
    figure = accuracy_chart(table, "description")
    assert [trace.type for trace in figure.data] == ["bar", "bar"]
    assert [trace.name for trace in figure.data] == ["right tool(s)", "right tool(s) and arguments"]
    arguments = figure.data[1]
    assert list(arguments.x) == ["clear", "vague"] and list(arguments.y) == [0.8, 0.3]
    assert list(arguments.error_y.array) == pytest.approx(list(table["arguments_high"] - table["arguments_rate"]))
    assert list(arguments.error_y.arrayminus) == pytest.approx(list(table["arguments_rate"] - table["arguments_low"]))
    assert list(arguments.text) == ["n=10", "n=10"]
    assert "descriptions" in figure.layout.title.text and "%" in figure.layout.yaxis.tickformat
    assert figure.layout.xaxis.title.text == "tool descriptions"


def test_accuracy_chart_with_a_second_factor_colours_by_it_in_one_panel_per_aspect():
    figure = accuracy_chart(rate_table(trials_frame(), ["description", "enums"]), "description", "enums")
    assert sorted({trace.name for trace in figure.data}) == ["False", "True"]
    assert len(figure.data) == 4  # two values of enums x two aspects
    assert {a.text for a in figure.layout.annotations} == {"right tool(s)", "right tool(s) and arguments"}
    assert "enum constraints" in figure.layout.title.text


def test_failure_chart_stacks_the_share_of_each_reason():
    figure = failure_chart(trials_frame(), "description")
    by_reason = {trace.name: dict(zip(trace.x, trace.y)) for trace in figure.data}
    assert by_reason["wrong tool"] == {"clear": 0.1, "vague": 0.4}
    assert by_reason["wrong argument value"] == {"vague": 0.2}
    assert by_reason["no call"] == {"clear": 0.1, "vague": 0.1}
    assert figure.layout.barmode == "stack" and "failed" in figure.layout.title.text


def test_confusion_chart_counts_expected_against_chosen_including_no_call():
    figure = confusion_chart(trials_frame())
    heatmap = figure.data[0]
    assert heatmap.type == "heatmap"
    assert list(heatmap.x) == ["get_weather", "set_volume", "(no call)"]
    assert list(heatmap.y) == ["get_weather"]
    assert heatmap.z.tolist() == [[13, 5, 2]]
    assert figure.layout.xaxis.title.text == "tool(s) the model chose"


def test_no_trials_gives_a_figure_that_says_so():
    empty = trials_frame().iloc[0:0]
    for figure in (accuracy_chart(rate_table(empty, ["description"]), "description"),
                   failure_chart(empty, "description"), confusion_chart(empty)):
        assert not figure.data and "No trials" in figure.layout.annotations[0].text


def test_a_reason_keeps_its_colour_whichever_reasons_a_run_has():
    def colours(frame):
        return {trace.name: trace.marker.color for trace in failure_chart(frame, "description").data}

    everything = colours(trials_frame())
    without_no_call = colours(trials_frame().query("reason != 'no_call'"))
    assert set(everything) == {"wrong tool", "no call", "wrong argument value"}
    assert set(without_no_call) == {"wrong tool", "wrong argument value"}
    assert all(without_no_call[name] == everything[name] for name in without_no_call)
    assert len(set(everything.values())) == len(everything)  # and no two reasons share one


def test_the_paired_chart_draws_each_comparison_against_zero_and_colours_the_verdict():
    import pandas as pd

    from toolkit.bench.charts import paired_chart
    from toolkit.bench.paired import paired_differences

    rows = [{"case_id": f"c{i}", "repeat": 0, "seed": 0, "temperature": value, "selection_ok": ok, "arguments_ok": ok}
            for value, oks in (("0.0", [True] * 16 + [False] * 14),
                               ("1.0", [True] * 6 + [False] * 10 + [True] * 2 + [False] * 12))
            for i, ok in enumerate(oks)]
    figure = paired_chart(paired_differences(pd.DataFrame(rows), "temperature"))
    [trace] = figure.data  # both comparisons are real, so one colour group
    assert trace.name == "real (p < 0.05)" and list(trace.y) == ["1.0 − 0.0 · right tool(s)",
                                                                   "1.0 − 0.0 · right tool(s) and arguments"]
    assert [round(x) for x in trace.x] == [-27, -27]
    assert any(shape.x0 == 0 and shape.x1 == 0 for shape in figure.layout.shapes)  # the zero line
    assert paired_chart([]).layout.annotations[0].text.startswith("No trials yet")
