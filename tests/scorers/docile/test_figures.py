"""The DocILE panel's overlay figure builder (scorers.docile.figures), without Streamlit: fields
scaled to the page and paired, golds solid and predictions dashed, and their hover."""

from __future__ import annotations

import pytest

from tests.helpers import page_legend, page_rows, valid_plotly
from tore_engine.scorers.docile.figures import (
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
    spec = valid_plotly(document_overlay(DOCUMENT, 0, "data:image/png;base64,AAAA"))
    boxes = {row["group"]: row for row in page_rows(spec, "box")}
    assert set(boxes) == {"gold, matched (TP): 1", "gold, missed (FN): 1", "prediction, matched (TP): 1", "prediction, unmatched (FP): 1"}
    assert boxes["gold, missed (FN): 1"]["dash"] == "solid" and boxes["prediction, unmatched (FP): 1"]["dash"] == "dash"
    legend = page_legend(spec)
    assert legend["gold, matched (TP): 1"] == legend["prediction, matched (TP): 1"] != legend["gold, missed (FN): 1"]
    missed = boxes["gold, missed (FN): 1"]
    assert (missed["x"], missed["y"], missed["x2"], missed["y2"]) == (50, 100, 90, 120) and missed["fill"] is None  # an outline
    assert boxes["prediction, matched (TP): 1"]["tip"] == {"title": "date", "field": "prediction 1: matched (TP) to gold 0",
                                                            "text": "'1/2/03'", "score": "0.900"}
    assert missed["tip"] == {"title": "total", "field": "gold 1: missed (FN)", "text": "'12.00'", "score": "no score"}
    assert spec["layout"]["xaxis"]["range"] == [0, 100] and spec["layout"]["yaxis"]["range"] == [200, 0]  # the page, y down


def test_hover_names_the_line_item():
    field = page_fields({**DOCUMENT, "golds": [{**DOCUMENT["golds"][0], "line_item_id": 4}]}, 0)[0]
    assert hover_text(field)["line item"] == "4"
