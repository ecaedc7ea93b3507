"""Runs: the saved evaluations under a folder of the data root, and the history of a reference (`studio.runs`)."""

import streamlit as st

from tore_engine.studio import runs
from tore_engine.studio.sidebar import Dataset


def page(dataset: Dataset) -> None:  # noqa: ARG001 (every page is called alike)
    """The Runs page (saved evaluations need no dataset)."""
    st.title("Saved runs")
    runs.runs_view()
