"""Streamlit building blocks of the page views: a page's scores, the cell to
highlight and its contribution, and the overlay of the reference and the predictions on the page.

A highlighted cell is drawn from `drilldown.page_regions` (the exact pixels of the page behind
the cell) and its numbers are the engine's page matrix (`drilldown.page_cell`); nothing is
computed here.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd
import streamlit as st

from tore_engine.engine.agreement import agreement_raster
from tore_engine.engine.cell_regions import CellRegions, page_regions
from tore_engine.metrics.box_outcomes import BoxDecision
from tore_engine.plots import page_overlays
from tore_engine.plots.page_chart import ZOOM_HELP
from tore_engine.plots.plain_text import percent, pixels, plain_for_markdown
from tore_engine.results.drilldown import page_cell, page_cells
from tore_engine.studio import state, tables
from tore_engine.studio.documents import page_pair
from tore_engine.studio.evaluations import Evaluated
from tore_engine.studio.page_images import page_image_uri
from tore_engine.studio.panels import (
    VIEW_LABELS,
    cell_classes,
    cell_view,
    choose_cell,
    chosen_cell,
    plotly_chart,
)

NO_HIGHLIGHT = ""
ARROW = " → "
BY_OUTCOME, BY_CLASS = "outcome", "class"
COLOURINGS = {BY_OUTCOME: "outcome (TIDE)", BY_CLASS: "class"}
PageDecisions = dict[str, list[BoxDecision]]


def cell_name(cell: tuple[str, str]) -> str:
    """Plain text: escape it where Markdown reads it (the figures escape it themselves)."""
    return f"{cell[0]}{ARROW}{cell[1]}"


def _choose_page(table_key: str, page_ids: list[str]) -> None:
    rows = st.session_state[table_key].selection.rows
    if rows:
        st.session_state[state.PAGE] = page_ids[rows[0]]


def page_picker_table(table: pd.DataFrame, key: str, label: str) -> None:
    """A table of pages (a `page` column first, scores after it); selecting a row shows that page
    in the navigator below it."""
    with st.expander(label):
        st.dataframe(table, key=key, hide_index=True, selection_mode="single-row", width="stretch",
                     on_select=functools.partial(_choose_page, key, table["page"].tolist()),
                     column_config={name: tables.score_column() for name in table.columns[1:]})


def page_scores(evaluated: Evaluated, page_id: str) -> None:
    """The page's reduced Foreground scores, its pixels and, when the evaluation has mAP, its mAP."""
    row = evaluated.pages.loc[page_id]
    has_map = "map" in row.index
    # each column as wide as the longer of its label and its value (the pixel count, "1,938,816", the widest), so that a
    # laptop's 1280 px shows every one whole: in equal columns the pixels read "1,938,…"
    columns = st.columns([1.15, 1.35, 0.95, 1.65, 1.3] if has_map else [1.15, 1.35, 0.95, 1.65])
    columns[0].metric("Foreground recall", f"{row['foreground_recall']:.3f}")
    columns[1].metric("Foreground precision", f"{row['foreground_precision']:.3f}")
    columns[2].metric("Foreground F1", f"{row['foreground_f1']:.3f}")
    columns[3].metric("Pixels", pixels(row["pixels"]))
    if has_map:
        columns[4].metric("mAP of the page", "—" if pd.isna(row["map"]) else f"{row['map']:.3f}",
                          help="COCO-style, over this page's boxes (mAP@50 and mAP@75 in Matrices' table of all pages); "
                               "— : the page has no reference box")


def _position(evaluated: Evaluated, page_id: str) -> int:
    """The page's index in the evaluation."""
    position = evaluated.index.position(page_id)
    if position is None:  # every page shown is one of the evaluation's
        raise KeyError(f"no page {page_id!r} in the evaluation")
    return position


def _highlight_from_picker() -> None:
    row, separator, column = st.session_state[state.HIGHLIGHT].partition("|")
    choose_cell((row, column) if separator else None)


def highlight_picker(evaluated: Evaluated, page_id: str, view: str) -> tuple[str, str] | None:
    """The cell to highlight on this page: the session's cell (the one clicked in a matrix), or one
    of the page's non-zero cells, largest first."""
    evaluation = evaluated.evaluation
    page_index = _position(evaluated, page_id)
    matrix = cell_view(view)
    cells = {state.cell_text((row, column)): (value, share) for row, column, value, share in page_cells(evaluation, matrix, page_index)}
    classes = cell_classes(evaluation, view)
    current = chosen_cell(classes, classes)
    options = [NO_HIGHLIGHT, *cells]
    if current is not None and state.cell_text(current) not in cells:
        options.insert(1, state.cell_text(current))  # chosen elsewhere, 0 on this page
    st.session_state[state.HIGHLIGHT] = state.cell_text(current) if current is not None else NO_HIGHLIGHT

    def label(option: str) -> str:
        if option == NO_HIGHLIGHT:
            return "(no cell)"
        value, share = cells.get(option, (0.0, 0.0))
        row, _, column = option.partition("|")
        return f"{cell_name((row, column))}: {pixels(value)} px here ({percent(share)} of the cell)"

    st.selectbox("Highlight the pixels of a cell (this page's cells, largest first)", options, key=state.HIGHLIGHT, format_func=label,
                 on_change=_highlight_from_picker, help="a cell of the matrix: the page's pixels that make it are lit, the rest veiled")
    return current


def contribution(evaluated: Evaluated, view: str, page_id: str, cell: tuple[str, str], regions: CellRegions) -> None:
    """The cell's contribution on this page, in pixels and as a share of the cell (the engine's
    page matrix), and what makes it."""
    value, share = page_cell(evaluated.evaluation, cell_view(view), _position(evaluated, page_id), *cell)
    name = plain_for_markdown(cell_name(cell))
    left, middle, right = st.columns([3, 2, 4])
    left.metric(f"{name} on this page", f"{pixels(value)} px", help="this page's pixels in the cell (split pixels count by their share)")
    middle.metric("Share of the cell", percent(share), help="of the cell's pixels over the whole dataset")
    right.caption(f"Lit: {len(regions.x0):,} rectangles of the page's grid behind the cell; the boxes that make it are outlined "
                  f"({len(regions.reference_boxes):,} in the reference, {len(regions.prediction_boxes):,} in the prediction). A "
                  "rectangle whose pixels belong to several classes gives the cell only a part of each pixel: it stays partly veiled.")


@dataclass(frozen=True)
class PaneModel:
    """One prediction pane: the evaluation, its title, and the cell it highlights (in the
    evaluation's own class names), if any."""

    evaluated: Evaluated
    title: str
    cell: tuple[str, str] | None = None


def cell_regions(evaluated: Evaluated, page_id: str, view: str, cell: tuple[str, str]) -> CellRegions:
    """Where on the page the cell's pixels are, for this evaluation (its own taxonomy)."""
    return page_regions(*page_pair(evaluated, page_id), evaluated.evaluation.taxonomy, cell_view(view), *cell)


def model_regions(models: list[PaneModel], page_id: str, view: str) -> dict[str, CellRegions]:
    """Each model's cell regions on the page, by model title (models without a cell left out)."""
    return {model.title: cell_regions(model.evaluated, page_id, view, model.cell) for model in models if model.cell is not None}


def _highlight(regions: CellRegions | None, cell: tuple[str, str] | None, side: str) -> page_overlays.Highlight | None:
    """A pane's highlight: the regions, and the boxes of its side (reference or prediction)."""
    if regions is None or cell is None:
        return None
    boxes = regions.reference_boxes if side == "reference" else regions.prediction_boxes
    return page_overlays.Highlight(cell_name(cell), regions, boxes.tolist())


def page_decisions(evaluated: Evaluated, page_id: str) -> PageDecisions | None:
    """TIDE's decision for each box of the page, by side, in the order `Evaluated.reference_page`
    and `prediction_page` give the boxes (both are the evaluated boxes, after the minimum score);
    None when the evaluation has none (dual taxonomy, a saved evaluation, a document's subset)."""
    position = evaluated.index.position(page_id)
    return None if position is None else evaluated.evaluation.page_decisions(position)


def display_label(decided: bool) -> str:
    """The Overlays display popover's label: what it shows now (the session's choices, seeded)."""
    state.seed(state.BOX_COLOURS, BY_OUTCOME, list(COLOURINGS))
    session = st.session_state
    view = VIEW_LABELS.get(session.get(state.VIEW, "full"), VIEW_LABELS["full"])
    colouring = COLOURINGS[session[state.BOX_COLOURS] if decided else BY_CLASS]
    return f"Display: {view} matrix · boxes by {colouring}" + (" · agreement" if session.get(state.AGREEMENT) else "")


def box_colouring(decided: bool) -> str:
    """The control that colours boxes by outcome or by class (by class alone without decisions)."""
    if not decided:
        return BY_CLASS
    binding = state.bind(state.BOX_COLOURS, BY_OUTCOME, list(COLOURINGS))
    colouring = st.radio("Boxes coloured by", list(COLOURINGS), format_func=COLOURINGS.__getitem__, horizontal=True, **binding,
                          help="outcome: matched, each of TIDE's error types, missed (boxes.csv's outcome and error); class: the box's class")
    return colouring


def _selected_box(key: str, panes: list[page_overlays.Pane]) -> tuple[int, int] | None:
    """The box last clicked in the chart (pane, box), from the chart's selection (its hover marker's
    description names it), if it is a box of these panes."""
    event = st.session_state.get(key)
    points = getattr(getattr(event, "selection", None), "points", None) or []
    for point in points:
        described = point.get("customdata") if isinstance(point, dict) else None
        for index, pane in enumerate(panes):
            if pane.page is None or not isinstance(described, str) or not described.startswith(f"{pane.title}: "):
                continue
            _, _, number = described.rpartition(" box ")
            if number.isdigit() and int(number) < len(pane.page.labels) and described == page_overlays.box_description(
                    pane.title, pane.page.labels[int(number)], int(number)):
                return index, int(number)
    return None


def _with_decisions(panes: list[page_overlays.Pane], decisions: PageDecisions, key: str) -> list[page_overlays.Pane]:
    """The reference pane and the first prediction pane drawn by outcome, each hover naming the
    partner on the other pane. Streamlit hears clicks, not hovers: a clicked box and its partner
    are drawn thick (lit), in both panes."""
    reference, prediction = panes[0], panes[1]
    lit: dict[int, set[int]] = {0: set(), 1: set()}
    selected = _selected_box(key, panes[:2])
    if selected is not None:
        pane, box = selected
        lit[pane].add(box)
        partner = decisions["reference" if pane == 0 else "prediction"][box].partner
        if partner >= 0:
            lit[1 - pane].add(partner)
    return [replace(reference, decisions=decisions["reference"], partner_page=prediction.page, lit=frozenset(lit[0])),
            replace(prediction, decisions=decisions["prediction"], partner_page=reference.page, lit=frozenset(lit[1])), *panes[2:]]


def page_overlay(models: list[PaneModel], page_id: str, image_root: Path, *, regions: dict[str, CellRegions] | None = None,
                 agreement: bool = False, reference_highlight: bool = True, reference_title: str = "reference", key: str,
                 decisions: PageDecisions | None = None) -> None:
    """The reference and each model's prediction side by side on the page image (which must lie
    inside `image_root`), synchronised zoom; each model's cell regions (`model_regions`)
    highlighted in its pane, and the first one's also in the reference pane when
    `reference_highlight`; with `decisions` (`page_decisions` of the first model), the reference's
    and the first model's boxes drawn by outcome."""
    first = models[0].evaluated
    reference, first_prediction = page_pair(first, page_id)
    regions = regions or {}
    first_regions = regions.get(models[0].title) if reference_highlight else None
    panes = [page_overlays.Pane(reference_title, reference, _highlight(first_regions, models[0].cell, "reference"))]
    for model in models:
        prediction = model.evaluated.prediction_page(page_id)
        drawn = None if prediction is None else prediction.scaled_to(reference.width, reference.height)  # the frame the matrix counts in
        panes.append(page_overlays.Pane(model.title, drawn, _highlight(regions.get(model.title), model.cell, "prediction")))
    if decisions is not None:
        panes = _with_decisions(panes, decisions, key)
    raster = None
    if agreement:
        raster = agreement_raster(reference, first_prediction, compare_classes=first.evaluation.matrices.mode == "single")
    figure = page_overlays.page_overlay(panes, reference.width, reference.height, page_image_uri(reference, image_root), agreement=raster)
    if decisions is None:
        plotly_chart(figure, key)
        st.caption(f"Hover a box for its label, score and coordinates; click a class in the legend to show it alone in every pane "
                   f"(click it again: all). {ZOOM_HELP}")
        return
    plotly_chart(figure, key, on_select="rerun", selection_mode="points")
    st.caption(f"Boxes by TIDE's outcome (boxes.csv): hover one for its class, score, outcome, partner box and IoU; click one to light it "
               f"and its partner in the other pane; click an outcome in the legend to show it alone. {ZOOM_HELP}")
