"""What the three score panels share (`score_panels.common`): how a number is written, cache stamps, a
table whose clicked row chooses, charts, and page images."""

from __future__ import annotations

import io
import math
import os
from types import SimpleNamespace

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from PIL import Image

from tore_engine.plots.heatmaps import CONFIG
from tore_engine.studio.data_root import DATA_ROOT_VARIABLE
from tore_engine.studio.score_panels import common
from tore_engine.studio.score_panels.common import (
    chart,
    choosing_table,
    file_stamp,
    file_stamps,
    page_image,
    shown,
)


class _Recorder:
    """Stands for `st` or a column: keeps what a drawing call was given."""

    def dataframe(self, data, **options):
        self.data, self.options = data, options

    def plotly_chart(self, figure, **options):
        self.figure, self.options = figure, options


# --- how a number is written ---------------------------------------------------------------------


@pytest.mark.parametrize("value, text", [
    (None, "n/a"), (math.nan, "n/a"), (np.float64("nan"), "n/a"), (0.0, "0.0000"), (1.0, "1.0000"), (np.float32(0.25), "0.2500"),
    (0, "0"), (1234, "1,234"), (np.int64(5), "5"), (True, "True"), ("question", "question"),
])
def test_shown_writes_undefined_as_n_a_never_0(value, text):
    assert shown(value) == text


def test_shown_takes_the_digits_and_writes_a_pandas_column():
    assert shown(0.123456, 3) == "0.123"
    assert pd.Series([0.5, None]).map(shown).tolist() == ["0.5000", "n/a"]


# --- cache stamps ----------------------------------------------------------------------------------


def test_a_folder_stamp_changes_when_a_file_in_it_is_rewritten(tmp_path):
    (tmp_path / "a.json").write_text("{}")
    before = file_stamp(tmp_path)
    assert file_stamp(tmp_path) == before
    (tmp_path / "a.json").write_text('{"x": 1}')
    os.utime(tmp_path / "a.json", ns=(1, 1))  # a rewrite in place, whatever the clock says
    assert file_stamp(tmp_path) != before
    assert file_stamps(None, tmp_path / "missing") == ((None,), (str(tmp_path / "missing"),))
    assert file_stamp(tmp_path / "a.json")[0] == str(tmp_path / "a.json") and file_stamp(tmp_path / "a.json")[-1] == ()


# --- a table whose clicked row chooses ---------------------------------------------------------------


def test_a_clicked_row_sets_the_chooser_before_it_is_drawn(monkeypatch):
    where = _Recorder()
    choosing_table("frame", key="table", choices=["a", "b"], choice_key="doc", where=where, width="stretch")
    assert where.options["selection_mode"] == "single-row" and where.options["hide_index"] and where.options["width"] == "stretch"
    state = {"table": SimpleNamespace(selection=SimpleNamespace(rows=[1]))}
    monkeypatch.setattr(common.st, "session_state", state)
    where.options["on_select"]()
    assert state["doc"] == "b"
    state["table"].selection.rows = []  # a click that clears the selection keeps the choice
    where.options["on_select"]()
    assert state["doc"] == "b"


def test_charts_are_drawn_at_their_own_size_with_the_apps_mode_bar():
    where = _Recorder()
    figure = go.Figure()
    chart(figure, key="k", where=where)
    assert where.figure is figure and where.options == {"key": "k", "theme": None, "config": CONFIG, "width": "content"}
    assert CONFIG["toImageButtonOptions"]["format"] == "png"  # the mode bar's "Download plot as a png"


# --- page images -------------------------------------------------------------------------------------


def _png(path, size=(30, 40)) -> None:
    buffer = io.BytesIO()
    Image.new("RGB", size, "white").save(buffer, format="PNG")
    path.write_bytes(buffer.getvalue())


def test_a_page_image_inside_the_data_root_has_its_own_size(tmp_path, monkeypatch):
    monkeypatch.setenv(DATA_ROOT_VARIABLE, str(tmp_path))
    _png(tmp_path / "page.png")
    picture = page_image(tmp_path / "page.png", (100, 100))
    assert picture.uri.startswith("data:image/jpeg") and (picture.width, picture.height) == (30, 40)


def test_no_image_outside_or_missing_is_one_placeholder_of_the_given_size(tmp_path, monkeypatch):
    (tmp_path / "root").mkdir()
    monkeypatch.setenv(DATA_ROOT_VARIABLE, str(tmp_path / "root"))
    _png(tmp_path / "outside.png")
    pictures = [page_image(path, (100, 200)) for path in (None, tmp_path / "outside.png", tmp_path / "root" / "missing.png")]
    assert all(picture.uri.startswith("data:image/png") and (picture.width, picture.height) == (100, 200) for picture in pictures)
    assert len({picture.uri for picture in pictures}) == 1  # the same placeholder: it tells nothing about the server's files
