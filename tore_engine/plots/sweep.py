"""The operating point as a Vega-Lite chart: TORE's F1 at each minimum score of the sweep, beside
mAP's view of the same scores, built from `Evaluation.sweep()`'s table.

A pure function of that table (one row a minimum score and scope, `metrics.sweep.SWEEP_COLUMNS`):
the left panel draws the Foreground F1 (the reduced view's) and each class's F1 against the
minimum score; the right one, when the evaluation has mAP, the F1 of the boxes scored at least
that much matched at IoU 0.50 (COCOeval's matching), pooled and per class, with AP in the hover
(mAP needs no threshold). Each curve's best point is a star, the Foreground's best is named in
its panel's title, and the minimum score the evaluation shown was made at is a dotted line. A click
on a point selects its minimum score (`clicked_min_score`); a click on a legend entry shows that
curve alone in both panels. Names travel as data, never inside an expression.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

import numpy as np

from tore_engine.metrics.sweep import CLASS, FOREGROUND, MIN_SCORES
from tore_engine.plots.palette import class_color

if TYPE_CHECKING:
    import pandas as pd

Spec = dict[str, Any]
POINT = "point"  # the point selection a click makes (its field: min_score)
CURVES = "curves"  # the point selection bound to the legend
FOREGROUND_NAME = "Foreground"
POOLED_NAME = "all classes"
FOREGROUND_COLOUR = "#222222"
CURRENT_COLOUR = "#d62728"
STAR = "M0,-1L0.24,-0.33L0.95,-0.31L0.39,0.12L0.59,0.81L0,0.4L-0.59,0.81L-0.39,0.12L-0.95,-0.31L-0.24,-0.33Z"
BEST_SIZE, POINT_SIZE = 260, 30
PANEL_WIDTH = 340  # pixels: both panels fit the app's main column on a 1280-pixel screen
TORE_TITLE = "TORE: F1 of the pixels"
DETECTION_TITLE = "mAP's view: F1 of the boxes, IoU 0.50"
PANELS = {"tore": ("f1", "recall", "precision", "best"),
          "detection": ("detection_f1", "detection_recall", "detection_precision", "detection_best")}


def _numbers(values: pd.Series) -> np.ndarray:
    """A column as floats, NaN where undefined (the table holds None there)."""
    return np.array([np.nan if value is None else value for value in values.tolist()], dtype=float)


def _json(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def _curves(sweep: pd.DataFrame, classes: Collection[str] | None) -> list[tuple[str, pd.DataFrame]]:
    """(shown name, its rows in minimum-score order): the Foreground first, then each class (all,
    or those in `classes`) in the table's order."""
    foreground = sweep[sweep["scope"] == FOREGROUND].sort_values("min_score")
    per_class = sweep[sweep["scope"] == CLASS]
    names = [name for name in dict.fromkeys(per_class["class"].tolist()) if classes is None or name in classes]
    return [(FOREGROUND_NAME, foreground)] + [(name, per_class[per_class["class"] == name].sort_values("min_score")) for name in names]


def _points(name: str, rows: pd.DataFrame, panel: int, kind: str) -> list[Spec]:
    """One record a minimum score of one curve of a panel (none when the curve has no defined
    point): its F1, recall, precision, AP (the detection side's hover) and whether it is the best."""
    f1_column, recall_column, precision_column, best_column = PANELS[kind]
    f1 = _numbers(rows[f1_column])
    if np.isnan(f1).all():
        return []
    foreground = name == FOREGROUND_NAME
    shown = (POOLED_NAME if kind == "detection" else FOREGROUND_NAME) if foreground else name
    recall, precision, ap = _numbers(rows[recall_column]), _numbers(rows[precision_column]), _numbers(rows["ap"])
    best = rows[best_column].to_numpy(dtype=bool)
    return [{"kind": "point", "panel": panel, "curve": name, "shown": shown, "min_score": float(score), "f1": _json(f1[k]),
             "recall": _json(recall[k]), "precision": _json(precision[k]), "ap": _json(ap[k]) if kind == "detection" else None,
             "best": bool(best[k]), "width": 3 if foreground else 1.5, "dashed": kind == "detection"}
            for k, score in enumerate(rows["min_score"].to_numpy(dtype=float))]


def _best_text(rows: pd.DataFrame) -> str:
    """The Foreground's best point, for the left panel's title."""
    best = rows[rows["best"].to_numpy(dtype=bool)]
    if best.empty:
        return ""
    return f" (best Foreground {float(best['f1'].iloc[0]):.3f} at {float(best['min_score'].iloc[0]):.2f})"


def _layers(colour: Spec) -> list[Spec]:
    """The curves, their points (a click selects one; the best a star) and the current minimum score."""
    x = {"field": "min_score", "type": "quantitative", "title": "minimum score",
         "scale": {"domain": [0, 1], "nice": False}, "axis": {"values": [k / 10 for k in range(11)]}}
    y = {"field": "f1", "type": "quantitative", "title": "F1", "scale": {"domain": [0, 1.05], "nice": False}}
    shown = {"condition": {"param": CURVES, "value": 1}, "value": 0.1}
    tooltip = [{"field": "shown", "title": "curve"}, {"field": "min_score", "title": "minimum score", "format": ".2f"},
               {"field": "f1", "title": "F1", "format": ".4f"}, {"field": "recall", "title": "recall", "format": ".4f"},
               {"field": "precision", "title": "precision", "format": ".4f"}, {"field": "ap", "title": "AP (no threshold)", "format": ".4f"}]
    points = "datum.kind === 'point'"
    return [
        {"transform": [{"filter": points}], "mark": {"type": "line", "clip": True},
         "encoding": {"x": x, "y": y, "color": colour, "detail": {"field": "curve"}, "opacity": shown,
                      "strokeWidth": {"field": "width", "type": "quantitative", "scale": None},
                      "strokeDash": {"condition": {"test": "datum.dashed", "value": [6, 4]}, "value": [1, 0]}}},
        {"params": [{"name": POINT, "select": {"type": "point", "fields": ["min_score"], "on": "click", "clear": False}},
                    {"name": CURVES, "select": {"type": "point", "fields": ["curve"]}, "bind": "legend"}],
         "transform": [{"filter": f"{points} && isValid(datum.f1)"}],
         "mark": {"type": "point", "filled": True, "clip": True},
         "encoding": {"x": x, "y": y, "color": colour, "opacity": shown, "tooltip": tooltip,
                      "shape": {"condition": {"test": "datum.best", "value": STAR}, "value": "circle"},
                      "size": {"condition": {"test": "datum.best", "value": BEST_SIZE}, "value": POINT_SIZE},
                      "description": {"field": "label"}}},
        {"transform": [{"filter": "datum.kind === 'current'"}],
         "mark": {"type": "rule", "strokeDash": [2, 3], "strokeWidth": 1.5, "color": CURRENT_COLOUR}, "encoding": {"x": x}},
    ]


def sweep_chart(sweep: pd.DataFrame, *, current: float | None = None, classes: Collection[str] | None = None, title: str = "") -> Spec:
    """F1 against the minimum score (`Evaluation.sweep()`'s table): TORE's Foreground and per-class
    curves, and, when the table has a detection view, mAP's beside them (its panel title gives
    mAP). `current`: the minimum score the evaluation shown was made at (None: no minimum score),
    drawn as a dotted line. `classes`: the classes to draw (None: all)."""
    curves = _curves(sweep, classes)
    records = [point for name, rows in curves for point in _points(name, rows, 0, "tore")]
    detection = [point for name, rows in curves for point in _points(name, rows, 1, "detection")]
    mean_ap = _numbers(curves[0][1]["ap"])[0] if len(curves[0][1]) else np.nan
    titles = [f"{TORE_TITLE}{_best_text(curves[0][1])}"]
    if detection:
        titles.append(f"{DETECTION_TITLE}{'' if np.isnan(mean_ap) else f' (mAP {mean_ap:.3f}, every box)'}")
    records += detection
    for record in records:
        record["label"] = f"point {record['shown']} {record['min_score']:.2f} {'detection' if record['panel'] else 'tore'}"
    if current is not None:
        records += [{"kind": "current", "panel": panel, "min_score": float(current)} for panel in range(len(titles))]
    drawn = [name for name in dict.fromkeys(record["curve"] for record in records if record["kind"] == "point")]
    colour = {"field": "curve", "type": "nominal", "title": "click a name to show its curves alone (shift + click: more)",
              "scale": {"domain": drawn, "range": [FOREGROUND_COLOUR if name == FOREGROUND_NAME else class_color(name) for name in drawn]},
              "legend": {"orient": "bottom", "direction": "horizontal", "columns": 5, "labelLimit": 200, "titleLimit": 600}}
    return {
        "title": {"text": title, "anchor": "start", "fontSize": 13},
        "data": {"values": records},
        "params": [{"name": "panelTitles", "value": titles}],
        "facet": {"field": "panel", "type": "ordinal", "title": None,
                  "header": {"labelExpr": "panelTitles[datum.value]", "labelFontSize": 13, "labelLimit": PANEL_WIDTH + 40}},
        "columns": 2,
        "spacing": 20,
        "spec": {"width": PANEL_WIDTH, "height": 340, "layer": _layers(colour)},
    }


def clicked_min_score(event: Any) -> float | None:
    """The sweep's minimum score at the point a click selected (one of `MIN_SCORES`, as the
    command line reads it), if any."""
    points = ((event or {}).get("selection") or {}).get(POINT) or []
    for point in points:
        x = point.get("min_score") if isinstance(point, dict) else None
        if isinstance(x, (int, float)):
            nearest = min(MIN_SCORES, key=lambda score: abs(score - x))
            if abs(nearest - x) < 1e-6:
                return nearest
    return None
