"""The operating-point figure (tore_engine.plots.sweep), without Streamlit: each curve is the sweep
table's F1 at the 19 minimum scores (a point equal to a run at that minimum score), its best point
a star, mAP's view in a second panel only when there is one, names escaped, clicks read back."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from tests.helpers import DEMO, valid_vega_lite, vega_expressions
from tore_engine.api import load_pair
from tore_engine.metrics.sweep import MIN_SCORES, SWEEP_COLUMNS
from tore_engine.plots.sweep import POINT, clicked_min_score, sweep_chart
from tore_engine.run.runner import evaluate_dataset


@pytest.fixture(scope="module")
def demo_pair():
    return load_pair(DEMO / "reference.json", DEMO / "model_a.json")


def _curve(spec: dict, name: str, panel: int = 0) -> list[dict]:
    """A curve's points in one panel (0: TORE's, 1: the detection view), in minimum-score order."""
    return sorted((row for row in spec["data"]["values"] if row["kind"] == "point" and row["shown"] == name and row["panel"] == panel),
                  key=lambda row: row["min_score"])


def _f1(points: list[dict]) -> list[float]:
    return [math.nan if point["f1"] is None else point["f1"] for point in points]


def _best_of(values: list[float]) -> int:
    """The highest F1, the lowest minimum score on a tie: worked out here, not read from the table."""
    top = max(value for value in values if not math.isnan(value))
    return next(k for k, value in enumerate(values) if value == top)


def test_each_curve_is_the_f1_of_a_run_at_each_minimum_score_and_its_best_is_a_star(demo_a, demo_pair):
    sweep = demo_a.sweep()
    spec = valid_vega_lite(sweep_chart(sweep, current=0.5, title="demo"))
    foreground = _curve(spec, "Foreground")
    assert [point["min_score"] for point in foreground] == list(MIN_SCORES)
    recall, precision = evaluate_dataset(*demo_pair, min_score=0.5).matrices.foreground  # an independent run at one point
    assert _f1(foreground)[MIN_SCORES.index(0.5)] == pytest.approx(2 * recall * precision / (recall + precision), abs=1e-12)
    best = [point["best"] for point in foreground]
    assert best.count(True) == 1 and best.index(True) == _best_of(_f1(foreground))
    table = sweep[(sweep["scope"] == "class") & (sweep["class"] == "Table")]["f1"].astype(float).tolist()
    assert _f1(_curve(spec, "Table")) == table and [point["best"] for point in _curve(spec, "Table")].index(True) == _best_of(table)
    titles = next(param["value"] for param in spec["params"] if param["name"] == "panelTitles")
    assert f"best Foreground {max(_f1(foreground)):.3f} at" in titles[0]
    assert [(row["panel"], row["min_score"]) for row in spec["data"]["values"] if row["kind"] == "current"] == [(0, 0.5), (1, 0.5)]


def test_maps_view_is_the_second_panel_with_map_in_its_title(demo_a):
    sweep = demo_a.sweep()
    spec = sweep_chart(sweep)
    pooled = _curve(spec, "all classes", panel=1)
    rows = sweep[sweep["scope"] == "foreground"]
    assert _f1(pooled) == rows["detection_f1"].astype(float).tolist() and {point["curve"] for point in pooled} == {"Foreground"}
    titles = next(param["value"] for param in spec["params"] if param["name"] == "panelTitles")
    assert f"mAP {demo_a.map.map:.3f}" in titles[1]
    assert pooled[0]["ap"] == demo_a.map.map and pooled[0]["dashed"]  # AP in the hover, the detection side dashed
    assert not [row for row in spec["data"]["values"] if row["kind"] == "current"]  # no minimum score: no line
    domain = spec["spec"]["layer"][0]["encoding"]["color"]["scale"]["domain"]
    assert len(domain) == len(set(domain)) and domain[0] == "Foreground"  # one legend entry a curve's name, for both panels


def test_a_dual_evaluation_has_one_panel_and_a_subset_of_classes_draws_only_those(demo_b, demo_a):
    spec = sweep_chart(demo_b.sweep())
    assert {row["shown"] for row in spec["data"]["values"]} == {"Foreground"}
    assert len(next(param["value"] for param in spec["params"] if param["name"] == "panelTitles")) == 1
    narrowed = sweep_chart(demo_a.sweep(), classes=["Text", "Table"])
    assert {row["shown"] for row in narrowed["data"]["values"]} == {"Foreground", "Table", "Text", "all classes"}


def test_class_names_are_data_never_expressions():
    hostile = '<a href="https://example.org/">x</a>\'); alert(1); (\''
    rows = [(t, scope, name, 0.5, 0.5, 0.5 + t / 10, t == 0.95, None, None, None, None, False)
            for t in MIN_SCORES for scope, name in (("foreground", None), ("class", hostile))]
    spec = valid_vega_lite(sweep_chart(pd.DataFrame(rows, columns=list(SWEEP_COLUMNS)), title=hostile))
    assert {row["shown"] for row in spec["data"]["values"]} == {"Foreground", hostile}
    expressions = vega_expressions(spec)
    assert expressions and not any("alert" in text or "example.org" in text for text in expressions)


def test_a_click_gives_the_minimum_score_of_its_point():
    assert clicked_min_score({"selection": {POINT: [{"min_score": 0.7500000001}]}}) == 0.75 == MIN_SCORES[14]
    assert clicked_min_score({"selection": {POINT: [{"min_score": 0.33}]}}) is None  # not a point of the sweep
    assert clicked_min_score({"selection": {POINT: []}}) is None and clicked_min_score(None) is None
    assert np.isclose(clicked_min_score({"selection": {POINT: [{"min_score": 0.05}]}}), 0.05)
