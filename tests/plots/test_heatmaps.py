"""The matrix figures of the app, the reports and `Evaluation.plot` (tore_engine.plots.heatmaps),
without Streamlit: hover data, trimmed axes, colour scales, the hidden diagonal, blank zeros and
undefined cells, the size of a matrix of many classes, B minus A and a click read back."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.helpers import figure_json, plotly_texts, valid_plotly
from tore_engine.metrics.matrices import MatrixSet
from tore_engine.plots import heatmaps as figures
from tore_engine.results.evaluation import shown_matrices


def test_heatmap_hover_carries_value_pixels_row_and_column_shares(evaluation):
    matrices = evaluation.matrices.full
    fig = figures.matrix_heatmap(matrices, "recall")
    i, j = matrices.rows.index("Text"), matrices.columns.index("Title")
    overlay = next(trace for trace in fig.data[1:] if any((x, y) == (j, i) for x, y in zip(trace.x, trace.y)))
    k = next(k for k, (x, y) in enumerate(zip(overlay.x, overlay.y)) if (x, y) == (j, i))
    assert overlay.text[k] == "Text<br>prediction: Title"
    value, pixels, row_share, column_share = overlay.customdata[k]
    assert (value, pixels, row_share, column_share) == (0.5, 4.0, 0.5, pytest.approx(4 / 6))
    assert "pixels" in overlay.hovertemplate and "column % (precision)" in overlay.hovertemplate
    assert sum(len(trace.x) for trace in fig.data[1:]) == len(matrices.rows) * len(matrices.columns)  # every cell clickable
    assert fig.data[0].hoverinfo == "skip"  # the heatmap paints; the overlay hovers and clicks
    assert fig.layout.clickmode == "event+select"


def test_a_count_matrix_hover_gives_the_count_once_under_its_unit(evaluation):
    """A confusion matrix's value is its count: the hover says it once, as pixels or boxes, not
    again under the normalisation's name ("none (pixels)")."""
    for unit in ("pixels", "boxes"):
        fig = figures.matrix_heatmap(evaluation.matrices.full, "confusion", unit=unit)
        for template in {trace.hovertemplate for trace in fig.data[1:]}:
            assert template.count(f"{unit}: %{{customdata[1]") == 1 and "none (" not in template and "customdata[0]" not in template
    recall = {trace.hovertemplate for trace in figures.matrix_heatmap(evaluation.matrices.full, "recall").data[1:]}
    assert all("row (recall): " in template and "pixels: " in template for template in recall)


def test_trimmed_heatmap_has_only_the_kept_rows_and_columns(evaluation):
    trimmed = evaluation.matrices.trimmed
    assert trimmed.rows == ["Background", "Text", "Title"]
    fig = figures.matrix_heatmap(trimmed, "confusion")
    assert list(fig.layout.yaxis.ticktext) == trimmed.rows
    assert list(fig.layout.xaxis.ticktext) == trimmed.columns
    assert sum(len(trace.x) for trace in fig.data[1:]) == len(trimmed.rows) * len(trimmed.columns)


def test_hide_diagonal_blanks_class_with_itself_and_outline_frames_it(evaluation):
    matrices = evaluation.matrices.trimmed
    hidden = np.array(figures.matrix_heatmap(matrices, "confusion", hide_diagonal=True).data[0].z, dtype=float)
    diagonal = matrices.same_class()
    assert np.isnan(hidden[diagonal]).all()
    nonzero = ~diagonal & (matrices.confusion != 0)
    assert np.array_equal(hidden[nonzero], matrices.confusion[nonzero]) and np.isnan(hidden[~diagonal & ~nonzero]).all()
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


def _hover_of(fig, i: int, j: int) -> tuple[str, list[float]]:
    """The hover template and numbers of cell (i, j) (whichever overlay trace carries it)."""
    spec = figure_json(fig)
    for trace in spec["data"][1:]:
        for x, y, data in zip(trace["x"], trace["y"], trace["customdata"]):
            if (x, y) == (j, i):
                return trace["hovertemplate"], data
    raise AssertionError(f"no overlay marker on cell {i}, {j}")


def test_zeros_are_blank_and_undefined_cells_say_so(evaluation):
    matrices = shown_matrices(evaluation.matrices, "full")  # Caption and Table: no pixel on either side
    fig = figures.matrix_heatmap(matrices, "recall")
    z, texts = np.array(fig.data[0].z, dtype=float), fig.data[0].text
    caption, text, title = (matrices.rows.index(name) for name in ("Caption", "Text", "Title"))
    undefined_row = matrices.confusion[caption].sum() == 0
    assert undefined_row and np.isnan(z[caption]).all() and set(texts[caption]) == {""}  # 0/0: blank
    assert matrices.recall[text, caption] == 0 and np.isnan(z[text, caption]) and texts[text][caption] == ""  # an exact 0: blank
    assert texts[text][title] == "0.50" and z[text, title] == 0.5
    template, _ = _hover_of(fig, caption, title)
    assert "row (recall): undefined (0/0)" in template and "row % (recall): undefined (0/0)" in template and "NaN" not in template
    template, numbers = _hover_of(fig, text, title)
    assert "%{customdata[0]:.4f}" in template and numbers[:3] == [0.5, 4.0, 0.5]
    assert not any(text in ("0.00", "0") for row in texts for text in row)  # never a printed zero


def test_undefined_follows_the_whole_row_when_classes_are_left_out(evaluation):
    subset = shown_matrices(evaluation.matrices, "full", ["Text", "Caption"])  # Text's pixels went to Title, not shown
    fig = figures.matrix_heatmap(subset, "recall")
    text = subset.rows.index("Text")
    template, _ = _hover_of(fig, text, subset.columns.index("Caption"))
    assert "row % (recall): undefined" not in template  # Text has pixels: its recall here is a true 0
    template, _ = _hover_of(fig, subset.rows.index("Caption"), subset.columns.index("Caption"))
    assert "row % (recall): undefined" in template


def test_twenty_classes_fit_a_laptops_column_with_long_names_shortened():
    classes = [f"class {k:02d} with a rather long descriptive name" for k in range(20)]
    confusion = np.random.default_rng(1).integers(0, 5, (20, 20)).astype(float)
    fig = figures.matrix_heatmap(MatrixSet(classes, classes, confusion, confusion, confusion), "confusion")
    assert fig.layout.width <= figures.WIDTH
    ticks = list(fig.layout.xaxis.ticktext)
    assert all(len(tick) <= figures.LABEL_LIMIT for tick in ticks) and ticks[3] == "class 03 w…iptive name"
    assert fig.data[1].text[0].startswith(classes[0])  # the whole name in the hover
    assert fig.layout.xaxis.tickangle == -45 and figures.tick_angle(["a", "b"]) == 0 and figures.tick_angle(classes + ["x"]) == -90


@pytest.mark.parametrize("count", [2, 6, 12, 18, 24, 30])
def test_a_cells_number_fits_its_cell_and_a_dozen_classes_fit_a_laptops_first_screen(count):
    """Issue 37: "<0.01" never runs into its neighbour (its width at Plotly's font, about 0.6 em a
    character, within the cell), and up to 12 classes (the demo's 11 and Background) the whole
    figure fits the app's height budget (`HEIGHT`: what a 1280 x 800 screen leaves under the controls)."""
    classes = ["Background", *(f"Class-{k}" for k in range(count - 1))]
    confusion = np.random.default_rng(count).integers(1, 5, (count, count)).astype(float)
    fig = figures.matrix_heatmap(MatrixSet(classes, classes, confusion, confusion / confusion.sum(1, keepdims=True),
                                           confusion / confusion.sum(0, keepdims=True)), "recall", height=figures.HEIGHT)
    cell = (fig.layout.width - fig.layout.margin.l - fig.layout.margin.r) / count
    assert len("<0.01") * 0.6 * fig.data[0].textfont.size <= cell, (cell, fig.data[0].textfont.size)
    assert fig.layout.width <= figures.WIDTH
    if count <= 12:
        assert fig.layout.height <= figures.HEIGHT


def test_markup_in_names_and_titles_is_shown_as_text():
    names = ["<b>bold</b>", "<a href='x'>link</a>"]
    matrix = np.ones((2, 2))
    spec = valid_plotly(figures.matrix_heatmap(MatrixSet(names, names, matrix, matrix, matrix), "confusion", title="<i>t</i>"))
    assert not any("<b>bold" in text or "<a href" in text or "<i>" in text for text in plotly_texts(spec))
    assert spec["layout"]["meta"]["rows"] == names  # plain text for whoever reads the figure


def test_a_click_reads_back_as_its_cell(evaluation):
    trimmed = evaluation.matrices.trimmed
    event = {"selection": {"points": [{"x": 2, "y": 1, "curve_number": 1, "point_index": 5}]}}
    assert figures.clicked_cell(event, trimmed.rows, trimmed.columns) == ("Text", "Title")
    for event in ({}, None, {"selection": {"points": [{"x": 9, "y": 1}]}}, {"selection": {"points": [{"x": 0.5, "y": 1}]}},
                  {"selection": {"points": ["x"]}}):
        assert figures.clicked_cell(event, trimmed.rows, trimmed.columns) is None


def test_difference_heatmap_is_centred_on_zero_and_blank_where_equal():
    difference = np.array([[0.1, -0.3], [0.0, np.nan]])
    fig = figures.difference_heatmap(MatrixSet(["a", "b"], ["a", "b"], difference, difference, difference), "recall")
    heat = fig.data[0]
    assert (heat.zmid, heat.zmin, heat.zmax) == (0, -0.3, 0.3) and heat.colorscale[0][1] == "rgb(103,0,31)"  # red: B lower
    assert heat.text[0][1] == "-0.30" and heat.text[1][0] == "" and np.isnan(heat.z[1][0])  # equal: blank
    template, _ = _hover_of(fig, 1, 1)
    assert "undefined (0/0) in A or B" in template
