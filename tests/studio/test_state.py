"""The view in the URL (tore_engine.studio.state), through AppTest: a parameter of the wrong type
is ignored with one notice naming it, never its value; every control keeps its value across pages."""

from __future__ import annotations

import os

import pytest

from tests.studio.helpers import _app, _no_exception, open_page
from tore_engine.studio import state
from tore_engine.studio.compute import default_workers
from tore_engine.studio.data_root import DATA_ROOT_VARIABLE


def test_values_keep_their_choice_on_every_page():
    at = _app()
    assert at.radio(key="metric").value == "recall"
    open_page(at, "compare").run()
    assert at.radio(key="metric").value == "recall"
    at.radio(key="metric").set_value("precision").run()
    open_page(at, "matrices").run()
    assert at.radio(key="metric").value == "precision" and at.query_params["metric"] == "precision"


# --- parameters that do not fit ----------------------------------------------------------------------


NOTICE = "Some parameters of this link were ignored, their values kept as default: "


def _notice(at) -> str | None:
    notices = [warning.value for warning in at.warning if warning.value.startswith(NOTICE)]
    assert len(notices) <= 1, notices
    return notices[0] if notices else None


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="two worker processes need two CPUs")
def test_a_valid_whole_number_in_the_url_is_taken():
    at = _app(workers="2")
    _no_exception(at)
    assert at.session_state[state.DATASET].workers == 2  # its section closed: the URL's value all the same
    assert "Compute: 2 local worker processes" in [section.label for section in at.sidebar.expander]
    at = _app(workers="2", compute_open="1")
    assert at.number_input(key="workers").value == 2 and at.session_state[state.DATASET].workers == 2
    assert _notice(at) is None


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ({"workers": "abc"}, "`workers` (expected a whole number)"),
        ({"workers": "0"}, f"`workers` (expected a whole number from 1 to {os.cpu_count() or 1})"),
        ({"src": "path", "ref": "a\x00b"}, "`ref` (contains a NUL byte)"),
        ({"tax": "bogus"}, "`tax` (not one of the choices)"),
        ({"hide": "yes"}, "`hide` (expected 0 or 1)"),
        ({"cell": "Nothing|Such"}, "`cell` (not a cell of this matrix)"),
    ],
)
def test_a_bad_url_parameter_is_ignored_with_one_notice(query, named):
    at = _app(**query)
    _no_exception(at)
    assert _notice(at) == f"{NOTICE}{named}."
    assert at.session_state[state.DATASET].taxonomy == "auto" and at.session_state[state.DATASET].workers == default_workers()


def test_every_ignored_parameter_is_listed_in_the_same_notice_without_its_value(tmp_path, monkeypatch):
    monkeypatch.setenv(DATA_ROOT_VARIABLE, str(tmp_path))
    at = _app(tax="bogus", workers="abc", hide="2", view="<script>")
    _no_exception(at)
    assert _notice(at) == (f"{NOTICE}`tax` (not one of the choices); `workers` (expected a whole number); "
                           "`view` (not one of the choices); `hide` (expected 0 or 1).")
    assert not at.exception and "<script>" not in _notice(at) and str(tmp_path) not in _notice(at)
