"""Scores: the numbers the benchmarks' official evaluators report, beside the TORE matrices.

Each benchmark has its own panel module in `studio/score_panels/` with a `render()` function; the
panels read their own inputs (the real samples in ../shared/data when present, or paths and
uploads), because a benchmark's files are not a layout pair.
"""

import importlib

import streamlit as st

from tore_engine.studio import state
from tore_engine.studio.sidebar import Dataset

PANELS = {
    "docile": ("DocILE", "tore_engine.studio.score_panels.docile"),
    "funsd": ("FUNSD / EC-FUNSD", "tore_engine.studio.score_panels.funsd"),
    "omnidocbench": ("OmniDocBench", "tore_engine.studio.score_panels.omnidocbench"),
}


def page(dataset: Dataset) -> None:  # noqa: ARG001 (every page is called alike)
    """The Scores page (each benchmark reads its own files)."""
    st.title("Benchmark scores")
    benchmark = st.radio("Benchmark", list(PANELS), format_func=lambda key: PANELS[key][0], horizontal=True,
                         **state.bind(state.BENCHMARK, choices=list(PANELS)))
    importlib.import_module(PANELS[benchmark][1]).render()
