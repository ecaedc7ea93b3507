"""The app's clickable charts as Vega-Lite specifications: matrix heatmaps (a matrix, B minus A) and
grouped bars (per-class scores, Compare's outcomes).

Why not the Plotly figures of `heatmaps`: a browser runs plotly.js's 4.7 MB script for about 0.7 s
before it draws anything, Vega's in a fraction of that, and the first heatmap of a new tab is the
app's first picture (the demo's new tab, one A/B: 2.9 s with Plotly, 2.0 s with Vega-Lite, RESULTS.md). The
reports and `Evaluation.plot` keep Plotly figures; both read their numbers, colours, sizes and texts
from `heatmaps`, so a matrix looks the same in either.

Pure functions returning dicts. Class names travel as data and are drawn by Vega as SVG text (never
as markup, never inside an expression: tick labels look them up by index in a parameter). A click
selects the chart's point selection (`CELL`, `BAR`), whose fields are indices; `clicked_cell` and
`clicked_bar` read them back from the app's selection event. Each mark carries an `aria-label`
naming what it is (`cell <row> <column>`), which is what a screen reader and the browser tests find.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from tore_engine.metrics.matrices import MatrixSet
from tore_engine.plots.heatmaps import (
    COLOUR_BAR_TITLES,
    NORMALISATIONS,
    PERCENT_FORMAT,
    PIXELS_FORMAT,
    TICK_LABEL_LIMIT,
    cell_size,
    matrix_picture,
    numbered,
)

if TYPE_CHECKING:
    import pandas as pd

Spec = dict[str, Any]
CELL, BAR = "cell", "bar"  # the point selections a click makes
ZOOM = "zoom"  # the interval selection bound to the axes (a plain scroll still scrolls the page; Chrome sends shift + scroll sideways)
ZOOM_HELP = "Ctrl + scroll (or pinch) to zoom, drag to pan, double-click to reset."
FIXED_SIZE = {"type": "pad"}  # width and height are the plot's (square cells); axes, legend and title add to them
SELECTED_STROKE = "#ff2b2b"
FIT_WIDTH = {"type": "fit-x", "contains": "padding"}  # grouped bars fill the page's width: 17 classes of 5 bars would not fit at 14 px a bar
DIAGONAL_STROKE = "#222"
DARK_TEXT_FROM = 0.6  # a cell coloured above this share of the scale gets white text
SCORE_COLOURS = {"recall": "#4363d8", "precision": "#f58231", "f1": "#3cb44b"}
BOX_SCORES = {"ap": ("AP", "#911eb4"), "ar_100": ("AR@100", "#bfef45")}  # mAP's per class: key -> (shown name, colour)
OUTCOME_COLOURS = {"Background": "#7f7f7f", "own class": "#3cb44b", "elsewhere": "#e6194b"}


def _number(value: float) -> float | None:
    """A JSON number, or null for NaN (hidden cells, missing scores)."""
    return float(value) if math.isfinite(value) else None


def _axis(names: list[str], field: str, title: str, label_names: str, *, reverse: bool) -> Spec:
    """An index axis whose ticks are the classes' names, its domain one cell wider than the indices
    so that the outer cells are whole (and zooming moves it)."""
    show_labels = len(names) <= TICK_LABEL_LIMIT
    font = 11 if len(names) < 30 else 8
    axis: Spec = {"title": title, "values": list(range(len(names))), "grid": False, "labels": show_labels, "labelFontSize": font,
                  "labelExpr": f"{label_names}[datum.value]", "labelLimit": 320, "labelOverlap": False, "ticks": show_labels}
    if field == "x":
        axis["labelAngle"] = -45
    return {"field": field, "type": "quantitative", "axis": axis,
            "scale": {"domain": [-0.5, len(names) - 0.5], "nice": False, "zero": False, "reverse": reverse}}


def _tooltip(fields: list[tuple[str, str, str | None]]) -> list[Spec]:
    return [{"field": field, "title": title, **({"format": number_format} if number_format else {}), "type": "nominal" if number_format is None
             else "quantitative"} for field, title, number_format in fields]


def _heatmap_spec(matrices: MatrixSet, cells: list[Spec], colour: Spec, tooltip: list[Spec], *, title: str, small: bool,
                  outline_diagonal: bool) -> Spec:
    """The layers every heatmap has: coloured cells carrying the click, hover and zoom; their
    numbers (small matrices), at the cells' centres; the diagonal's frame; the clicked cell's frame."""
    rows, columns = matrices.rows, matrices.columns
    cell = cell_size(rows, columns)
    spans = {"x": _axis(columns, "x", "prediction", "columnNames", reverse=False), "x2": {"field": "x2"},
             "y": _axis(rows, "y", "reference", "rowNames", reverse=True), "y2": {"field": "y2"}}
    frame = {"type": "rect", "filled": False}
    layers: list[Spec] = [{
        "params": [{"name": CELL, "select": {"type": "point", "fields": ["i", "j"], "on": "click", "clear": False}},
                   {"name": ZOOM, "select": {"type": "interval", "encodings": ["x", "y"], "zoom": "wheel![event.ctrlKey]"}, "bind": "scales"}],
        "mark": {"type": "rect"},
        "encoding": {**spans, "color": colour, "tooltip": tooltip, "description": {"field": "label"}},
    }]
    if small:
        layers.append({"mark": {"type": "text", "fontSize": 10},
                       "encoding": {"x": {**spans["x"], "field": "j"}, "y": {**spans["y"], "field": "i"},  # the same axes: merged, not thinned
                                    "text": {"field": "text"}, "color": {"condition": {"test": "datum.dark", "value": "white"}, "value": "black"}}})
    if outline_diagonal:
        layers.append({"transform": [{"filter": "datum.diagonal"}], "mark": {**frame, "stroke": DIAGONAL_STROKE, "strokeWidth": 1.5},
                       "encoding": spans})
    layers.append({"mark": {**frame, "strokeWidth": 2.5}, "encoding": {
        **spans, "stroke": {"condition": {"param": CELL, "empty": False, "value": SELECTED_STROKE}, "value": None}}})
    return {
        "title": {"text": title, "anchor": "start", "fontSize": 13},
        "params": [{"name": "rowNames", "value": list(rows)}, {"name": "columnNames", "value": list(columns)}],
        "width": cell * len(columns), "height": cell * len(rows), "autosize": FIXED_SIZE,
        "data": {"values": cells},
        "transform": [{"calculate": "datum.j - 0.5", "as": "x"}, {"calculate": "datum.j + 0.5", "as": "x2"},
                      {"calculate": "datum.i - 0.5", "as": "y"}, {"calculate": "datum.i + 0.5", "as": "y2"}],
        "layer": layers,
        "config": {"view": {"stroke": None}, "axis": {"domain": False, "labelOverlap": False}},
    }


def _cell_records(rows: list[str], columns: list[str], diagonal: np.ndarray, fields: dict[str, np.ndarray], texts: list[list[str]],
                  colour: np.ndarray, strength: np.ndarray) -> list[Spec]:
    """One record a cell: its indices and names, its colour value (null: hidden), its number (white
    where `strength`, how far the colour is from white, is high), and `fields`' values for the hover."""
    top = float(np.nanmax(strength)) if np.isfinite(strength).any() else 0.0
    dark = np.isfinite(strength) & (strength > DARK_TEXT_FROM * top) if top > 0 else np.zeros_like(diagonal)
    return [{"i": i, "j": j, "row": row, "column": column, "label": f"cell {row} {column}", "colour": _number(colour[i, j]),
             "text": texts[i][j], "dark": bool(dark[i, j]), "diagonal": bool(diagonal[i, j]),
             **{name: _number(values[i, j]) for name, values in fields.items()}}
            for i, row in enumerate(rows) for j, column in enumerate(columns)]


def matrix_heatmap(matrices: MatrixSet, metric: str, *, scale: str = "linear", hide_diagonal: bool = False, outline_diagonal: bool = False,
                   title: str = "") -> Spec:
    """`heatmaps.matrix_heatmap` for the app: a clickable, zoomable heatmap of one matrix whose
    hover shows both class names, the value, the pixels and the row and column percentages."""
    rows, columns = matrices.rows, matrices.columns
    picture = matrix_picture(matrices, metric, scale=scale, hide_diagonal=hide_diagonal)
    values, diagonal, colours = picture.values, picture.diagonal, picture.colours
    fields = {"value": values, "pixels": np.asarray(matrices.confusion, dtype=float), "recall": np.asarray(matrices.recall, dtype=float),
              "precision": np.asarray(matrices.precision, dtype=float)}
    legend: Spec = {"title": COLOUR_BAR_TITLES[metric], "gradientLength": max(120, min(400, cell_size(rows, columns) * len(rows)))}
    if colours.tickvals is not None:
        legend |= {"values": colours.tickvals, "labelExpr": "colourTicks[indexof(colourValues, datum.value)]"}
    elif metric == "share":
        legend["format"] = PERCENT_FORMAT
    colour = {"field": "colour", "type": "quantitative", "scale": {"scheme": "blues"}, "legend": legend,
              "condition": {"test": "datum.colour === null", "value": "white"}}
    tooltip = _tooltip([("row", "reference", None), ("column", "prediction", None),
                        ("value", NORMALISATIONS[metric], {"confusion": PIXELS_FORMAT, "share": PERCENT_FORMAT}.get(metric, ".4f")),
                        ("pixels", "pixels", PIXELS_FORMAT), ("recall", "row % (recall)", PERCENT_FORMAT),
                        ("precision", "column % (precision)", PERCENT_FORMAT)])
    colour_values = np.asarray(colours.z, dtype=float)
    spec = _heatmap_spec(matrices, _cell_records(rows, columns, diagonal, fields, picture.texts, colour_values, colour_values), colour,
                         tooltip, title=title, small=picture.small, outline_diagonal=outline_diagonal and bool(diagonal.any()))
    if colours.tickvals is not None:
        spec["params"] += [{"name": "colourValues", "value": colours.tickvals}, {"name": "colourTicks", "value": colours.ticktext}]
    return spec


def difference_heatmap(difference: MatrixSet, metric: str, *, title: str = "") -> Spec:
    """B minus A on a diverging scale centred on 0 (red: B lower, blue: B higher)."""
    rows, columns = difference.rows, difference.columns
    values = np.asarray(getattr(difference, metric), dtype=float)
    bound = (float(np.nanmax(np.abs(values))) if np.isfinite(values).any() else 0.0) or 1.0
    small = numbered(difference)
    texts = [[f"{v:+.2f}" if small and math.isfinite(v) else "" for v in row] for row in values]
    colour = {"field": "colour", "type": "quantitative", "scale": {"scheme": "redblue", "domain": [-bound, bound], "domainMid": 0},
              "legend": {"title": f"Δ {metric}"}}
    tooltip = _tooltip([("row", "reference", None), ("column", "prediction", None), ("value", f"B − A {metric}", "+.4f")])
    cells = _cell_records(rows, columns, difference.same_class(), {"value": values}, texts, values, np.abs(values))
    return _heatmap_spec(difference, cells, colour, tooltip, title=title, small=small, outline_diagonal=False)


def clicked_cell(event: Any, rows: list[str], columns: list[str]) -> tuple[str, str] | None:
    """(reference class, predicted class) of the cell a heatmap click selected, if any."""
    for point in _selected(event, CELL):
        i, j = point.get("i"), point.get("j")
        if isinstance(i, int) and isinstance(j, int) and 0 <= i < len(rows) and 0 <= j < len(columns):
            return rows[i], columns[j]
    return None


def _selected(event: Any, name: str) -> list[dict]:
    """The points of the selection `name` in the app's selection event (a dict or its attribute view)."""
    selection = (event or {}).get("selection") or {}
    points = selection.get(name) or []
    return [point for point in points if isinstance(point, dict)]


def bar_series(per_class: dict[str, dict[str, float | None]]) -> list[str]:
    """The bars of each class, in order: recall, precision, F1, then AP and AR@100 when the rows
    carry them (single taxonomy with mAP)."""
    first = next(iter(per_class.values()), {})
    return [*SCORE_COLOURS, *(BOX_SCORES[key][0] for key in BOX_SCORES if key in first)]


def _grouped_bars(series: dict[str, tuple[list[float | None], str]], classes: list[str], *, title: str, y: Spec,
                  tooltip: list[tuple[str, str, str | None]], lighter: tuple[str, ...] = (),
                  hover: dict[str, list[dict[str, float]]] | None = None) -> Spec:
    """Grouped bars, one group per class and one bar a series (name -> (values, colour); None: no
    bar); `lighter` series are drawn paler; `hover` adds fields to a series' bars, class by class.
    A click selects a bar (`clicked_bar`)."""
    names = list(series)
    records = [{"c": c, "class": label, "series": name, "value": None if value is None else _number(value), "lighter": name in lighter,
                "label": f"bar {label} {name}", **((hover or {}).get(name) or [{}] * len(classes))[c]}
               for name, (values, _) in series.items() for c, (label, value) in enumerate(zip(classes, values))]
    return {
        "title": {"text": title, "anchor": "start"},
        "params": [{"name": "classNames", "value": classes},
                   {"name": BAR, "select": {"type": "point", "fields": ["c", "series"], "on": "click", "clear": False}}],
        "width": "container", "height": 300, "autosize": FIT_WIDTH,
        "data": {"values": records},
        "transform": [{"filter": "datum.value !== null"}],
        "mark": {"type": "bar"},
        "encoding": {
            "x": {"field": "c", "type": "ordinal", "title": None,
                  "axis": {"labelExpr": "classNames[datum.value]", "labelAngle": -30, "labelLimit": 200, "labelOverlap": False}},
            "xOffset": {"field": "series", "sort": names},
            "y": y,
            "color": {"field": "series", "type": "nominal", "sort": names, "title": None,
                      "scale": {"domain": names, "range": [colour for _, colour in series.values()]},
                      "legend": {"orient": "top", "direction": "horizontal"}},
            "fillOpacity": {"condition": {"test": "datum.lighter", "value": 0.45}, "value": 1},
            "stroke": {"condition": {"param": BAR, "empty": False, "value": SELECTED_STROKE}, "value": None},
            "strokeWidth": {"value": 2},
            "tooltip": _tooltip([("class", "class", None), ("series", "series", None), *tooltip]),
            "description": {"field": "label"},
        },
    }


def per_class_bars(per_class: dict[str, dict[str, float | None]], *, title: str = "") -> Spec:
    """Grouped recall / precision / F1 bars (TORE's, of the pixels), one group per class, and beside
    them, paler, AP and AR@100 (mAP's, of the boxes) when the rows have `ap` and `ar_100` (None: no
    bar, the class has no box on either side); a click selects a class."""
    keys = {**{score: score for score in SCORE_COLOURS}, **{name: key for key, (name, _) in BOX_SCORES.items()}}
    colours = {**SCORE_COLOURS, **dict(BOX_SCORES.values())}
    shown = bar_series(per_class)
    series = {name: ([row[keys[name]] for row in per_class.values()], colours[name]) for name in shown}
    y = {"field": "value", "type": "quantitative", "title": "score", "scale": {"domain": [0, 1]}}
    return _grouped_bars(series, list(per_class), title=title, y=y, tooltip=[("value", "score", ".4f")],
                         lighter=tuple(name for name, _ in BOX_SCORES.values() if name in shown))


def outcome_bars(outcomes: pd.DataFrame, *, title: str = "") -> Spec:
    """B minus A per reference class and outcome (`comparison.Comparison.per_class`: shares of the
    class's pixels going to Background, to its own class, elsewhere, in columns `<outcome>_a`,
    `<outcome>_b` and `<outcome>_b_minus_a`, the outcome in snake_case), with A's and B's shares in
    the hover; a click selects a class and an outcome."""
    series: dict[str, tuple[list[float | None], str]] = {}
    hover: dict[str, list[dict[str, float]]] = {}
    for outcome, colour in OUTCOME_COLOURS.items():
        column = outcome.lower().replace(" ", "_")
        series[outcome] = (outcomes[f"{column}_b_minus_a"].tolist(), colour)
        hover[outcome] = [{"a": a, "b": b} for a, b in zip(outcomes[f"{column}_a"].tolist(), outcomes[f"{column}_b"].tolist())]
    y = {"field": "value", "type": "quantitative", "title": "B − A, share of the class's pixels", "axis": {"format": PERCENT_FORMAT}}
    return _grouped_bars(series, outcomes.index.tolist(), title=title, y=y, hover=hover,
                         tooltip=[("value", "B − A", f"+{PERCENT_FORMAT}"), ("a", "A", PERCENT_FORMAT), ("b", "B", PERCENT_FORMAT)])


def clicked_bar(event: Any, classes: list[str], series: list[str]) -> tuple[str, str] | None:
    """(class, series) of the bar a click selected, if any."""
    for point in _selected(event, BAR):
        index, name = point.get("c"), point.get("series")
        if isinstance(index, int) and 0 <= index < len(classes) and name in series:
            return classes[index], name
    return None
