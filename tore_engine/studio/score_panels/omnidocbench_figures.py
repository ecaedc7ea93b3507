"""Plotly figures of the OmniDocBench panel, built from `tore score omnidocbench` results and the
engine's box matches: per-class AP bars, a score by page-attribute value, and a page with its
ground-truth blocks beside the predicted layout boxes, matched and unmatched marked.

Pure functions (no Streamlit), unit-tested directly. A missing score (`None`) is never drawn as 0:
its bar is absent and its label says "n/a". Class names and attribute values come from the input
files: they are escaped as plain text (`plain_for_plotly`).
"""

from __future__ import annotations

import plotly.graph_objects as go

from tore_engine.plots.page_overlays import Pane, page_overlay
from tore_engine.plots.palette import class_color, with_alpha
from tore_engine.plots.plain_text import plain_for_plotly
from tore_engine.scorers.common import MISSING, format_score
from tore_engine.scorers.omnidocbench.box_matches import (
    MATCHED,
    NOT_EVALUATED,
    UNMATCHED,
    MatchedBox,
    PageMatches,
)
from tore_engine.studio.score_panels.overlay_traces import outlined_boxes

# Outline of a box by its match status: colour and dash differ, so the marking survives greyscale.
STATUS_STYLES = {
    MATCHED: dict(color="#2ca02c", dash="solid", width=2.0),
    UNMATCHED: dict(color="#d62728", dash="dash", width=2.0),
    NOT_EVALUATED: dict(color="#7f7f7f", dash="dot", width=1.5),
}
STATUS_NAMES = {
    MATCHED: "matched at IoU 0.5",
    UNMATCHED: "unmatched (missed / false positive)",
    NOT_EVALUATED: "not in the 10 eval classes",
}
BAR_DIGITS = 3  # the bars' labels; tables and headline numbers have four
FILL_ALPHA = 0.15
CENTRE_MARKER_SIZE = 14


def per_class_ap_bars(per_class: dict[str, float | None], *, title: str = "") -> go.Figure:
    """Horizontal AP@[.5:.95] bars, one per eval class in the evaluator's order (top to bottom)."""
    classes = list(per_class)
    values = [per_class[name] for name in classes]
    shown = [plain_for_plotly(name) for name in classes]
    fig = go.Figure(
        go.Bar(x=values, y=shown, orientation="h", marker_color=[class_color(name) for name in classes],
               text=[format_score(value, BAR_DIGITS) for value in values], textposition="outside", cliponaxis=False,
               hovertemplate="%{y}: AP %{x:.4f}<extra></extra>")
    )
    fig.update_layout(title=dict(text=plain_for_plotly(title), x=0), xaxis=dict(range=[0, 1.08], title="AP@[.5:.95]"),
                      yaxis=dict(autorange="reversed", ticktext=[f"{label} ({MISSING})" if per_class[name] is None else label for name, label in zip(classes, shown)],
                                 tickvals=shown),
                      height=60 + 28 * len(classes), margin=dict(l=10, r=10, t=40, b=10))
    return fig


def attribute_bars(values: dict[str, float | None], pages: dict[str, int], *, metric: str, title: str = "") -> go.Figure:
    """One bar a value of a page attribute (e.g. data_source = newspaper), labelled with its page count."""
    names = list(values)
    labels = [plain_for_plotly(f"{name} ({pages.get(name, '?')} p.)") for name in names]
    fig = go.Figure(
        go.Bar(x=[values[name] for name in names], y=labels, orientation="h", marker_color="#4363d8",
               text=[format_score(values[name], BAR_DIGITS) for name in names], textposition="outside", cliponaxis=False,
               hovertemplate=f"%{{y}}: {metric} %{{x:.4f}}<extra></extra>")
    )
    fig.update_layout(title=dict(text=plain_for_plotly(title), x=0), xaxis=dict(range=[0, 1.1], title=metric), yaxis=dict(autorange="reversed"),
                      height=70 + 26 * len(names), margin=dict(l=10, r=10, t=40, b=10))
    return fig


def _box_hover(box: MatchedBox, index: int, others: list[MatchedBox], other_side: str) -> str:
    x1, y1, x2, y2 = box.bbox
    lines = [f"<b>{plain_for_plotly(box.label)}</b> (box {index})", f"eval class: {plain_for_plotly(box.eval_class or 'none, not evaluated')}"]
    if box.score is not None:
        lines.append(f"score {box.score:.3f}")
    if box.partner is not None:
        lines.append(f"matched to {other_side} box {box.partner} ({plain_for_plotly(others[box.partner].label)})")
    elif box.eval_class is not None:
        lines.append("unmatched at IoU 0.5")
    lines.append(f"[{x1:.0f}, {y1:.0f}, {x2:.0f}, {y2:.0f}]")
    return "<br>".join(lines)


def _pane_traces(boxes: list[MatchedBox], others: list[MatchedBox], other_side: str, column: int, legend_shown: set[str]) -> list[go.Scatter]:
    """One outline trace per (status, class): outline by status, light fill by class; plus
    invisible centre markers that carry the hover."""
    traces = []
    groups: dict[tuple[str, str], list[int]] = {}
    for index, box in enumerate(boxes):
        groups.setdefault((box.status, box.label), []).append(index)
    for (status, label), indices in sorted(groups.items()):
        traces += outlined_boxes(
            [boxes[k].bbox for k in indices], [_box_hover(boxes[k], k, others, other_side) for k in indices],
            marker_size=CENTRE_MARKER_SIZE, line=STATUS_STYLES[status], name=STATUS_NAMES[status],
            fill_colour=with_alpha(class_color(label), FILL_ALPHA), column=column, legendgroup=status,
            showlegend=status not in legend_shown,
        )
        legend_shown.add(status)
    return traces


def page_match_overlay(page: PageMatches, image_uri: str | None, *, width_hint: int = 1100) -> go.Figure:
    """The page image twice, ground-truth blocks on the left and predicted boxes on the right, with
    shared zoom; outlines say matched (solid green), unmatched (dashed red) or not evaluated (dotted grey)."""
    panes = [Pane(f"ground truth: {len(page.reference)} blocks", None), Pane(f"prediction: {len(page.prediction)} boxes", None)]
    fig = page_overlay(panes, page.width, page.height, image_uri, width_hint=width_hint)
    legend_shown: set[str] = set()
    fig.add_traces(_pane_traces(page.reference, page.prediction, "predicted", 1, legend_shown))
    fig.add_traces(_pane_traces(page.prediction, page.reference, "ground-truth", 2, legend_shown))
    return fig
