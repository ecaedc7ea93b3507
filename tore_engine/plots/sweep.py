"""The operating point as a Plotly figure: TORE's F1 at each minimum score of the sweep, beside
mAP's view of the same scores, built from `Evaluation.sweep()`'s table.

A pure function of that table (one row a minimum score and scope, `metrics.sweep.SWEEP_COLUMNS`):
the left panel draws the Foreground F1 (the reduced view's) and each class's F1 against the
minimum score; the right one, when the evaluation has mAP, the F1 of the boxes scored at least
that much matched at IoU 0.50 (COCOeval's matching), pooled and per class, with AP in the hover
(mAP needs no threshold). Each curve's best point is a star, the Foreground's best is named in
its panel's title, and the minimum score the evaluation shown was made at is a dotted line. A click
on a point selects its minimum score (`clicked_min_score`); a click on a legend entry shows that
curve alone in both panels. Names are plain text, escaped here.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any

import numpy as np
import plotly.graph_objects as go

from tore_engine.metrics.sweep import CLASS, FOREGROUND, MIN_SCORES
from tore_engine.plots.heatmaps import selected_points
from tore_engine.plots.palette import class_color
from tore_engine.plots.plain_text import plain_for_plotly

if TYPE_CHECKING:
    import pandas as pd

FOREGROUND_NAME = "Foreground"
POOLED_NAME = "all classes"
FOREGROUND_COLOUR = "#222222"
CURRENT_COLOUR = "#d62728"
BEST_SIZE, POINT_SIZE = 16, 6
PANEL_WIDTH = 330  # pixels: both panels fit the app's main column on a 1280-pixel screen
PANEL_GAP = 60
HEIGHT = 400
LEGEND_MARGIN = 125  # pixels under the axes: their tick labels and titles, then the legend's title and two rows
TORE_TITLE = "TORE: F1 of the pixels"
DETECTION_TITLE = "mAP's view: F1 of the boxes, IoU 0.50"
PANELS = {"tore": ("f1", "recall", "precision", "best"),
          "detection": ("detection_f1", "detection_recall", "detection_precision", "detection_best")}


def _numbers(values: pd.Series) -> np.ndarray:
    """A column as floats, NaN where undefined (the table holds None there)."""
    return np.array(values.tolist(), dtype=float)  # None becomes NaN


def _curves(sweep: pd.DataFrame, classes: Collection[str] | None) -> list[tuple[str, pd.DataFrame]]:
    """(shown name, its rows in minimum-score order): the Foreground first, then each class (all,
    or those in `classes`) in the table's order."""
    foreground = sweep[sweep["scope"] == FOREGROUND].sort_values("min_score")
    per_class = sweep[sweep["scope"] == CLASS]
    names = [name for name in dict.fromkeys(per_class["class"].tolist()) if classes is None or name in classes]
    return [(FOREGROUND_NAME, foreground)] + [(name, per_class[per_class["class"] == name].sort_values("min_score")) for name in names]


def _curve_traces(name: str, rows: pd.DataFrame, panel: int, kind: str, in_legend: bool) -> list[dict[str, Any]]:
    """One curve of a panel (none when it has no defined point): its line with a point a minimum
    score (a click selects one; hover: F1, recall, precision, and AP on the detection side), its
    best point a star."""
    f1_column, recall_column, precision_column, best_column = PANELS[kind]
    f1 = _numbers(rows[f1_column])
    if np.isnan(f1).all():
        return []
    foreground = name == FOREGROUND_NAME
    shown = (POOLED_NAME if kind == "detection" else FOREGROUND_NAME) if foreground else name
    colour = FOREGROUND_COLOUR if foreground else class_color(name)
    scores = rows["min_score"].to_numpy(dtype=float)
    hover = np.stack([_numbers(rows[recall_column]), _numbers(rows[precision_column]), _numbers(rows["ap"])], axis=-1)
    ap_line = "<br>AP (no threshold): %{customdata[2]:.4f}" if kind == "detection" else ""
    axes = {"xaxis": "x" if panel == 0 else "x2", "yaxis": "y" if panel == 0 else "y2"}
    common = dict(legendgroup=name, name=plain_for_plotly(name), **axes)
    best = rows[best_column].to_numpy(dtype=bool)
    traces = [dict(type="scatter",
        x=scores, y=f1, customdata=hover, mode="lines+markers", showlegend=in_legend,
        line=dict(color=colour, width=3 if foreground else 1.5, dash="dash" if kind == "detection" else "solid"),
        marker=dict(size=POINT_SIZE, color=colour),
        hovertemplate=(f"{plain_for_plotly(shown)}<br>minimum score: %{{x:.2f}}<br>F1: %{{y:.4f}}<br>recall: %{{customdata[0]:.4f}}"
                       f"<br>precision: %{{customdata[1]:.4f}}{ap_line}<extra></extra>"), **common)]
    if best.any():
        traces.append(dict(type="scatter", x=scores[best], y=f1[best], mode="markers", showlegend=False, hoverinfo="skip",
                           marker=dict(symbol="star", size=BEST_SIZE, color=colour, line=dict(color="white", width=1)), **common))
    return traces


def _best_text(rows: pd.DataFrame) -> str:
    """The Foreground's best point, for the left panel's title."""
    best = rows[rows["best"].to_numpy(dtype=bool)]
    if best.empty:
        return ""
    return f" (best Foreground {float(best['f1'].iloc[0]):.3f} at {float(best['min_score'].iloc[0]):.2f})"


def sweep_chart(sweep: pd.DataFrame, *, current: float | None = None, classes: Collection[str] | None = None, title: str = "") -> go.Figure:
    """F1 against the minimum score (`Evaluation.sweep()`'s table): TORE's Foreground and per-class
    curves, and, when the table has a detection view, mAP's beside them (its panel title gives
    mAP). `current`: the minimum score the evaluation shown was made at (None: no minimum score),
    drawn as a dotted line. `classes`: the classes to draw (None: all)."""
    curves = _curves(sweep, classes)
    traces = [trace for name, rows in curves for trace in _curve_traces(name, rows, 0, "tore", True)]
    in_legend = {trace.get("legendgroup") for trace in traces}
    detection = [trace for name, rows in curves for trace in _curve_traces(name, rows, 1, "detection", name not in in_legend)]
    mean_ap = _numbers(curves[0][1]["ap"])[0] if len(curves[0][1]) else np.nan
    titles = [f"{TORE_TITLE}{_best_text(curves[0][1])}"]
    if detection:
        titles.append(f"{DETECTION_TITLE}{'' if np.isnan(mean_ap) else f' (mAP {mean_ap:.3f}, every box)'}")
    width = PANEL_WIDTH * len(titles) + PANEL_GAP * (len(titles) - 1)
    domains = [[0, PANEL_WIDTH / width], [(PANEL_WIDTH + PANEL_GAP) / width, 1]]
    axis = dict(range=[0, 1], tickvals=[k / 10 for k in range(11)], title="minimum score", showgrid=True, gridcolor="#eee")
    layout: dict[str, Any] = {}
    for panel in range(len(titles)):
        suffix = "" if panel == 0 else "2"
        layout[f"xaxis{suffix}"] = dict(axis, domain=domains[panel], anchor=f"y{suffix}", **({} if panel == 0 else {"matches": "x"}))
        layout[f"yaxis{suffix}"] = dict(range=[0, 1.05], title="F1" if panel == 0 else None, anchor=f"x{suffix}", showgrid=True,
                                        gridcolor="#eee", **({} if panel == 0 else {"matches": "y"}))
    # a panel's title on two lines, its figures in brackets on the second: whole in a 330-pixel panel
    annotations = [dict(text=plain_for_plotly(text).replace(" (", "<br>(", 1), xref="paper", yref="paper", x=domains[panel][0], y=1, xanchor="left", yanchor="bottom",
                        showarrow=False, font=dict(size=12)) for panel, text in enumerate(titles)]
    shapes = [] if current is None else [
        dict(type="line", xref="x" if panel == 0 else "x2", yref="paper", x0=current, x1=current, y0=0, y1=1,
             line=dict(color=CURRENT_COLOUR, width=1.5, dash="dot")) for panel in range(len(titles))]
    return go.Figure(traces + detection, layout=dict(
        **layout, annotations=annotations, shapes=shapes, width=width + 70, height=HEIGHT,
        title=dict(text=plain_for_plotly(title), x=0, xanchor="left", font=dict(size=13)),
        margin=dict(l=60, r=10, t=90, b=LEGEND_MARGIN), clickmode="event+select", dragmode="zoom", hovermode="closest", plot_bgcolor="white",
        # at the figure's foot, in pixels: placed on the plot's height, it met the axes' titles when the plot was short
        legend=dict(orientation="h", x=0, y=0, yref="container", yanchor="bottom", itemclick="toggleothers", itemdoubleclick="toggle",
                    title=dict(text="click a name: its curves alone (again: all)", side="top")),
        meta={"chart": "sweep", "panels": titles},
    ))


def clicked_min_score(event: Any) -> float | None:
    """The sweep's minimum score at the point a click selected (one of `MIN_SCORES`, as the
    command line reads it), if any."""
    for point in selected_points(event):
        x = point.get("x")
        if isinstance(x, (int, float)):
            nearest = min(MIN_SCORES, key=lambda score: abs(score - x))
            if abs(nearest - x) < 1e-6:
                return nearest
    return None
