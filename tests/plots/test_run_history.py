"""A reference's history (tore_engine.plots.run_history): a point a run even where two runs share a
name, an undefined figure a gap (not a zero), every name from a manifest drawn as plain text."""

from __future__ import annotations

import math

from tests.helpers import plotly_texts, valid_plotly
from tore_engine.plots.run_history import run_history_figure

HOSTILE = '<a href="https://example.com">x</a> 100% <b>'


def test_runs_of_one_name_stay_two_points_and_undefined_is_a_gap():
    spec = valid_plotly(run_history_figure(["nightly", "nightly", "v2"], ["runs/a", "old/runs/a", "v2"], {"map": [0.5, None, 0.75], "foreground_f1": [0.25, 0.5, 1.0]}, "t"))
    by_name = {trace["name"]: trace for trace in spec["data"]}
    assert list(by_name["foreground_f1"]["x"]) == [0, 1, 2] and list(by_name["foreground_f1"]["y"]) == [0.25, 0.5, 1.0]
    map_values = list(by_name["map"]["y"])
    assert map_values[0] == 0.5 and (map_values[1] is None or math.isnan(map_values[1]))  # JSON null: Plotly draws a gap
    assert spec["layout"]["xaxis"]["zeroline"] is False  # no line drawn through the first run
    assert spec["layout"]["xaxis"]["tickvals"] == [0, 1, 2] and spec["layout"]["xaxis"]["ticktext"] == ["nightly", "nightly", "v2"]
    assert spec["data"][0]["customdata"] == ["nightly (runs/a)", "nightly (old/runs/a)", "v2 (v2)"]  # a hover tells runs of one name apart


def test_names_from_manifests_are_plain_text():
    spec = valid_plotly(run_history_figure([HOSTILE], [HOSTILE], {f"F1 {HOSTILE}": [0.5]}, HOSTILE))
    texts = plotly_texts(spec) + list(spec["data"][0]["customdata"])
    assert texts and not any("<a href" in text or "<b>" in text for text in texts)
    assert "100%% &lt;b&gt;" in spec["data"][0]["hovertemplate"]  # `%` doubled: a hover template reads `%{...}`
