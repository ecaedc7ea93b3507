"""The DocILE document overlay: gold fields against predicted fields on the page image.

Built from one document of `TaskResult.to_json()["documents"]` (plain JSON, as the panel caches
it). Golds are solid outlines, predictions dashed; matched fields are green, missed golds (FN) red,
unmatched predictions (FP) orange, one legend entry a group; each box's hover gives its field type,
text, score and what it matched. Drawn as `plots.page_chart` draws a page: field types and texts
from the input files travel as data, drawn as text.
"""

from __future__ import annotations

from dataclasses import dataclass

import plotly.graph_objects as go

from tore_engine.plots.page_chart import Box, PaneLayout, page_chart

DEFAULT_PAGE_SIZE = (1700, 2200)  # US letter at 200 DPI, for documents without page sizes
GOLD, PREDICTION = "gold", "prediction"
MATCHED, MISSED, UNMATCHED = "matched (TP)", "missed (FN)", "unmatched (FP)"
STYLES = {  # (side, status) -> legend name, colour, dash, line width
    (GOLD, MATCHED): ("gold, matched (TP)", "#2ca02c", "solid", 2.0),
    (GOLD, MISSED): ("gold, missed (FN)", "#d62728", "solid", 2.0),
    (PREDICTION, MATCHED): ("prediction, matched (TP)", "#2ca02c", "dash", 1.5),
    (PREDICTION, UNMATCHED): ("prediction, unmatched (FP)", "#ff7f0e", "dash", 1.5),
}


@dataclass(frozen=True)
class FieldBox:
    """One gold or predicted field of the page, in pixels at 200 DPI, with its match."""

    side: str
    index: int  # in the document's gold or prediction list
    status: str
    fieldtype: str | None
    text: str | None
    score: float | None
    partner: int | None  # the matched prediction of a gold, or the matched gold of a prediction
    line_item_id: int | None
    box: tuple[float, float, float, float]


def page_size(document: dict, page: int) -> tuple[float, float]:
    """(width, height) of the page at 200 DPI, from the annotation's metadata when it has them."""
    sizes = document.get("page_sizes_at_200dpi") or []
    return tuple(sizes[page]) if page < len(sizes) else DEFAULT_PAGE_SIZE


def page_fields(document: dict, page: int) -> list[FieldBox]:
    """The golds, then the predictions, of one page of a document."""
    width, height = page_size(document, page)

    def boxed(field: dict, side: str, index: int, partner: int | None) -> FieldBox:
        left, top, right, bottom = field["bbox"]
        status = (MATCHED if partner is not None else MISSED) if side == GOLD else (MATCHED if partner is not None else UNMATCHED)
        return FieldBox(side, index, status, field["fieldtype"], field["text"], field["score"], partner,
                        field.get("line_item_id"), (left * width, top * height, right * width, bottom * height))

    golds = [boxed(field, GOLD, k, field["prediction"]) for k, field in enumerate(document["golds"]) if field["page"] == page]
    predictions = [boxed(field, PREDICTION, k, field["gold"]) for k, field in enumerate(document["predictions"]) if field["page"] == page]
    return golds + predictions


def hover_text(field: FieldBox) -> dict[str, str]:
    """A field's hover lines (its title is its field type)."""
    partner = "" if field.partner is None else f" by prediction {field.partner}" if field.side == GOLD else f" to gold {field.partner}"
    lines = {"field": f"{field.side} {field.index}: {field.status}{partner}",
             "text": repr(field.text) if field.text is not None else "no text",
             "score": "no score" if field.score is None else f"{field.score:.3f}"}
    if field.line_item_id is not None:
        lines["line item"] = str(field.line_item_id)
    return lines


def document_overlay(document: dict, page: int, image_uri: str | None, *, width_hint: int = 440) -> go.Figure:
    """The page image with every gold and predicted field of the page, grouped by side and match."""
    width, height = page_size(document, page)
    fields = page_fields(document, page)
    counts = {key: sum((field.side, field.status) == key for field in fields) for key in STYLES}
    boxes = []
    for field in fields:
        name, colour, dash, line_width = STYLES[(field.side, field.status)]
        boxes.append(Box(0, field.box, f"{name}: {counts[(field.side, field.status)]}", colour, str(field.fieldtype), hover_text(field),
                         f"{field.side} {field.index}", line_width=line_width, dash=dash, fill=0.0))
    return page_chart([PaneLayout(f"page {page + 1} of {document['page_count']}")], boxes, width, height, image_uri, width_hint=width_hint)
