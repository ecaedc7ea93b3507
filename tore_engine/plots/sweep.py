"""The operating point as a figure: TORE's F1 at each minimum score of the sweep, beside mAP's view
of the same scores, built from `Evaluation.sweep()`'s table.

A pure function of that table (one row a minimum score and scope, `metrics.sweep.SWEEP_COLUMNS`):
the left panel draws the Foreground F1 (the reduced view's) and each class's F1 against the
minimum score; the right one, when the evaluation has mAP, the F1 of the boxes scored at least
that much matched at IoU 0.50 (COCOeval's matching), pooled and per class, with AP in the hover
(mAP needs no threshold). Each curve's best point is a star, the Foreground's best is named in
its panel's title, and the minimum score the evaluation shown was made at is a dotted line. Every
point is a scatter marker, so a click selects it (`clicked_min_score`). Names are escaped here.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from tore_engine.metrics.sweep import CLASS, FOREGROUND, MIN_SCORES
from tore_engine.plots.palette import class_color
from tore_engine.plots.plain_text import plain_for_plotly

if TYPE_CHECKING:
    import pandas as pd

FOREGROUND_NAME = "Foreground"
POOLED_NAME = "all classes"
FOREGROUND_COLOUR = "#222222"
BEST_SYMBOL, POINT_SYMBOL = "star", "circle"
BEST_SIZE, POINT_SIZE = 15, 6
TORE_TITLE = "TORE: F1 of the pixels"
DETECTION_TITLE = "mAP's view: F1 of the boxes, IoU 0.50"
PANELS = {"tore": ("f1", "recall", "precision", "best"),
          "detection": ("detection_f1", "detection_recall", "detection_precision", "detection_best")}


def _numbers(values: pd.Series) -> np.ndarray:
    """A column as floats, NaN where undefined (the table holds None there)."""
    return np.array([np.nan if value is None else value for value in values.tolist()], dtype=float)


def _curves(sweep: pd.DataFrame, classes: Collection[str] | None) -> list[tuple[str, pd.DataFrame]]:
    """(shown name, its rows in minimum-score order): the Foreground first, then each class (all,
    or those in `classes`) in the table's order."""
    foreground = sweep[sweep["scope"] == FOREGROUND].sort_values("min_score")
    per_class = sweep[sweep["scope"] == CLASS]
    names = [name for name in dict.fromkeys(per_class["class"].tolist()) if classes is None or name in classes]
    return [(FOREGROUND_NAME, foreground)] + [(name, per_class[per_class["class"] == name].sort_values("min_score")) for name in names]


def _trace(name: str, rows: pd.DataFrame, panel: str, rank: int, shown_in_legend: bool) -> go.Scatter | None:
    """One curve of a panel (None when it has no defined point): F1 against the minimum score,
    its best point a star; the hover gives recall, precision (and AP on the detection side).
    `rank`: its place in the legend."""
    f1_column, recall_column, precision_column, best_column = PANELS[panel]
    f1 = _numbers(rows[f1_column])
    if np.isnan(f1).all():
        return None
    best = rows[best_column].to_numpy(dtype=bool)
    foreground = name == FOREGROUND_NAME
    label = (POOLED_NAME if panel == "detection" else FOREGROUND_NAME) if foreground else name
    colour = FOREGROUND_COLOUR if foreground else class_color(name)
    ap = _numbers(rows["ap"])
    customdata = np.stack([_numbers(rows[recall_column]), _numbers(rows[precision_column]), ap], axis=-1)
    ap_line = f"<br>{'mAP' if foreground else 'AP'} %{{customdata[2]:.4f}} (no threshold)" if panel == "detection" else ""
    return go.Scatter(
        x=rows["min_score"].to_numpy(dtype=float), y=f1, customdata=customdata, mode="lines+markers",
        name=plain_for_plotly(label), legendgroup=plain_for_plotly(name), showlegend=shown_in_legend, legendrank=rank,
        line=dict(color=colour, width=3 if foreground else 1.5, dash="dash" if panel == "detection" else "solid"),
        marker=dict(color=colour, symbol=np.where(best, BEST_SYMBOL, POINT_SYMBOL).tolist(),
                    size=np.where(best, BEST_SIZE, POINT_SIZE).tolist()),
        selected=dict(marker=dict(opacity=1)), unselected=dict(marker=dict(opacity=1)),
        hovertemplate=(f"{plain_for_plotly(label)}<br>minimum score %{{x:.2f}}<br>F1 %{{y:.4f}}<br>recall %{{customdata[0]:.4f}}, "
                       f"precision %{{customdata[1]:.4f}}{ap_line}<extra></extra>"),
    )


def _best_text(rows: pd.DataFrame) -> str:
    """The Foreground's best point, for the left panel's title."""
    best = rows[rows["best"].to_numpy(dtype=bool)]
    if best.empty:
        return ""
    return f" (best Foreground {float(best['f1'].iloc[0]):.3f} at {float(best['min_score'].iloc[0]):.2f})"


def sweep_figure(sweep: pd.DataFrame, *, current: float | None = None, classes: Collection[str] | None = None,
                 title: str = "") -> go.Figure:
    """F1 against the minimum score (`Evaluation.sweep()`'s table): TORE's Foreground and per-class
    curves, and, when the table has a detection view, mAP's beside them (its panel title gives
    mAP). `current`: the minimum score the evaluation shown was made at (None: no minimum score),
    drawn as a dotted line. `classes`: the classes to draw (None: all)."""
    curves = _curves(sweep, classes)
    detection = [(name, rows) for name, rows in curves if not np.isnan(_numbers(rows["detection_f1"])).all()]
    mean_ap = _numbers(curves[0][1]["ap"])[0] if len(curves[0][1]) else np.nan
    panels = ["tore", "detection"] if detection else ["tore"]
    titles = [f"{TORE_TITLE}{_best_text(curves[0][1])}", f"{DETECTION_TITLE}{'' if np.isnan(mean_ap) else f' (mAP {mean_ap:.3f}, every box)'}"][: len(panels)]
    fig = make_subplots(rows=1, cols=len(panels), shared_yaxes=True, horizontal_spacing=0.06, subplot_titles=titles)
    in_legend: set[str] = set()  # one legend entry a name, which hides or shows its curves in both panels
    for column, panel in enumerate(panels, start=1):
        shown = curves if panel == "tore" else detection
        for rank, (name, rows) in reversed(list(enumerate(shown))):  # the Foreground drawn last, on top; listed first
            trace = _trace(name, rows, panel, rank, shown_in_legend=name not in in_legend)
            if trace is not None:
                fig.add_trace(trace, row=1, col=column)
                in_legend.add(name)
        fig.update_xaxes(title_text="minimum score", range=[0, 1], dtick=0.1, row=1, col=column)
        if current is not None:
            fig.add_vline(x=current, line=dict(color="#d62728", dash="dot", width=1.5), row=1, col=column)
    fig.update_yaxes(title_text="F1", range=[0, 1.05], row=1, col=1)
    fig.update_annotations(font_size=13)  # the panels' titles
    fig.update_layout(title=dict(text=plain_for_plotly(title), x=0, font=dict(size=13)), clickmode="event+select", hovermode="closest",
                      height=520, margin=dict(l=10, r=10, t=80, b=10),
                      legend=dict(title="click a name to hide its curves:", orientation="h", yanchor="top", y=-0.18, x=0))
    return fig


def clicked_min_score(event: dict | None) -> float | None:
    """The sweep's minimum score at the point a click selected (one of `MIN_SCORES`, as the
    command line reads it), if any."""
    points = ((event or {}).get("selection") or {}).get("points") or []
    for point in points:
        x = point.get("x")
        if isinstance(x, (int, float)):
            nearest = min(MIN_SCORES, key=lambda score: abs(score - x))
            if abs(nearest - x) < 1e-6:
                return nearest
    return None
