"""Streamlit building blocks shared by the pages: matrix controls, the clickable matrix with its
page list, the page navigator, the page overlay and the warnings list.

They wire session state to the figure builders and the engine's results; they compute nothing.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pandas as pd
import streamlit as st

from tore_engine.agreement import agreement_raster
from tore_engine.drilldown import VIEWS, pages_for_view_cell, top_confusions, view_matrices
from tore_engine.evaluation import DatasetEvaluation
from tore_engine.matrices import MatrixSet
from tore_engine.studio import figures, page_figures, url_state
from tore_engine.studio.evaluations import Evaluated
from tore_engine.studio.messages import shown_errors
from tore_engine.studio.page_images import page_image_uri
from tore_engine.studio.plain_text import plain_for_markdown
from tore_engine.studio.sidebar import MODELS, Dataset

NO_CLASS = "(choose)"
VIEW_LABELS = {"full": "full", "trimmed": "zero-trimmed", "reduced": "reduced 2x2"}
ORDERS = {"file": "file order", "worst": "worst reduced F1 first"}
CHART_CONFIG = {"displaylogo": False, "scrollZoom": False}
HALF_WIDTH_CELL = 28  # cell pixels of a matrix shown in one of two columns


def model_picker(dataset: Dataset, label: str = "Model") -> str:
    """Choose model A or B (only the models that are set)."""
    models = [model for model in MODELS if model in dataset.models] or ["A"]
    url_state.seed("model", models[0], models)
    model = st.radio(label, models, key="model", format_func=lambda model: plain_for_markdown(dataset.model_label(model)),
                     horizontal=True, persist_state="session")
    url_state.share(model=model)
    return model


def matrix_controls(mode: str) -> tuple[str, str, str, bool]:
    """View, metric, colour scale and hide-diagonal choices, in one row."""
    url_state.seed("view", "full" if mode == "single" else "trimmed", list(VIEWS))
    url_state.seed("metric", "recall", list(figures.METRICS))
    url_state.seed("scale", "linear", list(figures.SCALES))
    url_state.seed("hide", False)
    view_column, metric_column, scale_column, hide_column = st.columns([3, 3, 2, 2])
    view = view_column.radio("Matrix", VIEWS, key="view", format_func=VIEW_LABELS.get, horizontal=True, persist_state="session")
    metric = metric_column.radio("Values", figures.METRICS, key="metric", horizontal=True, persist_state="session",
                                 help="confusion: pixels; recall: row-normalised; precision: column-normalised")
    scale = scale_column.selectbox("Colour scale", figures.SCALES, key="scale", persist_state="session")
    hide = hide_column.toggle("Hide diagonal", key="hide", persist_state="session", disabled=mode != "single" or view == "reduced",
                              help="show only the confusions (single taxonomy)")
    url_state.share(view=view, metric=metric, scale=scale, hide=hide)
    return view, metric, scale, hide and mode == "single" and view != "reduced"


def dual_mode_note() -> None:
    st.caption(
        "Dual taxonomy: rows are the reference's classes, columns the prediction's, so the diagonal means "
        "nothing. Read the recall matrix row by row (where each reference class goes) and the precision "
        "matrix column by column (what each predicted class is made of). The zero-trimmed view keeps "
        "only the reference x prediction block."
    )


def heatmap(matrices: MatrixSet, metric: str, scale: str, hide: bool, mode: str, title: str, key: str) -> tuple[str, str] | None:
    """Draw one clickable matrix; returns the cell clicked, if a new click arrived."""
    fig = figures.matrix_heatmap(matrices, metric, scale=scale, hide_diagonal=hide, outline_diagonal=mode == "single", title=title)
    event = st.plotly_chart(fig, on_select="rerun", selection_mode="points", key=key, config=CHART_CONFIG, width="content")
    clicked = figures.clicked_cell(event, matrices.rows, matrices.columns)
    seen = st.session_state.setdefault("_clicks", {})
    if clicked is None or seen.get(key) == clicked:
        return None
    seen[key] = clicked
    return clicked


def _cell_pickers(matrices: MatrixSet, clicked: tuple[str, str] | None) -> tuple[str, str] | None:
    """The keyboard-accessible pair of selectboxes that also shows the clicked cell."""
    rows, columns = [NO_CLASS, *matrices.rows], [NO_CLASS, *matrices.columns]
    if "cell_ref" not in st.session_state and "cell" in st.query_params:
        row, _, column = st.query_params["cell"].partition("|")
        if row in matrices.rows and column in matrices.columns:
            st.session_state["cell_ref"], st.session_state["cell_pred"] = row, column
        else:
            url_state.ignore("cell", "not a cell of this matrix")
    if clicked is not None:
        st.session_state["cell_ref"], st.session_state["cell_pred"] = clicked
    url_state.seed("cell_ref", NO_CLASS, rows)
    url_state.seed("cell_pred", NO_CLASS, columns)
    left, right = st.columns(2)
    row = left.selectbox("Reference class (row)", rows, key="cell_ref", persist_state="session")
    column = right.selectbox("Predicted class (column)", columns, key="cell_pred", persist_state="session")
    if NO_CLASS in (row, column):
        url_state.share(cell=None)
        return None
    url_state.share(cell=f"{row}|{column}")
    return row, column


def page_list(evaluation: DatasetEvaluation, view: str, cell: tuple[str, str], model: str, key: str) -> None:
    """The pages behind a cell, largest contribution first; a row click opens the page."""
    row, column = cell
    pages = pages_for_view_cell(evaluation, view, row, column)
    shown_row, shown_column = plain_for_markdown(row), plain_for_markdown(column)
    if not pages:
        st.info(f"No page contributes to cell {shown_row} → {shown_column}: it is 0.")
        return
    st.markdown(f"**Contributing pages: {len(pages):,}** for reference **{shown_row}** → prediction **{shown_column}**. "
                "Select a row, or pick a page below, to open it in Overlays.")
    table = pd.DataFrame(pages, columns=["page", "contribution (pixels)", "share of the cell"])
    table_key = f"pages-{key}-{row}-{column}"
    st.dataframe(
        table, key=table_key, hide_index=True, selection_mode="single-row", width="stretch",
        on_select=functools.partial(_open_selected_row, table_key, table["page"].tolist(), model),
        height=min(400, 38 + 35 * len(table)),
        column_config={
            "contribution (pixels)": st.column_config.NumberColumn(format="%.1f"),
            "share of the cell": st.column_config.ProgressColumn(format="percent", min_value=0.0, max_value=1.0),
        },
    )
    pick, button = st.columns([4, 1], vertical_alignment="bottom")
    page_id = pick.selectbox("Page to open", table["page"].tolist(), key=f"open-{key}")
    button.button("Open in Overlays", key=f"open-button-{key}", type="primary", on_click=url_state.request_page, args=(page_id, model))


def _open_selected_row(table_key: str, page_ids: list[str], model: str) -> None:
    rows = st.session_state[table_key].selection.rows
    if rows:
        url_state.request_page(page_ids[rows[0]], model)


def matrix_csv(matrices: MatrixSet, metric: str) -> str:
    """The shown matrix as CSV: reference classes down, predicted classes across."""
    return pd.DataFrame(getattr(matrices, metric), index=matrices.rows, columns=matrices.columns).to_csv(index_label="reference \\ prediction")


def _choose_cell(table_key: str, cells: list[tuple[str, str]]) -> None:
    rows = st.session_state[table_key].selection.rows
    if rows:
        st.session_state["cell_ref"], st.session_state["cell_pred"] = cells[rows[0]]


def _largest_cells(matrices: MatrixSet, key: str) -> None:
    """The ten largest cells off the diagonal; selecting one chooses that cell."""
    cells = top_confusions(matrices, count=10)
    if not cells:
        return
    with st.expander("Largest cells off the diagonal (top 10)", expanded=len(matrices.rows) > figures.CELL_TEXT_LIMIT):
        table = pd.DataFrame(cells, columns=["reference", "prediction", "pixels", "row % (recall)", "column % (precision)"])
        table_key = f"largest-{key}"
        st.dataframe(
            table, key=table_key, hide_index=True, selection_mode="single-row", width="stretch",
            on_select=functools.partial(_choose_cell, table_key, [(row, column) for row, column, *_ in cells]),
            column_config={
                "pixels": st.column_config.NumberColumn(format="%.1f"),
                "row % (recall)": st.column_config.NumberColumn(format="percent"),
                "column % (precision)": st.column_config.NumberColumn(format="percent"),
            },
        )


@shown_errors()
def matrix_explorer(evaluated: Evaluated, model: str) -> None:
    """Controls, clickable heatmap, cell pickers and the page list of one evaluation (run as a
    fragment, so it shows its own errors)."""
    url_state.follow_page_request()
    evaluation = evaluated.evaluation
    mode = evaluation.matrices.mode
    view, metric, scale, hide = matrix_controls(mode)
    if mode == "dual":
        dual_mode_note()
    matrices = view_matrices(evaluation.matrices, view)
    key = f"heatmap-{model}-{view}-{metric}-{scale}-{hide}"
    title = f"{metric} ({VIEW_LABELS[view]}, {mode} taxonomy): {evaluated.title}"
    clicked = heatmap(matrices, metric, scale, hide, mode, title, key)
    st.caption("Click a cell (or choose it below) to list the pages behind it. Drag to zoom, double-click to reset.")
    _largest_cells(matrices, key)
    st.download_button("Download this matrix as CSV", matrix_csv(matrices, metric), file_name=f"{metric}_{view}.csv",
                       mime="text/csv", key=f"csv-{key}")
    cell = _cell_pickers(matrices, clicked)
    if cell is not None:
        page_list(evaluation, view, cell, model, key=f"{model}-{view}")
    url_state.publish_url()


def warnings_expander(evaluation: DatasetEvaluation) -> None:
    if not evaluation.warnings:
        return
    with st.expander(f"{len(evaluation.warnings):,} input warnings (the evaluation went on)"):
        st.dataframe(pd.DataFrame([w.to_json() for w in evaluation.warnings]), hide_index=True, width="stretch")


def _step(page_ids: list[str], delta: int) -> None:
    current = st.session_state.get("page")
    position = page_ids.index(current) if current in page_ids else 0
    st.session_state["page"] = page_ids[min(max(position + delta, 0), len(page_ids) - 1)]


def page_navigator(evaluation: DatasetEvaluation) -> str:
    """Previous / next, a searchable page list, and the order: file order or worst reduced F1 first."""
    scores = {row["page"]: row for row in evaluation.page_foreground_scores()}
    url_state.seed("order", "file", list(ORDERS))
    page_ids = list(scores)
    order_column, previous_column, page_column, next_column = st.columns([2, 1, 5, 1], vertical_alignment="bottom")
    order = order_column.selectbox("Order", list(ORDERS), key="order", format_func=ORDERS.get, persist_state="session")
    if order == "worst":
        page_ids.sort(key=lambda page_id: scores[page_id]["f1"])
    url_state.seed("page", page_ids[0], page_ids)
    previous_column.button("◀ Previous", on_click=_step, args=(page_ids, -1), width="stretch")
    next_column.button("Next ▶", on_click=_step, args=(page_ids, 1), width="stretch")
    page_id = page_column.selectbox(
        "Page (type to search by id)", page_ids, key="page", persist_state="session",
        format_func=lambda page_id: f"{page_id}   (reduced F1 {scores[page_id]['f1']:.3f})",
    )
    url_state.share(order=order, page=page_id)
    return page_id


def _choose_page(table_key: str, page_ids: list[str]) -> None:
    rows = st.session_state[table_key].selection.rows
    if rows:
        st.session_state["page"] = page_ids[rows[0]]


def page_picker_table(table: pd.DataFrame, key: str, label: str) -> None:
    """A table of pages (a `page` column first); selecting a row shows that page in the navigator
    below it."""
    with st.expander(label):
        st.dataframe(table, key=key, hide_index=True, selection_mode="single-row", width="stretch",
                     on_select=functools.partial(_choose_page, key, table["page"].tolist()),
                     column_config={name: st.column_config.NumberColumn(format="%.3f") for name in table.columns[1:]})


def page_scores(evaluation: DatasetEvaluation, page_id: str) -> None:
    row = next(row for row in evaluation.page_foreground_scores() if row["page"] == page_id)
    columns = st.columns(4)
    columns[0].metric("Foreground recall", f"{row['recall']:.3f}")
    columns[1].metric("Foreground precision", f"{row['precision']:.3f}")
    columns[2].metric("Foreground F1", f"{row['f1']:.3f}")
    columns[3].metric("Pixels", f"{row['pixels']:,}")


def page_overlay(evaluated_models: list[Evaluated], titles: list[str], page_id: str, image_root: Path, *, agreement: bool, key: str) -> None:
    """The reference and each prediction side by side on the page image (which must lie inside
    `image_root`), synchronised zoom."""
    first = evaluated_models[0]
    reference = first.reference_page(page_id)
    panes = [page_figures.Pane("reference", reference)]
    panes += [page_figures.Pane(title, evaluated.prediction_page(page_id)) for evaluated, title in zip(evaluated_models, titles)]
    raster = None
    if agreement:
        raster = agreement_raster(reference, first.prediction_page(page_id), compare_classes=first.evaluation.matrices.mode == "single")
    fig = page_figures.page_overlay(panes, reference.width, reference.height, page_image_uri(reference, image_root), agreement=raster)
    st.plotly_chart(fig, key=key, config=CHART_CONFIG)
    st.caption("Hover a box for its label, score and coordinates; click a class in the legend to hide it in every pane; "
               "drag to zoom (all panes follow), double-click to reset.")
