"""The operating point in the app (tore_engine.studio.sweep_view, the sidebar's Minimum score, the
store's sweep), through AppTest: the chart is `Evaluation.sweep()`, a minimum score chosen (as a
click on a point sets it) evaluates there exactly as `tore evaluate --min-score t`, in the URL, the
sweep made once for every minimum score; the boxes drawn and a document's matrices follow it."""

from __future__ import annotations

import csv
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from tests.helpers import DEMO, REPOSITORY
from tests.studio.helpers import _app, _axes, _cells, _heatmaps, _no_exception, _shown_text, _sweep_charts, scores_line
from tore_engine.api import evaluate_pair, load_pair
from tore_engine.core.layout import LayoutSet
from tore_engine.metrics.sweep import MIN_SCORES
from tore_engine.run.runner import evaluate_dataset
from tore_engine.studio import documents, evaluations, sweep_view


@pytest.fixture
def store(monkeypatch) -> evaluations.EvaluationStore:
    fresh = evaluations.EvaluationStore()
    monkeypatch.setattr(evaluations, "evaluation_store", lambda: fresh)
    return fresh


def _sweep_chart(at) -> dict:
    return _sweep_charts(at)[0]


def _curve(chart: dict, name: str, panel: int = 0) -> np.ndarray:
    """A curve's F1 at each minimum score, in one panel (0: TORE's, 1: the detection view: its
    Foreground is "all classes")."""
    group = "Foreground" if name == "all classes" else name
    axis = "x" if panel == 0 else "x2"
    line = next(trace for trace in chart["data"] if trace.get("legendgroup") == group and trace.get("xaxis", "x") == axis
                and trace["mode"] == "lines+markers")
    return np.array([np.nan if value is None else value for value in line["y"]], dtype=float)


def _current(chart: dict) -> list[float]:
    """The dotted line of the minimum score shown, in each panel."""
    return [shape["x0"] for shape in chart["layout"].get("shapes", [])]


def cli_confusion(reference, prediction, min_score: float, out, *extra: str) -> tuple[list[str], np.ndarray]:
    """`tore evaluate --min-score` run as a command: its confusion.csv's classes and values."""
    subprocess.run([sys.executable, "-m", "tore_engine", "evaluate", str(reference), str(prediction), "--out", str(out),
                    "--min-score", repr(min_score), "-q", *extra], check=True, cwd=REPOSITORY)
    with (out / "confusion.csv").open(encoding="utf-8") as file:
        rows = list(csv.reader(file))
    return rows[0][1:], np.array([[float(value) for value in row[1:]] for row in rows[1:]])


def test_the_chart_is_the_sweep_and_a_minimum_score_evaluates_as_the_command_line(store, tmp_path):
    engine = evaluate_pair(DEMO / "reference.json", DEMO / "model_a.json").evaluation
    sweep = engine.sweep()
    at = _app(metric="confusion", sweep_open="1")
    _no_exception(at)
    chart = _sweep_chart(at)
    foreground = sweep[sweep["scope"] == "foreground"]
    assert np.array_equal(_curve(chart, "Foreground"), foreground["f1"].to_numpy(dtype=float))
    assert np.array_equal(_curve(chart, "all classes", 1), foreground["detection_f1"].to_numpy(dtype=float))
    text = sweep[sweep["class"] == "Text"]
    assert np.array_equal(_curve(chart, "Text"), text["f1"].to_numpy(dtype=float))
    assert not _current(chart)  # no minimum score yet
    best = next(frame.value for frame in at.dataframe if "curve" in frame.value.columns)
    assert best.equals(sweep_view.best_points(sweep))

    at.session_state["min_score"] = MIN_SCORES[14]  # what a click on a point at 0.75 sets (sweep_view._evaluate_at)
    at.run()
    _no_exception(at)
    assert at.query_params["min_score"] == "0.75"
    classes, expected = cli_confusion(DEMO / "reference.json", DEMO / "model_a.json", 0.75, tmp_path / "cli")
    heatmap = _heatmaps(at)[0]
    assert _axes(heatmap)[0] == classes and np.array_equal(_cells(heatmap, "pixels"), expected)
    at_threshold = evaluate_pair(DEMO / "reference.json", DEMO / "model_a.json", min_score=0.75).evaluation
    assert scores_line(at)["mAP"] == f"{at_threshold.map.map:.3f}"
    assert _current(_sweep_chart(at)) == [0.75, 0.75]
    assert len(store._entries) == 2 and len(store._sweeps) == 1  # one sweep for both minimum scores ...
    assert next(iter(store._sweeps.values())).equals(at_threshold.sweep())  # ... which is the threshold's own too
    assert "Evaluated at minimum score 0.75" in _shown_text(at)


def test_the_section_draws_nothing_until_opened_and_keeps_its_state_in_the_url(store):
    at = _app(metric="confusion")
    _no_exception(at)
    assert not _sweep_charts(at)
    assert not store._sweeps and "sweep_open" not in at.query_params
    at.session_state[sweep_view.SECTION_OPEN] = True  # what opening the section does (on_change="rerun")
    at.run()
    _no_exception(at)
    assert _sweep_chart(at) and len(store._sweeps) == 1 and at.query_params["sweep_open"] == "1"


def test_a_parameter_read_after_a_fragment_rewrote_the_url_is_still_read(store):
    """The matrix's fragment writes the URL before the sections below it read theirs (the sweep's,
    the pages table's sort): a link's values still reach them."""
    at = _app(metric="confusion", sweep_open="1", pages_open="1", pages_sort="foreground F1", pages_desc="1")
    _no_exception(at)
    assert _sweep_chart(at)
    assert (at.session_state["pages_sort"], at.session_state["pages_desc"]) == ("foreground F1", True)
    assert (at.query_params["pages_sort"], at.query_params["pages_desc"], at.query_params["sweep_open"]) == ("foreground F1", "1", "1")


def test_a_large_evaluation_makes_its_sweep_when_asked_then_keeps_it(store, monkeypatch):
    monkeypatch.setattr(sweep_view, "AUTO_SWEEP_PAGES", 10)  # the demo's 26 pages count as large
    at = _app(metric="confusion", sweep_open="1")
    _no_exception(at)
    assert not _sweep_charts(at)
    assert not store._sweeps  # nothing run again before the button
    assert "rasterises the 26 pages again" in _shown_text(at)
    at.button(key="sweep-A-make").click().run()
    _no_exception(at)
    sweep = evaluate_pair(DEMO / "reference.json", DEMO / "model_a.json").evaluation.sweep()
    assert np.array_equal(_curve(_sweep_chart(at), "Foreground"), sweep[sweep["scope"] == "foreground"]["f1"].to_numpy(dtype=float))
    again = _app(metric="confusion", sweep_open="1")  # another tab: the sweep made is shown at once
    _no_exception(again)
    assert np.array_equal(_curve(_sweep_chart(again), "Foreground"), sweep[sweep["scope"] == "foreground"]["f1"].to_numpy(dtype=float))
    assert len(store._sweeps) == 1


def test_click_callback_sets_the_sidebars_minimum_score(monkeypatch):
    state = {"sweep-A": {"selection": {"points": [{"x": 0.35000000001, "y": 0.9, "curve_number": 0}]}}}  # as Streamlit sends a Plotly click
    monkeypatch.setattr(sweep_view.st, "session_state", state)
    sweep_view._evaluate_at("sweep-A")
    assert state["min_score"] == MIN_SCORES[6] == 0.35
    state["sweep-A"] = {"selection": {"points": []}}
    sweep_view._evaluate_at("sweep-A")
    assert state["min_score"] == 0.35  # a click that selects nothing leaves it


def test_best_points_are_each_curves_highest_f1_at_its_lowest_minimum_score(demo_evaluation):
    sweep = demo_evaluation.sweep()
    best = sweep_view.best_points(sweep).set_index("curve")
    for name, rows in [("Foreground", sweep[sweep["scope"] == "foreground"]), ("Table", sweep[sweep["class"] == "Table"])]:
        f1 = rows["f1"].astype(float).tolist()
        at = f1.index(max(f1))  # the first of the highest: the lowest minimum score
        assert best.loc[name, "tore"] == MIN_SCORES[at] and best.loc[name, "tore_f1"] == max(f1)
        detection = rows["detection_f1"].astype(float).tolist()
        assert best.loc[name, "detection"] == MIN_SCORES[detection.index(max(detection))]
    assert best.loc["Foreground", "ap"] == demo_evaluation.map.map and best.index.tolist()[0] == "Foreground"


def test_boxes_drawn_and_a_documents_matrices_follow_the_minimum_score(store):
    at = _app(min_score="0.6", metric="confusion", sweep_open="1")
    _no_exception(at)
    (evaluated,) = store._entries.values()
    reference, prediction = load_pair(DEMO / "reference.json", DEMO / "model_a.json")
    page = prediction.pages[0]
    kept = [label for label, score in zip(page.labels, page.scores) if not score < 0.6]
    assert evaluated.prediction_page(page.id).labels == kept and len(kept) < page.box_count
    at.selectbox(key=documents.DOCUMENT).set_value("paper-b").run()
    _no_exception(at)

    def alone(layout: LayoutSet) -> LayoutSet:
        return LayoutSet(layout.name, [page for page in layout.pages if page.id.startswith("paper-b/")], layout.taxonomy)

    separate = evaluate_dataset(alone(reference), alone(prediction), min_score=0.6)
    heatmap = _heatmaps(at)[0]
    names = separate.matrices.classes
    rows, columns = _axes(heatmap)
    expected = np.array([[separate.matrices.full.confusion[names.index(r), names.index(c)] if {r, c} <= set(names) else 0.0
                          for c in columns] for r in rows])
    assert np.array_equal(_cells(heatmap, "pixels"), expected)
    assert "The operating point is the whole dataset's" in _shown_text(at)


def test_a_minimum_score_from_a_link_is_checked(store):
    at = _app(min_score="1.5", convention="nonsense")
    _no_exception(at)
    assert at.sidebar.number_input(key="min_score").value == 0.0 and at.sidebar.selectbox(key="convention").value == "coco"
    notice = at.warning[0].value
    assert "`min_score` (expected a number from 0 to 1)" in notice and "`convention` (not one of the choices)" in notice


def test_the_sweep_of_real_scored_predictions(store, monkeypatch):
    from tests.helpers import shared_path

    folder = shared_path("data", "layouts", "docling_two_layout_models")
    reference, prediction, images = (folder / name for name in ("coco_results_pre_heron_default_layout_model.json",
                                                                "coco_results_heron_layout_model.json", "coco_images_and_categories.json"))
    engine = evaluate_pair(reference, prediction, coco_images=images).evaluation
    relative = {key: str(path.relative_to(REPOSITORY.parent)) for key, path in (("ref", reference), ("a", prediction), ("coco", images))}
    at = _app(src="path", **relative, sweep_open="1")
    _no_exception(at)
    chart = _sweep_chart(at)
    sweep = engine.sweep()
    for name, rows in sweep[sweep["scope"] == "class"].groupby("class"):
        if not rows["f1"].isna().all():
            assert np.array_equal(_curve(chart, name), rows["f1"].to_numpy(dtype=float), equal_nan=True)
    assert pd.Series(_curve(chart, "Foreground")).equals(sweep[sweep["scope"] == "foreground"]["f1"].astype(float).reset_index(drop=True))
    assert scores_line(at)["mAP"] == f"{engine.map.map:.3f}"
