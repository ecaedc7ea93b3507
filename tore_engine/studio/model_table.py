"""Several models against one reference, in one table: each model's reduced Foreground recall,
precision and F1, its mAP when the evaluation has one, and each class's F1 (single taxonomy);
a row opens that model's matrices, any two rows go to Compare.

`models_table` is plain pandas (tested without Streamlit); `models_view` wires it to the page.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from tore_engine.metrics.rates import f1_score
from tore_engine.plots.plain_text import plain_for_markdown
from tore_engine.results.evaluation import Evaluation
from tore_engine.studio import state, tables
from tore_engine.studio.evaluations import Evaluated
from tore_engine.studio.map_views import FIGURES

MATRICES_PAGE, COMPARE_PAGE = "matrices", "compare"  # app.PAGES' names
SCORES = tables.FOREGROUND_LABELS
MAP_COLUMNS = {field: FIGURES[field] for field in ("map", "map_50")}
F1_PREFIX = "F1 "  # a class's F1 column: "F1 Text"
TABLE_KEY = state.MODELS_TABLE


def _foreground(evaluation: Evaluation) -> dict[str, float]:
    recall, precision = evaluation.matrices.foreground
    f1 = f1_score(precision, recall)
    return dict(zip(SCORES, (recall, precision, f1)))


def _map(evaluation: Evaluation) -> dict[str, float | None]:
    report = evaluation.map
    return {name: None if report is None else getattr(report, name) for name in MAP_COLUMNS}


def models_table(evaluated: dict[str, Evaluated]) -> pd.DataFrame:
    """One row a model: its letter and title, then the figures a reader compares first, Foreground
    F1, mAP and mAP@50 (empty without boxes to rank, or in dual mode), which a laptop's 720-pixel
    column shows without scrolling; then Foreground recall and precision, one F1 column a class in
    the order the classes first come (empty where a model does not score that class: dual taxonomy,
    or another class list), and the taxonomy mode last."""
    rows = []
    for model, entry in evaluated.items():
        evaluation = entry.evaluation
        per_class = evaluation.matrices.per_class or {}
        rows.append({"model": model, "name": entry.title, **_foreground(evaluation), **_map(evaluation),
                     **{f"{F1_PREFIX}{name}": scores["f1"] for name, scores in per_class.items()}, "taxonomy": evaluation.matrices.mode})
    table = pd.DataFrame(rows).rename(columns={**SCORES, **MAP_COLUMNS}).astype({label: float for label in MAP_COLUMNS.values()})
    first = ["model", "name", SCORES["foreground_f1"], *MAP_COLUMNS.values()]
    return table[first + [name for name in table.columns if name not in first]]


def _column_config(table: pd.DataFrame) -> dict:
    return {name: tables.score_column() for name in table.columns if name in SCORES.values() or name in MAP_COLUMNS.values()
            or name.startswith(F1_PREFIX)}


def _open(page: str, **values: str) -> None:
    """Button callback: go to `page` with these choices (`model`, or `cmp_a` and `cmp_b`)."""
    st.session_state.update(values)
    state.request_switch(page, **values)


def models_view(evaluated: dict[str, Evaluated]) -> None:
    """The table of models; select one row to open its matrices, two to compare them."""
    table = models_table(evaluated)
    st.dataframe(table, key=TABLE_KEY, hide_index=True, selection_mode="multi-row", on_select="rerun", width="stretch",
                 column_config=tables.pinned_first(table, _column_config(table)))
    chosen = [table["model"].iloc[row] for row in st.session_state[TABLE_KEY].selection.rows]
    left, right, note = st.columns([2, 2, 5], vertical_alignment="center")
    left.button("Open its matrices", type="primary", disabled=len(chosen) != 1, on_click=_open,
                args=(MATRICES_PAGE,), kwargs={state.MODEL: chosen[0]} if len(chosen) == 1 else {})
    right.button("Compare the two", type="primary", disabled=len(chosen) != 2, on_click=_open,
                 args=(COMPARE_PAGE,), kwargs={state.COMPARE_A: chosen[0], state.COMPARE_B: chosen[1]} if len(chosen) == 2 else {})
    note.caption("Select one row to open its matrices, two to compare them (the first selected is A). Foreground scores are the "
                 "reduced 2x2 view's; mAP is COCO-style over the same boxes, in the sidebar's convention (single taxonomy, boxes ranked by score), None otherwise.")
    if table.filter(like=F1_PREFIX).isna().to_numpy().any():
        st.caption(f"None in an {plain_for_markdown(F1_PREFIX.strip())} cell: the class is on neither side of that model's evaluation "
                   "(F1 undefined), or that model does not score the class (another class list, or dual taxonomy, where the diagonal "
                   "means nothing). 0 with a class only predicted, or never predicted.")
