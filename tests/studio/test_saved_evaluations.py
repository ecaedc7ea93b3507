"""Saved evaluations in the app (tore_engine.studio.sidebar `saved` source, evaluations.saved_evaluation):
`?saved=PATH` opens what `tore evaluate --out` saved, under the data root, without evaluating again;
a path leaving the data root or a damaged folder is refused with the reason."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

import tore_engine as tore
from tests.cli.helpers import run_cli
from tests.helpers import DEMO
from tests.studio.helpers import _app, _axes, _cells, _heatmaps, _no_exception
from tore_engine.api import saved_inputs
from tore_engine.core.errors import InputError
from tore_engine.core.layout import LayoutSet
from tore_engine.plots.plain_text import plain_for_markdown
from tore_engine.results.saved import ARRAYS, open_saved
from tore_engine.run import runner
from tore_engine.studio.data_root import server_path
from tore_engine.studio.evaluations import Evaluated, EvaluationStore, _with_inputs


def _saved_run(root, name: str, model: str = "model_a.json"):
    out = root / "runs" / name
    code, _, err = run_cli("evaluate", str(DEMO / "reference.json"), str(DEMO / model), "--out", str(out), "-q")
    assert code == 0, err
    return out


def _refuse_evaluation(monkeypatch) -> None:
    """From here on any evaluation is a failure: a saved one is opened, not evaluated."""
    def refused(*args, **kwargs):
        raise AssertionError("evaluated again")

    monkeypatch.setattr(runner, "evaluate_dataset", refused)


def test_a_saved_link_draws_the_saved_matrices_without_evaluating(root, monkeypatch):
    out = _saved_run(root, "a")
    _refuse_evaluation(monkeypatch)
    report = json.loads((out / "report.json").read_text())
    at = _app(saved="runs/a")
    _no_exception(at)
    assert not at.error
    heatmap = _heatmaps(at)[0]
    rows, columns = _axes(heatmap)
    assert rows == columns == report["classes"]
    for field in ("recall", "precision"):
        # the heatmap sends its values as float32 (Plotly's typed arrays): equal to report.json's to float32's precision
        assert np.allclose(_cells(heatmap, field), np.array(report["matrices"][field]), rtol=1e-6, atol=1e-9, equal_nan=True), field


def test_a_saved_path_outside_the_data_root_is_refused(root, tmp_path_factory):
    outside = tmp_path_factory.mktemp("elsewhere")
    _saved_run(outside, "a")
    at = _app(saved=str(outside / "runs" / "a"))
    _no_exception(at)
    assert any(plain_for_markdown("is outside the folder it must stay in") in error.value for error in at.sidebar.error)
    assert not _heatmaps(at)


def test_a_damaged_saved_folder_is_named(root, monkeypatch):
    out = _saved_run(root, "a")
    _refuse_evaluation(monkeypatch)
    (out / ARRAYS).write_bytes(b"\x80\x04not an archive")
    at = _app(saved="runs/a")
    _no_exception(at)
    with pytest.raises(InputError) as raised:
        open_saved(out)
    assert any(plain_for_markdown(raised.value.problem)[:40] in error.value for error in at.error)
    assert not _heatmaps(at)


def test_the_inputs_are_read_again_for_overlays_only_inside_the_data_root(root, tmp_path_factory):
    for name in ("reference.json", "model_a.json"):
        shutil.copy(DEMO / name, root / name)
    code, _, err = run_cli("evaluate", str(root / "reference.json"), str(root / "model_a.json"), "--out", str(root / "runs" / "in"), "-q")
    assert code == 0, err
    store = EvaluationStore()
    entry = Evaluated("", LayoutSet("gt", []), LayoutSet("m", []), open_saved(root / "runs" / "in"))
    store.put(("k",), entry)
    _with_inputs(store, ("k",), entry, root / "runs" / "in")
    reference, prediction = tore.load_pair(root / "reference.json", root / "model_a.json")
    page = reference.page_ids()[0]
    assert store.get(("k",)).reference_page(page).labels == reference.pages[0].labels  # Overlays has boxes to draw
    outside = _saved_run(tmp_path_factory.mktemp("elsewhere"), "out")  # its inputs (the demo's) lie outside the data root
    shutil.copytree(outside, root / "runs" / "out")
    with pytest.raises(InputError, match="outside the folder it must stay in"):
        saved_inputs(root / "runs" / "out", checked=server_path)
