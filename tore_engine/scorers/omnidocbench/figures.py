"""The OmniDocBench panel's charts (Plotly), built from `tore score omnidocbench` results and the
engine's box matches: per-class AP bars, a score by page-attribute value, and a page with its
ground-truth blocks beside the predicted layout boxes, matched and unmatched marked (as
`plots.page_chart` draws a page).

Pure functions (no Streamlit), unit-tested directly. A missing score (`None`) is never drawn as 0:
its bar is absent and its label says "n/a". Class names and attribute values come from the input
files: plain text, escaped (`plain_for_plotly`).
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from tore_engine.plots.page_chart import Box, PaneLayout, page_chart
from tore_engine.plots.palette import class_color
from tore_engine.plots.plain_text import plain_for_plotly
from tore_engine.scorers.common import MISSING, format_score
from tore_engine.scorers.omnidocbench.box_matches import (
    MATCHED,
    NOT_EVALUATED,
    UNMATCHED,
    MatchedBox,
    PageMatches,
)

# Outline of a box by its match status: colour and dash differ, so the marking survives greyscale.
STATUS_STYLES = {  # status -> colour, dash (`page_chart.DASHES`), line width
    MATCHED: ("#2ca02c", "solid", 2.0),
    UNMATCHED: ("#d62728", "dash", 2.0),
    NOT_EVALUATED: ("#7f7f7f", "dot", 1.5),
}
STATUS_NAMES = {
    MATCHED: "matched at IoU 0.5",
    UNMATCHED: "unmatched (missed / false positive)",
    NOT_EVALUATED: "not in the 10 eval classes",
}
BAR_DIGITS = 3  # the bars' labels; tables and headline numbers have four
FILL_ALPHA = 0.15
BAR_HEIGHT = 26  # pixels a bar
BAR_WIDTH = 300  # pixels of the longest bar's axis


def _horizontal_bars(rows: list[dict[str, Any]], *, axis_title: str, top: float, title: str) -> go.Figure:
    """One bar a row (`label`, `value` or None: no bar, `colour`), in the rows' order top to bottom,
    its value written at its end ("n/a" when missing)."""
    labels = [plain_for_plotly(row["label"]) for row in rows]
    return go.Figure(dict(type="bar",
        y=list(range(len(rows))), x=[row["value"] for row in rows], orientation="h", marker=dict(color=[row["colour"] for row in rows]),
        text=[format_score(row["value"], BAR_DIGITS) for row in rows], textposition="outside", cliponaxis=False, customdata=labels,
        hovertemplate=f"%{{customdata}}<br>{plain_for_plotly(axis_title)}: %{{x:.4f}}<extra></extra>"), layout=dict(
        title=dict(text=plain_for_plotly(title), x=0, xanchor="left", font=dict(size=13)),
        width=BAR_WIDTH + 300, height=90 + BAR_HEIGHT * len(rows), margin=dict(l=10, r=40, t=50, b=40), plot_bgcolor="white",
        xaxis=dict(range=[0, top], title=plain_for_plotly(axis_title), showgrid=True, gridcolor="#eee"),
        yaxis=dict(tickmode="array", tickvals=list(range(len(rows))), ticktext=labels, autorange="reversed", automargin=True),
        meta={"chart": "bars", "classes": [row["label"] for row in rows], "series": [axis_title]},
    ))


def per_class_ap_bars(per_class: dict[str, float | None], *, title: str = "") -> go.Figure:
    """Horizontal AP@[.5:.95] bars, one per eval class in the evaluator's order (top to bottom)."""
    rows = [{"label": f"{name} ({MISSING})" if value is None else name, "value": value, "colour": class_color(name)}
            for name, value in per_class.items()]
    return _horizontal_bars(rows, axis_title="AP@[.5:.95]", top=1.08, title=title)


def attribute_bars(values: dict[str, float | None], pages: dict[str, int], *, metric: str, title: str = "") -> go.Figure:
    """One bar a value of a page attribute (e.g. data_source = newspaper), labelled with its page count."""
    rows = [{"label": f"{name} ({pages.get(name, '?')} p.)", "value": value, "colour": "#4363d8"} for name, value in values.items()]
    return _horizontal_bars(rows, axis_title=metric, top=1.1, title=title)


def _box_hover(box: MatchedBox, index: int, others: list[MatchedBox], other_side: str) -> dict[str, str]:
    """A box's hover lines (its title is its label)."""
    x1, y1, x2, y2 = box.bbox
    lines = {"box": str(index), "eval class": box.eval_class or "none, not evaluated"}
    if box.score is not None:
        lines["score"] = f"{box.score:.3f}"
    if box.partner is not None:
        lines["match"] = f"matched to {other_side} box {box.partner} ({others[box.partner].label})"
    elif box.eval_class is not None:
        lines["match"] = "unmatched at IoU 0.5"
    lines["x1, y1, x2, y2"] = f"{x1:.0f}, {y1:.0f}, {x2:.0f}, {y2:.0f}"
    return lines


def _pane_boxes(boxes: list[MatchedBox], others: list[MatchedBox], other_side: str, pane: int, side: str) -> list[Box]:
    """Each box outlined by its status (the legend's groups), filled lightly in its class's colour."""
    drawn = []
    for index, box in enumerate(boxes):
        colour, dash, width = STATUS_STYLES[box.status]
        drawn.append(Box(pane, box.bbox, STATUS_NAMES[box.status], colour, box.label, _box_hover(box, index, others, other_side),
                         f"{side} box {index}", line_width=width, dash=dash, fill=FILL_ALPHA, fill_colour=class_color(box.label)))
    return drawn


def page_match_overlay(page: PageMatches, image_uri: str | None) -> go.Figure:
    """The page image twice, ground-truth blocks on the left and predicted boxes on the right, with
    shared zoom; outlines say matched (solid green), unmatched (dashed red) or not evaluated (dotted grey)."""
    panes = [PaneLayout(f"ground truth: {len(page.reference)} blocks"), PaneLayout(f"prediction: {len(page.prediction)} boxes")]
    boxes = (_pane_boxes(page.reference, page.prediction, "predicted", 0, "ground truth")
             + _pane_boxes(page.prediction, page.reference, "ground-truth", 1, "prediction"))
    order = list(STATUS_NAMES.values())
    return page_chart(panes, sorted(boxes, key=lambda box: order.index(box.group)), page.width, page.height, image_uri)
