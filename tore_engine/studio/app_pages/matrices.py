"""Matrices: TORE's Foreground scores beside mAP; confusion, recall and precision heatmaps; click a
cell to list the pages behind it, a per-class bar for the pages of that class (both in one
fragment, so that the classes chosen for the matrix are the chart's too); the operating point
(a click on a point evaluates at its minimum score); every page in one table."""

import streamlit as st

from tore_engine.studio import documents, downloads, map_views, page_tables, panels, sweep_view
from tore_engine.studio.sidebar import DEMO_NOTE, Dataset

dataset: Dataset = st.session_state["_dataset"]
st.title("TORE matrices")
if dataset.is_demo:
    st.info(DEMO_NOTE)
model, evaluated = panels.picked_evaluation(dataset)
if evaluated is not None:
    evaluated = documents.document_view(evaluated, model)
    fill_map_scores = map_views.scores_line(evaluated)
    st.fragment(panels.matrix_explorer)(evaluated, model)
    fill_map_scores()  # mAP's summary made while the browser draws the heatmap
    sweep_view.operating_point(evaluated, model)
    page_tables.all_pages(evaluated, model)
    panels.warnings_expander(evaluated.evaluation)
    downloads.report_downloads(evaluated, model)
