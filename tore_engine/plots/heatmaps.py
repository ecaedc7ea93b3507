"""Plotly figures of matrices, built from engine results (the reports' and `Evaluation.plot`'s; the
app draws the same matrices with Vega-Lite, `vega_charts`, from this module's numbers and sizes).

Pure functions: they take `MatrixSet`s and score dictionaries and return `go.Figure`s, so they are
unit-tested without Streamlit. Class names and titles are plain text: every one is escaped here
(`plain_for_plotly`), so a name like `<a href=...>` is drawn as written, never as markup. Clicking a heatmap cell needs a scatter trace (plotly.js gives point
selection only to scatter-like traces), so every cell also has an invisible square marker that
carries the hover and the click; the heatmap itself only paints colours (docs/app.md#clicking-a-cell).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from tore_engine.metrics.matrices import MatrixSet
from tore_engine.plots.plain_text import plain_for_plotly

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


def cell_text(value: float, metric: str) -> str:
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


@dataclass(frozen=True)
class MatrixPicture:
    """What every drawing of a matrix shows (this module's figure, `vega_charts`' heatmap)."""

    values: np.ndarray  # the metric's value of each cell
    diagonal: np.ndarray  # the cells of a class with itself
    colours: ColourScale  # of `values`, NaN where hidden (the diagonal, when hidden)
    small: bool  # numbers printed on the cells (`numbered`)
    texts: list[list[str]]  # each cell's number as printed ("" where hidden, or everywhere when not `small`)


def numbered(matrices: MatrixSet) -> bool:
    """Whether a matrix this size has its numbers printed on its cells."""
    return max(len(matrices.rows), len(matrices.columns)) <= CELL_TEXT_LIMIT


def matrix_picture(matrices: MatrixSet, metric: str, *, scale: str = "linear", hide_diagonal: bool = False) -> MatrixPicture:
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; use one of {', '.join(METRICS)}")
    values = np.asarray(getattr(matrices, metric), dtype=float)
    diagonal = matrices.same_class()
    shown = np.where(diagonal, np.nan, values) if hide_diagonal else values
    small = numbered(matrices)
    texts = [[cell_text(v, metric) if small else "" for v in row] for row in shown]
    return MatrixPicture(values, diagonal, colour_scale(shown, scale, is_ratio=metric != "confusion"), small, texts)


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
    rows, columns = matrices.rows, matrices.columns
    picture = matrix_picture(matrices, metric, scale=scale, hide_diagonal=hide_diagonal)
    values, diagonal, colours, small = picture.values, picture.diagonal, picture.colours, picture.small
    heatmap = go.Heatmap(
        z=colours.z,
        x=list(range(len(columns))),
        y=list(range(len(rows))),
        colorscale="Blues",
        hoverinfo="skip",
        colorbar=dict(title=COLOUR_BAR_TITLES[metric], tickvals=colours.tickvals,
                      ticktext=colours.ticktext, thickness=14, tickformat=PERCENT_FORMAT if metric == "share" else None),
        text=picture.texts if small else None,
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
