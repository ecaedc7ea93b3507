"""The Runs page (tore_engine.studio.runs): saved evaluations listed from their manifests, the
history of a reference (three runs of the demo's model A at different minimum scores: their F1 and
mAP in order, equal to each run's report.json), and saved runs side by side in Models."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest

from tests.cli.helpers import run_cli
from tests.helpers import DEMO
from tests.studio.helpers import _app, _no_exception, open_page
from tore_engine.results.saved import saved_evaluations
from tore_engine.studio.runs import history, runs_table

MIN_SCORES = {"a0": None, "a3": "0.3", "a6": "0.6"}


@pytest.fixture(scope="module")
def runs_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    for name, min_score in MIN_SCORES.items():
        options = ["--min-score", min_score] if min_score else ["--run-name", "first"]
        code, _, err = run_cli("evaluate", str(DEMO / "reference.json"), str(DEMO / "model_a.json"), "--out", str(root / "runs" / name), "-q", *options)
        assert code == 0, err
    code, _, err = run_cli("evaluate", str(DEMO / "reference.json"), str(DEMO / "model_b.json"), "--out", str(root / "runs" / "b"), "-q")
    assert code == 0, err
    return root


def _report(root, name):
    return json.loads((root / "runs" / name / "report.json").read_text())


def _foreground_f1(report):
    recall, precision = report["reduced"]["recall"][1][1], report["reduced"]["precision"][1][1]
    return 2 * recall * precision / (recall + precision)


def test_the_history_of_a_reference_holds_each_runs_figures_in_order(runs_root):
    found = saved_evaluations(runs_root)
    table = history(found, runs_root, "ground-truth", "name")
    assert table["folder"].tolist() == ["runs/a3", "runs/a6", "runs/b", "runs/a0"]  # by name: a0 is "first"; model B's run shares the reference
    table = table.iloc[[3, 0, 1]]
    for row, name in zip(table.to_dict("records"), MIN_SCORES):
        assert row["folder"] == f"runs/{name}"
        report = _report(runs_root, name)
        assert row["foreground_f1"] == pytest.approx(_foreground_f1(report), rel=1e-15)
        assert (row["map"], row["map_50"]) == (report["map"]["map"], report["map"]["map_50"])
        for name_, scores in report["per_class"].items():
            assert row[f"F1 {name_}"] == scores["f1"] or (row[f"F1 {name_}"] != row[f"F1 {name_}"] and scores["f1"] is None)
    assert len(set(table["map"])) == 3  # the minimum scores change mAP


def test_the_runs_table_lists_model_reference_version_and_options(runs_root):
    table = runs_table([item for item in saved_evaluations(runs_root)], runs_root).set_index("folder")
    assert sorted(table.index) == ["runs/a0", "runs/a3", "runs/a6", "runs/b"]
    assert table.loc["runs/a3", "min_score"] == 0.3 and table.loc["runs/b", "taxonomy"] == "dual"
    assert table.loc["runs/a0", "pages"] == _report(runs_root, "a0")["pages"] and table.loc["runs/a0", "version"]


def test_the_runs_page_draws_the_table_and_the_history(runs_root, monkeypatch):
    monkeypatch.setenv("TORE_STUDIO_DATA_ROOT", str(runs_root))
    at = _app()
    open_page(at, "runs").run()
    _no_exception(at)
    table = next(frame.value for frame in at.dataframe if "foreground_f1" in frame.value.columns and "version" in frame.value.columns)
    assert sorted(table["folder"]) == ["runs/a0", "runs/a3", "runs/a6", "runs/b"]
    charts = [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]
    headlines = next(chart for chart in charts if chart["layout"]["title"]["text"] == "Headline figures")
    by_name = {trace["name"]: trace for trace in headlines["data"]}
    order = headlines["layout"]["xaxis"]["ticktext"]
    assert sorted(by_name) == ["Foreground F1", "mAP", "mAP50"]
    assert _plotly_values(by_name["mAP"]["x"]).tolist() == list(range(len(order)))  # a run a position: two runs may share a name
    assert order[:3] == ["first", "a3", "a6"]  # by date: in the order they were made; named by --run-name, else the folder
    expected = [(_report(runs_root, {"first": "a0"}.get(name, name))["map"] or {}).get("map") for name in order]
    assert np.array_equal(_plotly_values(by_name["mAP"]["y"]), np.array(expected, dtype=float), equal_nan=True)


def _plotly_values(values) -> np.ndarray:
    """A trace's values as Plotly 6 sends them: a list, or a typed array {dtype, bdata (base64)}."""
    if isinstance(values, dict):
        return np.frombuffer(base64.b64decode(values["bdata"]), dtype=np.dtype(values["dtype"]))
    return np.array(values, dtype=float)


def test_saved_runs_side_by_side_in_models(runs_root, monkeypatch):
    monkeypatch.setenv("TORE_STUDIO_DATA_ROOT", str(runs_root))
    at = _app(src="saved", saved="runs/a0", saved_b="runs/a6", models="2")
    open_page(at, "models").run()
    _no_exception(at)
    table = next(frame.value for frame in at.dataframe if "Foreground F1" in frame.value.columns).set_index("model")
    for model, name in (("A", "a0"), ("B", "a6")):
        assert table.loc[model, "Foreground F1"] == pytest.approx(_foreground_f1(_report(runs_root, name)), rel=1e-15)
        assert table.loc[model, "mAP"] == _report(runs_root, name)["map"]["map"]
