"""Plotly figures of one page: boxes of one or more layouts over the page image, side by side with
synchronised zoom, and the agreement view.

All panes are subplots of one figure whose axes are matched, so zooming one zooms all. Boxes are
one scatter trace per class and pane (outlines separated by gaps, filled), never one shape per box
(`add_shape` in a loop is quadratic, app.md section 3). Traces of a class share a legend group, so
one legend click toggles the class in every pane. Class names and pane titles are plain text,
escaped here (`plain_for_plotly`).

A pane may highlight one matrix cell (`Highlight`): one heatmap trace over the page, on the exact
grid rectangles behind the cell (`drilldown.CellRegions`), veils everything else, and veils each
rectangle by the part of its pixels the cell does not get (a pixel whose sets are {Text} and
{Text, Table} gives only part of itself to Text -> Table, so it stays half veiled); the boxes that
make the cell are outlined on top. The agreement pane uses its own colours (Okabe-Ito, a
colour-blind safe set) with a hatch a category, so it never reads as a class of the palette; with
it the panes go two a row, so each stays large enough to read.
"""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go
from PIL import Image
from plotly.subplots import make_subplots

from tore_engine.core.layout import Page
from tore_engine.engine.agreement import CATEGORY_NAMES, AgreementRaster
from tore_engine.engine.cell_regions import CellRegions
from tore_engine.plots.palette import AGREEMENT_STYLES, class_color, with_alpha
from tore_engine.plots.plain_text import plain_for_plotly

AGREEMENT_ALPHA = 215  # of 255: a category's hatch lines
AGREEMENT_TINT_ALPHA = 70  # between its lines
HATCH_PERIOD, HATCH_WIDTH = 9, 3  # raster pixels
VEIL = "rgba(20,20,20,0.55)"  # over what the highlighted cell does not get
LIT = "rgba(20,20,20,0)"
SHARE_LEVELS = 255  # the heatmap's z: a region's share of each pixel, 0..255
CELL_BOX_COLOUR = "#111111"
LEGEND_ROW_HEIGHT = 22  # pixels of one row of the horizontal legend
TITLE_MARGIN = 40  # pixels above the panes for their titles
TICKS_MARGIN = 34  # pixels below the panes for the x axes' numbers
LEGEND_ITEM_CHARS = 6  # a legend item's symbol and gaps, in characters


@dataclass(frozen=True)
class Highlight:
    """One matrix cell on a pane: its name ("Text → Table"), where its pixels are, and the boxes of
    the pane's page that make it (indices into the page's boxes)."""

    name: str
    regions: CellRegions
    boxes: Sequence[int]


@dataclass(frozen=True)
class Pane:
    """One panel: a title, the layout page whose boxes it draws (None: no boxes to draw) and the
    cell it highlights, if any."""

    title: str
    page: Page | None
    highlight: Highlight | None = None


def data_uri(data: bytes) -> str:
    """Image bytes as a `data:` URI for a Plotly layout image."""
    kind = "png" if data.startswith(b"\x89PNG") else "jpeg"
    return f"data:image/{kind};base64,{base64.b64encode(data).decode('ascii')}"


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


def _hatch(code: int, rows: int, columns: int) -> np.ndarray:
    """Where a category's hatch lines are, on a raster of this size (True: a line)."""
    y, x = np.mgrid[0:rows, 0:columns]
    lines = {
        "\\": (x + y) % HATCH_PERIOD < HATCH_WIDTH,
        "/": (x - y) % HATCH_PERIOD < HATCH_WIDTH,
        "x": ((x + y) % HATCH_PERIOD < HATCH_WIDTH - 1) | ((x - y) % HATCH_PERIOD < HATCH_WIDTH - 1),
        ".": (x % HATCH_PERIOD < HATCH_WIDTH) & (y % HATCH_PERIOD < HATCH_WIDTH),
        "": np.ones((rows, columns), dtype=bool),
    }
    return lines[AGREEMENT_STYLES[code][1]]


def agreement_png(raster: AgreementRaster) -> bytes:
    """The agreement categories as a semi-transparent RGBA PNG (transparent where nothing): each
    category in its colour, its hatch lines strong and the gaps between them light."""
    rows, columns = raster.codes.shape
    picture = np.zeros((rows, columns, 4), dtype=np.uint8)
    for code, (colour, _) in AGREEMENT_STYLES.items():
        here = raster.codes == code
        if here.any():
            lines = _hatch(code, rows, columns)
            picture[here, :3] = [int(colour[k : k + 2], 16) for k in (1, 3, 5)]
            picture[here & lines, 3] = AGREEMENT_ALPHA
            picture[here & ~lines, 3] = AGREEMENT_TINT_ALPHA
    buffer = io.BytesIO()
    Image.fromarray(picture, mode="RGBA").save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


def _agreement_legend(raster: AgreementRaster) -> list[go.Bar]:
    """Legend entries only (bars without data, so the swatch shows the hatch)."""
    present = set(np.unique(raster.codes).tolist())
    shares = raster.shares()
    return [
        go.Bar(x=[None], y=[None], marker=dict(color=with_alpha(colour, 0.35), line=dict(color=colour, width=1),
                                               pattern=dict(shape=hatch, fgcolor=colour, solidity=0.45)),
               name=f"{CATEGORY_NAMES[code]} ({shares[CATEGORY_NAMES[code]]:.1%} of the page)", legendgroup=f"agreement-{code}",
               legendgrouptitle=dict(text="agreement") if not index else None, hoverinfo="skip")
        for index, (code, (colour, hatch)) in enumerate((code, style) for code, style in AGREEMENT_STYLES.items() if code in present)
    ]


def _edges(low: np.ndarray, high: np.ndarray, end: float) -> np.ndarray:
    """The sorted distinct region edges along one axis, with the page's edges."""
    return np.unique(np.concatenate([[0.0, end], low, high]).astype(float))


def spotlight_trace(highlight: Highlight, width: float, height: float, pane: int) -> go.Heatmap:
    """One heatmap over the whole page on the regions' own grid: the cell's regions lit by their
    share of each pixel, everything else veiled. Its z is compact (0..255 as bytes), so a page of
    many regions stays a small figure."""
    regions = highlight.regions
    xs = _edges(regions.x0, regions.x1, max(width, float(regions.x1.max(initial=0))))
    ys = _edges(regions.y0, regions.y1, max(height, float(regions.y1.max(initial=0))))
    z = np.zeros((len(ys) - 1, len(xs) - 1), dtype=np.uint8)
    z[np.searchsorted(ys, regions.y0), np.searchsorted(xs, regions.x0)] = np.rint(regions.shares * SHARE_LEVELS).astype(np.uint8)
    return go.Heatmap(x=xs, y=ys, z=z, zmin=0, zmax=SHARE_LEVELS, colorscale=[[0, VEIL], [1, LIT]], showscale=False,
                      showlegend=False, hoverinfo="skip", name=plain_for_plotly(highlight.name), xaxis=_axis("x", pane), yaxis=_axis("y", pane))


def cell_box_trace(page: Page, indices: Sequence[int], pane: int, name: str, shown_in_legend: bool) -> go.Scatter:
    """The outlines of the boxes that make a highlighted cell (`name`, plain text), thick and dark
    over the veil."""
    return outline_trace(page.bboxes[list(indices)], [_box_hover(page, k) for k in indices], line=dict(color=CELL_BOX_COLOUR, width=3),
                         name=f"boxes behind {name}", column=pane, legendgroup="cell-boxes", showlegend=shown_in_legend)


def _page_image(uri: str, column: int, width: float, height: float, layer: str = "below", opacity: float = 1.0) -> dict:
    return dict(source=uri, xref=_axis("x", column), yref=_axis("y", column), x=0, y=0, sizex=width, sizey=height,
                xanchor="left", yanchor="top", sizing="stretch", layer=layer, opacity=opacity)


AGREEMENT_COLUMNS = 2  # panes a row with the agreement pane
MAX_ROW_HEIGHT = 1000  # pixels of one row of panes


def _grid(count: int, agreement: bool) -> tuple[int, int]:
    """Rows and columns of the panes: one row, or two panes a row with the agreement pane."""
    columns = min(count, AGREEMENT_COLUMNS) if agreement else count
    return math.ceil(count / columns), columns


def _legend(fig: go.Figure, rows: int, columns: int, count: int, width_hint: int) -> tuple[dict, int]:
    """The legend's layout and the bottom margin it needs: in the grid's empty last cell when
    there is one, else in rows at the figure's foot, below the axes' numbers (not at the top,
    where Plotly's toolbar would cover its end)."""
    if rows * columns > count:
        return dict(orientation="v", x=(columns - 1) / columns + 0.02, xanchor="left", y=1 / rows - 0.03, yanchor="top"), TICKS_MARGIN
    names = [trace.name for trace in fig.data if trace.showlegend is not False and trace.name]
    legend_rows = max(1, math.ceil(sum(len(name) + LEGEND_ITEM_CHARS for name in names) * 7 / width_hint))
    return dict(orientation="h", x=0, y=0, yref="container", yanchor="bottom"), TICKS_MARGIN + LEGEND_ROW_HEIGHT * legend_rows


def _pane_traces(pane: Pane, index: int, shown: set[str], width: float, height: float) -> list:
    """A pane's boxes, and its highlighted cell's veil and boxes on top."""
    traces = box_traces(pane.page, index, shown) if pane.page is not None else []
    if pane.highlight is not None:
        traces.append(spotlight_trace(pane.highlight, width, height, index))
        if pane.page is not None and len(pane.highlight.boxes):
            traces.append(cell_box_trace(pane.page, pane.highlight.boxes, index, pane.highlight.name, "cell-boxes" not in shown))
            shown.add("cell-boxes")
    return traces


def page_overlay(
    panes: list[Pane],
    width: float,
    height: float,
    image_uri: str | None,
    *,
    agreement: AgreementRaster | None = None,
    width_hint: int = 900,
) -> go.Figure:
    """The page image in every pane with each pane's boxes (and highlighted cell) on top; with
    `agreement`, one more pane that paints the agreement categories over the page. Zoom is shared
    by all panes. `width_hint` (a figure width in pixels, on the small side of the app's: then the
    panes fill the height and no gap opens above the legend) sets the height."""
    titles = [plain_for_plotly(pane.title) for pane in panes] + (["agreement"] if agreement is not None else [])
    count = len(titles)
    rows, columns = _grid(count, agreement is not None)
    specs: list[list[dict[str, object] | None]] = [[{} if row * columns + column < count else None for column in range(columns)] for row in range(rows)]
    fig = make_subplots(rows=rows, cols=columns, specs=specs, subplot_titles=titles, horizontal_spacing=0.015, vertical_spacing=0.04)
    shown: set[str] = set()
    for index, pane in enumerate(panes, start=1):
        fig.add_traces(_pane_traces(pane, index, shown, width, height))
    if agreement is not None:
        fig.add_traces([trace.update(xaxis=_axis("x", count), yaxis=_axis("y", count)) for trace in _agreement_legend(agreement)])
    images = [_page_image(image_uri, index, width, height) for index in range(1, count + 1)] if image_uri is not None else []
    for index in range(1, count + 1):
        suffix = "" if index == 1 else str(index)
        fig.update_layout({
            f"xaxis{suffix}": dict(range=[0, width], showgrid=False, zeroline=False, constrain="domain",
                                   matches=None if index == 1 else "x", tickfont=dict(size=9)),
            f"yaxis{suffix}": dict(range=[height, 0], showgrid=False, zeroline=False, scaleanchor=f"x{suffix}",
                                   constrain="domain", constraintoward="top", matches=None if index == 1 else "y",
                                   showticklabels=(index - 1) % columns == 0, tickfont=dict(size=9)),
        })
    if agreement is not None:
        images.append(_page_image(data_uri(agreement_png(agreement)), count, width, height, layer="above"))
    legend, bottom = _legend(fig, rows, columns, count, width_hint)
    row_height = min(MAX_ROW_HEIGHT, width_hint / columns * height / width + 10)
    fig.update_layout(images=images, height=int(max(450, rows * row_height + TITLE_MARGIN + bottom)), dragmode="zoom", hovermode="closest",
                      margin=dict(l=10, r=10, t=TITLE_MARGIN, b=bottom), plot_bgcolor="white", barmode="overlay",
                      legend=dict(legend, groupclick="togglegroup", tracegroupgap=4))
    return fig
