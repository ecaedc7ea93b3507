"""Overlays: reference and prediction side by side on the page image, where they agree, and the
exact pixels behind a matrix cell (the cell chosen in Matrices or Compare travels with the page).
The panes come right after the navigator (on a laptop's first screen); the cell to highlight, its
contribution and the page's scores follow them."""

import streamlit as st

from tore_engine.core.errors import InputError
from tore_engine.plots.plain_text import plain_for_markdown
from tore_engine.studio import navigator, overlay_panels, panels, state, tag_panels
from tore_engine.studio.evaluations import side_label
from tore_engine.studio.messages import show_input_error
from tore_engine.studio.sidebar import REFERENCE, Dataset


def page(dataset: Dataset) -> None:
    """The Overlays page of `dataset`."""
    st.title("Page overlays")
    if dataset.is_demo:
        st.caption("Demo: the predictions of models A and B are simulated.")
    picked = panels.picked_model_and_document(dataset)
    if picked is None:
        return
    whole, evaluated = picked.whole, picked.shown  # the whole's box outcomes: a document's subset keeps none
    evaluation = evaluated.evaluation
    display_column, search_column = st.columns([2, 3], vertical_alignment="bottom")  # one row, so the panes start on a laptop's first screen
    panels.seed_view(evaluation.matrices.mode)
    decided = whole.evaluation.box_outcomes is not None
    with display_column.popover(overlay_panels.display_label(decided), width="stretch"):
        view = panels.view_radio(evaluation.matrices.mode)
        colouring = overlay_panels.box_colouring(decided)
        agreement = st.toggle(
            "Agreement view", **state.bind(state.AGREEMENT),
            help="one more pane: only in the reference, only in the prediction, in both with the same class, in both with different classes")
    classes = panels.cell_classes(evaluation, view)
    try:
        evaluated.layouts()  # a saved evaluation's boxes, read from its inputs now if not read yet (before the tags' COCO export)
        unreadable = None
    except InputError as error:  # its inputs moved: said where its panes would be, with the page's scores
        unreadable = error
    tag_panels.tag_pages(evaluated)
    page_id = navigator.page_navigator(evaluated, panels.chosen_cell(classes, classes), panels.cell_view(view), search_place=search_column)
    decisions = overlay_panels.page_decisions(whole, page_id) if colouring == overlay_panels.BY_OUTCOME else None
    figure_place = st.empty()  # the panes right under the navigator, on a laptop's first screen; what they show chosen below them
    if unreadable is not None:
        with figure_place.container():
            show_input_error(unreadable)
        overlay_panels.page_scores(evaluated, page_id)
        return
    cell = overlay_panels.highlight_picker(evaluated, page_id, view)
    pane = overlay_panels.PaneModel(evaluated, evaluated.title, cell)
    regions = overlay_panels.model_regions([pane], page_id, view)
    if cell is not None:
        overlay_panels.contribution(evaluated, view, page_id, cell, regions[pane.title])
    overlay_panels.page_scores(evaluated, page_id)
    tag_panels.page_tags(evaluated, page_id)
    with figure_place.container():
        overlay_panels.page_overlay([pane], page_id, dataset.image_root, regions=regions, agreement=agreement, key=state.OVERLAY,
                                    reference_title=side_label(dataset, REFERENCE), decisions=decisions)
    if not decided:
        reason = whole.evaluation.errors_reason or "this evaluation keeps no box outcomes (a saved one keeps their counts only)"
        st.caption(f"Boxes coloured by class: no box outcomes to draw ({plain_for_markdown(reason)}).")
