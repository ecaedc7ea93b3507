"""Runs: the saved evaluations under a folder of the data root, and the history of a reference (`studio.runs`)."""

import streamlit as st

from tore_engine.studio import runs

st.title("Saved runs")
runs.runs_view()
