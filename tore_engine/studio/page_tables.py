"""Every page in one table (`drilldown.pages_table`): pixels of each class on each side, the
reduced view's Foreground scores, the page's mAP, mAP@50 and mAP@75 (when the evaluation has mAP)
and the warnings, filtered by page id and by class, sorted by any column, each row opening its
overlay. It is a section drawn on opening (`pages_open` in the URL): its table and five controls
cost a new tab about 0.45 s of the browser's time before the heatmap above it is drawn
(benchmarks/RESULTS.md, "The all-pages table drawn on opening").

The table is made once an evaluation (`Evaluated.pages_table`); filtering, sorting and the rows
shown are computed here, on the server, so the browser gets one screen of rows (`rows_shown`)
whatever the number of pages. Clicking a column's header sorts only those rows: the "Sort by"
control sorts them all.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from tore_engine.results.drilldown import PREDICTION_SUFFIX, REFERENCE_SUFFIX
from tore_engine.studio import sections, state, tables
from tore_engine.studio.evaluations import Evaluated
from tore_engine.studio.map_views import FIGURES
from tore_engine.studio.panels import OpenTarget, pages_to_open

SCORE_COLUMNS = ("foreground recall", "foreground precision", "foreground F1")
SIDE_SUFFIXES = (REFERENCE_SUFFIX, PREDICTION_SUFFIX)
PAGES_OPEN = state.SECTION("pages")  # the section of the all-pages table (session state and URL)


def _column_config(table: pd.DataFrame) -> dict:
    config = {name: tables.score_column() for name in SCORE_COLUMNS}
    config |= {label: tables.score_column(help_text="COCO-style, over this page's boxes; empty: the page has no reference box")
               for label in FIGURES.values() if label in table.columns}
    config["warnings"] = st.column_config.NumberColumn(format="%d", help="input warnings about this page")
    config |= {name: tables.pixel_column() for name in table.columns if name == "pixels" or name.endswith(SIDE_SUFFIXES)}
    return config


def _class_labels(table: pd.DataFrame) -> list[str]:
    """The labels with a column, on either side, in column order."""
    return list(dict.fromkeys(name.removesuffix(suffix) for name in table.columns for suffix in SIDE_SUFFIXES if name.endswith(suffix)))


def _filtered(table: pd.DataFrame, text: str, labels: list[str]) -> pd.DataFrame:
    """The pages whose id contains `text` and that have any of `labels` on either side (the table
    itself, not a copy, when neither is asked for)."""
    if not text and not labels:
        return table
    keep = table["page"].str.contains(text, case=False, regex=False) if text else pd.Series(True, index=table.index)
    if labels:
        columns = [f"{label}{suffix}" for label in labels for suffix in SIDE_SUFFIXES if f"{label}{suffix}" in table.columns]
        keep &= (table[columns] > 0).any(axis=1)
    return table[keep]


def _sorted(table: pd.DataFrame) -> pd.DataFrame:
    """The rows in the order chosen (page order by default; ties keep page order)."""
    columns = list(table.columns)
    sort_column, order_column = st.columns([3, 2], vertical_alignment="bottom")
    by = sort_column.selectbox("Sort by", columns, **state.bind(state.PAGES_SORT, choices=columns))
    descending = order_column.toggle("Largest first", **state.bind(state.PAGES_DESCENDING))
    if by == "page" and not descending:
        return table
    return table.sort_values(by, ascending=not descending, kind="stable")


def all_pages(evaluated: Evaluated, model: str) -> None:
    """The all-pages section: while open, the table with its filters and order; a selected row
    opens the page in Overlays."""
    count = len(evaluated.evaluation.page_ids)
    section = sections.opened(f"All pages: {count:,} (sort by any score, filter, open one in Overlays)", PAGES_OPEN,
                              icon=":material/table_rows:")
    if section is not None:
        with section:
            _pages_table(evaluated, model)


def _pages_table(evaluated: Evaluated, model: str) -> None:
    table = evaluated.pages_table.rename(columns=FIGURES)
    labels = _class_labels(table)
    text_column, class_column = st.columns([2, 3])
    text = text_column.text_input("Page id contains", **state.bind(state.PAGES_FILTER))
    chosen = class_column.multiselect("Pages with any of these classes (either side)", labels, **state.bind(state.PAGES_CLASSES, choices=labels))
    shown = _sorted(_filtered(table, text, chosen))
    map_note = (" mAP, mAP@50, mAP@75: each page's own COCO-style mAP over its boxes (empty without a reference box); sort by mAP "
                "for the pages mAP finds hardest." if "mAP" in table.columns else "")
    st.caption(f"{len(shown):,} of {len(table):,} pages. Select a row to open the page in Overlays. Class columns: the pixels of "
               f"each class in the reference (ref) and in the prediction (pred).{map_note} A click on a column's header sorts the rows "
               "shown; Sort by sorts them all.")
    if len(shown):
        pages_to_open(shown, f"all-{model}", [OpenTarget(model)], _column_config(table))
