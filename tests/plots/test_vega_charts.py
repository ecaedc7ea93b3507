"""The app's clickable charts (tore_engine.plots.vega_charts), without Streamlit: every spec is valid
Vega-Lite (the schema Altair ships), each cell carries the matrix's own numbers, the colours and the
printed numbers are those of the reports' Plotly figure, and a click's selection reads back as the
cell or bar it was on (the event's shape as Streamlit 1.67 sends it, seen in Chromium)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from tests.helpers import valid_vega_lite as _valid
from tore_engine.metrics.matrices import MatrixSet
from tore_engine.plots import heatmaps, vega_charts


def _cell(spec: dict, row: str, column: str) -> dict:
    return next(record for record in spec["data"]["values"] if (record["row"], record["column"]) == (row, column))


def _layer(spec: dict, mark: str, *, filtered: bool = False) -> dict:
    return next(layer for layer in spec["layer"] if layer["mark"]["type"] == mark and ("transform" in layer) == filtered)


def test_each_cell_carries_the_matrix_numbers_and_the_reports_text_and_colour(evaluation):
    matrices = evaluation.matrices.full
    for metric in heatmaps.METRICS[:3]:
        for scale in heatmaps.SCALES:
            spec = _valid(vega_charts.matrix_heatmap(matrices, metric, scale=scale, title="t"))
            figure = heatmaps.matrix_heatmap(matrices, metric, scale=scale)
            colours = np.array(figure.data[0].z, dtype=float)
            for i, row in enumerate(matrices.rows):
                for j, column in enumerate(matrices.columns):
                    record = _cell(spec, row, column)
                    assert (record["i"], record["j"]) == (i, j)
                    assert record["value"] == pytest.approx(float(getattr(matrices, metric)[i, j]))
                    assert (record["pixels"], record["recall"]) == (float(matrices.confusion[i, j]), float(matrices.recall[i, j]))
                    assert record["text"] == figure.data[0].text[i][j]  # the number the report prints
                    assert record["colour"] == pytest.approx(colours[i, j])
                    assert record["dark"] == bool(colours[i, j] > vega_charts.DARK_TEXT_FROM * np.nanmax(colours))  # white text
    text_to_title = _cell(vega_charts.matrix_heatmap(matrices, "recall"), "Text", "Title")
    assert (text_to_title["value"], text_to_title["pixels"], text_to_title["precision"]) == (0.5, 4.0, pytest.approx(4 / 6))


def test_names_are_data_never_expressions_and_ticks_look_them_up(evaluation):
    names = ["<b>x</b>", "a'); alert(1); ('", "Text"]
    confusion = np.arange(9, dtype=float).reshape(3, 3)
    spec = _valid(vega_charts.matrix_heatmap(MatrixSet(names, names, confusion, confusion, confusion), "confusion", title="<i>t</i>"))
    assert {"name": "rowNames", "value": names} in spec["params"] and {"name": "columnNames", "value": names} in spec["params"]
    cells = _layer(spec, "rect")["encoding"]
    assert cells["y"]["axis"]["labelExpr"] == "rowNames[datum.value]" and cells["x"]["axis"]["values"] == [0, 1, 2]
    expressions = [layer.get("transform", []) for layer in spec["layer"]] + [spec["transform"]]
    assert not any(name in repr(expressions) for name in names)
    assert spec["title"]["text"] == "<i>t</i>"  # drawn by Vega as text, not markup


def test_hidden_diagonal_is_blank_and_the_outline_frames_the_diagonal(evaluation):
    matrices = evaluation.matrices.trimmed
    spec = _valid(vega_charts.matrix_heatmap(matrices, "confusion", hide_diagonal=True, outline_diagonal=True))
    diagonal = matrices.same_class()
    for i, row in enumerate(matrices.rows):
        for j, column in enumerate(matrices.columns):
            record = _cell(spec, row, column)
            assert record["diagonal"] == diagonal[i, j]
            assert (record["colour"] is None) == diagonal[i, j] and (record["text"] == "") == diagonal[i, j]
            assert record["value"] == float(matrices.confusion[i, j])  # the hover still tells it
    assert _layer(spec, "rect", filtered=True)["transform"] == [{"filter": "datum.diagonal"}]
    assert not any("transform" in layer for layer in vega_charts.matrix_heatmap(matrices, "confusion")["layer"])


def test_a_log_scale_labels_its_colour_ticks_in_the_original_unit(evaluation):
    spec = _valid(vega_charts.matrix_heatmap(evaluation.matrices.full, "recall", scale="log"))
    ticks = heatmaps.colour_scale(np.asarray(evaluation.matrices.full.recall, dtype=float), "log", is_ratio=True)
    params = {param["name"]: param.get("value") for param in spec["params"]}
    assert params["colourValues"] == ticks.tickvals and params["colourTicks"] == ticks.ticktext == ["0", "0.001", "0.01", "0.1", "1"]
    assert _layer(spec, "rect")["encoding"]["color"]["legend"]["values"] == ticks.tickvals


def test_a_hundred_classes_have_no_numbers_nor_tick_labels():
    classes = [f"class {k}" for k in range(100)]
    confusion = np.random.default_rng(0).random((100, 100))
    spec = _valid(vega_charts.matrix_heatmap(MatrixSet(classes, classes, confusion, confusion, confusion), "confusion"))
    assert [layer["mark"]["type"] for layer in spec["layer"]] == ["rect", "rect"]  # cells and the clicked frame, no text layer
    assert _layer(spec, "rect")["encoding"]["x"]["axis"]["labels"] is False
    assert spec["height"] == spec["width"] == 100 * heatmaps.cell_size(classes, classes) < 1000


def test_a_click_reads_back_as_its_cell(evaluation):
    trimmed = evaluation.matrices.trimmed
    assert vega_charts.clicked_cell({"selection": {"cell": [{"i": 1, "j": 2}]}}, trimmed.rows, trimmed.columns) == ("Text", "Title")
    for event in (None, {}, {"selection": {"cell": []}}, {"selection": {"cell": {}}}, {"selection": {"cell": [{"i": 7, "j": 0}]}},
                  {"selection": {"cell": [{"i": "1", "j": 2}]}}):
        assert vega_charts.clicked_cell(event, trimmed.rows, trimmed.columns) is None


def test_difference_heatmap_is_centred_on_zero():
    difference = np.array([[0.1, -0.3], [0.0, 0.2]])
    spec = _valid(vega_charts.difference_heatmap(MatrixSet(["a", "b"], ["a", "b"], difference, difference, difference), "recall"))
    scale = _layer(spec, "rect")["encoding"]["color"]["scale"]
    assert (scale["domain"], scale["domainMid"]) == ([-0.3, 0.3], 0)
    assert _cell(spec, "a", "b")["value"] == _cell(spec, "a", "b")["colour"] == pytest.approx(-0.3)
    assert _cell(spec, "a", "b")["text"] == "-0.30" and _cell(spec, "b", "b")["text"] == "+0.20"
    assert [_cell(spec, "a", "b")["dark"], _cell(spec, "b", "b")["dark"], _cell(spec, "a", "a")["dark"]] == [True, True, False]  # |B - A| over 0.6 of 0.3


def test_per_class_bars_show_every_score_and_a_click_reads_back(evaluation):
    per_class = {name: {**scores, "ap": 0.25 if name == "Text" else None, "ar_100": 0.5} for name, scores in evaluation.matrices.per_class.items()}
    spec = _valid(vega_charts.per_class_bars(per_class, title="t"))
    series = vega_charts.bar_series(per_class)
    assert series == ["recall", "precision", "f1", "AP", "AR@100"]
    bars = {(record["class"], record["series"]): record["value"] for record in spec["data"]["values"]}
    assert bars[("Text", "recall")] == per_class["Text"]["recall"] == 0.5
    assert bars[("Text", "AP")] == 0.25 and bars[("Title", "AP")] is None  # no bar: filtered out
    assert spec["transform"] == [{"filter": "datum.value !== null"}]
    assert vega_charts.clicked_bar({"selection": {"bar": [{"c": 2, "series": "AP"}]}}, list(per_class), series) == ("Text", "AP")
    assert vega_charts.clicked_bar({"selection": {"bar": [{"c": 2, "series": "mAP"}]}}, list(per_class), series) is None
    assert vega_charts.bar_series({name: dict(scores) for name, scores in evaluation.matrices.per_class.items()}) == ["recall", "precision", "f1"]


def test_outcome_bars_carry_a_and_b_beside_b_minus_a():
    outcomes = pd.DataFrame({"background_a": [0.2, 0.0], "background_b": [0.1, 0.3], "own_class_a": [0.7, 1.0], "own_class_b": [0.8, 0.6],
                             "elsewhere_a": [0.1, 0.0], "elsewhere_b": [0.1, 0.1]}, index=["Text", "Table"])
    for outcome in ("background", "own_class", "elsewhere"):
        outcomes[f"{outcome}_b_minus_a"] = outcomes[f"{outcome}_b"] - outcomes[f"{outcome}_a"]
    spec = _valid(vega_charts.outcome_bars(outcomes))
    table_own = next(r for r in spec["data"]["values"] if (r["class"], r["series"]) == ("Table", "own class"))
    assert (table_own["a"], table_own["b"]) == (1.0, 0.6) and math.isclose(table_own["value"], -0.4)
    assert vega_charts.clicked_bar({"selection": {"bar": [{"c": 1, "series": "elsewhere"}]}}, ["Text", "Table"],
                                   list(vega_charts.OUTCOME_COLOURS)) == ("Table", "elsewhere")
