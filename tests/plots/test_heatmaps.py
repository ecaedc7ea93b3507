"""The reports' matrix figure (tore_engine.plots.heatmaps), without Streamlit: hover data, trimmed axes,
colour scales, the hidden diagonal, many classes. The app's charts: test_vega_charts.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tore_engine.metrics.matrices import MatrixSet
from tore_engine.plots import heatmaps as figures


def test_heatmap_hover_carries_value_pixels_row_and_column_shares(evaluation):
    matrices = evaluation.matrices.full
    fig = figures.matrix_heatmap(matrices, "recall")
    overlay = fig.data[1]
    k = len(matrices.rows)
    text_index = matrices.rows.index("Text") * k + matrices.columns.index("Title")
    assert overlay.text[text_index] == "Text<br>prediction: Title"
    value, pixels, row_share, column_share = overlay.customdata[text_index]
    assert (value, pixels, row_share, column_share) == (0.5, 4.0, 0.5, pytest.approx(4 / 6))
    assert (overlay.x[text_index], overlay.y[text_index]) == (matrices.columns.index("Title"), matrices.rows.index("Text"))
    assert "pixels" in overlay.hovertemplate and "column % (precision)" in overlay.hovertemplate
    assert fig.data[0].hoverinfo == "skip"  # the heatmap paints; the overlay hovers and clicks
    assert fig.layout.clickmode == "event+select"


def test_trimmed_heatmap_has_only_the_kept_rows_and_columns(evaluation):
    trimmed = evaluation.matrices.trimmed
    assert trimmed.rows == ["Background", "Text", "Title"]
    fig = figures.matrix_heatmap(trimmed, "confusion")
    assert list(fig.layout.yaxis.ticktext) == trimmed.rows
    assert list(fig.layout.xaxis.ticktext) == trimmed.columns
    assert len(fig.data[1].x) == len(trimmed.rows) * len(trimmed.columns)


def test_hide_diagonal_blanks_class_with_itself_and_outline_frames_it(evaluation):
    matrices = evaluation.matrices.trimmed
    hidden = np.array(figures.matrix_heatmap(matrices, "confusion", hide_diagonal=True).data[0].z, dtype=float)
    diagonal = matrices.same_class()
    assert np.isnan(hidden[diagonal]).all()
    assert np.array_equal(hidden[~diagonal], matrices.confusion[~diagonal])
    outlined = figures.matrix_heatmap(matrices, "confusion", outline_diagonal=True)
    assert outlined.layout.shapes[0].path.count("M") == diagonal.sum() == 3


def test_colour_scales():
    values = np.array([[0.0, 9.0], [99.0, 999.0]])
    log = figures.colour_scale(values, "log", is_ratio=False)
    assert np.allclose(log.z, np.log10(1 + values))
    assert log.ticktext == ["0", "1", "10", "100"] and log.tickvals[2] == pytest.approx(math.log10(11))
    power = figures.colour_scale(values, "power", is_ratio=False)
    assert np.allclose(power.z, values**0.2)
    assert figures.colour_scale(values, "linear", is_ratio=False).tickvals is None
    ratios = figures.colour_scale(np.array([[0.001, 0.5]]), "log", is_ratio=True)
    assert ratios.z[0, 0] == pytest.approx(math.log10(2))
    assert ratios.ticktext == ["0", "0.001", "0.01", "0.1"]  # not "0.00" twice (issue 24)
    shares = figures.colour_scale(np.array([[0.0, 0.92]]), "power", is_ratio=True)
    assert shares.ticktext == ["0", "0.00092", "0.0092", "0.092", "0.46", "0.92"] and len(set(shares.ticktext)) == 6


def test_a_hundred_classes_stay_readable():
    classes = [f"class {k}" for k in range(100)]
    confusion = np.random.default_rng(0).random((100, 100))
    fig = figures.matrix_heatmap(MatrixSet(classes, classes, confusion, confusion, confusion), "confusion")
    assert fig.data[0].texttemplate is None  # no cell text beyond 30 classes
    assert fig.layout.xaxis.showticklabels is False  # no tick labels beyond 60
    assert fig.layout.height < 1000
