"""Plotly figures of matrices, built from engine results: the app's, the HTML report's and
`Evaluation.plot`'s (one builder a chart).

Pure functions: they take `MatrixSet`s and return `go.Figure`s, so they are unit-tested without
Streamlit. Class names and titles are plain text: every one is escaped here (`plain_for_plotly`),
so a name like `<a href=...>` is drawn as written, never as markup; a long name is shortened in
the middle on its axis and whole in the hover.

Clicking a heatmap cell needs a scatter trace (plotly.js gives point selection only to
scatter-like traces), so every cell also has an invisible square marker that carries the hover and
the click; the heatmap itself only paints colours (docs/app.md#clicking-a-cell). An exact zero is blank (no
colour, no number), and so is an undefined ratio (0/0: a row or column without pixels), whose
hover says "undefined"; report.json and the CSVs keep their numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go

from tore_engine.metrics.matrices import MatrixSet
from tore_engine.plots.plain_text import plain_for_plotly, shortened

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
LABEL_LIMIT = 22  # characters of a class name on an axis (shortened in the middle; whole in the hover)
MIN_PLOT_SIDE = 180  # pixels: room for the colour bar of a 2x2 matrix
WIDTH = 760  # pixels a heatmap fills at most: the app's main column on a 1280-pixel screen
HEIGHT = 540  # pixels a heatmap fills at most in height in the app: what a 1280 x 800 screen leaves under Matrices' controls
MAX_CELL, MIN_CELL = 44, 6  # pixels of a cell's side
READABLE_CELL = 30  # pixels: the smallest cell whose number ("<0.01", font 10) still fits; a height budget stops there
COLOUR_BAR_MARGIN = 100  # pixels right of the cells: the colour bar and its numbers
TOP_MARGIN = 40  # pixels above the cells: the title
SELECTED = dict(marker=dict(opacity=0.55, color="#ff2b2b"))
UNSELECTED = dict(marker=dict(opacity=0))
UNDEFINED = "undefined (0/0)"
# The mode bar of every figure the app and the report draw: zoom, pan, reset, and the picture as a PNG.
CONFIG = {"displaylogo": False, "modeBarButtonsToRemove": ["select2d", "lasso2d", "autoScale2d"],
          "toImageButtonOptions": {"format": "png", "scale": 2}}


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
    """A cell's number as printed on it: nothing for a hidden, zero or undefined cell, and a value
    too small for its format as "<" its smallest step (never a zero that is not one)."""
    if not math.isfinite(value) or value == 0:
        return ""
    if metric == "share":
        return "<0.1%" if value < 0.0005 else f"{value:{PERCENT_FORMAT}}"
    if metric != "confusion" and value < 0.005:
        return "<0.01"
    return _format_value(value, metric != "confusion")


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


def numbered_names(rows: list[str], columns: list[str]) -> bool:
    """Whether a matrix of these classes prints its numbers in its cells."""
    return max(len(rows), len(columns)) <= CELL_TEXT_LIMIT


def numbered(matrices: MatrixSet) -> bool:
    """Whether a matrix this size has its numbers printed on its cells."""
    return numbered_names(matrices.rows, matrices.columns)


def defined(matrices: MatrixSet) -> tuple[np.ndarray, np.ndarray]:
    """Where each cell's recall and precision are defined (its whole row, its whole column has
    pixels): the matrices hold 0 for 0/0. `ShownMatrices` knows the whole rows' totals; a plain
    `MatrixSet` is whole."""
    confusion = np.asarray(matrices.confusion, dtype=float)
    rows = getattr(matrices, "row_pixels", None)
    columns = getattr(matrices, "column_pixels", None)
    row_pixels = confusion.sum(axis=1) if rows is None else np.asarray(rows, dtype=float)
    column_pixels = confusion.sum(axis=0) if columns is None else np.asarray(columns, dtype=float)
    shape = confusion.shape
    return np.broadcast_to((row_pixels > 0)[:, None], shape), np.broadcast_to((column_pixels > 0)[None, :], shape)


def metric_defined(matrices: MatrixSet, metric: str) -> np.ndarray:
    """Where a metric's value is defined: recall and precision as `defined`; pixels and shares everywhere."""
    recall, precision = defined(matrices)
    return {"recall": recall, "precision": precision}.get(metric, np.ones(np.shape(matrices.confusion), dtype=bool))


def axis_label(name: str) -> str:
    """A class name as its axis shows it: escaped, shortened in the middle."""
    return plain_for_plotly(shortened(name, LABEL_LIMIT))


def cell_size(rows: list[str], columns: list[str], max_cell: int = MAX_CELL, width: int = WIDTH, height: int | None = None) -> int:
    """Pixels per (square) cell: the matrix and its row labels fill at most `width` pixels (and,
    given `height`, the whole figure at most `height` pixels, down to a cell whose number still
    fits), a cell between `MIN_CELL` (100 classes still fit) and `max_cell`."""
    n = max(len(rows), len(columns), 1)
    room = width - _left_margin(rows) - COLOUR_BAR_MARGIN
    if height is not None:
        tall = (height - TOP_MARGIN - _bottom_margin(columns, _font(rows, columns))) // max(len(rows), 1)
        max_cell = min(max_cell, max(tall, READABLE_CELL if numbered_names(rows, columns) else MIN_CELL))
    return max(MIN_CELL, min(max_cell, room // n), -(-MIN_PLOT_SIDE // n))


def cell_font(cell: int) -> int:
    """The size of a cell's number: 10 where "<0.01" fits (`READABLE_CELL`), else smaller, so that
    neighbouring numbers never run into each other (18 classes in a laptop's column: 26-pixel cells, 8-point numbers)."""
    return max(6, min(10, cell // 3))  # "<0.01" is about 3 ems wide


def _font(rows: list[str], columns: list[str]) -> int:
    return 11 if max(len(rows), len(columns)) < 30 else 8


def _shows_ticks(rows: list[str], columns: list[str]) -> bool:
    return max(len(rows), len(columns)) <= TICK_LABEL_LIMIT


def _label_length(names: list[str]) -> int:
    return max((len(shortened(name, LABEL_LIMIT)) for name in names), default=0)


def _left_margin(rows: list[str]) -> int:
    font = _font(rows, rows)
    return 50 + int(0.6 * font * _label_length(rows)) if len(rows) <= TICK_LABEL_LIMIT else 50


def tick_angle(columns: list[str]) -> int:
    """The column labels' angle: level when few short names fit under their cells, else slanted,
    upright beyond 20 classes."""
    if len(columns) <= 4 and _label_length(columns) <= 12:
        return 0
    return -45 if len(columns) <= 20 else -90


def _bottom_margin(columns: list[str], font: int) -> int:
    if len(columns) > TICK_LABEL_LIMIT:
        return 50
    length = 0.6 * font * _label_length(columns)
    slant = {0: 0.0, -45: 0.72, -90: 1.0}[tick_angle(columns)]
    return 50 + int(slant * length) + (font if slant == 0 else 0)


def _matrix_layout(rows: list[str], columns: list[str], title: str, cell: int, meta: dict[str, Any]) -> dict[str, Any]:
    """Fixed figure size from the cell size and the label lengths, so cells are square without
    `scaleanchor` (which shrinks non-square matrices to a corner of the plot). `title`: escaped
    already (`_titled`)."""
    show_ticks = _shows_ticks(rows, columns)
    font = _font(rows, columns)
    left, bottom = _left_margin(rows), _bottom_margin(columns, font)
    # ticklabeloverflow "allow": the margins fit the labels already; plotly.js's default (hide what passes the
    # div) measures every label again as each label is placed, n² text boxes an axis (0.24 s of Compare's drawing
    # in Chromium, 18 classes)
    axis = dict(showgrid=False, zeroline=False, showticklabels=show_ticks, tickfont=dict(size=font), tickmode="array", fixedrange=False,
                ticklabeloverflow="allow")
    return dict(
        title=dict(text=title, x=0, xanchor="left", font=dict(size=13)),
        xaxis=dict(axis, tickvals=list(range(len(columns))), ticktext=[axis_label(column) for column in columns], title="prediction",
                   tickangle=tick_angle(columns), range=[-0.5, len(columns) - 0.5]),
        yaxis=dict(axis, tickvals=list(range(len(rows))), ticktext=[axis_label(row) for row in rows], title="reference",
                   range=[len(rows) - 0.5, -0.5]),
        clickmode="event+select",
        dragmode="zoom",
        hovermode="closest",
        width=max(320, left + cell * len(columns) + COLOUR_BAR_MARGIN),
        height=TOP_MARGIN + cell * len(rows) + bottom,
        margin=dict(l=left, r=COLOUR_BAR_MARGIN, t=TOP_MARGIN, b=bottom),
        plot_bgcolor="white",
        meta={"chart": "heatmap", "rows": list(rows), "columns": list(columns), **meta},
    )


def _cell_names(rows: list[str], columns: list[str]) -> list[str]:
    """Each cell's hover names, row by row: the whole (escaped) class names."""
    shown_rows, shown_columns = [plain_for_plotly(row) for row in rows], [plain_for_plotly(column) for column in columns]
    return [f"{row}<br>prediction: {column}" for row in shown_rows for column in shown_columns]


def _cell_overlays(rows: list[str], columns: list[str], customdata: np.ndarray, groups: dict[str, np.ndarray], cell: int) -> list[dict[str, Any]]:
    """The invisible markers that carry hover and click: one trace a hover template (`groups`:
    template -> the cells, a boolean matrix, it writes), so that an undefined number reads
    "undefined", never "NaN"."""
    n_columns = len(columns)
    names = _cell_names(rows, columns)
    flat = customdata.reshape(len(rows) * n_columns, -1)  # float64: a pixel count above 2**24 reads exactly
    traces = []
    for template, cells in groups.items():
        index = np.flatnonzero(np.asarray(cells).ravel())
        if not len(index):
            continue
        ii, jj = np.divmod(index, n_columns)
        traces.append(dict(type="scatter",
            x=jj, y=ii, mode="markers", marker=dict(symbol="square", size=max(4, cell - 2), opacity=0, color="#ff2b2b"),
            selected=SELECTED, unselected=UNSELECTED, text=[names[k] for k in index.tolist()], customdata=flat[index],
            hovertemplate=template, name="", showlegend=False))
    return traces


def _number_line(label: str, position: int, number_format: str, is_defined: bool) -> str:
    return f"{label}: %{{customdata[{position}]:{number_format}}}" if is_defined else f"{label}: {UNDEFINED}"


def matrix_heatmap(
    matrices: MatrixSet,
    metric: str,
    *,
    scale: str = "linear",
    hide_diagonal: bool = False,
    outline_diagonal: bool = False,
    title: str = "",
    max_cell: int = MAX_CELL,
    width: int = WIDTH,
    height: int | None = None,
    note: str = "",
    unit: str = "pixels",
) -> go.Figure:
    """A zoomable, clickable heatmap of one matrix (confusion, recall, precision or share) of counts
    of `unit` (TORE's pixels, or boxes for the box-level matrix).

    Hover shows both class names, the value, the pixel count and the row and column percentages
    (the recall and precision of the cell). Exact zeros and undefined values are blank.
    `hide_diagonal` blanks the class-with-itself cells (colour and number) and rescales the colours
    to the confusions; `outline_diagonal` frames them (single taxonomy). The `share` metric (each
    cell over the view's total) needs `ShownMatrices`. `width` (and `height`, if given): the pixels the figure may fill;
    `note`: a line under the title (what was left out).
    """
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; use one of {', '.join(METRICS)}")
    rows, columns = matrices.rows, matrices.columns
    values = np.asarray(getattr(matrices, metric), dtype=float)
    diagonal = matrices.same_class()
    recall_defined, precision_defined = defined(matrices)
    value_defined = metric_defined(matrices, metric)
    hidden = (diagonal & hide_diagonal) | ~value_defined | (values == 0)
    shown = np.where(hidden, np.nan, values)
    colours = colour_scale(shown, scale, is_ratio=metric != "confusion")
    small = numbered(matrices)
    cell = cell_size(rows, columns, max_cell, width, height)
    heatmap = dict(type="heatmap",
        z=colours.z,
        x=list(range(len(columns))),
        y=list(range(len(rows))),
        colorscale="Blues",
        hoverinfo="skip",
        colorbar=dict(title=COLOUR_BAR_TITLES[metric].replace("pixels", unit), tickvals=colours.tickvals,
                      ticktext=colours.ticktext, thickness=14, tickformat=PERCENT_FORMAT if metric == "share" else None),
        text=[[cell_text(v, metric) for v in row] for row in shown] if small else None,
        texttemplate="%{text}" if small else None,
        textfont=dict(size=cell_font(cell)),
    )
    customdata = np.stack([values, matrices.confusion, matrices.recall, matrices.precision], axis=-1)
    value_format = {"confusion": PIXELS_FORMAT, "share": PERCENT_FORMAT}.get(metric, ".4f")
    groups = {}
    for with_recall in (True, False):
        for with_precision in (True, False):
            # the cell's value under its normalisation's name, but for counts, which the next line gives
            value_line = "" if metric == "confusion" else _number_line(NORMALISATIONS[metric].replace("pixels", unit), 0, value_format,
                                                                       {"recall": with_recall, "precision": with_precision}.get(metric, True)) + "<br>"
            template = ("reference: %{text}<br>" + value_line + f"{unit}: %{{customdata[1]:{PIXELS_FORMAT}}}<br>"
                        + _number_line("row % (recall)", 2, PERCENT_FORMAT, with_recall) + "<br>"
                        + _number_line("column % (precision)", 3, PERCENT_FORMAT, with_precision) + "<extra></extra>")
            groups[template] = (recall_defined == with_recall) & (precision_defined == with_precision)
    layout = _matrix_layout(rows, columns, _titled(title, note), cell, {"metric": metric})
    if outline_diagonal and diagonal.any():
        layout["shapes"] = [dict(type="path", path=_outline_path(diagonal), xref="x", yref="y", line=dict(color="#222", width=1.5))]
    return go.Figure([heatmap, *_cell_overlays(rows, columns, customdata, groups, cell)], layout=layout)


def _titled(title: str, note: str) -> str:
    """The title and, smaller under it, a note (both escaped)."""
    return plain_for_plotly(title) + (f"<br><sup>{plain_for_plotly(note)}</sup>" if note else "")


def _outline_path(mask: np.ndarray) -> str:
    """One SVG path around every masked cell (one shape, not one per cell: shapes are slow)."""
    return " ".join(f"M{j - 0.5},{i - 0.5}H{j + 0.5}V{i + 0.5}H{j - 0.5}Z" for i, j in zip(*np.nonzero(mask)))


def difference_heatmap(difference: MatrixSet, metric: str, *, title: str = "", width: int = WIDTH) -> go.Figure:
    """B minus A on a diverging scale centred on 0 (red: B lower, blue: B higher); an exact 0 is
    blank, and so is a cell undefined in A or B (NaN in `difference`)."""
    rows, columns = difference.rows, difference.columns
    values = np.asarray(getattr(difference, metric), dtype=float)
    bound = (float(np.nanmax(np.abs(values))) if np.isfinite(values).any() else 0.0) or 1.0
    shown = np.where(values == 0, np.nan, values)
    small = numbered(difference)
    cell = cell_size(rows, columns, MAX_CELL, width)
    heatmap = dict(type="heatmap", z=shown, x=list(range(len(columns))), y=list(range(len(rows))), colorscale="RdBu", zmid=0, zmin=-bound, zmax=bound,
                   hoverinfo="skip", colorbar=dict(title=f"Δ {metric}", thickness=14),
                   text=[[f"{v:+.2f}" if math.isfinite(v) else "" for v in row] for row in shown] if small else None,
                   texttemplate="%{text}" if small else None, textfont=dict(size=cell_font(cell)))
    finite = np.isfinite(values)
    groups = {f"reference: %{{text}}<br>B − A {metric}: %{{customdata[0]:+.4f}}<extra></extra>": finite,
              f"reference: %{{text}}<br>B − A {metric}: {UNDEFINED} in A or B<extra></extra>": ~finite}
    return go.Figure([heatmap, *_cell_overlays(rows, columns, values[..., None], groups, cell)],
                     layout=_matrix_layout(rows, columns, _titled(title, ""), cell, {"metric": metric}))


def clicked_cell(event: Any, rows: list[str], columns: list[str]) -> tuple[str, str] | None:
    """(reference class, predicted class) of the cell a heatmap click selected, if any: the
    selection event's point, whose x and y are the cell's column and row."""
    for point in selected_points(event):
        i, j = point.get("y"), point.get("x")
        if isinstance(i, (int, float)) and isinstance(j, (int, float)) and float(i).is_integer() and float(j).is_integer():
            i, j = int(i), int(j)
            if 0 <= i < len(rows) and 0 <= j < len(columns):
                return rows[i], columns[j]
    return None


def selected_points(event: Any) -> list[dict]:
    """The points of a Plotly selection event (a dict or its attribute view), as Streamlit gives it."""
    selection = (event or {}).get("selection") or {}
    points = selection.get("points") or []
    return [point for point in points if isinstance(point, dict)]
