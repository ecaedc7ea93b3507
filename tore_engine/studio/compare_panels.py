"""Streamlit building blocks of the Compare page: each model's matrix, B minus A, the per-class
outcomes, and the pages behind any of them (`tore_engine.results.comparison`; nothing is computed here).

A click on the difference or on an outcome bar chooses a comparison target, kept in the session:
its pages are listed (A's and B's pixels and B minus A, most changed first) and the three-pane
overlay highlights, in each model's pane, that model's own cell.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import streamlit as st

from tore_engine.plots import bars, heatmaps
from tore_engine.plots.plain_text import plain_for_markdown
from tore_engine.results.comparison import MODELS, OUTCOMES, Comparison, difference_arrays, outcome_cell, outcome_column
from tore_engine.results.evaluation import shown_matrices
from tore_engine.studio import state, tables
from tore_engine.studio.axis_names import axis_names, renamed
from tore_engine.studio.evaluations import Evaluated
from tore_engine.studio.overlay_panels import (
    PaneModel,
    cell_name,
    model_regions,
    page_overlay,
)
from tore_engine.studio.panels import (
    VIEW_LABELS,
    MatrixChoice,
    OpenTarget,
    cell_view,
    clickable_chart,
    dual_mode_note,
    page_list,
    pages_to_open,
    shown_matrix,
)

HALF_WIDTH_COLUMNS = 6  # a difference this narrow fits in half the page
CHANGE_CONFIG = {"A": tables.pixel_column("A (pixels)"), "B": tables.pixel_column("B (pixels)"), "B − A": tables.pixel_column("B − A (pixels)")}
CHANGE_LABELS = {"pixels_a": "A", "pixels_b": "B", "b_minus_a": "B − A"}  # the engine's ASCII columns as shown
SHARE_LABELS = {outcome_column(outcome, model): f"{outcome} {label}" for model, label in zip(MODELS, ("A", "B", "B − A")) for outcome in OUTCOMES}


@dataclass(frozen=True)
class Target:
    """What B minus A was clicked on: a cell of the difference (`view` is the view it was
    subtracted on), or a reference class's outcome (`outcome` set, `column` unused)."""

    view: str
    row: str
    column: str = ""
    outcome: str | None = None

    def name(self) -> str:
        return f"{self.row}: {self.outcome}" if self.outcome else cell_name((self.row, self.column))

    def cell_of(self, comparison: Comparison, model: str) -> tuple[str, str] | None:
        """The cell this target is in model `model`'s (`a` or `b`) own classes (None: no single
        cell, or a label that model lacks)."""
        if self.outcome is None:
            return comparison.model_cell(model, self.view, self.row, self.column)
        return outcome_cell(getattr(comparison, model), self.row, self.outcome)

    def cell_view(self) -> str:
        return cell_view(self.view) if self.outcome is None else "full"


def chosen_target() -> Target | None:
    return st.session_state.get(state.COMPARE_TARGET)


def model_matrix(evaluated: Evaluated, model: str, choice: MatrixChoice, role: str) -> None:
    """One model's matrix at full width, titled with its role (A or B) and its own name; a click
    lists its pages."""
    mode = evaluated.evaluation.matrices.mode
    st.markdown(f"#### {role}: {plain_for_markdown(evaluated.title)}")
    if mode == "dual":
        dual_mode_note()
    clicked = shown_matrix(evaluated, choice, mode, f"compare-{model}")
    key = state.COMPARE_CELL(model, choice.view)
    if clicked is not None:
        st.session_state[key] = clicked
    if (cell := st.session_state.get(key)) is not None:
        page_list(evaluated, choice.view, cell, model, key=state.COMPARE_PAGES(model, choice.view))


def _basis_caption(comparison: Comparison, view: str) -> str:
    basis = comparison.difference_view(view)
    if basis == "reduced" and view != "reduced":
        return (f"The two models' {VIEW_LABELS[view]} matrices have different classes, so they cannot be subtracted cell by cell. "
                "The reduced 2x2 Background/Foreground matrices are taxonomy-invariant (the same numbers in single and dual mode), "
                "so B − A below compares those.")
    if comparison.aligned(view):
        return (f"B − A cell by cell on the {VIEW_LABELS[basis]} matrices, lined up by the models' own labels: they predict one "
                "vocabulary (the same classes, or one declared label set), so a class either model has is shown for both, under "
                "A's name where A has it (a model's class names may differ by their dual-taxonomy prefix).")
    return f"B − A cell by cell on the {VIEW_LABELS[basis]} matrices (both models have the same classes)."


def difference(comparison: Comparison, view: str) -> None:
    """B minus A on the view both share, clearly labelled; a click on a cell lists its pages."""
    st.subheader("Difference B − A")
    basis = comparison.difference_view(view)
    difference_matrices = difference_arrays(comparison, view)
    st.caption(_basis_caption(comparison, view) + " Red: B lower, blue: B higher. Click a cell to list the pages behind it.")
    narrow = len(difference_matrices.columns) <= HALF_WIDTH_COLUMNS
    # a wide difference: recall and precision in tabs, only the open one drawn (the browser drew a
    # hidden tab's chart all the same: one of Compare's six)
    metrics = ("recall", "precision")
    if narrow:
        containers = dict(zip(metrics, st.columns(2)))
    else:
        containers = {metric: tab for metric, tab in zip(metrics, st.tabs(list(metrics), key=state.DIFFERENCE_TAB, on_change="rerun")) if tab.open}
    for metric, container in containers.items():
        with container:
            figure = heatmaps.difference_heatmap(difference_matrices, metric, title=f"B − A, {metric} ({VIEW_LABELS[basis]})",
                                                 width=heatmaps.WIDTH // 2 if narrow else heatmaps.WIDTH)
            clicked = clickable_chart(figure, state.DIFFERENCE(metric, basis),
                                      lambda event: heatmaps.clicked_cell(event, difference_matrices.rows, difference_matrices.columns))
            if clicked is not None:
                st.session_state[state.COMPARE_TARGET] = Target(basis, *clicked)


def outcomes(comparison: Comparison) -> None:
    """For each reference class, where its pixels go in A and in B (works across taxonomies); a
    click on a bar lists the pages behind it."""
    st.subheader("Per reference class: where its pixels go")
    per_class = comparison.per_class
    if per_class.empty:
        st.caption("No reference class has pixels in both evaluations.")
        return
    st.caption("For each reference class, the share of its pixels predicted as Background, as its own class (the predicted "
               "class of the same name, case aside) and as anything else, in A and in B: this reads the same when the two models use "
               "different classes. Bars are B − A; click one to list the pages behind it.")
    figure = bars.outcome_bars(per_class, title="B − A per reference class")
    clicked = clickable_chart(figure, state.OUTCOMES, lambda event: bars.clicked_bar(event, per_class.index.tolist(), list(OUTCOMES)), stretch=True)
    if clicked is not None:
        st.session_state[state.COMPARE_TARGET] = Target("full", clicked[0], outcome=clicked[1])
    with st.expander("The shares as a table (A, B and B − A)"):
        shown = per_class.rename(columns=SHARE_LABELS).reset_index()
        for name in shown.columns[1:]:
            shown[name] = tables.as_percent(shown[name])
        st.dataframe(shown, hide_index=True, width="stretch", column_config=tables.pinned_first(shown, {name: tables.percent_column() for name in shown.columns[1:]}))


def error_types(comparison: Comparison) -> None:
    """TIDE's error types of A and B side by side (box counts and the AP@50 each would gain fixed),
    where either model has them (single taxonomy)."""
    st.subheader("Box outcomes: TIDE's error types, A and B")
    if comparison.a.errors is None and comparison.b.errors is None:
        reasons = sorted({reason for reason in (comparison.a.errors_reason, comparison.b.errors_reason) if reason})
        st.caption(f"Neither model has box outcomes: {'; '.join(reasons) or 'not computed'}.")
        return
    st.caption("Each error type's count of boxes and dAP (the AP@50 gained by fixing every error of that type, TIDE's "
               "definition, equal to tidecv 1.0.1) in A and in B, and B − A. FalsePos and FalseNeg are TIDE's special errors "
               "(no count). Blank: the model has no box outcomes (dual taxonomy, or nothing to match).")
    shown = comparison.errors.rename(columns={"count_a": "count A", "count_b": "count B", "count_b_minus_a": "count B − A",
                                              "dap_a": "dAP A", "dap_b": "dAP B", "dap_b_minus_a": "dAP B − A"}).reset_index()
    st.dataframe(shown, hide_index=True, width="stretch", key=state.ERROR_TYPES)


def _pages(comparison: Comparison, target: Target) -> pd.DataFrame:
    if target.outcome is not None:
        return comparison.pages_for_outcome(target.row, target.outcome)
    return comparison.pages_for_cell(target.row, target.column, view=target.view)


def target_pages(comparison: Comparison, target: Target, models: tuple[str, str], labels: dict[str, str]) -> None:
    """The pages behind the chosen target, most changed first, each opening in Overlays with the
    model (`models`: the letters of A and B) chosen by its button, on that model's own cell."""
    table = _pages(comparison, target).rename(columns=CHANGE_LABELS)
    name = plain_for_markdown(target.name())
    if table.empty:
        st.info(f"No page has pixels in {name}, in A or in B.")
        return
    st.markdown(f"**{name}: {len(table):,} pages**, where B differs most from A first (pixels of each model). "
                "Select one to open it in Overlays, or show it below with the three panes.")
    targets = [OpenTarget(model, target.cell_of(comparison, role), target.cell_view(), f"Open {plain_for_markdown(labels[model])}")
               for role, model in zip("ab", models)]
    pages_to_open(table, f"target-{target.name()}", targets, CHANGE_CONFIG)


def three_pane_cells(target: Target | None, comparison: Comparison) -> tuple[tuple[str, str] | None, tuple[str, str] | None]:
    """The cell each model's pane highlights for the chosen target (in its own classes)."""
    if target is None:
        return None, None
    return target.cell_of(comparison, "a"), target.cell_of(comparison, "b")


def target_view(target: Target | None) -> str:
    return "full" if target is None else target.cell_view()




def pair_matrices(pair: Evaluated, image_root: Path, titles: tuple[str, str]) -> None:
    """B read against A (zero-trimmed recall and precision, each full width): a click on a cell
    lists its pages (a screen at a time), and one of them is drawn with the cell's pixels
    highlighted. `titles`: A's and B's names (plain text)."""
    trimmed = shown_matrices(pair.evaluation.matrices, "trimmed")
    shown = renamed(trimmed, axis_names(pair.evaluation))
    for metric in ("recall", "precision"):
        figure = heatmaps.matrix_heatmap(shown, metric, title=f"{metric} (zero-trimmed), B against A")
        clicked = clickable_chart(figure, state.A_VS_B(metric), lambda event: heatmaps.clicked_cell(event, trimmed.rows, trimmed.columns))
        if clicked is not None:
            st.session_state[state.PAIR_CELL] = clicked
    cell = st.session_state.get(state.PAIR_CELL)
    if cell is None or cell[0] not in trimmed.rows or cell[1] not in trimmed.columns:
        st.caption("Click a cell to see the pages where A's class becomes B's, and where on the page.")
        return
    pages = pair.evaluation.pages_for_cell(*cell)
    if pages.empty:
        st.info(f"No page has pixels in {plain_for_markdown(cell_name(cell))}.")
        return
    shown = tables.rows_shown(pages, state.PAIR("pages"))["page"].tolist()
    page_id = st.selectbox(f"Pages of {plain_for_markdown(cell_name(cell))}, most pixels first", shown, key=state.PAIR_PAGE)
    model = PaneModel(pair, f"B: {titles[1]}", cell)
    page_overlay([model], page_id, image_root, regions=model_regions([model], page_id, "full"), reference_title=f"A: {titles[0]}",
                 key=state.PAIR("overlay"))
