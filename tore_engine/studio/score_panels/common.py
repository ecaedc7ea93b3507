"""What the three score panels share, so that each says only what is its own benchmark's.

- `file_stamps`: what makes a cached score stale (the panels cache on paths, never on data).
- `shown`: how a number is written; undefined is "n/a" (`tore_engine.scorers.common.MISSING`), never 0.
- `choosing_table`: a table whose clicked row chooses, beside the selectbox that also does.
- `page_image`: a page image named in a scorer's result, through `page_images` (confined to the
  data root, one placeholder for outside, missing and undrawable), never through a made-up `Page`.
- `chart`: a Plotly figure at its own size.
- `metric_row`: headline numbers side by side, each whole (a row too narrow wraps, never cuts a value).
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from numbers import Integral, Real
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
import streamlit as st

from tore_engine.core.layout import PageImage
from tore_engine.plots.heatmaps import CONFIG
from tore_engine.scorers.common import MISSING, format_score
from tore_engine.studio.data_root import data_root
from tore_engine.studio.page_images import ImageUri, image_uri

SCORE_DIGITS = 4


def _stat_stamp(info: os.stat_result) -> tuple[int, int]:
    return info.st_mtime_ns, info.st_size


def file_stamp(path: Path | None) -> tuple:
    """The path with its modification time and size, and for a folder those of every entry in
    it, so that a file added, removed or rewritten in place makes the cached score stale."""
    if path is None:
        return (None,)
    try:
        entries = sorted((entry.name, *_stat_stamp(entry.stat())) for entry in os.scandir(path)) if path.is_dir() else []
        return (str(path), *_stat_stamp(path.stat()), tuple(entries))
    except OSError:  # gone or unreadable: the scorer says why
        return (str(path),)


def file_stamps(*paths: Path | None) -> tuple:
    """`file_stamp` of each path: the part of a cache key that tells states of the files apart."""
    return tuple(map(file_stamp, paths))


def shown(value: object, digits: int = SCORE_DIGITS) -> str:
    """A value as the panels write it: undefined (None, or NaN once in a pandas column) as "n/a",
    never 0; a score with `digits` fixed decimals (fixed width, so that a text column of scores in
    [0, 1] sorts right on a header click); a count with thousands separators; text as it is."""
    if isinstance(value, bool) or not isinstance(value, Real):
        return MISSING if value is None else str(value)
    if isinstance(value, Integral):
        return f"{value:,}"
    return MISSING if math.isnan(value) else format_score(float(value), digits)


def choosing_table(data: Any, *, key: str, choices: Sequence[object], choice_key: str, where: Any = st, **options: Any) -> None:
    """A table of one row per choice (in `choices` order): a click on a row makes its choice the
    value of the widget `choice_key`, a selectbox drawn after the table, which stays the way to
    choose by keyboard and from the URL. `options` go to `st.dataframe`."""
    where.dataframe(data, key=key, hide_index=True, selection_mode="single-row",
                    on_select=functools.partial(_choose_clicked_row, key, list(choices), choice_key), **options)


def _choose_clicked_row(table_key: str, choices: list[object], choice_key: str) -> None:
    """Table callback: it runs before the widgets are made, so it may set the chooser's value."""
    rows = st.session_state[table_key].selection.rows
    if rows:
        st.session_state[choice_key] = choices[rows[0]]


def page_image(path: str | Path | None, size: tuple[float, float], pdf_page: int | None = None) -> ImageUri:
    """The page image at `path` (from an input file: untrusted) as `page_images` draws it inside the
    data root, with its source's size; else a placeholder of `size` that says there is none."""
    return image_uri(PageImage(Path(path), pdf_page) if path is not None else None, size, data_root())


def chart(figure: go.Figure, key: str, where: Any = st) -> None:
    """A Plotly figure (`plots.page_chart`, the panels' figures) at the size it sets, with the app's mode bar."""
    where.plotly_chart(figure, key=key, theme=None, config=CONFIG, width="content")


@dataclass(frozen=True)
class Metric:
    """One headline number: its label, its value as written (`shown`), a help text, a frame (the
    primary metric) and a caption under it."""

    label: str
    value: str
    help: str | None = None
    border: bool = False
    caption: str | None = None


METRIC_WIDTH, LABEL_CHARACTER = 190, 8.5  # pixels: at least, a metric with a caption under it (which wraps inside it); a label's character


def metric_row(metrics: Sequence[Metric], where: Any = st) -> None:
    """The metrics side by side, each as wide as its label and value: on a laptop a row that does
    not fit wraps onto the next line, where columns of a fixed share cut "0.4567" to "0.…"."""
    row = where.container(horizontal=True, gap="medium")
    for metric in metrics:
        width = max(METRIC_WIDTH, round(LABEL_CHARACTER * len(metric.label)) + 40)  # the label whole: a metric's label never wraps
        cell = row.container(width=width if metric.caption else "content")
        cell.metric(metric.label, metric.value, help=metric.help, border=metric.border, width="content")
        if metric.caption:
            cell.caption(metric.caption)
