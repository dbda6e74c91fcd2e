"""Plotly figures of an experiment, for the app and the lessons.

Every figure says what was measured in words a learner reads without a legend hunt: the
title names the question, the axes name the quantity, and each bar carries its n and its
95% Wilson interval, so that two bars whose intervals overlap are not read as a difference.
"""
from __future__ import annotations

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from toolkit.bench.trials import factor_label

NO_CALL, UNPARSABLE, CUT_OFF = "(no call)", "(unparsable)", "(cut off)"  # as experiment.py writes them
ASPECTS = {"selection": "right tool(s)", "arguments": "right tool(s) and arguments",
           # BFCL's multi-turn conversations, paired by toolkit.bench.multi_turn_run.compare_runs
           "conversation": "whole conversation", "turn": "each turn on its own"}
REASON_LABELS = {
    "no_call": "no call", "spurious_call": "called a tool when none was needed",
    "wrong_tool": "wrong tool", "unparsable": "unparsable output", "cut_off": "cut off by max_tokens",
    "missing_required": "missing required argument", "unexpected_parameter": "unexpected argument",
    "wrong_type": "wrong argument type", "value_not_accepted": "wrong argument value",
    "wrong_call_count": "wrong number of calls",
}
# A reason keeps its colour from run to run and chart to chart, whichever reasons a run has.
REASON_COLOURS = dict(zip(REASON_LABELS.values(), px.colors.qualitative.Safe + px.colors.qualitative.Pastel))


def _categories(values: pd.Series) -> list[str]:
    """Values as text, in order of first appearance (the plan's order)."""
    return list(dict.fromkeys(values.astype(str)))


def _empty(title: str) -> go.Figure:
    figure = go.Figure()
    figure.update_layout(title=title, xaxis={"visible": False}, yaxis={"visible": False})
    figure.add_annotation(text="No trials yet: run an experiment first.", showarrow=False,
                          xref="paper", yref="paper", x=0.5, y=0.5)
    return figure


def accuracy_chart(rates: pd.DataFrame, factor: str, second_factor: str | None = None,
                   aspects: tuple[str, ...] = ("selection", "arguments")) -> go.Figure:
    """Grouped bars of the rates from :func:`toolkit.bench.rates.rate_table`, one group per value
    of ``factor``; bars by ``second_factor`` if given (one panel per aspect), else by aspect."""
    title = f"How often the model got it right, by {factor_label(factor)}"
    if rates.empty:
        return _empty(title)
    long = []
    for aspect in aspects:
        part = rates.copy()
        part["aspect"] = ASPECTS[aspect]
        part["rate"] = part[f"{aspect}_rate"]
        part["low"], part["high"] = part[f"{aspect}_low"], part[f"{aspect}_high"]
        part["successes"] = part[f"{aspect}_successes"]
        long.append(part)
    data = pd.concat(long, ignore_index=True)
    data["error_plus"] = data["high"] - data["rate"]
    data["error_minus"] = data["rate"] - data["low"]
    data["n_label"] = "n=" + data["n"].astype(str)
    data[factor] = data[factor].astype(str)
    orders = {factor: _categories(rates[factor]), "aspect": [ASPECTS[a] for a in aspects]}
    colour, facet = "aspect", None
    if second_factor:
        data[second_factor] = data[second_factor].astype(str)
        orders[second_factor] = _categories(rates[second_factor])
        colour, facet = second_factor, ("aspect" if len(aspects) > 1 else None)
        title += f" and {factor_label(second_factor)}"
    figure = px.bar(
        data, x=factor, y="rate", color=colour, facet_col=facet, barmode="group",
        error_y="error_plus", error_y_minus="error_minus", text="n_label",
        category_orders=orders, title=title,
        hover_data={"n": True, "successes": True, "low": ":.0%", "high": ":.0%",
                    "rate": ":.0%", "error_plus": False, "error_minus": False, "n_label": False},
        labels={"rate": "share of trials", factor: factor_label(factor), "aspect": "counted as right",
                **({second_factor: factor_label(second_factor)} if second_factor else {}),
                "low": "95% interval from", "high": "95% interval to", "successes": "right"})
    figure.update_traces(textposition="inside", insidetextanchor="start")
    figure.update_yaxes(range=[0, 1.05], tickformat=".0%", title_text="share of trials (95% Wilson interval)",
                        col=1)
    figure.for_each_annotation(lambda a: a.update(text=a.text.split("=")[-1]))
    return figure


def failure_chart(trials: pd.DataFrame, factor: str) -> go.Figure:
    """Stacked bars: for each value of ``factor``, the share of trials lost to each reason."""
    title = f"Why trials failed, by {factor_label(factor)}"
    if trials.empty:
        return _empty(title)
    data = trials.assign(**{factor: trials[factor].astype(str)})
    totals = data.groupby(factor, sort=False).size().rename("n")
    failed = data[~data["arguments_ok"].astype(bool)]
    counts = failed.groupby([factor, "reason"], sort=False).size().rename("count").reset_index()
    counts = counts.join(totals, on=factor)
    counts["share"] = counts["count"] / counts["n"]
    counts["why"] = counts["reason"].map(lambda r: REASON_LABELS.get(r, str(r)))
    orders = {factor: _categories(trials[factor]),
              "why": [label for reason, label in REASON_LABELS.items() if reason in set(counts["reason"])]}
    if counts.empty:
        figure = _empty(title)
        figure.layout.annotations[0].text = "Every trial passed: nothing failed."
        return figure
    figure = px.bar(counts, x=factor, y="share", color="why", barmode="stack", category_orders=orders,
                    color_discrete_map=REASON_COLOURS, title=title, hover_data={"count": True, "n": True, "share": ":.0%"},
                    labels={factor: factor_label(factor), "why": "reason", "count": "trials",
                            "n": "trials in group", "share": "share of trials"})
    figure.update_yaxes(range=[0, 1.05], tickformat=".0%", title_text="share of trials that failed")
    return figure


def confusion_chart(trials: pd.DataFrame) -> go.Figure:
    """A heatmap of the tools each case expected against the tools the model chose."""
    title = "Which tool the model chose, for the tool each case expected"
    if trials.empty:
        return _empty(title)
    table = pd.crosstab(trials["expected_tools"], trials["chosen_tools"])
    # One order for both axes (tools by name, then the two non-answers): the right answers
    # then line up along the diagonal wherever they can.
    specials = [NO_CALL, UNPARSABLE, CUT_OFF]
    order = sorted((set(table.index) | set(table.columns)) - set(specials)) + specials
    rows = [name for name in order if name in table.index]
    columns = [name for name in order if name in table.columns or name == NO_CALL]
    table = table.reindex(index=rows, columns=columns, fill_value=0)
    figure = px.imshow(table, text_auto=True, aspect="auto", color_continuous_scale="Blues",
                       labels={"x": "tool(s) the model chose", "y": "tool(s) the case expected",
                               "color": "trials"}, title=title)
    figure.update_xaxes(side="bottom", tickangle=-30)
    return figure


def paired_chart(differences: list) -> go.Figure:
    """Each value against the first, on the same cases: the difference in points with its 95%
    paired interval, against a zero line. A bar that crosses zero is within chance; the colour
    says what the paired test (``toolkit.bench.paired``) found."""
    title = "The paired difference: each value against the first, on the same cases"
    differences = [d for d in differences if d.pairs]  # a comparison with no shared case has nothing to draw
    if not differences:
        return _empty(title)
    rows = []
    for d in differences:
        where = f" (with {d.within})" if d.within else ""
        rows.append({"comparison": f"{d.second} − {d.first}{where} · {ASPECTS[d.aspect]}",
                     "points": 100 * d.difference, "low": 100 * d.low, "high": 100 * d.high,
                     "verdict": "real (p < 0.05)" if d.real else "within chance",
                     "p": d.p, "changed": f"{d.only_first} lost, {d.only_second} gained of {d.pairs}"})
    data = pd.DataFrame(rows)
    figure = px.scatter(data, x="points", y="comparison", color="verdict",
                        error_x=data["high"] - data["points"], error_x_minus=data["points"] - data["low"],
                        category_orders={"verdict": ["real (p < 0.05)", "within chance"],
                                         "comparison": list(data["comparison"])},
                        color_discrete_map={"real (p < 0.05)": "#c0392b", "within chance": "#7f8c8d"},
                        hover_data={"p": ":.3f", "changed": True, "low": ":.0f", "high": ":.0f"},
                        labels={"points": "difference in points (95% paired interval)", "comparison": ""},
                        title=title)
    figure.add_vline(x=0, line_dash="dash", line_color="black")
    figure.update_traces(marker_size=12)
    figure.update_xaxes(range=[min(-10, data["low"].min() - 5), max(10, data["high"].max() + 5)], zeroline=False)
    figure.update_layout(height=220 + 45 * len(data), legend_title_text="paired test",
                         legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0})
    return figure
