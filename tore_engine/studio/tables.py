"""How numbers look in the app's tables, the same in every one: pixels as whole numbers where they
are whole (a pixel split between classes gives fractions), the app's one percentage format, and
scores with three decimals. Shares are stored as percentages (0..100) for display, because
Streamlit's own "percent" formats differ between column types (7.7% in one, 7.07% in another)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

PERCENT_FORMAT = "%.1f%%"  # as plain_text.percent
SCORE_FORMAT = "%.3f"


def pixel_column(label: str | None = None, help_text: str | None = None):
    return st.column_config.NumberColumn(label, format="localized", help=help_text)


def percent_column(label: str | None = None, *, bar: bool = False, help_text: str | None = None):
    """A share shown as a percentage; with `bar`, as a progress bar from 0 to 100%."""
    if bar:
        return st.column_config.ProgressColumn(label, format=PERCENT_FORMAT, min_value=0.0, max_value=100.0, help=help_text)
    return st.column_config.NumberColumn(label, format=PERCENT_FORMAT, help=help_text)


def score_column(label: str | None = None, help_text: str | None = None):
    return st.column_config.NumberColumn(label, format=SCORE_FORMAT, help=help_text)


def as_percent(values: pd.Series) -> pd.Series:
    """Shares (0..1) as the percentages `percent_column` shows."""
    return values * 100
