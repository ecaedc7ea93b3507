"""The page figures (tore_engine.plots.page_overlays), without Streamlit: one colour a class in every
pane, the agreement pane's colours and hatches, and the outline trace the panels draw boxes with."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

from tore_engine.core.layout import Page
from tore_engine.engine.agreement import (
    DIFFERENT_CLASS,
    ONLY_PREDICTION,
    ONLY_REFERENCE,
    SAME_CLASS,
    agreement_raster,
)
from tore_engine.plots import page_overlays as page_figures
from tore_engine.plots.page_overlays import outline_trace
from tore_engine.plots.palette import AGREEMENT_STYLES, class_color


def _page(labels_boxes, scores=None):
    labels = [label for label, _ in labels_boxes]
    return Page("p", 10, 10, labels, np.array([box for _, box in labels_boxes], dtype=float).reshape(-1, 4),
                None if scores is None else np.array(scores, dtype=float))


def test_palette_is_keyed_by_class_name_across_panes():
    assert class_color("Table") == class_color("table") == class_color(" TABLE ")
    assert class_color("Some new class") == class_color("some new class")
    assert len({class_color(name) for name in ["Caption", "Footnote", "Formula", "List-item", "Page-footer", "Page-header",
                                                 "Picture", "Section-header", "Table", "Text", "Title"]}) == 11
    reference = _page([("Text", [0, 0, 4, 4]), ("Title", [0, 5, 4, 6])])
    prediction = _page([("Title", [0, 0, 4, 4]), ("Text", [5, 5, 9, 9])], scores=[0.9, float("nan")])
    fig = page_figures.page_overlay([page_figures.Pane("reference", reference), page_figures.Pane("model", prediction)], 10, 10, None)
    outlines = [trace for trace in fig.data if trace.mode == "lines"]
    by_class = {}
    for trace in outlines:
        by_class.setdefault(trace.name, []).append(trace)
    for name, traces in by_class.items():
        assert {trace.line.color for trace in traces} == {class_color(name)}
        assert {trace.legendgroup for trace in traces} == {name}
        assert sum(bool(trace.showlegend) for trace in traces) == 1  # one legend entry toggles both panes
    hovers = [text for trace in fig.data if trace.xaxis == "x2" for text in trace.text if text]
    assert any("score 0.900" in text and "[0.0, 0.0, 4.0, 4.0]" in text for text in hovers)
    assert any("no score" in text for text in hovers)
    assert fig.layout.xaxis2.matches == "x" and fig.layout.yaxis2.matches == "y"  # synchronised zoom


def test_agreement_pane_paints_each_category_in_its_colour_and_hatch():
    reference = _page([("Text", [0, 0, 4, 4]), ("Table", [0, 6, 2, 8])])
    prediction = _page([("Text", [2, 2, 6, 6]), ("Title", [0, 6, 2, 8])])
    raster = agreement_raster(reference, prediction, compare_classes=True)
    picture = np.array(Image.open(io.BytesIO(page_figures.agreement_png(raster))))
    for (row, column), code in {(0, 0): ONLY_REFERENCE, (5, 5): ONLY_PREDICTION, (3, 3): SAME_CLASS, (7, 1): DIFFERENT_CLASS}.items():
        colour, _ = AGREEMENT_STYLES[code]
        assert picture[row, column, :3].tolist() == [int(colour[k : k + 2], 16) for k in (1, 3, 5)]
    assert picture[0, 0, 3] == page_figures.AGREEMENT_ALPHA  # on a "\\" hatch line ((x + y) % 9 < 3)
    assert picture[0, 3, 3] == page_figures.AGREEMENT_TINT_ALPHA  # between two lines
    assert picture[9, 9, 3] == 0  # transparent where neither side has a box
    fig = page_figures.page_overlay([page_figures.Pane("reference", reference)], 10, 10, "data:image/png;base64,", agreement=raster)
    assert [a.text for a in fig.layout.annotations] == ["reference", "agreement"]
    assert fig.layout.images[-1].xref == "x2" and fig.layout.images[-1].layer == "above"
    legend = {trace.name: trace for trace in fig.data if trace.legendgroup and trace.legendgroup.startswith("agreement")}
    same = legend["in both, same class (4.0% of the page)"]
    assert same.type == "bar" and same.marker.pattern.fgcolor == AGREEMENT_STYLES[SAME_CLASS][0]
    assert legend["only in the reference (12.0% of the page)"].marker.pattern.shape == "\\"


def test_outline_trace_draws_every_box_closed_with_a_gap():
    trace = outline_trace([(0, 0, 10, 5), np.array([20.0, 20, 30, 40])], ["a", "b"], line=dict(color="#000000"), name="<b>x</b>",
                          fill_colour="rgba(0,0,0,0.1)", column=2, legendgroup="x")
    assert list(trace.x) == [0, 10, 10, 0, 0, None, 20, 30, 30, 20, 20, None]
    assert list(trace.y) == [0, 0, 5, 5, 0, None, 20, 20, 40, 40, 20, None]
    assert list(trace.text) == ["a"] * 5 + [None] + ["b"] * 5 + [None]
    assert (trace.fill, trace.xaxis, trace.yaxis, trace.legendgroup) == ("toself", "x2", "y2", "x")
    assert trace.name == "&lt;b&gt;x&lt;/b&gt;"  # plain text


def test_outline_trace_without_hover_or_fill():
    trace = outline_trace([(0, 0, 1, 1)], None, line=dict(color="#000000"), name="x")
    assert trace.hoverinfo == "skip" and trace.text is None and trace.fill is None and trace.xaxis == "x"
