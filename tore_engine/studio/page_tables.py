"""Every page in one table (`drilldown.pages_table`): pixels of each class on each side, the
reduced view's Foreground scores and the warnings, sortable by any column (click its header),
filtered by page id and by class, each row opening its overlay."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from tore_engine.results.drilldown import (
    PREDICTION_SUFFIX,
    REFERENCE_SUFFIX,
    pages_table,
)
from tore_engine.results.evaluation import Evaluation
from tore_engine.studio import tables, url_state
from tore_engine.studio.panels import OpenTarget, pages_to_open

SCORE_COLUMNS = ("foreground recall", "foreground precision", "foreground F1")
SIDE_SUFFIXES = (REFERENCE_SUFFIX, PREDICTION_SUFFIX)


def _column_config(table: pd.DataFrame) -> dict:
    config = {name: tables.score_column() for name in SCORE_COLUMNS}
    config["warnings"] = st.column_config.NumberColumn(format="%d", help="input warnings about this page")
    config |= {name: tables.pixel_column() for name in table.columns if name == "pixels" or name.endswith(SIDE_SUFFIXES)}
    return config


def _class_labels(table: pd.DataFrame) -> list[str]:
    """The labels with a column, on either side, in column order."""
    return list(dict.fromkeys(name.removesuffix(suffix) for name in table.columns for suffix in SIDE_SUFFIXES if name.endswith(suffix)))


def _filtered(table: pd.DataFrame, text: str, labels: list[str]) -> pd.DataFrame:
    """The pages whose id contains `text` and that have any of `labels` on either side."""
    keep = table["page"].str.contains(text, case=False, regex=False) if text else pd.Series(True, index=table.index)
    if labels:
        columns = [f"{label}{suffix}" for label in labels for suffix in SIDE_SUFFIXES if f"{label}{suffix}" in table.columns]
        keep &= (table[columns] > 0).any(axis=1)
    return table[keep]


def all_pages(evaluation: Evaluation, model: str) -> None:
    """The all-pages table with its filters; a selected row opens the page in Overlays."""
    st.subheader("All pages")
    table = pages_table(evaluation)
    labels = _class_labels(table)
    url_state.seed("pages_filter", "")
    url_state.remember("pages_classes", [], lambda chosen: [label for label in chosen if label in labels])
    text_column, class_column = st.columns([2, 3])
    text = text_column.text_input("Page id contains", key="pages_filter", persist_state="session")
    chosen = class_column.multiselect("Pages with any of these classes (either side)", labels, key="pages_classes", persist_state="session")
    url_state.share(pages_filter=text)
    shown = _filtered(table, text, chosen)
    st.caption(f"{len(shown):,} of {len(table):,} pages. Click a column's header to sort by it; select a row to open the page in "
               "Overlays. Class columns: the pixels of each class in the reference (ref) and in the prediction (pred).")
    if len(shown):
        pages_to_open(shown, f"all-{model}", [OpenTarget(model)], _column_config(table))
