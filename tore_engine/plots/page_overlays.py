"""One layout page as a Plotly figure (`page_chart`): the reference's and each prediction's boxes
over the page image, side by side with one zoom, and the agreement view.

Boxes are coloured by class (`palette.class_color`), one legend entry a class for every pane. A pane
may highlight one matrix cell (`Highlight`): a veil over the page, as a picture the size of the
page's frame, clear on the exact grid rectangles behind the cell (`cell_regions.CellRegions`) and
veiling each of them by the part of its pixels the cell does not get (a pixel whose sets are
{Text} and {Text, Table} gives only part of itself to Text -> Table, so it stays half veiled); the
boxes that make the cell are outlined thick and dark. The agreement pane paints the categories over
the page with its own colours (Okabe-Ito, a colour-blind safe set) and a hatch a category, so it
never reads as a class; with it the panes go two a row, so each stays large enough to read.
"""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import plotly.graph_objects as go
from PIL import Image

from tore_engine.core.layout import Page
from tore_engine.engine.agreement import CATEGORY_NAMES, AgreementRaster
from tore_engine.engine.cell_regions import CellRegions
from tore_engine.metrics.box_outcomes import BoxDecision
from tore_engine.plots.page_chart import MAX_BOXES, WIDTH, Box, PaneLayout, page_chart
from tore_engine.plots.palette import AGREEMENT_STYLES, OUTCOME_STYLES, class_color

AGREEMENT_ALPHA = 215  # of 255: a category's hatch lines
AGREEMENT_TINT_ALPHA = 70  # between its lines
HATCH_PERIOD, HATCH_WIDTH = 9, 3  # raster pixels
HATCH_NAMES = {"\\": "hatched \\", "/": "hatched /", "x": "cross-hatched", ".": "dotted", "": "solid"}
VEIL_COLOUR = (20, 20, 20)
VEIL_ALPHA = 140  # of 255, over what the highlighted cell does not get
MAX_VEIL_SIDE = 2048  # pixels: a larger page's veil is drawn smaller (and stretched over the page)
CELL_BOX_COLOUR = "#111111"
CELL_BOX_WIDTH = 3.0
AGREEMENT_COLUMNS = 2  # panes a row with the agreement pane


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
    cell it highlights, if any. With `decisions` (TIDE's, one a box of `page`, in its order) its
    boxes are drawn by outcome, not by class: each hover names the partner box on `partner_page`
    and the IoU; `lit` boxes (a selected box's partner) are drawn thick."""

    title: str
    page: Page | None
    highlight: Highlight | None = None
    decisions: Sequence[BoxDecision] | None = None
    partner_page: Page | None = None
    lit: frozenset[int] = frozenset()


def data_uri(data: bytes) -> str:
    """Image bytes (PNG or JPEG) as a `data:` URI."""
    kind = "png" if data.startswith(b"\x89PNG") else "jpeg"
    return f"data:image/{kind};base64,{base64.b64encode(data).decode('ascii')}"


def _png(picture: np.ndarray) -> bytes:
    """PNG at zlib's default level, without `optimize`: measured on a veil of 1,000 x 1,300 pixels,
    optimize took 80 ms instead of 41 ms to save 13 % of 8.6 KB."""
    buffer = io.BytesIO()
    Image.fromarray(picture, mode="RGBA").save(buffer, format="PNG")
    return buffer.getvalue()


def _score_text(page: Page, index: int) -> str:
    score = page.scores[index] if page.scores is not None and len(page.scores) > index else float("nan")
    return "no score" if np.isnan(score) else f"{score:.3f}"


def box_description(pane_title: str, label: str, index: int) -> str:
    """What a box's hover marker carries (`Box.description`): the app reads a clicked box back from it."""
    return f"{pane_title}: {label} box {index}"


def _coordinates(page: Page, index: int) -> str:
    return ", ".join(f"{float(value):.1f}" for value in page.bboxes[index].tolist())


def _box(page: Page, index: int, pane: int, pane_title: str, **style: object) -> Box:
    """Box `index` of the page, in its class's colour unless `style` says otherwise."""
    x1, y1, x2, y2 = (float(value) for value in page.bboxes[index].tolist())
    label = page.labels[index]
    outline = page.polygons.outline(index) if page.polygons is not None else None
    options: dict = {"group": label, "colour": class_color(label)} | style
    if outline is not None:  # drawn as the polygon it is (TORE paints the polygon, not its bounding box)
        options["polygon"] = tuple((float(x), float(y)) for x, y in outline.tolist())
    return Box(pane, (x1, y1, x2, y2), hover_title=label, description=box_description(pane_title, label, index),
               hover={"box": str(index), "score": _score_text(page, index), "x1, y1, x2, y2": _coordinates(page, index)},
               **options)


def largest_boxes(page: Page, limit: int = MAX_BOXES) -> list[int]:
    """The indices of the page's boxes a pane draws: all, or the `limit` largest (in page order),
    picked before any is made into a `Box` (a page of a million boxes would take minutes)."""
    count = len(page.labels)
    if count <= limit:
        return list(range(count))
    bboxes = np.asarray(page.bboxes, dtype=float)
    areas = np.nan_to_num(np.abs((bboxes[:, 2] - bboxes[:, 0]) * (bboxes[:, 3] - bboxes[:, 1])))
    return sorted(np.argsort(-areas, kind="stable")[:limit].tolist())


def outcome_kind(decision: BoxDecision) -> str:
    """The key of `OUTCOME_STYLES` a box is drawn with: its error type, else its outcome."""
    return decision.error or decision.outcome


def _partner_text(page: Page | None, decision: BoxDecision) -> str:
    if decision.partner < 0 or page is None or decision.partner >= len(page.labels):
        return "none"
    return f"box {decision.partner}, {page.labels[decision.partner]}, {_coordinates(page, decision.partner)}"


def _outcome_box(pane: Pane, k: int, index: int) -> Box:
    """Box `k` of the pane's page in its outcome's colour and line, its class, partner and IoU in its hover."""
    assert pane.page is not None and pane.decisions is not None
    decision = pane.decisions[k]
    name, colour, dash = OUTCOME_STYLES[outcome_kind(decision)]
    lit = {"line_width": CELL_BOX_WIDTH + 1, "fill": 0.35} if k in pane.lit else {}
    drawn = _box(pane.page, k, index, pane.title, group=name, colour=colour, dash=dash, **lit)
    hover = {**drawn.hover, "outcome": name, "partner": _partner_text(pane.partner_page, decision),
             "IoU": "none" if math.isnan(decision.iou) else f"{decision.iou:.3f}"}
    return replace(drawn, hover=hover)


def _pane_boxes(pane: Pane, index: int) -> list[Box]:
    """A pane's boxes by class (or by outcome, with decisions), then the boxes that make its
    highlighted cell, thick and dark."""
    if pane.page is None:
        return []
    if pane.decisions is not None and len(pane.decisions) == len(pane.page.labels):
        boxes = [_outcome_box(pane, k, index) for k in largest_boxes(pane.page)]
    else:
        boxes = [_box(pane.page, k, index, pane.title) for k in largest_boxes(pane.page)]
    if pane.highlight is not None:
        group = f"boxes behind {pane.highlight.name}"
        boxes += [_box(pane.page, k, index, pane.title, group=group, colour=CELL_BOX_COLOUR, line_width=CELL_BOX_WIDTH, fill=0.0)
                  for k in pane.highlight.boxes]
    return boxes


def veil_png(regions: CellRegions, width: float, height: float) -> bytes:
    """The veil of a highlighted cell, an RGBA PNG of the page's frame (at most `MAX_VEIL_SIDE` on
    its longer side): clear where the cell gets all of a pixel, veiled in proportion to the part it
    does not get, fully veiled elsewhere."""
    columns, rows = max(1, math.ceil(width)), max(1, math.ceil(height))
    scale = min(1.0, MAX_VEIL_SIDE / max(columns, rows))
    shape = (max(1, round(rows * scale)), max(1, round(columns * scale)))
    alpha = np.full(shape, VEIL_ALPHA, dtype=np.uint8)
    veiled = np.rint(VEIL_ALPHA * (1 - regions.shares)).astype(np.uint8)
    for x0, x1, y0, y1, value in zip(regions.x0.tolist(), regions.x1.tolist(), regions.y0.tolist(), regions.y1.tolist(), veiled.tolist()):
        alpha[math.floor(y0 * scale) : math.ceil(y1 * scale), math.floor(x0 * scale) : math.ceil(x1 * scale)] = value
    picture = np.zeros((*shape, 4), dtype=np.uint8)
    picture[..., :3] = VEIL_COLOUR
    picture[..., 3] = alpha
    return _png(picture)


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
    return _png(picture)


def agreement_legend(raster: AgreementRaster) -> dict[str, str]:
    """The legend's entries for the categories on the page: name (its share of the page, its hatch)
    -> colour."""
    present = set(np.unique(raster.codes).tolist())
    shares = raster.shares()
    return {f"{CATEGORY_NAMES[code]} ({shares[CATEGORY_NAMES[code]]:.1%} of the page, {HATCH_NAMES[hatch]})": colour
            for code, (colour, hatch) in AGREEMENT_STYLES.items() if code in present}


def page_overlay(
    panes: list[Pane],
    width: float,
    height: float,
    image_uri: str | None,
    *,
    agreement: AgreementRaster | None = None,
    width_hint: int = WIDTH,
) -> go.Figure:
    """The page image in every pane with each pane's boxes (and highlighted cell) on top; with
    `agreement`, one more pane that paints the agreement categories over the page. Zoom is shared
    by all panes; `width_hint`: the pixels a row of panes fills."""
    layouts = [PaneLayout(pane.title, [] if pane.highlight is None else [data_uri(veil_png(pane.highlight.regions, width, height))])
               for pane in panes]
    boxes = [box for index, pane in enumerate(panes) for box in _pane_boxes(pane, index)]
    legend_extra: dict[str, str] = {}
    columns = len(panes)
    if agreement is not None:
        layouts.append(PaneLayout("agreement", [data_uri(agreement_png(agreement))]))
        legend_extra = agreement_legend(agreement)
        columns = min(len(layouts), AGREEMENT_COLUMNS)
    counts = [len(pane.page.labels) for pane in panes if pane.page is not None and len(pane.page.labels) > MAX_BOXES]
    note = f"{max(counts):,} boxes on a pane: the {MAX_BOXES:,} largest of each pane drawn" if counts else None  # cut before `page_chart` sees them
    return page_chart(layouts, boxes, width, height, image_uri, columns=columns, width_hint=width_hint, legend_extra=legend_extra, note=note)
