"""Models: every model of the dataset against its one reference, side by side (`model_table`);
a row opens its matrices, two rows go to Compare."""

import streamlit as st

from tore_engine.studio import model_table
from tore_engine.studio.evaluations import model_evaluation
from tore_engine.studio.messages import pairing_alert
from tore_engine.studio.sidebar import MODELS, Dataset


def page(dataset: Dataset) -> None:
    """The Models page of `dataset`."""
    st.title("Models against the reference")
    if dataset.is_demo:
        st.caption("Demo: models A and B are simulated. Set more models under Number of models, with paths on the server or uploads.")
    models = [model for model in MODELS if model in dataset.models]
    if dataset.reference is None or not models:
        st.info("Choose a reference and one or more predictions (models A, B, ...) in the sidebar.")
        return
    evaluated = {model: entry for model in models if (entry := model_evaluation(dataset, model)) is not None}
    for entry in evaluated.values():
        pairing_alert(entry.evaluation, entry.title)
    if evaluated:
        model_table.models_view(evaluated)
