"""Compare: two of the dataset's models (A and B here; any two of models A, B, C, ...) against the
same reference (`tore.compare`, with their mAP side by side), and B read against A. Every matrix and bar is clickable and lists
the pages behind it. Only the open tab runs (its name is in the URL, `cmp`)."""

import streamlit as st

from tore_engine.core.errors import InputError
from tore_engine.plots.plain_text import plain_for_markdown
from tore_engine.results.comparison import compare
from tore_engine.studio import compare_panels, documents, map_views, navigator, overlay_panels, panels, state
from tore_engine.studio.evaluations import Evaluated, model_against_model, model_evaluation, side_label
from tore_engine.studio.messages import pairing_alert, show_input_error
from tore_engine.studio.sidebar import MODELS, REFERENCE, Dataset

TABS = {"reference": "Both against the reference", "pair": "B read against A"}  # URL value -> tab


def both_against_the_reference(dataset: Dataset, first: str, second: str) -> None:
    a, b = model_evaluation(dataset, first), model_evaluation(dataset, second)
    if a is None or b is None:
        return
    for evaluated in (a, b):
        pairing_alert(evaluated.evaluation, evaluated.title)
    document = documents.chosen_document(a)  # one reference: the same documents in both
    a, b = documents.narrowed(a, document), documents.narrowed(b, document)
    try:
        comparison = compare(a.evaluation, b.evaluation)
    except InputError as error:
        show_input_error(error)
        return
    map_views.compare_map(a, b)
    modes = {a.evaluation.matrices.mode, b.evaluation.matrices.mode}
    classes = list(dict.fromkeys(panels.matrix_classes(a.evaluation) + panels.matrix_classes(b.evaluation)))
    choice = panels.matrix_controls("single" if modes == {"single"} else "dual", classes)
    for role, evaluated, model in (("A", a, first), ("B", b, second)):
        compare_panels.model_matrix(evaluated, model, choice, role)
    compare_panels.difference(comparison, choice.view)
    compare_panels.outcomes(comparison)
    compare_panels.error_types(comparison)
    target = compare_panels.chosen_target()
    labels = {first: a.title, second: b.title}
    if target is not None:
        compare_panels.target_pages(comparison, target, (first, second), labels)
    _three_panes(dataset, comparison, target, a, b)


def _three_panes(dataset: Dataset, comparison, target, a: Evaluated, b: Evaluated) -> None:
    st.subheader("Reference, A and B on one page")
    deltas = comparison.pages.rename(columns={"f1_a": "F1 A", "f1_b": "F1 B", "b_minus_a": "B − A"}).reset_index()
    overlay_panels.page_picker_table(deltas.sort_values("B − A", kind="stable").head(20), state.PAGE_DELTAS,
                                     "Pages where B differs most from A (reduced Foreground F1, B worse first); select one to show it")
    page_id = navigator.page_navigator(a)
    cell_a, cell_b = compare_panels.three_pane_cells(target, comparison)
    models = [overlay_panels.PaneModel(a, f"A: {a.title}", cell_a), overlay_panels.PaneModel(b, f"B: {b.title}", cell_b)]
    if target is not None:
        st.caption(f"Highlighted in each model's pane: its pixels of {plain_for_markdown(target.name())} "
                   "(a target without a single cell is not drawn).")
    regions = overlay_panels.model_regions(models, page_id, compare_panels.target_view(target))
    overlay_panels.page_overlay(models, page_id, dataset.image_root, regions=regions, reference_highlight=False, key=state.COMPARE_PAGES("overlay"),
                                reference_title=side_label(dataset, REFERENCE))


def b_read_against_a(dataset: Dataset, first: str, second: str) -> None:
    st.markdown(
        "A is taken as the reference and B as the prediction, in dual-taxonomy mode: rows are "
        "A's classes, columns B's. **Read the recall matrix row by row**: where do A's pixels of each class "
        "go in B's taxonomy? **Read the precision matrix column by column**: what is each of B's classes "
        "made of, in A's terms? No ground truth is involved: this shows how the two taxonomies and models "
        "correspond (as in the TORE article's Heron against nemotron example). Two COCO results lists are read "
        "against the COCO images + categories file given in the sidebar."
    )
    pair = model_against_model(dataset, first, second)
    if pair is not None:
        pairing_alert(pair.evaluation, pair.title)
        compare_panels.pair_matrices(pair, dataset.image_root, (side_label(dataset, first), side_label(dataset, second)))


def _chosen_pair(dataset: Dataset) -> tuple[str, str]:
    """The two models compared (any two that are set; A and B at first): the pickers' values."""
    models = [model for model in MODELS if model in dataset.models]
    state.bind(state.COMPARE_A, models[0], models)
    state.bind(state.COMPARE_B, models[1], models)
    return st.session_state[state.COMPARE_A], st.session_state[state.COMPARE_B]


def _pair_pickers(dataset: Dataset, slots) -> None:
    """The two pickers, drawn once the page's evaluations are made, in their places at its top,
    so that they name each model after its layout from the first run on."""
    models = [model for model in MODELS if model in dataset.models]
    labels = {model: side_label(dataset, model) for model in models}  # a selectbox shows its options as plain text
    for slot, key, label in zip(slots, (state.COMPARE_A, state.COMPARE_B), ("A (the first model)", "B (the second model)")):
        slot.selectbox(label, models, key=key, format_func=labels.__getitem__, persist_state="session")


def _open_tab():
    """The tab shown (kept in the URL as `cmp`) and its container; only its content runs."""
    state.bind(state.COMPARE_TAB, choices=list(TABS))
    tabs = st.tabs(list(TABS.values()), default=TABS[st.session_state[state.COMPARE_TAB]], key=state.COMPARE_TAB_SHOWN, on_change=_tab_changed)
    return next((name, tab) for name, tab in zip(TABS, tabs) if tab.open)


def _tab_changed() -> None:
    st.session_state[state.COMPARE_TAB] = next(name for name, label in TABS.items() if label == st.session_state[state.COMPARE_TAB_SHOWN])


def page(dataset: Dataset) -> None:
    """The Compare page of `dataset`."""
    st.title("Compare two models")
    if dataset.is_demo:
        st.caption("Demo: models A and B are simulated.")
    if len(dataset.models) < 2:
        st.info("Choose two predictions (models A and B, or more) in the sidebar to compare them.")
        return
    slots = [column.empty() for column in st.columns(2)]
    first, second = _chosen_pair(dataset)
    if first == second:  # every chart and table of the page would be drawn twice under one key
        st.info(f"A and B are both {plain_for_markdown(side_label(dataset, first))}: choose two different models to compare them.")
    elif dataset.reference is None:
        st.info("No reference is set: only B read against A is shown.")
        b_read_against_a(dataset, first, second)
    else:
        tab, container = _open_tab()
        with container:
            (both_against_the_reference if tab == "reference" else b_read_against_a)(dataset, first, second)
    _pair_pickers(dataset, slots)
