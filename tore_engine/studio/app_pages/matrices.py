"""Matrices: TORE's Foreground scores beside mAP; confusion, recall and precision heatmaps; click a
cell to list the pages behind it, a per-class bar for the pages of that class (both in one
fragment, so that the classes chosen for the matrix are the chart's too); the operating point
(a click on a point evaluates at its minimum score); every page in one table.

On a laptop's first screen (1280 x 800) the whole heatmap of up to 12 classes shows: the Display
popover (view, normalisation, colour scale, classes: its button says them) beside the title, one
line of pickers (model, document), one line of scores, then the matrix; the documents' table and
mAP's notes come after it. A change of display reruns the page (its popover is outside the
fragment, which cannot hold widgets drawn beside the title)."""

import streamlit as st

from tore_engine.studio import documents, downloads, error_views, map_views, page_tables, panels, sweep_view
from tore_engine.studio.sidebar import Dataset


def page(dataset: Dataset) -> None:
    """The Matrices page of `dataset`."""
    title_column, display_column = st.columns([1, 1], vertical_alignment="center")
    title_column.title("TORE matrices")
    picked = panels.picked_model_and_document(dataset)
    if picked is None:
        return
    model, whole, evaluated = picked.model, picked.whole, picked.shown
    with display_column:
        choice = panels.matrix_controls(evaluated.evaluation.matrices.mode, panels.matrix_classes(evaluated.evaluation))
    fill_map_scores = map_views.scores_line(evaluated)
    st.fragment(panels.matrix_explorer)(evaluated, model, choice, dataset.image_root)
    fill_map_scores()  # mAP's summary made while the browser draws the heatmap
    error_views.where_ap_goes(evaluated)
    documents.document_table_view(whole, model)
    sweep_view.operating_point(evaluated, model)
    page_tables.all_pages(evaluated, model)
    panels.warnings_expander(evaluated.evaluation)
    downloads.report_downloads(evaluated, model)
