"""The DocILE document overlay: gold fields against predicted fields on the page image.

Built from one document of `TaskResult.to_json()["documents"]` (plain JSON, as the panel caches
it). Golds are solid outlines, predictions dashed; matched fields are green, missed golds (FN) red,
unmatched predictions (FP) orange. One outline trace per group and one invisible marker per box
centre that carries the hover (field type, text, score, and what it matched), over the page as
`page_figures.page_overlay` draws it. Field types and texts come from the input files: they are
escaped as plain text (`plain_for_plotly`).
"""

from __future__ import annotations

from dataclasses import dataclass

import plotly.graph_objects as go

from tore_engine.plots.page_overlays import Pane, page_overlay
from tore_engine.plots.plain_text import plain_for_plotly
from tore_engine.studio.score_panels.overlay_traces import outlined_boxes

DEFAULT_PAGE_SIZE = (1700, 2200)  # US letter at 200 DPI, for documents without page sizes
GOLD, PREDICTION = "gold", "prediction"
MATCHED, MISSED, UNMATCHED = "matched (TP)", "missed (FN)", "unmatched (FP)"
STYLES = {  # (side, status) -> legend name, colour, dash, line width
    (GOLD, MATCHED): ("gold, matched (TP)", "#2ca02c", "solid", 2.0),
    (GOLD, MISSED): ("gold, missed (FN)", "#d62728", "solid", 2.0),
    (PREDICTION, MATCHED): ("prediction, matched (TP)", "#2ca02c", "dash", 1.5),
    (PREDICTION, UNMATCHED): ("prediction, unmatched (FP)", "#ff7f0e", "dash", 1.5),
}
CENTRE_MARKER_SIZE = 12


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


def hover_text(field: FieldBox) -> str:
    partner = "" if field.partner is None else f" by prediction {field.partner}" if field.side == GOLD else f" to gold {field.partner}"
    lines = [
        f"<b>{plain_for_plotly(field.fieldtype)}</b>",
        f"{field.side} {field.index}: {field.status}{partner}",
        f"text: {plain_for_plotly(repr(field.text))}" if field.text is not None else "no text",
        "no score" if field.score is None else f"score {field.score:.3f}",
    ]
    if field.line_item_id is not None:
        lines.append(f"line item {field.line_item_id}")
    return "<br>".join(lines)


def _group_traces(fields: list[FieldBox], side: str, status: str) -> list[go.Scatter]:
    name, colour, dash, width = STYLES[(side, status)]
    return outlined_boxes([field.box for field in fields], [hover_text(field) for field in fields], marker_size=CENTRE_MARKER_SIZE,
                          corner_hover=False, line=dict(color=colour, dash=dash, width=width), name=f"{name}: {len(fields)}",
                          legendgroup=f"{side}-{status}")


def document_overlay(document: dict, page: int, image_uri: str | None, *, width_hint: int = 640) -> go.Figure:
    """The page image with every gold and predicted field of the page, grouped by side and match."""
    width, height = page_size(document, page)
    fields = page_fields(document, page)
    fig = page_overlay([Pane(f"page {page + 1} of {document['page_count']}", None)], width, height, image_uri, width_hint=width_hint)
    for side, status in STYLES:
        group = [field for field in fields if field.side == side and field.status == status]
        if group:
            fig.add_traces(_group_traces(group, side, status))
    return fig
