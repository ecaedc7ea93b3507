"""The operating-point figure (tore_engine.plots.sweep), without Streamlit: each curve is the sweep
table's F1 at the 19 minimum scores (a point equal to a run at that minimum score), its best point
a star, mAP's view in a second panel only when there is one, names escaped, clicks read back."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from tests.helpers import DEMO
from tore_engine.api import load_pair
from tore_engine.metrics.sweep import MIN_SCORES, SWEEP_COLUMNS
from tore_engine.plots.sweep import BEST_SYMBOL, clicked_min_score, sweep_figure
from tore_engine.run.runner import evaluate_dataset


@pytest.fixture(scope="module")
def demo_pair():
    return load_pair(DEMO / "reference.json", DEMO / "model_a.json")


def _traces(fig, name: str, dash: str = "solid"):
    return next(trace for trace in fig.data if trace.name == name and trace.line.dash == dash)


def _best_of(values: list[float]) -> int:
    """The highest F1, the lowest minimum score on a tie: worked out here, not read from the table."""
    top = max(value for value in values if not math.isnan(value))
    return next(k for k, value in enumerate(values) if value == top)


def test_each_curve_is_the_f1_of_a_run_at_each_minimum_score_and_its_best_is_a_star(demo_a, demo_pair):
    sweep = demo_a.sweep()
    fig = sweep_figure(sweep, current=0.5, title="demo")
    foreground = _traces(fig, "Foreground")
    assert list(foreground.x) == list(MIN_SCORES)
    at_half = evaluate_dataset(*demo_pair, min_score=0.5).matrices.foreground  # an independent run at one point
    recall, precision = at_half
    assert foreground.y[MIN_SCORES.index(0.5)] == pytest.approx(2 * recall * precision / (recall + precision), abs=1e-12)
    symbols = list(foreground.marker.symbol)
    assert symbols.count(BEST_SYMBOL) == 1 and symbols.index(BEST_SYMBOL) == _best_of(list(foreground.y))
    table = sweep[(sweep["scope"] == "class") & (sweep["class"] == "Table")]["f1"].astype(float).tolist()
    table_curve = _traces(fig, "Table")
    assert list(table_curve.y) == table and list(table_curve.marker.symbol).index(BEST_SYMBOL) == _best_of(table)
    assert f"best Foreground {max(foreground.y):.3f} at" in fig.layout.annotations[0].text
    assert [shape.x0 for shape in fig.layout.shapes] == [0.5, 0.5]  # the minimum score shown, in both panels


def test_maps_view_is_the_second_panel_with_map_in_its_title(demo_a):
    sweep = demo_a.sweep()
    fig = sweep_figure(sweep)
    pooled = _traces(fig, "all classes", "dash")
    rows = sweep[sweep["scope"] == "foreground"]
    assert list(pooled.y) == rows["detection_f1"].astype(float).tolist() and pooled.xaxis == "x2"
    assert f"mAP {demo_a.map.map:.3f}" in fig.layout.annotations[1].text
    assert pooled.customdata[0][2] == demo_a.map.map  # AP in the hover
    assert fig.layout.shapes == ()  # no minimum score: no line
    names_in_legend = [trace.name for trace in fig.data if trace.showlegend]
    assert len(names_in_legend) == len(set(names_in_legend)) and "Foreground" in names_in_legend  # one entry a curve's name


def test_a_dual_evaluation_has_one_panel_and_a_subset_of_classes_draws_only_those(demo_b, demo_a):
    fig = sweep_figure(demo_b.sweep())
    assert [trace.name for trace in fig.data] == ["Foreground"] and len(fig.layout.annotations) == 1
    narrowed = sweep_figure(demo_a.sweep(), classes=["Text", "Table"])
    assert {trace.name for trace in narrowed.data} == {"Foreground", "Table", "Text", "all classes"}


def test_class_names_are_drawn_as_text():
    hostile = '<a href="https://example.org/">x</a>'
    rows = [(t, scope, name, 0.5, 0.5, 0.5 + t / 10, t == 0.95, None, None, None, None, False)
            for t in MIN_SCORES for scope, name in (("foreground", None), ("class", hostile))]
    fig = sweep_figure(pd.DataFrame(rows, columns=list(SWEEP_COLUMNS)), title=hostile)
    assert {trace.name for trace in fig.data} == {"Foreground", "&lt;a href=\"https://example.org/\"&gt;x&lt;/a&gt;"}
    assert "<a" not in fig.layout.title.text and all("<a" not in trace.hovertemplate for trace in fig.data)


def test_a_click_gives_the_minimum_score_of_its_point():
    assert clicked_min_score({"selection": {"points": [{"x": 0.7500000001, "y": 0.9}]}}) == 0.75 == MIN_SCORES[14]
    assert clicked_min_score({"selection": {"points": [{"x": 0.33}]}}) is None  # not a point of the sweep
    assert clicked_min_score({"selection": {"points": []}}) is None and clicked_min_score(None) is None
    assert np.isclose(clicked_min_score({"selection": {"points": [{"x": 0.05}]}}), 0.05)
