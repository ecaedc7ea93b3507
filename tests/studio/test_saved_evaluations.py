"""Saved evaluations in the app (tore_engine.studio.sidebar `saved` source, evaluations.saved_evaluation):
`?saved=PATH` opens what `tore evaluate --out` saved, under the data root, without evaluating again;
a path leaving the data root or a damaged folder is refused with the reason."""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

import numpy as np
import pytest

import tore_engine as tore
from tests.cli.helpers import run_cli
from tests.helpers import DEMO
from tests.studio.helpers import _app, _axes, _cells, _heatmaps, _no_exception, _page_charts, _page_rows, open_page
from tore_engine.api import saved_inputs
from tore_engine.core.errors import InputError
from tore_engine.core.layout import LayoutSet
from tore_engine.plots.plain_text import plain_for_markdown
from tore_engine.results.saved import ARRAYS, open_saved
from tore_engine.results.tags import DEFAULT_FILE
from tore_engine.run import runner
from tore_engine.studio import evaluations, state
from tore_engine.studio.data_root import server_path
from tore_engine.studio.evaluations import Evaluated, EvaluationStore, SavedLayouts


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
    read = []
    entry = Evaluated("", LayoutSet("gt", []), LayoutSet("m", []), open_saved(root / "runs" / "in"),
                      saved_layouts=SavedLayouts(root / "runs" / "in", lambda: read.append(True)))
    reference, prediction = tore.load_pair(root / "reference.json", root / "model_a.json")
    assert entry.has_boxes and entry.saved_layouts.pair is None  # nothing read before a box is wanted
    for page, expected in zip(reference.page_ids(), reference.pages):
        assert entry.reference_page(page).labels == expected.labels  # Overlays has boxes to draw, read once
    assert entry.prediction_page(prediction.page_ids()[0]).labels == prediction.pages[0].labels
    assert read == [True]
    outside = _saved_run(tmp_path_factory.mktemp("elsewhere"), "out")  # its inputs (the demo's) lie outside the data root
    shutil.copytree(outside, root / "runs" / "out")
    with pytest.raises(InputError, match="outside the folder it must stay in"):
        saved_inputs(root / "runs" / "out", checked=server_path)
    refused = Evaluated("", LayoutSet("gt", []), LayoutSet("m", []), open_saved(root / "runs" / "out"),
                        saved_layouts=SavedLayouts(root / "runs" / "out", lambda: None))
    with pytest.raises(InputError, match="outside the folder it must stay in"):
        refused.reference_page(reference.page_ids()[0])
    assert not refused.has_boxes


def test_overlays_of_a_saved_evaluation_draw_its_boxes_or_say_why_not(root, monkeypatch):
    for name in ("reference.json", "model_a.json"):
        shutil.copy(DEMO / name, root / name)
    code, _, err = run_cli("evaluate", str(root / "reference.json"), str(root / "model_a.json"), "--out", str(root / "runs" / "in"), "-q")
    assert code == 0, err
    _refuse_evaluation(monkeypatch)
    at = _app(saved="runs/in")
    open_page(at, "overlays").run()  # at once: the boxes are read then, not waited for in the background
    _no_exception(at)
    assert not at.error
    reference = tore.load(root / "reference.json")
    first = reference.pages[0]
    assert at.session_state[state.PAGE] == first.id
    (chart,) = _page_charts(at)
    drawn = [row["label"] for row in _page_rows(chart, "box", pane=0)]  # "reference: <class> box <n>"
    assert sorted(label.removeprefix("reference: ").rsplit(" box ", 1)[0] for label in drawn) == sorted(first.labels)  # the page's boxes
    (root / "reference.json").unlink()  # moved away: a new server (a new store) cannot read them
    monkeypatch.setattr(evaluations, "evaluation_store", EvaluationStore)
    monkeypatch.delenv("TORE_STUDIO_DB", raising=False)
    tore.tags(root / DEFAULT_FILE).add(reference.name, first.id, "ambiguous")  # a tag of the dataset, so Overlays lists its pages
    at = _app(saved="runs/in")
    open_page(at, "overlays").run()
    _no_exception(at)
    assert not [button for button in at.get("download_button") if "COCO" in button.proto.label]  # no export that cannot be made
    assert any("No boxes to export" in caption.value for caption in at.caption)
    assert any("not there any more" in error.value and "reference.json" in error.value for error in at.error), [e.value for e in at.error]
    assert not any("unexpected error" in error.value for error in at.error)
    assert [metric.label for metric in at.metric][:3] == ["Foreground recall", "Foreground precision", "Foreground F1"]  # its scores still


def test_tore_app_with_a_folder_opens_it_as_the_server_starts_and_prints_its_link(root, monkeypatch):
    """`tore app runs/a`: the folder checked before the server starts, opened by the warm-up (here
    called in turn), and its link's first run finds it held: opened once, evaluated never."""
    from streamlit.web import cli as streamlit_cli

    from tore_engine.studio import warm_up

    _saved_run(root, "a")
    _refuse_evaluation(monkeypatch)
    monkeypatch.chdir(root)
    started: list = []
    monkeypatch.setattr(warm_up, "start", lambda saved=None: started.append(saved))
    monkeypatch.setattr(streamlit_cli, "main", lambda arguments, standalone_mode: started.append(arguments) or 0)
    code, out, err = run_cli("app", "runs/a", "--port", "8600")
    assert (code, out) == (0, "") and "http://localhost:8600/?saved=runs%2Fa" in err
    assert started[0] == (root / "runs" / "a").resolve() and "--server.port=8600" in started[1]

    opened: list = []
    really_open = evaluations.saved.open_saved
    monkeypatch.setattr(evaluations.saved, "open_saved", lambda folder: opened.append(folder) or really_open(folder))
    evaluations.open_saved_first(started[0])
    assert len(opened) == 1
    at = _app(saved="runs/a")
    _no_exception(at)
    assert _heatmaps(at) and len(opened) == 1  # not opened again


@pytest.mark.parametrize("folder, problem", [("runs/none", "is no saved evaluation"), ("../elsewhere", "outside the folder"),
                                             ("runs", "is no saved evaluation")])
def test_tore_app_with_a_wrong_folder_fails_before_serving(root, monkeypatch, folder, problem):
    from streamlit.web import cli as streamlit_cli

    (root / "runs").mkdir()
    monkeypatch.chdir(root)
    monkeypatch.setattr(streamlit_cli, "main", lambda *args, **kwargs: pytest.fail("served"))
    code, out, err = run_cli("app", folder)
    assert (code, out) == (2, "") and err.startswith("tore: error: ") and problem in err and "Traceback" not in err


@pytest.mark.parametrize("where", ["inside", "beside"])
def test_tore_evaluate_prints_the_command_that_opens_its_folder(root, monkeypatch, tmp_path_factory, where):
    """The printed command, run as printed (its data root, its folder), passes `tore app`'s check,
    and its data root holds the inputs too, which Overlays reads again: the current folder when it
    holds them all (inside), else the folder holding them all (beside)."""
    from tore_engine.cli.app import saved_folder

    monkeypatch.chdir(root)
    elsewhere = tmp_path_factory.mktemp("else where")
    inputs = root / "inputs" if where == "inside" else elsewhere / "inputs"
    inputs.mkdir()
    for name in ("reference.json", "model_a.json"):
        shutil.copy(DEMO / name, inputs / name)
    out = root / "runs" / "my run" if where == "inside" else elsewhere / "runs" / "b"
    code, printed, err = run_cli("evaluate", str(inputs / "reference.json"), str(inputs / "model_a.json"), "--out", str(out))
    assert code == 0, err
    command = printed.splitlines()[-1].removeprefix("Open it in TORE Studio: ")
    words = shlex.split(command)
    environment = dict(word.split("=", 1) for word in words if "=" in word)
    assert words[-3:-1] == ["tore", "app"] and environment.keys() == ({"TORE_STUDIO_DATA_ROOT"} if where == "beside" else set())
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    assert saved_folder(words[-1]) == out.resolve()
    assert server_path(str(inputs / "reference.json")) == (inputs / "reference.json").resolve()


def test_a_run_whose_inputs_share_only_the_file_systems_root_gets_its_own_folder_and_the_reason(monkeypatch):
    """No data root short of `/` holds the run and its inputs: the command opens the run from the
    current data root, and says why Overlays will not read the inputs (paths only, none is read)."""
    from tore_engine.cli.evaluate import app_hint

    monkeypatch.setenv("TORE_STUDIO_DATA_ROOT", "/work area")
    hint = app_hint(Path("/work area/runs/a b"), [Path("/data/reference.json"), Path("/data/model.json")])
    assert hint.startswith("Open it in TORE Studio: tore app 'runs/a b' (its inputs lie outside that folder: Overlays reads")
    hint = app_hint(Path("/elsewhere/runs/a"), [Path("/data/reference.json")])  # nor is the run under the data root
    assert hint.startswith("Open it in TORE Studio: TORE_STUDIO_DATA_ROOT=/elsewhere/runs tore app a (its inputs lie outside")
