"""Matrices: confusion, recall and precision heatmaps; click a cell to list the pages behind it."""

import streamlit as st

from tore_engine.comparison import mean_scores
from tore_engine.studio import figures, panels
from tore_engine.studio.evaluations import model_evaluation
from tore_engine.studio.sidebar import DEMO_NOTE, Dataset

dataset: Dataset = st.session_state["_dataset"]
st.title("TORE matrices")
if dataset.is_demo:
    st.info(DEMO_NOTE)
model = panels.model_picker(dataset)
evaluated = model_evaluation(dataset, model)
if evaluated is not None:
    evaluation = evaluated.evaluation
    st.fragment(panels.matrix_explorer)(evaluated, model)
    per_class = evaluation.matrices.per_class
    if per_class:
        st.subheader("Per-class scores")
        st.plotly_chart(figures.per_class_bars(per_class, title=evaluated.title), key=f"bars-{model}", config=panels.CHART_CONFIG)
        means = mean_scores(per_class)
        st.caption(
            f"Unweighted means over the {len(per_class)} classes shown (Background excluded; a class without "
            f"support or without predictions counts as 0): recall {means['recall']:.3f}, precision "
            f"{means['precision']:.3f}, F1 {means['f1']:.3f}. Each class's recall and precision are the "
            "diagonal cells of the recall and precision matrices."
        )
    panels.warnings_expander(evaluation)
