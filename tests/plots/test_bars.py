"""Grouped bars (tore_engine.plots.bars), without Streamlit: every score a bar, no bar for an
undefined one, A and B in the outcomes' hover, a click read back as its class and series."""

from __future__ import annotations

import math

import pandas as pd

from tests.helpers import valid_plotly
from tore_engine.plots import bars


def _bars(spec: dict) -> dict[tuple[str, str], float | None]:
    classes = spec["layout"]["meta"]["classes"]
    return {(classes[x], trace["name"]): value for trace in spec["data"] if trace["type"] == "bar" for x, value in zip(trace["x"], trace["y"])}


def test_per_class_bars_show_every_score_and_a_click_reads_back(evaluation):
    per_class = {name: {**scores, "ap": 0.25 if name == "Text" else None, "ar_100": 0.5} for name, scores in evaluation.matrices.per_class.items()}
    spec = valid_plotly(bars.per_class_bars(per_class, title="t"))
    series = bars.bar_series(per_class)
    assert series == ["recall", "precision", "f1", "AP", "AR@100"] == [trace["name"] for trace in spec["data"] if trace["type"] == "bar"]
    values = _bars(spec)
    assert values[("Text", "recall")] == per_class["Text"]["recall"] == 0.5
    assert values[("Text", "AP")] == 0.25 and values[("Title", "AP")] is None  # no bar
    assert [trace["opacity"] for trace in spec["data"] if trace["type"] == "bar"] == [1, 1, 1, 0.45, 0.45]  # mAP's paler
    markers = [trace for trace in spec["data"] if trace["type"] == "scatter"]  # a click marker at each bar's middle
    ap = markers[series.index("AP")]
    assert ap["x"] == [2 + (-0.4 + 3.5 * 0.16)] and ap["y"] == [0.125]  # Text's AP bar: its group's fourth fifth, half its height
    click = {"selection": {"points": [{"x": 2, "curve_number": 3, "point_index": 2}]}}
    assert bars.clicked_bar(click, list(per_class), series) == ("Text", "AP")
    marker_click = {"selection": {"points": [{"x": 2.16, "y": 0.125, "curve_number": len(series) + 3}]}}
    assert bars.clicked_bar(marker_click, list(per_class), series) == ("Text", "AP")
    assert bars.clicked_bar({"selection": {"points": [{"x": 2, "curve_number": 10}]}}, list(per_class), series) is None
    assert bars.bar_series({name: dict(scores) for name, scores in evaluation.matrices.per_class.items()}) == ["recall", "precision", "f1"]


def test_outcome_bars_carry_a_and_b_beside_b_minus_a():
    outcomes = pd.DataFrame({"background_a": [0.2, 0.0], "background_b": [0.1, 0.3], "own_class_a": [0.7, 1.0], "own_class_b": [0.8, 0.6],
                             "elsewhere_a": [0.1, 0.0], "elsewhere_b": [0.1, 0.1]}, index=["Text", "<b>Table</b>"])
    for outcome in ("background", "own_class", "elsewhere"):
        outcomes[f"{outcome}_b_minus_a"] = outcomes[f"{outcome}_b"] - outcomes[f"{outcome}_a"]
    spec = valid_plotly(bars.outcome_bars(outcomes))
    own = next(trace for trace in spec["data"] if trace["name"] == "own class")
    assert math.isclose(own["y"][1], -0.4) and own["customdata"][1] == "<br>A: 100.0%<br>B: 60.0%"
    assert own["text"][1] == "&lt;b&gt;Table&lt;/b&gt;" and "&lt;b&gt;" in spec["layout"]["xaxis"]["ticktext"][1]  # markup as text
    assert bars.clicked_bar({"selection": {"points": [{"x": 1, "curve_number": 2}]}}, ["Text", "<b>Table</b>"],
                            list(bars.OUTCOME_COLOURS)) == ("<b>Table</b>", "elsewhere")
