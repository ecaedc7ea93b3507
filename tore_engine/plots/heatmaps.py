"""Plotly figures of matrices and per-class scores, built from engine results.

Pure functions: they take `MatrixSet`s and score dictionaries and return `go.Figure`s, so they are
unit-tested without Streamlit. Class names and titles are plain text: every one is escaped here
(`plain_for_plotly`), so a name like `<a href=...>` is drawn as written, never as markup. Clicking a heatmap cell needs a scatter trace (plotly.js gives point
selection only to scatter-like traces), so every cell also has an invisible square marker that
carries the hover and the click; the heatmap itself only paints colours (app.md section 2.1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go

from tore_engine.metrics.matrices import MatrixSet
from tore_engine.plots.plain_text import plain_for_plotly

if TYPE_CHECKING:
    import pandas as pd

METRICS = ("confusion", "recall", "precision", "share")  # matrices' fields (`share`: drilldown.ShownMatrices)
NORMALISATIONS = {"confusion": "none (pixels)", "recall": "row (recall)", "precision": "column (precision)",
                  "share": "all (share of the total)"}
COLOUR_BAR_TITLES = {"confusion": "pixels", "recall": "recall", "precision": "precision", "share": "share"}
PIXELS_FORMAT = ",.1~f"  # d3: a whole number without decimals
PERCENT_FORMAT = ".1%"  # the app's one percentage format (plain_text.percent)
SCALES = ("linear", "log", "power")
POWER = 0.2  # the reference package's Excel colouring
CELL_TEXT_LIMIT = 30  # cell labels beyond this size double the first render time
TICK_LABEL_LIMIT = 60
MIN_PLOT_SIDE = 180  # pixels: room for the colour bar of a 2x2 matrix
SELECTED = dict(marker=dict(opacity=0.55, color="#ff2b2b"))
UNSELECTED = dict(marker=dict(opacity=0))


@dataclass(frozen=True)
class ColourScale:
    """Colour values for the heatmap and the colour bar's ticks in the original unit."""

    z: np.ndarray
    tickvals: list[float] | None
    ticktext: list[str] | None


def _format_value(value: float, is_ratio: bool) -> str:
    if is_ratio:
        return f"{value:.2f}"
    if value >= 1e6:
        return f"{value / 1e6:.1f}M"
    if value >= 1e3:
        return f"{value / 1e3:.1f}k"
    return f"{value:.0f}" if value == int(value) else f"{value:.1f}"


def _cell_text(value: float, metric: str) -> str:
    """A cell's number as printed on it (nothing for a hidden cell)."""
    if not math.isfinite(value):
        return ""
    return f"{value:{PERCENT_FORMAT}}" if metric == "share" else _format_value(value, metric != "confusion")


def colour_scale(values: np.ndarray, scale: str, is_ratio: bool) -> ColourScale:
    """Map values to colour values. Plotly has no log colour axis, so `log` colours by
    log10(1 + v / unit) and labels the colour bar in the original unit; `power` by v ** 0.2."""
    if scale not in SCALES:
        raise ValueError(f"unknown colour scale {scale!r}; use one of {', '.join(SCALES)}")
    top = float(np.nanmax(values)) if np.isfinite(values).any() else 0.0
    if scale == "linear" or top <= 0:
        return ColourScale(values, None, None)
    clipped = np.clip(values, 0, None)
    if scale == "log":
        unit = 1e-3 if is_ratio else 1.0
        ticks = [0.0] + [unit * 10**k for k in range(0, int(math.log10(top / unit)) + 1)]
        return ColourScale(np.log10(1 + clipped / unit), [math.log10(1 + t / unit) for t in ticks], [_tick_text(t, is_ratio) for t in ticks])
    ticks = [0.0] + [top * f for f in (0.001, 0.01, 0.1, 0.5, 1.0)]
    return ColourScale(clipped**POWER, [t**POWER for t in ticks], [_tick_text(t, is_ratio) for t in ticks])


def _tick_text(value: float, is_ratio: bool) -> str:
    """A colour bar tick: a ratio to two significant digits (0, 0.001, 0.01, 0.1 and 1 of a log
    scale are five labels, not "0.00" twice), pixels as a cell's number."""
    return f"{value:.2g}" if is_ratio else _format_value(value, is_ratio)


def _outline_path(mask: np.ndarray) -> str:
    """One SVG path around every masked cell (one shape, not one per cell: shapes are slow)."""
    return " ".join(f"M{j - 0.5},{i - 0.5}H{j + 0.5}V{i + 0.5}H{j - 0.5}Z" for i, j in zip(*np.nonzero(mask)))


def _cell_overlay(rows: list[str], columns: list[str], customdata: np.ndarray, hovertemplate: str, cell: int) -> go.Scatter:
    """The invisible marker on every cell that carries hover and click."""
    n_rows, n_columns = len(rows), len(columns)
    ii, jj = np.divmod(np.arange(n_rows * n_columns), n_columns)
    shown_rows, shown_columns = [plain_for_plotly(row) for row in rows], [plain_for_plotly(column) for column in columns]
    names = [f"{shown_rows[i]}<br>prediction: {shown_columns[j]}" for i, j in zip(ii.tolist(), jj.tolist())]
    size = max(4, cell - 2)
    return go.Scatter(
        x=jj,
        y=ii,
        mode="markers",
        marker=dict(symbol="square", size=size, opacity=0, color="#ff2b2b"),
        selected=SELECTED,
        unselected=UNSELECTED,
        text=names,
        customdata=customdata.reshape(n_rows * n_columns, -1).astype(np.float32),
        hovertemplate=hovertemplate,
        name="",
        showlegend=False,
    )


def cell_size(rows: list[str], columns: list[str], max_cell: int = 44) -> int:
    """Pixels per (square) cell: large for small matrices, at least 6 so 100 classes still fit."""
    n = max(len(rows), len(columns), 1)
    return max(6, min(max_cell, 640 // n), -(-MIN_PLOT_SIDE // n))


def _matrix_layout(fig: go.Figure, rows: list[str], columns: list[str], title: str, cell: int) -> None:
    """Fixed figure size from the cell size and the label lengths, so cells are square without
    `scaleanchor` (which shrinks non-square matrices to a corner of the plot)."""
    show_ticks = max(len(rows), len(columns)) <= TICK_LABEL_LIMIT
    font = 11 if max(len(rows), len(columns)) < 30 else 8
    row_label = max(map(len, rows), default=0) if show_ticks else 0
    column_label = max(map(len, columns), default=0) if show_ticks else 0
    left, bottom = 50 + int(0.6 * font * row_label), 60 + int(0.45 * font * column_label)
    axis = dict(showgrid=False, zeroline=False, showticklabels=show_ticks, tickfont=dict(size=font), tickmode="array")
    fig.update_layout(
        title=dict(text=plain_for_plotly(title), x=0, xanchor="left", font=dict(size=13)),
        xaxis=dict(axis, tickvals=list(range(len(columns))), ticktext=[plain_for_plotly(column) for column in columns], title="prediction",
                   tickangle=-45, range=[-0.5, len(columns) - 0.5]),
        yaxis=dict(axis, tickvals=list(range(len(rows))), ticktext=[plain_for_plotly(row) for row in rows], title="reference",
                   range=[len(rows) - 0.5, -0.5]),
        clickmode="event+select",
        dragmode="zoom",
        hovermode="closest",
        width=max(460, left + cell * len(columns) + 120),
        height=60 + cell * len(rows) + bottom,
        margin=dict(l=left, r=120, t=60, b=bottom),
        plot_bgcolor="white",
    )


def matrix_heatmap(
    matrices: MatrixSet,
    metric: str,
    *,
    scale: str = "linear",
    hide_diagonal: bool = False,
    outline_diagonal: bool = False,
    title: str = "",
    max_cell: int = 44,
) -> go.Figure:
    """A zoomable, clickable heatmap of one matrix (confusion, recall or precision).

    Hover shows both class names, the value, the pixel count and the row and column percentages
    (the recall and precision of the cell). `hide_diagonal` blanks the class-with-itself cells
    (colour and number) and rescales the colours to the confusions; `outline_diagonal` frames them
    (single taxonomy). The `share` metric (each cell over the view's total) needs `ShownMatrices`.
    """
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; use one of {', '.join(METRICS)}")
    rows, columns = matrices.rows, matrices.columns
    values = np.asarray(getattr(matrices, metric), dtype=float)
    diagonal = matrices.same_class()
    shown = np.where(diagonal, np.nan, values) if hide_diagonal else values
    is_ratio = metric != "confusion"
    colours = colour_scale(shown, scale, is_ratio=is_ratio)
    small = max(len(rows), len(columns)) <= CELL_TEXT_LIMIT
    heatmap = go.Heatmap(
        z=colours.z,
        x=list(range(len(columns))),
        y=list(range(len(rows))),
        colorscale="Blues",
        hoverinfo="skip",
        colorbar=dict(title=COLOUR_BAR_TITLES[metric], tickvals=colours.tickvals,
                      ticktext=colours.ticktext, thickness=14, tickformat=PERCENT_FORMAT if metric == "share" else None),
        text=[[_cell_text(v, metric) for v in row] for row in shown] if small else None,
        texttemplate="%{text}" if small else None,
        textfont=dict(size=10),
    )
    customdata = np.stack([values, matrices.confusion, matrices.recall, matrices.precision], axis=-1)
    value_format = {"confusion": PIXELS_FORMAT, "share": PERCENT_FORMAT}.get(metric, ".4f")
    hovertemplate = (
        "reference: %{text}<br>"
        f"{NORMALISATIONS[metric]}: %{{customdata[0]:{value_format}}}<br>"
        f"pixels: %{{customdata[1]:{PIXELS_FORMAT}}}<br>"
        f"row % (recall): %{{customdata[2]:{PERCENT_FORMAT}}}<br>"
        f"column % (precision): %{{customdata[3]:{PERCENT_FORMAT}}}<extra></extra>"
    )
    cell = cell_size(rows, columns, max_cell)
    fig = go.Figure([heatmap, _cell_overlay(rows, columns, customdata, hovertemplate, cell)])
    _matrix_layout(fig, rows, columns, title, cell)
    if outline_diagonal and diagonal.any():
        fig.update_layout(shapes=[dict(type="path", path=_outline_path(diagonal), xref="x", yref="y", line=dict(color="#222", width=1.5))])
    return fig


def difference_heatmap(difference: MatrixSet, metric: str, *, title: str = "", max_cell: int = 44) -> go.Figure:
    """B minus A on a diverging scale centred on 0 (red: B lower, blue: B higher)."""
    rows, columns = difference.rows, difference.columns
    values = np.asarray(getattr(difference, metric), dtype=float)
    bound = float(np.nanmax(np.abs(values))) if values.size else 0.0
    bound = bound or 1.0
    small = max(len(rows), len(columns)) <= CELL_TEXT_LIMIT
    heatmap = go.Heatmap(
        z=values,
        x=list(range(len(columns))),
        y=list(range(len(rows))),
        colorscale="RdBu",
        zmid=0,
        zmin=-bound,
        zmax=bound,
        hoverinfo="skip",
        colorbar=dict(title=f"Δ {metric}", thickness=14),
        text=[[f"{v:+.2f}" for v in row] for row in values] if small else None,
        texttemplate="%{text}" if small else None,
        textfont=dict(size=10),
    )
    hovertemplate = f"reference: %{{text}}<br>B − A {metric}: %{{customdata[0]:+.4f}}<extra></extra>"
    cell = cell_size(rows, columns, max_cell)
    fig = go.Figure([heatmap, _cell_overlay(rows, columns, values[..., None], hovertemplate, cell)])
    _matrix_layout(fig, rows, columns, title, cell)
    return fig


def clicked_cell(event: dict | None, rows: list[str], columns: list[str]) -> tuple[str, str] | None:
    """(reference class, predicted class) of the cell a heatmap click selected, if any."""
    points = ((event or {}).get("selection") or {}).get("points") or []
    for point in points:
        x, y = point.get("x"), point.get("y")
        if isinstance(x, (int, float)) and isinstance(y, (int, float)):
            i, j = int(round(y)), int(round(x))
            if 0 <= i < len(rows) and 0 <= j < len(columns):
                return rows[i], columns[j]
    return None


SCORE_COLOURS = {"recall": "#4363d8", "precision": "#f58231", "f1": "#3cb44b"}
OUTCOME_COLOURS = {"Background": "#7f7f7f", "own class": "#3cb44b", "elsewhere": "#e6194b"}


def _grouped_bars(series: dict[str, tuple[list[float], str, str]], classes: list[str], *, title: str, yaxis: dict,
                  customdata: dict[str, np.ndarray] | None = None) -> go.Figure:
    """Grouped bars, one group per class and one bar a series: name -> (values, colour, Plotly
    hover template of a bar). Clicking a bar selects it (`clicked_bar`)."""
    shown = [plain_for_plotly(label) for label in classes]
    fig = go.Figure([
        go.Bar(name=plain_for_plotly(name), x=shown, y=values, marker_color=colour, hovertemplate=f"%{{x}}<br>{hover}<extra></extra>",
               customdata=(customdata or {}).get(name))
        for name, (values, colour, hover) in series.items()
    ])
    fig.update_layout(barmode="group", title=dict(text=plain_for_plotly(title), x=0), yaxis=yaxis, clickmode="event+select",
                      height=380, margin=dict(l=10, r=10, t=50, b=10), legend=dict(orientation="h", y=1.1, x=1, xanchor="right"))
    return fig


BOX_SCORES = {"ap": ("AP", "#911eb4"), "ar_100": ("AR@100", "#bfef45")}  # mAP's per class: key -> (shown name, colour)


def bar_series(per_class: dict[str, dict[str, float | None]]) -> list[str]:
    """The bars of each class, in trace order (what `clicked_bar` needs): recall, precision, F1,
    then AP and AR@100 when the rows carry them (single taxonomy with mAP)."""
    first = next(iter(per_class.values()), {})
    return [*SCORE_COLOURS, *(BOX_SCORES[key][0] for key in BOX_SCORES if key in first)]


def per_class_bars(per_class: dict[str, dict[str, float | None]], *, title: str = "") -> go.Figure:
    """Grouped recall / precision / F1 bars (TORE's, of the pixels), one group per class, and beside
    them, hatched, AP and AR@100 (mAP's, of the boxes) when the rows have `ap` and `ar_100` (None:
    no bar, the class has no box on either side); a click selects a class."""
    def values(key: str) -> list[float]:
        return [math.nan if (value := row[key]) is None else value for row in per_class.values()]

    series = {score: (values(score), colour, f"{score}: %{{y:.4f}}") for score, colour in SCORE_COLOURS.items()}
    boxes = {name: (values(key), colour, f"{name} (boxes): %{{y:.4f}}") for key, (name, colour) in BOX_SCORES.items()
             if name in bar_series(per_class)}
    fig = _grouped_bars(series | boxes, list(per_class), title=title, yaxis=dict(range=[0, 1], title="score"))
    fig.for_each_trace(lambda bar: bar.update(marker_pattern_shape="/"), selector=lambda bar: bar.name in boxes)
    return fig


def outcome_bars(outcomes: pd.DataFrame, *, title: str = "") -> go.Figure:
    """B minus A per reference class and outcome (`comparison.Comparison.per_class`: shares of the
    class's pixels going to Background, to its own class, elsewhere, in columns `<outcome>_a`,
    `<outcome>_b` and `<outcome>_b_minus_a`, the outcome in snake_case), with A's and B's shares in
    the hover; a click selects a class and an outcome."""
    series: dict[str, tuple[list[float], str, str]] = {}
    customdata: dict[str, np.ndarray] = {}
    for outcome, colour in OUTCOME_COLOURS.items():
        hover = (f"{outcome}: B − A %{{y:+{PERCENT_FORMAT}}}<br>A %{{customdata[0]:{PERCENT_FORMAT}}}, "
                 f"B %{{customdata[1]:{PERCENT_FORMAT}}}")
        column = outcome.lower().replace(" ", "_")
        series[outcome] = (outcomes[f"{column}_b_minus_a"].tolist(), colour, hover)
        customdata[outcome] = np.stack([outcomes[f"{column}_a"], outcomes[f"{column}_b"]], axis=-1)
    return _grouped_bars(series, outcomes.index.tolist(), title=title, customdata=customdata,
                         yaxis=dict(title="B − A, share of the class's pixels", zeroline=True, tickformat=PERCENT_FORMAT))


def clicked_bar(event: dict | None, classes: list[str], series: list[str]) -> tuple[str, str] | None:
    """(class, series) of the bar a click selected, if any."""
    points = ((event or {}).get("selection") or {}).get("points") or []
    for point in points:
        index, curve = point.get("point_index"), point.get("curve_number")
        if isinstance(index, int) and isinstance(curve, int) and 0 <= index < len(classes) and 0 <= curve < len(series):
            return classes[index], series[curve]
    return None
