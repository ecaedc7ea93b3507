"""Compare: two models against the same reference, and model B read against model A."""

import pandas as pd
import streamlit as st

from tore_engine.comparison import comparable, matrix_difference, mean_scores, page_deltas, per_class_deltas
from tore_engine.drilldown import view_matrices
from tore_engine.studio import figures, panels
from tore_engine.studio.evaluations import model_against_model, model_evaluation
from tore_engine.studio.sidebar import Dataset

dataset: Dataset = st.session_state["_dataset"]
st.title("Compare two models")
if dataset.is_demo:
    st.caption("Demo: models A and B are simulated.")
if not {"A", "B"} <= set(dataset.models):
    st.info("Choose two predictions (model A and model B) in the sidebar to compare them.")
    st.stop()
a = model_evaluation(dataset, "A")
b = model_evaluation(dataset, "B")
if a is None or b is None:
    st.stop()
label_a, label_b = dataset.model_label("A"), dataset.model_label("B")
against_reference, against_each_other = st.tabs(["Both against the reference", "Model B against model A"])

with against_reference:
    modes = {a.evaluation.matrices.mode, b.evaluation.matrices.mode}
    view, metric, scale, hide = panels.matrix_controls("single" if modes == {"single"} else "dual")
    left, right = st.columns(2)
    for column, evaluated, model in ((left, a, "A"), (right, b, "B")):
        matrices = view_matrices(evaluated.evaluation.matrices, view)
        mode = evaluated.evaluation.matrices.mode
        with column:
            st.plotly_chart(
                figures.matrix_heatmap(matrices, metric, scale=scale, hide_diagonal=hide and mode == "single",
                                       outline_diagonal=mode == "single", title=f"{metric}, {mode} taxonomy: {evaluated.title}",
                                       max_cell=panels.HALF_WIDTH_CELL),
                key=f"compare-{model}", config=panels.CHART_CONFIG, width="content",
            )

    st.subheader("Difference B − A")
    matrices_a, matrices_b = view_matrices(a.evaluation.matrices, view), view_matrices(b.evaluation.matrices, view)
    if not comparable(matrices_a, matrices_b):
        st.caption(
            f"The two models' {panels.VIEW_LABELS[view]} matrices have different classes, so they cannot be "
            "subtracted cell by cell. The reduced 2x2 Background/Foreground matrices are taxonomy-invariant "
            "(the same numbers in single and dual mode), so the difference below compares those."
        )
        matrices_a, matrices_b = a.evaluation.matrices.reduced, b.evaluation.matrices.reduced
    difference = matrix_difference(matrices_a, matrices_b)
    left, right = st.columns(2)
    for column, name in ((left, "recall"), (right, "precision")):
        column.plotly_chart(figures.difference_heatmap(difference, name, title=f"B − A, {name}", max_cell=panels.HALF_WIDTH_CELL),
                            key=f"difference-{name}", config=panels.CHART_CONFIG, width="content")

    st.subheader("Per-class deltas")
    per_class_a, per_class_b = a.evaluation.matrices.per_class, b.evaluation.matrices.per_class
    if per_class_a and per_class_b:
        deltas = per_class_deltas(per_class_a, per_class_b)
        st.plotly_chart(figures.delta_bars(deltas, title="B − A per class"), key="deltas", config=panels.CHART_CONFIG)
        means_a, means_b = mean_scores(per_class_a), mean_scores(per_class_b)
        st.caption(f"Unweighted means over the {len(per_class_a)} classes (Background excluded): "
                   f"F1 A {means_a['f1']:.3f}, B {means_b['f1']:.3f}.")
    else:
        st.caption("Per-class scores exist only in single-taxonomy mode, for both models; "
                   "here the Foreground scores of the reduced matrices are compared instead.")
        rows = []
        for name, evaluated in ((label_a, a), (label_b, b)):
            reduced = evaluated.evaluation.matrices.reduced
            recall, precision = float(reduced.recall[1, 1]), float(reduced.precision[1, 1])
            rows.append({"model": name, "Foreground recall": recall, "Foreground precision": precision})
        st.dataframe(pd.DataFrame(rows), hide_index=True)

    st.subheader("Reference, A and B on one page")
    deltas = pd.DataFrame(page_deltas(a.evaluation.page_foreground_scores(), b.evaluation.page_foreground_scores()))
    panels.page_picker_table(deltas.sort_values("B − A", kind="stable").head(20), "page-deltas",
                             "Pages where B differs most from A (reduced Foreground F1, B worse first); select one to show it")
    page_id = panels.page_navigator(a.evaluation)
    panels.page_overlay([a, b], [label_a, label_b], page_id, dataset.image_root, agreement=False, key="compare-overlay")

with against_each_other:
    st.markdown(
        "Model A is taken as the reference and model B as the prediction, in dual-taxonomy mode: rows are "
        "A's classes, columns B's. **Read the recall matrix row by row**: where do A's pixels of each class "
        "go in B's taxonomy? **Read the precision matrix column by column**: what is each of B's classes "
        "made of, in A's terms? No ground truth is involved: this shows how the two taxonomies and models "
        "correspond (as in the TORE article's Heron against nemotron example)."
    )
    pair = model_against_model(dataset)
    if pair is not None:
        trimmed = pair.evaluation.matrices.trimmed
        left, right = st.columns(2)
        for column, name in ((left, "recall"), (right, "precision")):
            column.plotly_chart(
                figures.matrix_heatmap(trimmed, name, title=f"{name} (zero-trimmed), B against A", max_cell=panels.HALF_WIDTH_CELL),
                key=f"a-vs-b-{name}", config=panels.CHART_CONFIG, width="content",
            )
