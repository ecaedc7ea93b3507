"""Streamlit building blocks of the matrix views: the model picker, the matrix controls, the
clickable matrix with the pages behind a cell, tables of pages that open in Overlays, and the
warnings list.

They wire session state to the figure builders and the engine's results; they compute nothing.
The chosen cell lives in one place, `st.session_state[state.CELL]` (`row|column`, the URL's `cell`),
whichever control chose it: a heatmap click, the pair of class pickers, a table, the Overlays
page's highlight picker.
"""

from __future__ import annotations

import functools
import io
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from tore_engine.core.text_safety import write_csv
from tore_engine.metrics.box_outcomes import PAGE_COUNT_COLUMNS
from tore_engine.metrics.matrices import (
    ABSENT,
    NEVER_PREDICTED,
    PREDICTED_ONLY,
    REDUCED_CLASSES,
    VIEWS,
    ClassScores,
    MatrixSet,
    class_means,
)
from tore_engine.plots import bars, heatmaps
from tore_engine.plots.plain_text import plain_for_markdown
from tore_engine.results.drilldown import class_pages, top_confusions
from tore_engine.results.evaluation import Evaluation, ShownMatrices, shown_matrices
from tore_engine.scorers.common import format_score
from tore_engine.studio import documents, gallery, sections, state, tables, tag_panels
from tore_engine.studio.axis_names import axis_names, renamed
from tore_engine.studio.evaluations import Evaluated, model_evaluation, side_label
from tore_engine.studio.messages import gui_text, pairing_alert, shown_errors
from tore_engine.studio.sidebar import MODELS, Dataset
from tore_engine.writers.outputs import matrix_rows

NO_CLASS = "(choose)"
VIEW_LABELS = {"full": "full", "trimmed": "zero-trimmed", "reduced": "reduced 2x2"}
DEFAULT_VIEWS = {"single": "full", "dual": "trimmed"}  # dual: the full matrix is mostly empty quadrants
SHARED_VIEWS = ("trimmed", "reduced")  # views that read the same in both taxonomy modes
TABLE_ROW_HEIGHT, TABLE_HEADER_HEIGHT, MAX_TABLE_HEIGHT = 35, 38, 400
BLANK_LAYOUT = {"width": 10, "height": 10, "margin": {"l": 0, "r": 0, "t": 0, "b": 0}, "xaxis": {"visible": False}, "yaxis": {"visible": False}}
ZOOM_HELP = "Drag to zoom, double-click to reset; the mode bar pans and downloads the picture as a PNG."
Click = TypeVar("Click")  # what a chart's click reader makes of a click: a cell, a bar


@dataclass(frozen=True)
class MatrixChoice:
    """What the matrix controls chose: the view, the normalisation (a field of `ShownMatrices`),
    the colour scale, whether to hide the diagonal and Background, and the classes to show
    (empty: all)."""

    view: str
    metric: str
    scale: str
    hide_diagonal: bool
    hide_background: bool
    classes: tuple[str, ...]

    def shown(self, evaluation: Evaluation) -> ShownMatrices:
        return shown_matrices(evaluation.matrices, self.view, self.classes or None, hide_background=self.hide_background)


def picked_evaluation(dataset: Dataset) -> tuple[str, Evaluated | None]:
    """The model picker (one of the models that are set: A, B, ...) and the chosen model's
    evaluation. The picker is drawn once the evaluation is made, in its place above it, so that
    it names each model after its layout from the first run on (a layout's name is known once it
    was read)."""
    models = [model for model in MODELS if model in dataset.models] or ["A"]
    binding = state.bind(state.MODEL, models[0], models)
    picker = st.empty()
    evaluated = model_evaluation(dataset, st.session_state[state.MODEL])
    labels = {model: plain_for_markdown(side_label(dataset, model)) for model in models}
    model = picker.radio("Model", models, format_func=labels.__getitem__, horizontal=True, label_visibility="collapsed",  # its choices say "model A"
                         **binding)
    return model, evaluated


@dataclass(frozen=True)
class Picked:
    """What the model and document pickers chose: the model, its whole evaluation (box outcomes and
    the documents' table are the whole's) and the evaluation shown (narrowed to the document)."""

    model: str
    whole: Evaluated
    shown: Evaluated


def picked_model_and_document(dataset: Dataset) -> Picked | None:
    """The model and document pickers on one line (Matrices and Overlays), a pairing alert when few
    pages pair; None when the chosen model has no evaluation (its message is shown)."""
    model_column, document_column = st.columns([3, 2], vertical_alignment="bottom")
    with model_column:
        model, evaluated = picked_evaluation(dataset)
    if evaluated is None:
        return None
    pairing_alert(evaluated.evaluation, evaluated.title)
    with document_column:
        return Picked(model, evaluated, documents.document_filter(evaluated))


def seed_view(mode: str) -> None:
    """Open each taxonomy mode on the view last chosen in it (at first its default: trimmed in dual
    mode), so that moving from a single-taxonomy model to a dual one does not keep the full matrix.
    The trimmed and reduced views read the same in both modes: choosing one (a click, or a link)
    chooses it for both, so a reduced view stays reduced on the way to a dual model or to Compare."""
    memory = st.session_state.setdefault(state.VIEW_BY_MODE, {})
    chosen = st.session_state.get(state.VIEW)
    if state.VIEW_SHOWN not in st.session_state:  # the first matrix of the session: a link's view is a choice too
        given = state.given_values(state.VIEW)
        chosen = given[-1] if given else None
    if chosen in SHARED_VIEWS and chosen != st.session_state.get(state.VIEW_SHOWN):  # the user's choice since the last run
        memory.update(dict.fromkeys(DEFAULT_VIEWS, chosen))
    if st.session_state.get(state.VIEW_MODE, mode) != mode:
        st.session_state[state.VIEW] = memory.get(mode, DEFAULT_VIEWS[mode])
    st.session_state[state.VIEW_MODE] = mode
    state.bind(state.VIEW, DEFAULT_VIEWS[mode], list(VIEWS))


def view_control(mode: str) -> str:
    """The matrix view: full, zero-trimmed or reduced 2x2."""
    seed_view(mode)
    return view_radio(mode)


def view_radio(mode: str) -> str:
    """`view_control`'s radio, once `seed_view` has run in this run (a second seeding would take the
    mode's remembered view for the user's choice)."""
    view = st.radio("Matrix", VIEWS, key=state.VIEW, format_func=VIEW_LABELS.__getitem__, horizontal=True, persist_state="session")
    st.session_state[state.VIEW_BY_MODE][mode] = st.session_state[state.VIEW_SHOWN] = view
    return view


def display_label(view: str, metric: str, scale: str, hide_diagonal: bool, hide_background: bool, subset: list[str], classes: int) -> str:
    """What the display popover's button says: its choices, so that a closed popover hides none."""
    shown = [f"{VIEW_LABELS[view]} matrix", heatmaps.NORMALISATIONS[metric], f"{scale} colour scale",
             *(["diagonal hidden"] if hide_diagonal else []), *(["Background hidden"] if hide_background else []),
             f"{len(subset)} of {classes} classes" if subset else f"all {classes} classes"]
    return f"Display: {', '.join(shown)}"


def matrix_controls(mode: str, classes: list[str]) -> MatrixChoice:
    """View, normalisation, colour scale, hide diagonal / Background and a class subset, in one
    popover whose button says them all: on a laptop the heatmap follows the scores line at once.
    Its content is drawn in the browser only while it is open (a new tab mounts one button)."""
    seed_view(mode)
    bound = {key: state.bind(key, choices=choices) for key, choices in ((state.METRIC, heatmaps.METRICS), (state.SCALE, heatmaps.SCALES),
                                                                         (state.HIDE_DIAGONAL, None), (state.HIDE_BACKGROUND, None),
                                                                         (state.CLASSES, classes))}
    session = st.session_state
    diagonal_shown = mode == "single" and session[state.VIEW] != "reduced"
    label = display_label(session[state.VIEW], session[state.METRIC], session[state.SCALE], session[state.HIDE_DIAGONAL] and diagonal_shown,
                          session[state.HIDE_BACKGROUND], session[state.CLASSES], len(classes))
    with st.popover(label, key=state.DISPLAY, width="stretch"):  # in a narrow column the label ends in "…", whole in the open popover
        view = view_radio(mode)
        metric = st.radio("Normalisation", heatmaps.METRICS, horizontal=True, **bound[state.METRIC],
                          format_func=heatmaps.NORMALISATIONS.get,
                          help="none: pixels; row: each cell over its row (recall); column: over its column "
                               "(precision); all: over the matrix total")
        diagonal_shown = mode == "single" and view != "reduced"
        scale = st.selectbox("Colour scale", heatmaps.SCALES, **bound[state.SCALE])
        hide = st.toggle("Hide diagonal", disabled=not diagonal_shown, **bound[state.HIDE_DIAGONAL],
                         help="show only the confusions (single taxonomy)")
        hide_background = st.toggle("Hide Background", **bound[state.HIDE_BACKGROUND],
                                    help="leave out the Background row and column (their pixels stay in every ratio)")
        subset = st.multiselect("Classes to show (empty: all)", classes, **bound[state.CLASSES],
                                help="only these rows and columns; recall stays over the whole row, precision over the whole column")
    return MatrixChoice(view, metric, scale, hide and diagonal_shown, hide_background, tuple(subset))


def dual_mode_note() -> None:
    st.caption(
        "Dual taxonomy: rows are the reference's classes, columns the prediction's, so the diagonal means "
        "nothing. Read the recall matrix row by row (where each reference class goes) and the precision "
        "matrix column by column (what each predicted class is made of). The zero-trimmed view keeps "
        "only the reference x prediction block."
    )


def _new_click(key: str, clicked: Click | None) -> Click | None:
    """`clicked` if it is not the selection this chart already reported (a rerun repeats it)."""
    seen = st.session_state.setdefault(state.CLICKS, {})
    if clicked is None or seen.get(key) == clicked:
        return None
    seen[key] = clicked
    return clicked


@contextmanager
def plotly_loading() -> Iterator[None]:
    """A tab's first run: a blank 10 px chart at the top of the sidebar while the run works, so that
    the browser loads and compiles plotly.js (4.6 MB, about 1.5 s of a new tab on 2 cores) while the
    server still opens or evaluates what the first figure shows, instead of after it (a just-started
    server's first `?saved=` tab at 100,000 pages: 5.5 -> 4.0 s; benchmarks/RESULTS.md). Each run
    keeps the placeholder, so that the sidebar's elements keep their places."""
    place = st.sidebar.empty()
    if not st.session_state.get(state.PRELOADED):
        st.session_state[state.PRELOADED] = True
        place.plotly_chart(go.Figure(layout=BLANK_LAYOUT), key=state.PRELOAD, theme=None, width="content",
                           config={"displayModeBar": False, "staticPlot": True})
    try:
        yield
    finally:
        place.empty()


def plotly_chart(figure: go.Figure, key: str, *, stretch: bool = False, **selection: Any) -> Any:
    """Draw a Plotly figure as the report draws it (no Streamlit theme; the mode bar's zoom, reset
    and PNG download), at its own size or the page's width (`stretch`); `selection`: `on_select`
    and `selection_mode` for a clickable chart."""
    return st.plotly_chart(figure, key=key, theme=None, config=heatmaps.CONFIG, width="stretch" if stretch else "content", **selection)


def clickable_chart(figure: go.Figure, key: str, read_click: Callable[[Any], Click | None], *, stretch: bool = False) -> Click | None:
    """Draw a Plotly figure (`plots.heatmaps`, `plots.bars`) whose clicks on a point rerun the app;
    the new click, read by `read_click(event)`."""
    event = plotly_chart(figure, key, stretch=stretch, on_select="rerun", selection_mode="points")
    return _new_click(key, read_click(event))


def heatmap(matrices: MatrixSet, choice: MatrixChoice, mode: str, title: str, key: str, names: dict[str, str] | None = None,
            note: str = "") -> tuple[str, str] | None:
    """Draw one clickable matrix, its classes shown as `names` says (`axis_names`); returns the
    cell clicked (by its class names), if a new click arrived."""
    figure = heatmaps.matrix_heatmap(renamed(matrices, names or {}), choice.metric, scale=choice.scale, hide_diagonal=choice.hide_diagonal,
                                     outline_diagonal=mode == "single", title=title, note=note, height=heatmaps.HEIGHT)
    return clickable_chart(figure, key, lambda event: heatmaps.clicked_cell(event, matrices.rows, matrices.columns))


def chosen_cell(rows: list[str], columns: list[str]) -> tuple[str, str] | None:
    """The session's cell (the URL's `cell` on a first run), if it is a cell of these classes."""
    state.bind(state.CELL)
    row, separator, column = st.session_state[state.CELL].partition("|")
    return (row, column) if separator and row in rows and column in columns else None


def choose_cell(cell: tuple[str, str] | None) -> None:
    st.session_state[state.CELL] = state.cell_text(cell)


def _cell_from_pickers() -> None:
    row, column = st.session_state[state.CELL_ROW], st.session_state[state.CELL_COLUMN]
    if NO_CLASS not in (row, column):
        choose_cell((row, column))


def _cell_pickers(rows: list[str], columns: list[str]) -> tuple[str, str] | None:
    """The keyboard-accessible pair of selectboxes, in a popover whose button names the session's
    cell; they show that cell and choose it."""
    cell = chosen_cell(rows, columns)
    if st.session_state[state.CELL] and cell is None and state.given_values(state.CELL) and not st.session_state.get(state.CELL_CHECKED):
        state.ignore(state.CELL, "not a cell of this matrix")
    st.session_state[state.CELL_CHECKED] = True
    if cell is not None:
        st.session_state[state.CELL_ROW], st.session_state[state.CELL_COLUMN] = cell
    state.seed(state.CELL_ROW, NO_CLASS, [NO_CLASS, *rows])
    state.seed(state.CELL_COLUMN, NO_CLASS, [NO_CLASS, *columns])
    label = "Choose a cell by name" + ("" if cell is None else f": {plain_for_markdown(cell[0])} → {plain_for_markdown(cell[1])}")
    with st.popover(label, key=state.CELL_PICKERS):  # two widgets mounted only while it is open
        st.selectbox("Reference class (row)", [NO_CLASS, *rows], key=state.CELL_ROW, persist_state="session", on_change=_cell_from_pickers)
        st.selectbox("Predicted class (column)", [NO_CLASS, *columns], key=state.CELL_COLUMN, persist_state="session", on_change=_cell_from_pickers)
    return cell


def _table_height(rows: int) -> int:
    return min(MAX_TABLE_HEIGHT, TABLE_HEADER_HEIGHT + TABLE_ROW_HEIGHT * rows)


@dataclass(frozen=True)
class OpenTarget:
    """Where a page of a table opens: a model's Overlays page, with this cell of this view
    highlighted (none: no cell), from a button with this label."""

    model: str
    cell: tuple[str, str] | None = None
    view: str | None = None
    label: str = "Open in Overlays"

    def open(self, page_id: str) -> None:
        state.request_page(page_id, self.model, self.cell, self.view)


def _open_selected_row(table_key: str, page_ids: list[str], target: OpenTarget) -> None:
    rows = st.session_state[table_key].selection.rows
    if rows:
        target.open(page_ids[rows[0]])


def pages_to_open(table: pd.DataFrame, key: str, targets: list[OpenTarget], column_config: dict | None = None) -> None:
    """A table of pages (a `page` column first), `tables.PAGE_ROWS` rows at a time: selecting a row opens
    that page as the first target says; a page picker and one button a target do the same from
    the keyboard."""
    table_key = state.PAGES_TABLE(key)
    shown = tables.rows_shown(table, key)
    st.dataframe(shown, key=table_key, hide_index=True, selection_mode="single-row", width="stretch", height=_table_height(len(shown)),
                 on_select=functools.partial(_open_selected_row, table_key, shown["page"].tolist(), targets[0]),
                 column_config=tables.pinned_first(shown, column_config))
    pick, *buttons = st.columns([4, *[1.6] * len(targets)], vertical_alignment="bottom")
    page_id = pick.selectbox("Page to open", shown["page"].tolist(), key=state.OPEN_PAGE(key))
    for button, target in zip(buttons, targets):
        button.button(target.label, key=state.OPEN_BUTTON(key, target.model), type="primary", on_click=target.open, args=(page_id,))


CELL_PAGES_CONFIG = {"contribution (pixels)": tables.pixel_column(), "share of the cell": tables.percent_column(bar=True)}


def with_box_counts(evaluation: Evaluation, table: pd.DataFrame) -> pd.DataFrame:
    """A table of pages (its `page` column) with each page's TP, FP, FN and error counts after its
    columns (pages.csv's), when the evaluation has them."""
    counts = evaluation.page_counts()
    if counts is None:
        return table
    at = pd.Index(evaluation.page_ids).get_indexer(table["page"])
    return table.assign(**{name: counts[at, k] for k, name in enumerate(PAGE_COUNT_COLUMNS)})


def page_list(evaluated: Evaluated, view: str, cell: tuple[str, str], model: str, key: str) -> None:
    """The pages behind a cell, largest contribution first, with their box counts; a row opens the
    page with the cell highlighted; a popover tags them all."""
    evaluation = evaluated.evaluation
    row, column = cell
    pages = evaluation.pages_for_cell(row, column, view=view)
    shown_row, shown_column = plain_for_markdown(row), plain_for_markdown(column)
    if pages.empty:
        st.info(f"No page contributes to cell {shown_row} → {shown_column}: it is 0.")
        return
    st.markdown(f"**Contributing pages: {len(pages):,}** for reference **{shown_row}** → prediction **{shown_column}**. "
                "Select a row, or pick a page below, to open it in Overlays with the cell's pixels highlighted.")
    table = pages.set_axis(["page", "contribution (pixels)", "share of the cell"], axis=1)
    table["share of the cell"] = tables.as_percent(table["share of the cell"])
    table = with_box_counts(evaluation, table)
    pages_to_open(table, f"{key}-{row}-{column}", [OpenTarget(model, cell, view)], CELL_PAGES_CONFIG)
    tag_panels.tag_listed_pages(evaluated, table["page"].tolist(), f"cell-{key}")


def class_page_list(evaluation: Evaluation, label: str, model: str, key: str) -> None:
    """The pages of one class (a clicked per-class bar), most wrong pixels first."""
    table = pd.DataFrame(class_pages(evaluation, label), columns=["page", "reference pixels", "predicted pixels", "right pixels"])
    st.markdown(f"**Pages with {plain_for_markdown(label)}: {len(table):,}**, most wrong pixels first "
                "(reference + predicted − 2 × right). Select one to open it in Overlays.")
    if len(table):
        config = {name: tables.pixel_column() for name in table.columns[1:]}
        pages_to_open(table, f"{key}-{label}", [OpenTarget(model, (label, label), "full")], config)


def matrix_csv(matrices: MatrixSet, metric: str) -> str:
    """The shown matrix as CSV, as `tore evaluate` writes it: reference classes down, predicted
    classes across, no name read as a formula."""
    text = io.StringIO()
    write_csv(text, matrix_rows(matrices.rows, matrices.columns, getattr(matrices, metric)))
    return text.getvalue()


def _choose_listed_cell(table_key: str, cells: list[tuple[str, str]]) -> None:
    rows = st.session_state[table_key].selection.rows
    if rows:
        choose_cell(cells[rows[0]])


LARGEST_OPEN = state.SECTION("largest")  # the section of the largest cells (session state and URL)
WARNINGS_OPEN = state.SECTION("warnings")  # the section of the input warnings
LARGEST_CONFIG = {"pixels": tables.pixel_column(), "row % (recall)": tables.percent_column(),
                  "column % (precision)": tables.percent_column()}


def _largest_cells(matrices: MatrixSet, key: str) -> None:
    """The ten largest cells off the diagonal; selecting one chooses that cell."""
    cells = top_confusions(matrices, count=10)
    if not cells:
        return
    section = sections.opened("Largest cells off the diagonal (top 10)", LARGEST_OPEN,
                              expanded=len(matrices.rows) > heatmaps.CELL_TEXT_LIMIT)
    if section is None:
        return
    with section:
        table = pd.DataFrame(cells, columns=["reference", "prediction", "pixels", "row % (recall)", "column % (precision)"])
        for name in ("row % (recall)", "column % (precision)"):
            table[name] = tables.as_percent(table[name])
        table_key = state.LARGEST(key)
        st.dataframe(table, key=table_key, hide_index=True, selection_mode="single-row", width="stretch", column_config=LARGEST_CONFIG,
                     on_select=functools.partial(_choose_listed_cell, table_key, [(row, column) for row, column, *_ in cells]))


def matrix_classes(evaluation: Evaluation) -> list[str]:
    """The classes a subset may choose from: every matrix class but Background (its own toggle)."""
    return [name for name in evaluation.matrices.classes if name != REDUCED_CLASSES[0]]


def cell_view(view: str) -> str:
    """The view whose cells a view's cell names: full and trimmed cells are full-matrix cells."""
    return "reduced" if view == "reduced" else "full"


def cell_classes(evaluation: Evaluation, view: str) -> list[str]:
    """The classes that name a view's cells: every matrix class, or Background and Foreground."""
    return evaluation.matrices.classes if cell_view(view) == "full" else REDUCED_CLASSES


MAX_SHOWN_CLASSES = 100  # rows or columns a heatmap draws: more cells than a screen shows would be a message of hundreds of megabytes


def bounded(evaluation: Evaluation, choice: MatrixChoice, matrices: ShownMatrices) -> tuple[ShownMatrices, str]:
    """The matrix to draw: as chosen, or, beyond `MAX_SHOWN_CLASSES` rows or columns, the classes
    with the most pixels (their rows and columns as in the whole view), with a note saying so."""
    if max(len(matrices.rows), len(matrices.columns)) <= MAX_SHOWN_CLASSES:
        return matrices, ""
    pixels: dict[str, float] = {}
    for names, totals in ((matrices.rows, matrices.row_pixels), (matrices.columns, matrices.column_pixels)):
        for name, total in zip(names, (totals if totals is not None else [0.0] * len(names))):
            pixels[name] = pixels.get(name, 0.0) + float(total)
    kept = sorted(pixels, key=lambda name: -pixels[name])[:MAX_SHOWN_CLASSES]
    classes = len(set(matrices.rows) | set(matrices.columns))
    trimmed = shown_matrices(evaluation.matrices, choice.view, kept, hide_background=choice.hide_background)
    return trimmed, (f"{classes:,} classes: the {MAX_SHOWN_CLASSES} with the most pixels drawn; choose others under "
                     "Display, Classes to show (the CSV has every class)")


def shown_matrix(evaluated: Evaluated, choice: MatrixChoice, mode: str, key: str, title: str | None = None) -> tuple[str, str] | None:
    """One evaluation's matrix as chosen (or why nothing is shown); the cell clicked, if any."""
    matrices = choice.shown(evaluated.evaluation)
    if not (matrices.rows and matrices.columns):
        st.info("None of the chosen classes is a row or a column of this matrix: choose others, or none to show all.")
        return None
    matrices, note = bounded(evaluated.evaluation, choice, matrices)
    title = title or f"{heatmaps.NORMALISATIONS[choice.metric]}, {VIEW_LABELS[choice.view]}, {mode} taxonomy: {evaluated.title}"
    return heatmap(matrices, choice, mode, title, f"{key}-{choice.view}-{choice.metric}-{choice.scale}-{choice.hide_diagonal}",
                   axis_names(evaluated.evaluation), note)


@shown_errors()
def matrix_explorer(evaluated: Evaluated, model: str, choice: MatrixChoice, image_root: Path) -> None:
    """Clickable heatmap (of the view `matrix_controls` chose), cell pickers and the page list of
    one evaluation, its pages' gallery drawn from the images under `image_root` (run as a
    fragment, so it shows its own errors)."""
    state.follow_page_request()
    evaluation = evaluated.evaluation
    mode = evaluation.matrices.mode
    if mode == "dual":
        dual_mode_note()
    clicked = shown_matrix(evaluated, choice, mode, state.HEATMAP(model))
    if clicked is not None:
        choose_cell(clicked)
    st.caption(f"Click a cell (or choose it by name below) to list the pages behind it. {ZOOM_HELP}")
    matrices = choice.shown(evaluation)
    _largest_cells(matrices, f"{model}-{choice.view}")
    st.download_button("Download this matrix as CSV", matrix_csv(matrices, choice.metric), file_name=f"{choice.metric}_{choice.view}.csv",
                       mime="text/csv", key=state.MATRIX_CSV(model, choice.view, choice.metric))
    cell = _cell_pickers(*_view_classes(evaluation, choice.view))
    if cell is not None:
        page_list(evaluated, choice.view, cell, model, key=f"{model}-{choice.view}")
        gallery.cell_gallery(evaluated, choice.view, cell, model, key=f"{model}-{choice.view}", image_root=image_root)
    per_class_scores(evaluated, model, choice.classes)
    state.publish_url()


def per_class_rows(evaluation: Evaluation, classes: tuple[str, ...]) -> dict[str, dict[str, float | None]]:
    """Each class's recall, precision and F1 (single taxonomy), and its AP and AR@100 when the
    evaluation has mAP (None for a class with no box on either side): of the classes shown (the
    matrix's class subset, all when empty)."""
    boxes = evaluation.map.per_class if evaluation.map is not None else None
    return {name: {**scores, **({} if boxes is None else dict(zip(("ap", "ar_100"), boxes.get(name, (None, None)))))}
            for name, scores in _class_scores(evaluation, classes).items()}


def _class_scores(evaluation: Evaluation, classes: tuple[str, ...]) -> dict[str, ClassScores]:
    """TORE's recall, precision and F1 of each class shown (all when `classes` is empty), None
    where undefined (`matrices.per_class_scores`)."""
    per_class = evaluation.matrices.per_class or {}
    return {name: scores for name, scores in per_class.items() if not classes or name in classes}


def undefined_caption(evaluation: Evaluation, shown: Collection[str]) -> str:
    """Which of the classes shown have a score undefined, and why, case by case."""
    cases = {PREDICTED_ONLY: "no reference pixel, so no recall bar, and not in the means",
             NEVER_PREDICTED: "no predicted pixel, so no precision bar", ABSENT: "no pixel on either side, so no bar"}
    found = evaluation.matrices.class_cases()
    return " ".join(f"{case.capitalize()} ({why}): {', '.join(names)}." for case, why in cases.items()
                    if (names := [plain_for_markdown(name) for name in shown if found.get(name) == case]))


def per_class_scores(evaluated: Evaluated, model: str, classes: tuple[str, ...]) -> None:
    """Recall, precision and F1 of each class shown (the matrix's class subset; single taxonomy),
    with AP and AR@100 beside them when the evaluation has mAP, their means over the classes shown
    that the reference has, each score where defined; a click on any bar lists the pages of its class."""
    evaluation = evaluated.evaluation
    per_class = per_class_rows(evaluation, classes)
    if not per_class:
        return
    st.subheader("Per-class scores")
    count = len(per_class)
    if count > bars.MAX_CLASSES:
        st.caption(f"{len(per_class):,} classes: the bars of the first {bars.MAX_CLASSES} drawn; choose others under Display, Classes to show.")
        per_class = dict(list(per_class.items())[: bars.MAX_CLASSES])
    clicked = clickable_chart(bars.per_class_bars(per_class, title=evaluated.title), state.CLASS_BARS(model),
                              lambda event: bars.clicked_bar(event, list(per_class), bars.bar_series(per_class)), stretch=True)
    if clicked is not None:
        st.session_state[state.CLASS_BAR(model)] = clicked[0]
    present = set(evaluation.matrices.present_classes())
    means = class_means({name: scores for name, scores in _class_scores(evaluation, classes).items() if name in present})
    subset = " chosen in Classes to show" if classes else ""
    boxes = (" AP and AR@100 (paler) are mAP's, of the boxes ranked by score (COCO-style, IoU 0.50:0.95, 100 boxes a page; "
             "no bar: no reference box of the class, AP undefined)." if "AP" in bars.bar_series(per_class) else "")
    precision_over = "" if means["precision_classes"] == means["classes"] else f" (precision over the {means['precision_classes']} of them predicted)"
    st.caption(
        f"Unweighted means over the {means['classes']} classes shown{subset} that the reference has (Background excluded; an "
        f"undefined score is left out, never counted as 0){precision_over}: recall {format_score(means['recall'], 3)}, precision "
        f"{format_score(means['precision'], 3)}, F1 {format_score(means['f1'], 3)}. Each class's recall and precision are the "
        f"diagonal cells of the recall and precision matrices. {undefined_caption(evaluation, per_class)}{boxes} "
        "Click a bar to list the pages of its class."
    )
    if (label := st.session_state.get(state.CLASS_BAR(model))) in per_class:
        class_page_list(evaluation, label, model, key=state.CLASS_PAGES(model))


def _view_classes(evaluation: Evaluation, view: str) -> tuple[list[str], list[str]]:
    """The rows and columns of a whole view (the class pickers offer every cell, shown or not)."""
    matrices = shown_matrices(evaluation.matrices, view)
    return matrices.rows, matrices.columns


def warnings_expander(evaluation: Evaluation) -> None:
    """The input warnings, a screen at a time (only the rows shown are put in the app's words:
    100,000 pages may have as many warnings)."""
    warnings = evaluation.input_warnings
    if not warnings:
        return
    section = sections.opened(f"{len(warnings):,} input warnings (the evaluation went on)", WARNINGS_OPEN)
    if section is None:
        return
    with section:
        shown = [{**warning.to_json(), "message": gui_text(warning.message)} for warning in warnings[tables.shown_range(len(warnings), "warnings")]]
        st.dataframe(pd.DataFrame(shown, columns=["page", "box", "side", "message"]), hide_index=True, width="stretch")
