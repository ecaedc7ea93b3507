"""Where AP@50 goes, under the scores line of Matrices: TIDE's six error types of the same boxes as
bars of their dAP (report.json's `errors`), a click on one listing the pages with that error, the
most such boxes first (pages.csv's counts). `pages_with_error` is plain pandas (tested without Streamlit)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from tore_engine.metrics.box_outcomes import PAGE_COUNT_COLUMNS
from tore_engine.metrics.matrices import ExactMatrix, MatrixSet
from tore_engine.plots import bars, heatmaps
from tore_engine.plots.plain_text import plain_for_markdown
from tore_engine.results.evaluation import Evaluation
from tore_engine.studio import sections, state, tag_panels
from tore_engine.studio.evaluations import Evaluated
from tore_engine.studio.panels import clickable_chart

ERRORS_OPEN = state.SECTION("errors")  # the section's state (session and URL): drawn only while open


def pages_with_error(evaluation: Evaluation, error: str) -> pd.DataFrame:
    """The pages with at least one box of error type `error`, the most first (ties in page order):
    page, that count, and the page's tp, fp and fn."""
    counts = evaluation.page_counts()
    if counts is None:
        return pd.DataFrame(columns=["page", error, "tp", "fp", "fn"])
    column = counts[:, PAGE_COUNT_COLUMNS.index(error)]
    pages = np.flatnonzero(column)
    order = pages[np.lexsort((pages, -column[pages]))]
    return pd.DataFrame({"page": [evaluation.page_ids[k] for k in order.tolist()], error: column[order],
                         **{name: counts[order, PAGE_COUNT_COLUMNS.index(name)] for name in ("tp", "fp", "fn")}})


def where_ap_goes(evaluated: Evaluated) -> None:
    """The dAP bars and, for the chosen type, its pages; a line saying why when there are no error types."""
    evaluation = evaluated.evaluation
    errors = evaluation.errors
    section = sections.opened("Where AP@50 goes: TIDE's error types of the same boxes", ERRORS_OPEN)
    if section is None:
        return
    with section:
        if errors is None:
            st.caption(f"No error types: {plain_for_markdown(evaluation.errors_reason or 'not computed')}.")
            return
        st.caption(f"AP@50 {errors['ap50']:.4f} (TIDE's, tidecv 1.0.1). Each bar: the AP@50 fixing every error of that type "
                   f"would gain (FalsePos {errors['dap_special']['FalsePos']:+.4f}, FalseNeg {errors['dap_special']['FalseNeg']:+.4f}); "
                   "click one to list its pages.")
        names = list(errors["dap"])
        figure = bars.error_bars(errors, title="dAP per error type")
        clicked = clickable_chart(figure, state.ERROR_BARS, lambda event: bars.clicked_bar(event, names, ["dAP"]))
        st.session_state.setdefault(state.ERROR_TYPE, "")
        if clicked is not None:
            st.session_state[state.ERROR_TYPE] = clicked[0]
        chosen = st.session_state[state.ERROR_TYPE]
        if chosen in names:
            pages = pages_with_error(evaluation, chosen)
            st.caption(f"{len(pages):,} pages with a {chosen} error, the most first")
            st.dataframe(pages, hide_index=True, width="stretch", key=state.ERROR_PAGES)
            tag_panels.tag_listed_pages(evaluated, pages["page"].tolist(), f"error-{chosen}")
        box_matrix(evaluated)


def count_matrices(counts: pd.DataFrame) -> MatrixSet:
    """A matrix of counts as the heatmap draws it: row and column shares beside the counts (0 where
    a row or column is empty; the heatmap leaves those blank)."""
    exact = ExactMatrix.from_integers(counts.to_numpy(dtype=np.int64))
    return MatrixSet([str(name) for name in counts.index], [str(name) for name in counts.columns], counts.to_numpy(dtype=float),
                     exact.recall(), exact.precision())


def box_matrix(evaluated: Evaluated) -> None:
    """The box-level confusion matrix at IoU 0.5; a click on a cell lists its pages, the most boxes first."""
    evaluation = evaluated.evaluation
    counts = evaluation.box_confusion
    if counts is None:
        return
    matrices = count_matrices(counts)
    st.caption("Boxes at IoU 0.5, from TIDE's decisions (boxes.csv): each prediction once, in its partner's row when it is a true "
               "positive or a Cls error, else in the last row; a reference box no true positive or Cls error claims, in the last "
               "column. Click a cell to list its pages.")
    figure = heatmaps.matrix_heatmap(matrices, "confusion", title="Box-level confusion matrix (boxes, IoU 0.5)", unit="boxes")
    clicked = clickable_chart(figure, state.BOX_MATRIX, lambda event: heatmaps.clicked_cell(event, matrices.rows, matrices.columns))
    if clicked is not None:
        st.session_state[state.BOX_CELL] = f"{clicked[0]}|{clicked[1]}"
    row, separator, column = st.session_state.get(state.BOX_CELL, "").partition("|")
    if separator and row in matrices.rows and column in matrices.columns:
        pages = evaluation.pages_for_box_cell(row, column)
        st.caption(f"{plain_for_markdown(row)} → {plain_for_markdown(column)}: {int(pages['boxes'].sum()):,} boxes on {len(pages):,} pages, the most first")
        st.dataframe(pages, hide_index=True, width="stretch", key=state.BOX_CELL_PAGES)
        tag_panels.tag_listed_pages(evaluated, pages["page"].tolist(), "box-cell")
