"""Grouped bars as Plotly figures: the per-class scores (Matrices) and B minus A per reference
class and outcome (Compare). One bar trace a series, one group a class; a click on a bar selects
it (`clicked_bar` reads it back from the app's selection event); a click on a legend entry shows
that series alone. Class names are plain text, escaped here, shortened in the middle on the axis
and whole in the hover.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import plotly.graph_objects as go

from tore_engine.plots.heatmaps import PERCENT_FORMAT, axis_label, selected_points, tick_angle
from tore_engine.plots.plain_text import plain_for_plotly

if TYPE_CHECKING:
    import pandas as pd

SCORE_COLOURS = {"recall": "#4363d8", "precision": "#f58231", "f1": "#3cb44b"}
BOX_SCORES = {"ap": ("AP", "#911eb4"), "ar_100": ("AR@100", "#bfef45")}  # mAP's per class: key -> (shown name, colour)
OUTCOME_COLOURS = {"Background": "#7f7f7f", "own class": "#3cb44b", "elsewhere": "#e6194b"}
HEIGHT = 340
BAR_GAP = 0.2  # of a class's group: between groups
MAX_CLASSES = 60  # classes one chart draws; the caller says which (a screen shows no more bars)


def bar_series(per_class: dict[str, dict[str, float | None]]) -> list[str]:
    """The bars of each class, in order: recall, precision, F1, then AP and AR@100 when the rows
    carry them (single taxonomy with mAP)."""
    first = next(iter(per_class.values()), {})
    return [*SCORE_COLOURS, *(BOX_SCORES[key][0] for key in BOX_SCORES if key in first)]


def _grouped_bars(series: dict[str, tuple[list[float | None], str]], classes: list[str], *, title: str, y_title: str, value_format: str,
                  lighter: tuple[str, ...] = (), hover: dict[str, list[str]] | None = None, y_range: list[float] | None = None,
                  legend: bool = True) -> go.Figure:
    """Grouped bars, one group per class and one bar a series (name -> (values, colour); None: no
    bar); `lighter` series are drawn paler; `hover` adds a line to a series' bars, class by class;
    `y_range`: the value axis's, fixed; `legend`: whether the series are named in a legend."""
    names = [plain_for_plotly(name) for name in classes]
    traces = []
    for name, (values, colour) in series.items():
        extra = (hover or {}).get(name) or [""] * len(classes)
        traces.append(dict(type="bar",
            x=list(range(len(classes))), y=values, name=plain_for_plotly(name), marker=dict(color=colour),
            opacity=0.45 if name in lighter else 1.0, text=names, customdata=extra, textposition="none",
            hovertemplate=f"%{{text}}<br>{plain_for_plotly(name)}: %{{y:{value_format}}}%{{customdata}}<extra></extra>"))
    traces += _click_markers(series, names, value_format)
    return go.Figure(traces, layout=dict(
        title=dict(text=plain_for_plotly(title), x=0, xanchor="left", y=1, yref="container", yanchor="top", pad=dict(t=8), font=dict(size=13)),
        barmode="group", bargap=BAR_GAP, bargroupgap=0, height=HEIGHT, margin=dict(l=60, r=10, t=60, b=40), clickmode="event+select", dragmode="zoom",
        xaxis=dict(tickmode="array", tickvals=list(range(len(classes))), ticktext=[axis_label(name) for name in classes],
                   tickangle=tick_angle(classes), automargin=True, ticklabeloverflow="allow"),  # as a heatmap's axes
        yaxis=dict(title=y_title, tickformat=value_format if value_format.endswith("%") else None, automargin=True,
                   **({} if y_range is None else {"range": y_range})),
        # one row under the title: the click markers' legend groups would otherwise make the legend
        # "grouped", a row a series, over the title
        legend=dict(orientation="h", x=0, y=1.0, yanchor="bottom", traceorder="normal", itemclick="toggleothers", itemdoubleclick="toggle"),
        plot_bgcolor="white",
        meta={"chart": "bars", "classes": list(classes), "series": list(series)},
        **({} if legend else {"showlegend": False}),
    ))


def _click_markers(series: dict[str, tuple[list[float | None], str]], names: list[str], value_format: str) -> list[dict[str, Any]]:
    """An invisible marker at the middle of every bar, one trace a series after the bars: a click on
    a bar reaches the app through it (Streamlit reran on a heatmap's scatter markers, not on a
    bar's own selection, in Chromium), as a heatmap's cells do."""
    width = (1 - BAR_GAP) / max(1, len(series))
    markers = []
    for k, (name, (values, _)) in enumerate(series.items()):
        shift = -(1 - BAR_GAP) / 2 + (k + 0.5) * width
        kept = [c for c, value in enumerate(values) if value is not None and value == value]
        markers.append(dict(type="scatter",
            x=[c + shift for c in kept], y=[values[c] / 2 for c in kept], mode="markers", marker=dict(size=10, opacity=0),  # type: ignore[operator]
            text=[names[c] for c in kept], customdata=[values[c] for c in kept], showlegend=False, legendgroup=plain_for_plotly(name),
            name=plain_for_plotly(name), hovertemplate=f"%{{text}}<br>{plain_for_plotly(name)}: %{{customdata:{value_format}}}<extra></extra>"))
    return markers


def per_class_bars(per_class: dict[str, dict[str, float | None]], *, title: str = "") -> go.Figure:
    """Grouped recall / precision / F1 bars (TORE's, of the pixels), one group per class, and beside
    them, paler, AP and AR@100 (mAP's, of the boxes) when the rows have `ap` and `ar_100` (None: no
    bar, the class has no box on either side); a click selects a class."""
    keys = {**{score: score for score in SCORE_COLOURS}, **{name: key for key, (name, _) in BOX_SCORES.items()}}
    colours = {**SCORE_COLOURS, **dict(BOX_SCORES.values())}
    shown = bar_series(per_class)
    series = {name: ([row[keys[name]] for row in per_class.values()], colours[name]) for name in shown}
    return _grouped_bars(series, list(per_class), title=title, y_title="score", value_format=".4f",
                         lighter=tuple(name for name, _ in BOX_SCORES.values() if name in shown), y_range=[0, 1.02])


def outcome_bars(outcomes: pd.DataFrame, *, title: str = "") -> go.Figure:
    """B minus A per reference class and outcome (`comparison.Comparison.per_class`: shares of the
    class's pixels going to Background, to its own class, elsewhere, in columns `<outcome>_a`,
    `<outcome>_b` and `<outcome>_b_minus_a`, the outcome in snake_case), with A's and B's shares in
    the hover; a click selects a class and an outcome."""
    series: dict[str, tuple[list[float | None], str]] = {}
    hover: dict[str, list[str]] = {}
    for outcome, colour in OUTCOME_COLOURS.items():
        column = outcome.lower().replace(" ", "_")
        series[outcome] = (outcomes[f"{column}_b_minus_a"].tolist(), colour)
        hover[outcome] = [f"<br>A: {a:{PERCENT_FORMAT}}<br>B: {b:{PERCENT_FORMAT}}"
                          for a, b in zip(outcomes[f"{column}_a"].tolist(), outcomes[f"{column}_b"].tolist())]
    return _grouped_bars(series, outcomes.index.tolist(), title=title, y_title="B − A, share of the class's pixels",
                         value_format=f"+{PERCENT_FORMAT}", hover=hover)


def clicked_bar(event: Any, classes: list[str], series: list[str]) -> tuple[str, str] | None:
    """(class, series) of the bar a click selected, if any: its x is (about) the class's index, its
    trace (`curve_number`) the series' (a bar's, or its click marker's after every bar trace)."""
    for point in selected_points(event):
        x, curve = point.get("x"), point.get("curve_number")
        if isinstance(x, (int, float)) and isinstance(curve, int) and 0 <= curve < 2 * len(series):
            index = round(x)  # a bar's x is its class; its click marker's, the class and the bar's shift in the group
            if 0 <= index < len(classes) and abs(x - index) < 0.5:
                return classes[index], series[curve % len(series)]
    return None


ERROR_COLOUR = "#e6194b"


def error_bars(errors: dict, *, title: str = "") -> go.Figure:
    """Where AP@50 goes (report.json's `errors`, TIDE's): one bar an error type, its dAP (the AP@50
    fixing every error of that type would gain), its count of boxes in the hover; a click selects a type."""
    names = list(errors["dap"])
    counts = [f"<br>{errors['counts'][name]:,} boxes" for name in names]
    return _grouped_bars({"dAP": ([errors["dap"][name] for name in names], ERROR_COLOUR)}, names, title=title,
                         y_title="dAP (AP@50 gained if fixed)", value_format=".4f", hover={"dAP": counts}, legend=False)
