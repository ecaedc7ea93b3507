"""Compare: two models against the same reference (`tore.compare`), and model B read against
model A. Every matrix and bar is clickable and lists the pages behind it."""

import streamlit as st

from tore_engine.core.errors import InputError
from tore_engine.plots.plain_text import plain_for_markdown
from tore_engine.results.comparison import compare
from tore_engine.studio import compare_panels, overlay_panels, panels, url_state
from tore_engine.studio.evaluations import model_against_model, model_evaluation
from tore_engine.studio.messages import show_input_error
from tore_engine.studio.sidebar import Dataset


def both_against_the_reference(dataset: Dataset) -> None:
    a, b = model_evaluation(dataset, "A"), model_evaluation(dataset, "B")
    if a is None or b is None:
        return
    try:
        comparison = compare(a.evaluation, b.evaluation)
    except InputError as error:
        show_input_error(error)
        return
    modes = {a.evaluation.matrices.mode, b.evaluation.matrices.mode}
    classes = list(dict.fromkeys(panels.matrix_classes(a.evaluation) + panels.matrix_classes(b.evaluation)))
    choice = panels.matrix_controls("single" if modes == {"single"} else "dual", classes)
    for model, evaluated in (("A", a), ("B", b)):
        compare_panels.model_matrix(evaluated, model, choice)
    compare_panels.difference(comparison, choice.view)
    compare_panels.outcomes(comparison)
    target = compare_panels.chosen_target()
    labels = {"A": dataset.model_label("A"), "B": dataset.model_label("B")}
    if target is not None:
        compare_panels.target_pages(comparison, target, a, b, labels)

    st.subheader("Reference, A and B on one page")
    deltas = comparison.pages.rename(columns={"f1_a": "F1 A", "f1_b": "F1 B", "b_minus_a": "B − A"}).reset_index()
    overlay_panels.page_picker_table(deltas.sort_values("B − A", kind="stable").head(20), "page-deltas",
                             "Pages where B differs most from A (reduced Foreground F1, B worse first); select one to show it")
    page_id = overlay_panels.page_navigator(a.evaluation)
    cell_a, cell_b = compare_panels.three_pane_cells(target, a, b)
    models = [overlay_panels.PaneModel(a, labels["A"], cell_a), overlay_panels.PaneModel(b, labels["B"], cell_b)]
    if target is not None:
        st.caption(f"Highlighted in each model's pane: its pixels of {plain_for_markdown(target.name())} "
                   "(a target without a single cell is not drawn).")
    regions = overlay_panels.model_regions(models, page_id, compare_panels.target_view(target))
    overlay_panels.page_overlay(models, page_id, dataset.image_root, regions=regions, reference_highlight=False, key="compare-overlay")


def model_b_against_model_a(dataset: Dataset) -> None:
    st.markdown(
        "Model A is taken as the reference and model B as the prediction, in dual-taxonomy mode: rows are "
        "A's classes, columns B's. **Read the recall matrix row by row**: where do A's pixels of each class "
        "go in B's taxonomy? **Read the precision matrix column by column**: what is each of B's classes "
        "made of, in A's terms? No ground truth is involved: this shows how the two taxonomies and models "
        "correspond (as in the TORE article's Heron against nemotron example). Two COCO results lists are read "
        "against the COCO images + categories file given in the sidebar."
    )
    pair = model_against_model(dataset)
    if pair is not None:
        compare_panels.pair_matrices(pair, dataset.image_root)


dataset: Dataset = st.session_state["_dataset"]
url_state.follow_page_request()
st.title("Compare two models")
if dataset.is_demo:
    st.caption("Demo: models A and B are simulated.")
if not {"A", "B"} <= set(dataset.models):
    st.info("Choose two predictions (model A and model B) in the sidebar to compare them.")
    st.stop()
if dataset.reference is None:
    st.info("No reference is set: only model B read against model A is shown.")
    model_b_against_model_a(dataset)
    st.stop()
against_reference, against_each_other = st.tabs(["Both against the reference", "Model B against model A"])
with against_reference:
    both_against_the_reference(dataset)
with against_each_other:
    model_b_against_model_a(dataset)
