"""Matrices: confusion, recall and precision heatmaps; click a cell to list the pages behind it,
a per-class bar for the pages of that class; every page in one table."""

import streamlit as st

from tore_engine.plots import heatmaps as figures
from tore_engine.results.comparison import mean_scores
from tore_engine.studio import page_tables, panels
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
        clicked = panels.clickable_chart(figures.per_class_bars(per_class, title=evaluated.title), f"bars-{model}",
                                         lambda event: figures.clicked_bar(event, list(per_class), list(figures.SCORE_COLOURS)))
        if clicked is not None:
            st.session_state[f"bar-class-{model}"] = clicked[0]
        means = mean_scores(per_class)
        st.caption(
            f"Unweighted means over the {len(per_class)} classes shown (Background excluded; a class without "
            f"support or without predictions counts as 0): recall {means['recall']:.3f}, precision "
            f"{means['precision']:.3f}, F1 {means['f1']:.3f}. Each class's recall and precision are the "
            "diagonal cells of the recall and precision matrices. Click a bar to list the pages of its class."
        )
        if (label := st.session_state.get(f"bar-class-{model}")) in per_class:
            panels.class_page_list(evaluation, label, model, key=f"class-{model}")
    page_tables.all_pages(evaluation, model)
    panels.warnings_expander(evaluation)
