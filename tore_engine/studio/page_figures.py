"""Plotly figures of one page: boxes of one or more layouts over the page image, side by side with
synchronised zoom, and the agreement view.

All panes are subplots of one figure whose axes are matched, so zooming one zooms all. Boxes are
one scatter trace per class and pane (outlines separated by gaps, filled), never one shape per box
(`add_shape` in a loop is quadratic, app.md section 3). Traces of a class share a legend group, so
one legend click toggles the class in every pane. Class names and pane titles are plain text,
escaped here (`plain_for_plotly`).
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go
from PIL import Image
from plotly.subplots import make_subplots

from tore_engine.agreement import BOTH, CATEGORY_NAMES, DIFFERENT_CLASS, ONLY_PREDICTION, ONLY_REFERENCE, SAME_CLASS, AgreementRaster
from tore_engine.layout import Page
from tore_engine.studio.palette import class_color, with_alpha
from tore_engine.studio.plain_text import plain_for_plotly
from tore_engine.studio.rendering import data_uri

AGREEMENT_COLOURS = {
    ONLY_REFERENCE: "#f58231",
    ONLY_PREDICTION: "#4363d8",
    SAME_CLASS: "#3cb44b",
    DIFFERENT_CLASS: "#e6194b",
    BOTH: "#911eb4",
}
AGREEMENT_ALPHA = 150  # of 255


@dataclass(frozen=True)
class Pane:
    """One panel: a title and the layout page whose boxes it draws (None: no boxes to draw)."""

    title: str
    page: Page | None


def _axis(letter: str, column: int) -> str:
    """Plotly's axis id of a subplot column: x, x2, x3..."""
    return letter if column == 1 else f"{letter}{column}"


def _box_hover(page: Page, index: int) -> str:
    x1, y1, x2, y2 = page.bboxes[index].tolist()
    score = page.scores[index] if page.scores is not None and len(page.scores) > index else float("nan")
    score_text = "no score" if np.isnan(score) else f"score {score:.3f}"
    return f"<b>{plain_for_plotly(page.labels[index])}</b><br>box {index}, {score_text}<br>[{x1:.1f}, {y1:.1f}, {x2:.1f}, {y2:.1f}]"


def outline_trace(
    boxes: Iterable[Sequence[float]],
    hovers: Sequence[str] | None,
    *,
    line: dict[str, Any],
    name: str,
    fill_colour: str | None = None,
    column: int = 1,
    **options: Any,
) -> go.Scatter:
    """Every box `(x1, y1, x2, y2)` as its closed outline in one scatter trace, a gap between boxes,
    because one shape per box is quadratic (app.md section 3). `hovers` (one per box, Plotly HTML)
    show on the box's corners (None: no hover); `fill_colour` fills the boxes (None: outlines only);
    `name` is plain text, escaped here; `options` go to the trace (legendgroup, showlegend)."""
    xs: list[float | None] = []
    ys: list[float | None] = []
    for box in boxes:
        x1, y1, x2, y2 = map(float, box)
        xs += [x1, x2, x2, x1, x1, None]
        ys += [y1, y1, y2, y2, y1, None]
    hover = {"hoverinfo": "skip"} if hovers is None else {
        "text": [text for one in hovers for text in [one] * 5 + [None]], "hovertemplate": "%{text}<extra></extra>"}
    fill = {} if fill_colour is None else {"fill": "toself", "fillcolor": fill_colour}
    return go.Scatter(x=xs, y=ys, mode="lines", line=line, name=plain_for_plotly(name), xaxis=_axis("x", column),
                      yaxis=_axis("y", column), **hover, **fill, **options)


def box_traces(page: Page, column: int, shown_in_legend: set[str]) -> list[go.Scatter]:
    """One outline trace (with hover on its corners) and one invisible centre-marker trace (hover
    anywhere near the middle) per class of the page. Adds the classes to `shown_in_legend`."""
    traces = []
    for label in dict.fromkeys(page.labels):
        indices = [k for k, name in enumerate(page.labels) if name == label]
        colour = class_color(label)
        common = dict(legendgroup=label, hovertemplate="%{text}<extra></extra>", xaxis=_axis("x", column), yaxis=_axis("y", column))
        traces.append(
            outline_trace(page.bboxes[indices], [_box_hover(page, k) for k in indices], line=dict(color=colour, width=1.5),
                          name=label, fill_colour=with_alpha(colour, 0.18), column=column, legendgroup=label,
                          showlegend=label not in shown_in_legend)
        )
        centres = page.bboxes[indices]
        traces.append(
            go.Scatter(x=(centres[:, 0] + centres[:, 2]) / 2, y=(centres[:, 1] + centres[:, 3]) / 2,
                       text=[_box_hover(page, k) for k in indices], mode="markers",
                       marker=dict(size=14, opacity=0, color=colour), name=plain_for_plotly(label), showlegend=False, **common)
        )
        shown_in_legend.add(label)
    return traces


def agreement_png(raster: AgreementRaster) -> bytes:
    """The agreement categories as a semi-transparent RGBA PNG (transparent where nothing)."""
    lookup = np.zeros((max(CATEGORY_NAMES) + 1, 4), dtype=np.uint8)
    for code, colour in AGREEMENT_COLOURS.items():
        lookup[code] = [int(colour[k : k + 2], 16) for k in (1, 3, 5)] + [AGREEMENT_ALPHA]
    buffer = io.BytesIO()
    Image.fromarray(lookup[raster.codes], mode="RGBA").save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


def _agreement_legend(raster: AgreementRaster) -> list[go.Scatter]:
    present = set(np.unique(raster.codes).tolist())
    shares = raster.shares()
    return [
        go.Scatter(x=[None], y=[None], mode="markers", marker=dict(symbol="square", size=12, color=colour),
                   name=f"{CATEGORY_NAMES[code]} ({shares[CATEGORY_NAMES[code]]:.1%} of the page)", legendgroup=f"agreement-{code}")
        for code, colour in AGREEMENT_COLOURS.items()
        if code in present
    ]


def _page_image(uri: str, column: int, width: float, height: float, layer: str = "below", opacity: float = 1.0) -> dict:
    return dict(source=uri, xref=_axis("x", column), yref=_axis("y", column), x=0, y=0, sizex=width, sizey=height,
                xanchor="left", yanchor="top", sizing="stretch", layer=layer, opacity=opacity)


def page_overlay(
    panes: list[Pane],
    width: float,
    height: float,
    image_uri: str | None,
    *,
    agreement: AgreementRaster | None = None,
    width_hint: int = 1000,
) -> go.Figure:
    """The page image in every pane with each pane's boxes on top; with `agreement`, one more pane
    that colours the agreement categories over the page. Zoom is shared by all panes.
    `width_hint` (the expected figure width in pixels) sets the height that fits the panes."""
    titles = [plain_for_plotly(pane.title) for pane in panes] + (["agreement"] if agreement is not None else [])
    fig = make_subplots(rows=1, cols=len(titles), subplot_titles=titles, horizontal_spacing=0.015)
    shown: set[str] = set()
    images = []
    for column, pane in enumerate(panes, start=1):
        if pane.page is not None:
            fig.add_traces(box_traces(pane.page, column, shown))
    if agreement is not None:
        fig.add_traces([trace.update(xaxis=_axis("x", len(titles)), yaxis=_axis("y", len(titles))) for trace in _agreement_legend(agreement)])
    for column in range(1, len(titles) + 1):
        if image_uri is not None:
            images.append(_page_image(image_uri, column, width, height))
        suffix = "" if column == 1 else str(column)
        fig.update_layout({
            f"xaxis{suffix}": dict(range=[0, width], showgrid=False, zeroline=False, constrain="domain",
                                   matches=None if column == 1 else "x", tickfont=dict(size=9)),
            f"yaxis{suffix}": dict(range=[height, 0], showgrid=False, zeroline=False, scaleanchor=f"x{suffix}",
                                   constrain="domain", constraintoward="top", matches=None if column == 1 else "y",
                                   showticklabels=column == 1,
                                   tickfont=dict(size=9)),
        })
    if agreement is not None:
        images.append(_page_image(data_uri(agreement_png(agreement)), len(titles), width, height, layer="above"))
    pane_height = width_hint / len(titles) * height / width
    fig.update_layout(images=images, height=int(min(1100, max(450, pane_height + 110))), dragmode="zoom", hovermode="closest",
                      margin=dict(l=10, r=10, t=40, b=10), plot_bgcolor="white",
                      legend=dict(orientation="h", yanchor="top", y=-0.02, groupclick="togglegroup"))
    return fig
