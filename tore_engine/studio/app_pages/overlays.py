"""Overlays: reference and prediction side by side on the page image, and where they agree."""

import streamlit as st

from tore_engine.studio import panels, url_state
from tore_engine.studio.evaluations import model_evaluation
from tore_engine.studio.sidebar import Dataset

dataset: Dataset = st.session_state["_dataset"]
st.title("Page overlays")
if dataset.is_demo:
    st.caption("Demo: the predictions of models A and B are simulated.")
model = panels.model_picker(dataset)
evaluated = model_evaluation(dataset, model)
if evaluated is not None:
    page_id = panels.page_navigator(evaluated.evaluation)
    url_state.seed("agree", False)
    agreement = st.toggle("Agreement view", key="agree", persist_state="session",
                          help="a third pane: only in the reference, only in the prediction, in both with the same class, in both with different classes")
    url_state.share(agree=agreement)
    panels.page_scores(evaluated.evaluation, page_id)
    panels.page_overlay([evaluated], [dataset.model_label(model)], page_id, dataset.image_root, agreement=agreement, key="overlay")
