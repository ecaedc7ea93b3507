"""mAP beside TORE in the app (tore_engine.studio.map_views, panels' per-class chart, page_tables),
through AppTest: the scores line, per-class AP and AR@100 bars, per-page mAP and Compare's A against
B equal `Evaluation.map` of an evaluation made here, in both conventions; what is said when mAP is
undefined (dual taxonomy) or depends on the order of unscored boxes."""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest

from tests.helpers import DEMO
from tests.studio.helpers import _app, _bar_charts, _bars, _no_exception, _shown_text, open_page, scores_line
from tore_engine.api import evaluate_pair
from tore_engine.plots import bars
from tore_engine.studio import evaluations, map_views


@pytest.fixture
def store(monkeypatch) -> evaluations.EvaluationStore:
    fresh = evaluations.EvaluationStore()
    monkeypatch.setattr(evaluations, "evaluation_store", lambda: fresh)
    return fresh


def _shown(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _expected_line(evaluation) -> dict[str, str]:
    recall, precision = evaluation.matrices.foreground
    report = evaluation.map
    return {"Foreground recall": f"{recall:.3f}", "Foreground precision": f"{precision:.3f}",
            "Foreground F1": f"{2 * recall * precision / (recall + precision):.3f}",
            **{label: _shown(None if report is None else getattr(report, field)) for field, label in map_views.FIGURES.items()}}


@pytest.mark.parametrize("convention", ["coco", "docling"])
def test_the_scores_line_per_class_bars_and_page_table_are_the_evaluations_map(store, convention):
    engine = evaluate_pair(DEMO / "reference.json", DEMO / "model_a.json", map=convention).evaluation
    at = _app(pages_open="1", **({} if convention == "coco" else {"convention": convention}))
    _no_exception(at)
    assert scores_line(at) == _expected_line(engine)
    assert f"convention {convention}:" in _shown_text(at)
    chart = _bar_charts(at)[0]
    bars = _bars(chart)
    assert list(dict.fromkeys(series for _, series in bars)) == ["recall", "precision", "f1", "AP", "AR@100"]
    per_class = engine.per_class
    assert [name for name, series in bars if series == "AP"] == per_class.index.tolist()
    for series, column in (("AP", "ap"), ("AR@100", "ar_100")):
        shown = np.array([np.nan if bars[name, series] is None else bars[name, series] for name in per_class.index], dtype=float)
        assert np.array_equal(shown, per_class[column].to_numpy(dtype=float), equal_nan=True)
    assert {trace["name"] for trace in chart["data"] if trace["type"] == "bar" and trace["opacity"] < 1} == {"AP", "AR@100"}  # the boxes', not the pixels'
    table = next(frame.value for frame in at.dataframe if "mAP" in frame.value.columns)
    for column, label in map_views.FIGURES.items():
        assert np.array_equal(table[label].to_numpy(dtype=float), engine.pages[column].to_numpy(dtype=float), equal_nan=True)
    (evaluated,) = store._entries.values()
    assert evaluated.evaluation.map.convention == convention


def test_the_heatmap_is_drawn_before_maps_summary_is_made(store, monkeypatch):
    """mAP's summary (1 s at 100,000 pages) waits here until the heatmap is sent: had the page
    needed it first, it would wait in vain. Its figures still fill the places beside TORE's."""
    from tore_engine.metrics.map_report import MapState
    from tore_engine.studio import panels

    heatmap_sent, waited = threading.Event(), []
    summary, heatmap = MapState.report, panels.heatmap

    def made(self, classes):
        waited.append(heatmap_sent.wait(timeout=20))
        return summary(self, classes)

    def drawn(*args, **kwargs):
        heatmap_sent.set()
        return heatmap(*args, **kwargs)

    monkeypatch.setattr(MapState, "report", made)
    monkeypatch.setattr(panels, "heatmap", drawn)
    at = _app()
    _no_exception(at)
    assert waited and all(waited)
    engine = evaluate_pair(DEMO / "reference.json", DEMO / "model_a.json").evaluation
    assert list(scores_line(at).items()) == list(_expected_line(engine).items())
    assert "convention coco:" in _shown_text(at)


def test_an_ap_bar_lists_the_pages_of_its_class(demo_evaluation):
    per_class = {name: {"recall": 0.5, "precision": 0.5, "f1": 0.5, "ap": 0.25, "ar_100": None} for name in ("Table", "Text")}
    series = bars.bar_series(per_class)
    assert series == ["recall", "precision", "f1", "AP", "AR@100"]
    click = {"selection": {"points": [{"x": 1, "curve_number": 3}]}}
    assert bars.clicked_bar(click, list(per_class), series) == ("Text", "AP")
    at = _app()
    at.session_state["bar-class-A"] = "Table"  # what the click on Table's AP bar stores (AppTest cannot click)
    at.run()
    _no_exception(at)
    assert "Pages with Table:" in _shown_text(at)


def test_a_dual_model_says_why_map_is_undefined(store):
    at = _app(model="B", pages_open="1")
    _no_exception(at)
    assert [scores_line(at)[label] for label in map_views.FIGURES.values()] == ["—"] * 3
    assert any("mAP is undefined: dual taxonomy: the two sides have different classes" in info.value for info in at.info)
    pages = next(frame.value for frame in at.dataframe if "foreground F1" in frame.value.columns)
    assert "mAP" not in pages.columns  # no mAP column in the pages table


def _unscored(root, name: str, shift: float) -> str:
    import json

    pages = [{"id": f"p{k}", "width": 100, "height": 100,
              "boxes": [{"label": "Text", "bbox": [10 + shift, 10, 50, 40]}, {"label": "Table", "bbox": [10, 50, 90 - shift, 90]}]}
             for k in range(3)]
    (root / f"{name}.json").write_text(json.dumps({"name": name, "pages": pages}), encoding="utf-8")
    return f"{name}.json"


def test_unscored_predictions_are_said_to_make_map_depend_on_box_order(root, store):
    reference, prediction = _unscored(root, "truth", 0), _unscored(root, "model", 8)
    engine = evaluate_pair(root / reference, root / prediction).evaluation
    at = _app(src="path", ref=reference, a=prediction, sweep_open="1")
    _no_exception(at)
    assert scores_line(at) == _expected_line(engine)
    assert [warning.value for warning in at.warning] == [
        "6 of 6 prediction boxes have no score: mAP ranks them as score 1.0, as the reference does, so in file order, and its result "
        "depends on the order of the boxes (TORE's scores do not)."]
    assert any("The predictions have no scores, so there is no threshold to choose" in info.value for info in at.info)


def test_compare_shows_a_and_b_and_b_minus_a(root, store):
    import json
    import shutil

    for name in ("reference.json", "model_a.json"):
        shutil.copy(DEMO / name, root / name)
    confident = json.loads((DEMO / "model_a.json").read_text(encoding="utf-8"))  # model B: A's boxes scored 0.5 or more
    for page in confident["pages"]:
        page["boxes"] = [box for box in page["boxes"] if box["score"] >= 0.5]
    (root / "model_b.json").write_text(json.dumps(confident), encoding="utf-8")
    a, b = (evaluate_pair(root / "reference.json", root / name).evaluation for name in ("model_a.json", "model_b.json"))
    at = _app(src="path", ref="reference.json", a="model_a.json", b="model_b.json")
    open_page(at, "compare").run()
    _no_exception(at)
    overall = next(frame.value for frame in at.dataframe if "figure" in frame.value.columns)
    assert overall["mAP A"].tolist() == [a.map.map, a.map.map_50, a.map.map_75]
    assert overall["mAP B"].tolist() == [b.map.map, b.map.map_50, b.map.map_75]
    assert overall["mAP B − A"].tolist() == [b.map.map - a.map.map, b.map.map_50 - a.map.map_50, b.map.map_75 - a.map.map_75]
    per_class = next(frame.value for frame in at.dataframe if "AP B − A" in frame.value.columns).set_index("class")
    assert per_class.index.tolist() == list(a.map.per_class)
    for name, (ap, _) in a.map.per_class.items():
        assert per_class.loc[name, "AP A"] == ap and per_class.loc[name, "AP B − A"] == b.map.per_class[name][0] - ap
    assert "convention coco" in _shown_text(at)


def test_compare_against_a_dual_model_keeps_only_the_defined_columns(store):
    at = _app()
    open_page(at, "compare").run()
    _no_exception(at)
    overall = next(frame.value for frame in at.dataframe if "figure" in frame.value.columns)
    assert overall.columns.tolist() == ["figure", "mAP A"]
    assert "B: mAP is undefined: dual taxonomy" in _shown_text(at)
    assert not math.isnan(overall["mAP A"].iloc[0])
