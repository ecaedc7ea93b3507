"""The DocILE panel of the Scores page (score_panels.docile), through AppTest (no browser).

Expected numbers come from the engine directly (`evaluate` on the simulated model, `score_docile` on
prediction files). AppTest cannot click a dataframe row, so a document is opened through the
panel's fallback selectbox.
"""

from __future__ import annotations

import json
import shutil

import pytest
from streamlit.testing.v1 import AppTest

from tests.helpers import SHARED
from tests.studio.helpers import _image_source, _legend, _page_charts, open_scores_page
from tests.studio.helpers import _no_exception as assert_no_exception
from tore_engine.plots.plain_text import plain_for_markdown
from tore_engine.scorers.docile import evaluate, load_dataset, score_docile
from tore_engine.scorers.docile.simulated import simulate
from tore_engine.studio.data_root import DATA_ROOT_VARIABLE
from tore_engine.studio.score_panels.common import shown
from tore_engine.studio.score_panels.docile import Inputs, prediction_file, score

SAMPLE = SHARED / "data" / "docile"
# The panel opens on the shared sample; without it there is nothing of the sample to check.
pytestmark = pytest.mark.skipif(not SAMPLE.exists(), reason=f"shared sample data not found at {SAMPLE}; skipping the docile panel tests")
DOCID = "516f2d61ea404b30a9192a72"
METRIC_LABELS = {"AP": "AP", "f1": "F1", "precision": "Precision", "recall": "Recall", "TP": "TP", "FP": "FP", "FN": "FN"}


def _needs_sample() -> None:
    if not (SAMPLE / "dev.json").is_file():
        pytest.skip(f"shared DocILE sample not found at {SAMPLE.resolve()}; skipping")


def _scores_page(**query: str) -> AppTest:
    return open_scores_page("docile", timeout=90, **query)


def _metrics(at: AppTest) -> dict[str, str]:
    return {metric.label: metric.value for metric in at.metric}


def _expected_metrics(result) -> dict[str, str]:
    return {
        f"{task.upper()} {label}": shown(getattr(getattr(result, task).metrics(), name))
        for task in ("kile", "lir")
        for name, label in METRIC_LABELS.items()
    }


def _frame(at: AppTest, first_column: str):
    return next(frame.value for frame in at.dataframe if frame.value.columns[0] == first_column)


@pytest.fixture(scope="module")
def simulated_result():
    _needs_sample()
    dataset = load_dataset(SAMPLE, "dev")
    simulated = simulate(dataset, 0)
    return evaluate(dataset, simulated["kile"].predictions, simulated["lir"].predictions, 1.0)


def test_default_view_scores_the_sample_against_the_simulated_model(simulated_result):
    at = _scores_page()
    assert _metrics(at) == _expected_metrics(simulated_result)
    assert _metrics(at)["KILE TP"] == "6" and _metrics(at)["LIR F1"] == "0.6750"
    assert any("**simulated**" in info.value for info in at.info)
    assert at.radio(key="docile_preds").value == "simulated"
    assert any("PCC" in caption.value and "docile-benchmark 0.3.5" in caption.value and "without OCR words" in caption.value
               for caption in at.caption)
    per_fieldtype = _frame(at, "field type")
    assert per_fieldtype["AP"].is_monotonic_decreasing
    expected = {fieldtype: metrics.AP for fieldtype in simulated_result.kile.table.fieldtypes()
                for metrics in [simulated_result.kile.metrics(fieldtype=fieldtype)]}
    assert dict(zip(per_fieldtype["field type"], per_fieldtype["AP"])) == expected
    per_document = _frame(at, "document")
    assert per_document["document"].tolist() == [DOCID]
    assert per_document["TP"].tolist() == [simulated_result.kile.metrics(docid=DOCID).TP]
    assert not _page_charts(at)  # no document chosen yet


def test_choosing_a_document_shows_its_page_overlay(simulated_result):
    at = _scores_page()
    at.selectbox(key="docile_doc").set_value(DOCID).run()
    assert_no_exception(at)
    assert at.query_params["docile_doc"] == DOCID
    charts = _page_charts(at)
    assert len(charts) == 1
    names = set(_legend(charts[0]))
    metrics = simulated_result.kile.metrics(docid=DOCID)
    assert names == {
        f"gold, matched (TP): {metrics.TP}", f"gold, missed (FN): {metrics.FN}",
        f"prediction, matched (TP): {metrics.TP}", f"prediction, unmatched (FP): {metrics.FP}",
    }
    assert _image_source(charts[0]).startswith("data:image/jpeg")  # the PDF page, not a placeholder
    fields = _frame(at, "side")
    assert len(fields) == len(simulated_result.kile.documents[0].kile_golds) + len(simulated_result.kile.predictions[DOCID])


def test_the_overlay_follows_the_task_and_the_url(simulated_result):
    at = _scores_page(docile_doc=DOCID, docile_task="lir")
    metrics = simulated_result.lir.metrics(docid=DOCID)
    assert f"gold, missed (FN): {metrics.FN}" in _legend(_page_charts(at)[0])
    assert at.markdown and any("LIR fields of document" in block.value for block in at.markdown)


def test_a_lower_iou_threshold_rescores():
    _needs_sample()
    at = _scores_page()
    at.number_input(key="docile_iou").set_value(0.5).run()
    assert_no_exception(at)
    dataset = load_dataset(SAMPLE, "dev")
    simulated = simulate(dataset, 0)
    expected = evaluate(dataset, simulated["kile"].predictions, simulated["lir"].predictions, 0.5)
    assert _metrics(at) == _expected_metrics(expected)
    assert _metrics(at)["KILE TP"] != "6"  # a shifted box matches at 0.5, not at 1.0
    assert at.query_params["docile_iou"] == "0.5"


def test_a_missing_dataset_folder_shows_the_engine_message():
    at = _scores_page()
    at.text_input(key="docile_dir").set_value("shared/data/no_such_docile").run()
    assert_no_exception(at)
    assert any("DocILE dataset folder not found" in error.value for error in at.error)
    assert not at.metric


def test_without_the_sample_the_panel_says_so_and_refuses_paths_outside_the_root(tmp_path, monkeypatch):
    monkeypatch.setenv(DATA_ROOT_VARIABLE, str(tmp_path))
    at = _scores_page()
    assert any("The shared DocILE sample is not at" in info.value for info in at.info)
    assert not at.metric
    at.text_input(key="docile_dir").set_value("../elsewhere").run()
    assert_no_exception(at)
    assert any(plain_for_markdown("is outside the folder it must stay in (the data root") in error.value for error in at.error)


def test_prediction_files_on_the_server_are_scored_and_bad_ones_reported(tmp_path, monkeypatch):
    _needs_sample()
    monkeypatch.setenv(DATA_ROOT_VARIABLE, str(tmp_path))
    shutil.copytree(SAMPLE, tmp_path / "docile")  # a temporary copy, to sit inside this data root
    simulated = simulate(load_dataset(SAMPLE, "dev"), seed=7)
    for task in ("kile", "lir"):
        predictions = {docid: [field.to_json() for field in fields] for docid, fields in simulated[task].predictions.items()}
        (tmp_path / f"{task}.json").write_text(json.dumps(predictions))
    (tmp_path / "bad.json").write_text(json.dumps({DOCID: [{"bbox": [0.5, 0.1, 0.2, 0.2], "page": 0, "fieldtype": "x"}]}))
    at = _scores_page()
    at.text_input(key="docile_dir").set_value("docile").run()
    at.radio(key="docile_preds").set_value("files").run()
    assert any("Give a KILE or an LIR prediction file" in info.value for info in at.info)
    at.text_input(key="docile_kile").set_value("kile.json").run()
    at.text_input(key="docile_lir").set_value("lir.json").run()
    assert_no_exception(at)
    expected = score_docile(tmp_path / "docile", "dev", tmp_path / "kile.json", tmp_path / "lir.json")
    assert _metrics(at) == _expected_metrics(expected)
    assert not any("**simulated**" in info.value for info in at.info)
    at.text_input(key="docile_kile").set_value("bad.json").run()
    assert_no_exception(at)
    assert any("KILE: Prediction bbox does not have valid relative coordinates." in error.value for error in at.error)


def test_the_simulated_prediction_files_score_the_same_outside_the_app(tmp_path, simulated_result):
    panel = score(Inputs(SAMPLE.resolve(), "dev", None, None, 0, 1.0))
    for task in ("kile", "lir"):
        (tmp_path / f"{task}.json").write_bytes(prediction_file(panel[task]))
    rescored = score_docile(SAMPLE, "dev", tmp_path / "kile.json", tmp_path / "lir.json")
    assert rescored.to_json() == simulated_result.to_json()

