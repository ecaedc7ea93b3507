"""The operating-point figure (tore_engine.plots.sweep), without Streamlit: each curve is the sweep
table's F1 at the 19 minimum scores (a point equal to a run at that minimum score), its best point
a star, mAP's view in a second panel only when there is one, names escaped, clicks read back."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from tests.helpers import DEMO, figure_json, plotly_texts, valid_plotly
from tore_engine.api import load_pair
from tore_engine.metrics.sweep import MIN_SCORES, SWEEP_COLUMNS
from tore_engine.plots.sweep import clicked_min_score, sweep_chart
from tore_engine.run.runner import evaluate_dataset


@pytest.fixture(scope="module")
def demo_pair():
    return load_pair(DEMO / "reference.json", DEMO / "model_a.json")


def _curve(spec, curve: str, panel: int = 0) -> list[dict]:
    """A curve's points in one panel (0: TORE's, 1: the detection view), in minimum-score order:
    min_score, f1, best (a star there), hover (the trace's template), ap."""
    spec = figure_json(spec)
    axis = "x" if panel == 0 else "x2"
    traces = [trace for trace in spec["data"] if trace.get("legendgroup") == curve and trace.get("xaxis", "x") == axis]
    line = next((trace for trace in traces if trace["mode"] == "lines+markers"), None)
    if line is None:
        return []
    stars = {x for trace in traces if trace["mode"] == "markers" for x in trace["x"]}
    return [{"min_score": x, "f1": None if y is None or y != y else y, "best": x in stars, "hover": line["hovertemplate"],
             "dashed": line["line"]["dash"] == "dash", "ap": data[2]} for x, y, data in zip(line["x"], line["y"], line["customdata"])]


def _titles(spec) -> list[str]:
    return figure_json(spec)["layout"]["meta"]["panels"]


def _curves(spec) -> set[str]:
    return {trace["legendgroup"] for trace in figure_json(spec)["data"]}


def _current(spec) -> list[tuple[str, float]]:
    return [(shape["xref"], shape["x0"]) for shape in figure_json(spec)["layout"].get("shapes", [])]


def _f1(points: list[dict]) -> list[float]:
    return [math.nan if point["f1"] is None else point["f1"] for point in points]


def _best_of(values: list[float]) -> int:
    """The highest F1, the lowest minimum score on a tie: worked out here, not read from the table."""
    top = max(value for value in values if not math.isnan(value))
    return next(k for k, value in enumerate(values) if value == top)


def test_each_curve_is_the_f1_of_a_run_at_each_minimum_score_and_its_best_is_a_star(demo_a, demo_pair):
    sweep = demo_a.sweep()
    spec = valid_plotly(sweep_chart(sweep, current=0.5, title="demo"))
    foreground = _curve(spec, "Foreground")
    assert [point["min_score"] for point in foreground] == list(MIN_SCORES)
    recall, precision = evaluate_dataset(*demo_pair, min_score=0.5).matrices.foreground  # an independent run at one point
    assert _f1(foreground)[MIN_SCORES.index(0.5)] == pytest.approx(2 * recall * precision / (recall + precision), abs=1e-12)
    best = [point["best"] for point in foreground]
    assert best.count(True) == 1 and best.index(True) == _best_of(_f1(foreground))
    table = sweep[(sweep["scope"] == "class") & (sweep["class"] == "Table")]["f1"].astype(float).tolist()
    assert _f1(_curve(spec, "Table")) == table and [point["best"] for point in _curve(spec, "Table")].index(True) == _best_of(table)
    assert f"best Foreground {max(_f1(foreground)):.3f} at" in _titles(spec)[0]
    assert _current(spec) == [("x", 0.5), ("x2", 0.5)]


def test_maps_view_is_the_second_panel_with_map_in_its_title(demo_a):
    sweep = demo_a.sweep()
    spec = sweep_chart(sweep)
    pooled = _curve(spec, "Foreground", panel=1)
    rows = sweep[sweep["scope"] == "foreground"]
    assert _f1(pooled) == rows["detection_f1"].astype(float).tolist() and pooled[0]["hover"].startswith("all classes<br>")
    assert f"mAP {demo_a.map.map:.3f}" in _titles(spec)[1]
    assert pooled[0]["ap"] == pytest.approx(demo_a.map.map) and pooled[0]["dashed"]  # AP in the hover, the detection side dashed
    assert "AP (no threshold)" in pooled[0]["hover"]
    assert not _current(spec)  # no minimum score: no line
    legend = [trace["legendgroup"] for trace in figure_json(spec)["data"] if trace.get("showlegend") is not False]
    assert len(legend) == len(set(legend)) and legend[0] == "Foreground"  # one legend entry a curve's name, for both panels


def test_a_dual_evaluation_has_one_panel_and_a_subset_of_classes_draws_only_those(demo_b, demo_a):
    spec = sweep_chart(demo_b.sweep())
    assert _curves(spec) == {"Foreground"} and len(_titles(spec)) == 1
    narrowed = sweep_chart(demo_a.sweep(), classes=["Text", "Table"])
    assert _curves(narrowed) == {"Foreground", "Table", "Text"} and _curve(narrowed, "Foreground", 1)


def test_class_names_are_drawn_as_text():
    hostile = '<a href="https://example.org/">x</a>'
    rows = [(t, scope, name, 0.5, 0.5, 0.5 + t / 10, t == 0.95, None, None, None, None, False)
            for t in MIN_SCORES for scope, name in (("foreground", None), ("class", hostile))]
    spec = valid_plotly(sweep_chart(pd.DataFrame(rows, columns=list(SWEEP_COLUMNS)), title=hostile))
    assert _curves(spec) == {"Foreground", hostile}
    texts = plotly_texts(spec)
    assert texts and not any("<a href" in text for text in texts)


def test_a_click_gives_the_minimum_score_of_its_point():
    def click(x):
        return {"selection": {"points": [{"x": x, "y": 0.5, "curve_number": 0}]}}

    assert clicked_min_score(click(0.7500000001)) == 0.75 == MIN_SCORES[14]
    assert clicked_min_score(click(0.33)) is None  # not a point of the sweep
    assert clicked_min_score({"selection": {"points": []}}) is None and clicked_min_score(None) is None
    assert np.isclose(clicked_min_score(click(0.05)), 0.05)
