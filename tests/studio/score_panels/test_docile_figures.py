"""The DocILE panel's overlay figure builder (score_panels.docile_figures), without Streamlit: fields
scaled to the page and paired, golds solid and predictions dashed, and their hover."""

from __future__ import annotations

import pytest

from tore_engine.studio.score_panels.docile_figures import (
    DEFAULT_PAGE_SIZE,
    document_overlay,
    hover_text,
    page_fields,
)

DOCUMENT = {
    "page_count": 2,
    "page_sizes_at_200dpi": [[100, 200], [100, 200]],
    "pdf": None,
    "golds": [
        {"bbox": [0.1, 0.1, 0.3, 0.2], "page": 0, "fieldtype": "date", "text": "1/2/03", "score": None, "prediction": 1},
        {"bbox": [0.5, 0.5, 0.9, 0.6], "page": 0, "fieldtype": "total", "text": "12.00", "score": None, "prediction": None},
        {"bbox": [0.1, 0.1, 0.2, 0.2], "page": 1, "fieldtype": "date", "text": "x", "score": None, "prediction": None},
    ],
    "predictions": [
        {"bbox": [0.0, 0.0, 1.0, 0.05], "page": 0, "fieldtype": "total", "text": None, "score": 0.25, "gold": None},
        {"bbox": [0.1, 0.1, 0.3, 0.2], "page": 0, "fieldtype": "date", "text": "1/2/03", "score": 0.9, "gold": 0},
    ],
}


def test_page_fields_scale_boxes_and_pair_them():
    fields = page_fields(DOCUMENT, 0)
    assert [(f.side, f.index, f.status, f.partner) for f in fields] == [
        ("gold", 0, "matched (TP)", 1), ("gold", 1, "missed (FN)", None),
        ("prediction", 0, "unmatched (FP)", None), ("prediction", 1, "matched (TP)", 0),
    ]
    assert fields[1].box == pytest.approx((50, 100, 90, 120))
    assert [f.index for f in page_fields(DOCUMENT, 1)] == [2]
    assert page_fields({**DOCUMENT, "page_sizes_at_200dpi": None}, 0)[1].box == pytest.approx(
        (0.5 * DEFAULT_PAGE_SIZE[0], 0.5 * DEFAULT_PAGE_SIZE[1], 0.9 * DEFAULT_PAGE_SIZE[0], 0.6 * DEFAULT_PAGE_SIZE[1]))


def test_overlay_draws_golds_solid_predictions_dashed_and_colours_the_match():
    fig = document_overlay(DOCUMENT, 0, "data:image/png;base64,AAAA")
    outlines = {trace.name: trace for trace in fig.data if trace.mode == "lines"}
    assert set(outlines) == {"gold, matched (TP): 1", "gold, missed (FN): 1", "prediction, matched (TP): 1", "prediction, unmatched (FP): 1"}
    assert outlines["gold, missed (FN): 1"].line.dash == "solid" and outlines["prediction, unmatched (FP): 1"].line.dash == "dash"
    assert outlines["gold, matched (TP): 1"].line.color == outlines["prediction, matched (TP): 1"].line.color != outlines["gold, missed (FN): 1"].line.color
    assert list(outlines["gold, missed (FN): 1"].x) == [50, 90, 90, 50, 50, None]
    assert list(outlines["gold, missed (FN): 1"].y) == [100, 100, 120, 120, 100, None]
    hovers = [text for trace in fig.data if trace.mode == "markers" for text in trace.text]
    assert "<b>date</b><br>prediction 1: matched (TP) to gold 0<br>text: '1/2/03'<br>score 0.900" in hovers
    assert "<b>total</b><br>gold 1: missed (FN)<br>text: '12.00'<br>no score" in hovers
    assert fig.layout.images[0].sizex == 100 and fig.layout.images[0].sizey == 200
    assert list(fig.layout.yaxis.range) == [200, 0]


def test_hover_names_the_line_item():
    field = page_fields({**DOCUMENT, "golds": [{**DOCUMENT["golds"][0], "line_item_id": 4}]}, 0)[0]
    assert hover_text(field).endswith("<br>line item 4")
