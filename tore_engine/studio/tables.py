"""How numbers look in the app's tables, the same in every one: pixels as whole numbers where they
are whole (a pixel split between classes gives fractions), the app's one percentage format, and
scores with three decimals. Shares are stored as percentages (0..100) for display, because
Streamlit's own "percent" formats differ between column types (7.7% in one, 7.07% in another)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from tore_engine.studio import state

PERCENT_FORMAT = "%.1f%%"  # as plain_text.percent
SCORE_FORMAT = "%.3f"
PAGE_ROWS = 50  # rows of a table sent to the browser at once
FOREGROUND_LABELS = {"foreground_recall": "Foreground recall", "foreground_precision": "Foreground precision", "foreground_f1": "Foreground F1"}  # the engine's columns as shown


def pixel_column(label: str | None = None, help_text: str | None = None):
    return st.column_config.NumberColumn(label, format="localized", help=help_text)


def percent_column(label: str | None = None, *, bar: bool = False, help_text: str | None = None):
    """A share shown as a percentage; with `bar`, as a progress bar from 0 to 100%."""
    if bar:
        return st.column_config.ProgressColumn(label, format=PERCENT_FORMAT, min_value=0.0, max_value=100.0, help=help_text)
    return st.column_config.NumberColumn(label, format=PERCENT_FORMAT, help=help_text)


def score_column(label: str | None = None, help_text: str | None = None):
    return st.column_config.NumberColumn(label, format=SCORE_FORMAT, help=help_text)


def pinned_first(table: pd.DataFrame, config: dict | None = None) -> dict:
    """`config` with the table's first column (its page, model, class or document) pinned: a table
    wider than the page's column keeps it in view while the others scroll."""
    config = dict(config or {})
    first = table.columns[0]
    config[first] = {**(config.get(first) or st.column_config.Column()), "pinned": True}
    return config


def as_percent(values: pd.Series) -> pd.Series:
    """Shares (0..1) as the percentages `percent_column` shows."""
    return values * 100


def _turn(rows_page: str, delta: int, last: int) -> None:
    st.session_state[rows_page] = min(max(st.session_state.get(rows_page, 1) + delta, 1), last)


def rows_shown(table: pd.DataFrame, key: str) -> pd.DataFrame:
    """The rows of `table` one screen shows, `PAGE_ROWS` at a time, with the controls that move
    through them (computed here, on the server): a table of 100,000 pages sends the browser 50
    rows, not 100,000."""
    return table.iloc[shown_range(len(table), key)]


def shown_range(total: int, key: str) -> slice:
    """`rows_shown` for any sequence of `total` rows: the controls, and the slice shown."""
    if total <= PAGE_ROWS:
        return slice(0, total)
    last, rows_page = (total - 1) // PAGE_ROWS + 1, state.ROWS_PAGE(key)
    if not 1 <= st.session_state.get(rows_page, 1) <= last:
        st.session_state[rows_page] = 1
    st.session_state.setdefault(rows_page, 1)
    previous, number, following, info = st.columns([1, 2, 1, 5], vertical_alignment="bottom")
    previous.button("◀", key=state.ROWS_PAGE(key, "previous"), on_click=_turn, args=(rows_page, -1, last),
                    disabled=st.session_state[rows_page] == 1, help="the previous rows")
    number.number_input(f"Rows page (of {last:,})", 1, last, key=rows_page, persist_state="session")  # kept on the way back from Overlays
    following.button("▶", key=state.ROWS_PAGE(key, "next"), on_click=_turn, args=(rows_page, 1, last),
                     disabled=st.session_state[rows_page] == last, help="the next rows")
    start = (st.session_state[rows_page] - 1) * PAGE_ROWS
    info.caption(f"Rows {start + 1:,} to {min(start + PAGE_ROWS, total):,} of {total:,}.")
    return slice(start, start + PAGE_ROWS)
