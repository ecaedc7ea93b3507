"""The FUNSD / EC-FUNSD panel of the Scores page (score_panels.funsd), through AppTest (no browser).

Expected numbers come from the engine directly (the simulated predictions written by
`write_simulated_predictions`, scored by `score_funsd` / `score_ec_funsd`). AppTest
cannot click a dataframe row, so a form is opened through the panel's fallback selectbox.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.helpers import SHARED, page_box_colours
from tests.studio.helpers import _image_source, _page_charts, _page_rows, _pane_titles, open_scores_page
from tests.studio.helpers import _no_exception as assert_no_exception
from tore_engine.plots.plain_text import plain_for_markdown
from tore_engine.scorers.funsd import score_ec_funsd, score_funsd
from tore_engine.scorers.funsd.ec_overlay import ec_folder_overlays
from tore_engine.scorers.funsd.figures import UNMATCHED_RED, entity_outcome
from tore_engine.scorers.funsd.simulated import write_simulated_predictions
from tore_engine.studio.data_root import DATA_ROOT_VARIABLE
from tore_engine.studio.score_panels.funsd import shown

SAMPLE = SHARED / "data" / "funsd"
# The panel opens on the shared sample; without it there is nothing of the sample to check.
pytestmark = pytest.mark.skipif(not SAMPLE.exists(), reason=f"shared sample data not found at {SAMPLE}; skipping the funsd panel tests")
OUTSIDE = "is outside the folder it must stay in (the data root"
FOLDERS = {"funsd": SAMPLE / "funsd" / "testing_data" / "annotations", "ec-funsd": SAMPLE / "ec_funsd" / "jsons"}
SCORERS = {"funsd": score_funsd, "ec-funsd": score_ec_funsd}


def _needs_sample() -> None:
    if not FOLDERS["funsd"].is_dir() or not FOLDERS["ec-funsd"].is_dir():
        pytest.skip(f"shared FUNSD sample not found at {SAMPLE.resolve()}; skipping")


def _scores_page(**query: str) -> AppTest:
    return open_scores_page("funsd", timeout=120, **query)


def _frame(at: AppTest, first_column: str):
    return next(frame.value for frame in at.dataframe if frame.value.columns[0] == first_column)


def _table_with_row(at: AppTest, row: str):
    return next(frame.value for frame in at.dataframe if row in frame.value.index)


@pytest.fixture(scope="module", params=["funsd", "ec-funsd"])
def simulated(request, tmp_path_factory):
    """(kind, the engine's report of the seed-0 simulated prediction as JSON, its overlays)."""
    _needs_sample()
    kind = request.param
    predictions = tmp_path_factory.mktemp(kind)
    write_simulated_predictions(kind, FOLDERS[kind], predictions, seed=0)
    report = SCORERS[kind](FOLDERS[kind], predictions).panel()
    overlays = ({d["doc"]: d["overlay"] for d in report["documents"]} if kind == "funsd"
                else ec_folder_overlays(FOLDERS[kind], predictions)[0])
    return kind, report, overlays


def test_headline_tables_and_documents_equal_the_engine(simulated):
    kind, report, _ = simulated
    at = _scores_page(funsd_kind=kind)
    assert any("**simulated**" in info.value for info in at.info)
    metrics = {metric.label: metric.value for metric in at.metric}
    assert metrics == {item["label"]: shown(item["value"]) for item in report["headline"]}
    if kind == "ec-funsd":
        assert metrics["Linking F1, gold entities"] == "n/a"  # undefined, never 0
    captions = [caption.value for caption in at.caption]
    assert all(item["convention"] in captions for item in report["headline"])
    ser = _table_with_row(at, "overall")
    if kind == "funsd":
        labeling = _table_with_row(at, "micro without other")
        for name, row in report["per_class"]["entity_labeling"].items():
            assert labeling.loc[name, "f1"] == shown(row["f1"]) and labeling.loc[name, "support_gt"] == str(row["support_gt"])
        assert labeling.loc["micro", "f1"] == shown(report["corpus"]["entity_labeling"]["micro"]["f1"])
    for name, row in report["per_class"]["ser_seqeval"].items():
        assert ser.loc[name, "f1"] == shown(row["f1"])
    assert ser.loc["overall", "support"] == "n/a"
    documents = _frame(at, "document")
    labels = {item["key"]: item["label"] for item in report["headline"]}
    assert sorted(documents["document"]) == sorted(d["doc"] for d in report["documents"])
    for document in report["documents"]:
        row = documents.set_index("document").loc[document["doc"]]
        assert {labels[key]: row[labels[key]] for key in document["row"]} == {labels[k]: shown(v) for k, v in document["row"].items()}


def test_documents_sort_by_the_chosen_metric(simulated):
    kind, report, _ = simulated
    at = _scores_page(funsd_kind=kind)
    label = report["headline"][1]["label"]
    at.selectbox(key="funsd_sort").set_value(label).run()
    values = [next(d["row"] for d in report["documents"] if d["doc"] == doc)[report["headline"][1]["key"]]
              for doc in _frame(at, "document")["document"]]
    defined = [value for value in values if value is not None]
    assert defined == sorted(defined) and values[len(defined):] == [None] * (len(values) - len(defined))
    at.toggle(key="funsd_desc").set_value(True).run()
    best_first = [next(d["row"] for d in report["documents"] if d["doc"] == doc)[report["headline"][1]["key"]]
                  for doc in _frame(at, "document")["document"]]
    assert [v for v in best_first if v is not None] == sorted(defined, reverse=True)
    assert at.query_params["funsd_sort"] == label


def test_choosing_a_document_draws_its_overlay(simulated):
    kind, report, overlays = simulated
    doc = sorted(overlays)[3]
    at = _scores_page(funsd_kind=kind)
    at.selectbox(key="funsd_doc").set_value(doc).run()
    assert_no_exception(at)
    assert at.query_params["funsd_doc"] == doc
    assert any(markdown.value.startswith(f"#### {doc}") for markdown in at.markdown)
    figure = _page_charts(at)[0]
    overlay = overlays[doc]
    assert _pane_titles(figure) == [f"ground truth: {len(overlay['gt_entities'])} entities, {len(overlay['gt_links'])} links",
                      f"prediction (simulated): {len(overlay['pred_entities'])} entities, {len(overlay['pred_links'])} links"]
    assert _image_source(figure).startswith("data:image/jpeg")  # the form's PNG, re-encoded
    unmatched = sum(entity_outcome(e) == "unmatched" for e in overlay["gt_entities"] + overlay["pred_entities"])
    red_dashed = [row for row in _page_rows(figure, "box") if row["dash"] == "dash" and page_box_colours(figure, row)[1] == UNMATCHED_RED]
    assert unmatched > 0 and len(red_dashed) == unmatched
    numbers = _frame(at, "number").set_index("number")["value"].to_dict()
    document = next(d for d in report["documents"] if d["doc"] == doc)
    assert numbers == {item["label"]: shown(document["row"][item["key"]]) for item in report["headline"]}


def test_a_deep_link_opens_the_document_and_the_seed():
    _needs_sample()
    at = _scores_page(funsd_doc="82504862", funsd_seed="3")
    assert at.selectbox(key="funsd_doc").value == "82504862"
    assert at.number_input(key="funsd_seed").value == 3
    assert any("Seed 3:" in info.value for info in at.info)


@pytest.mark.parametrize("typed, message", [("shared/no_such_folder", "does not exist"), ("../../..", OUTSIDE)])
def test_a_broken_reference_path_shows_the_error(typed, message):
    _needs_sample()
    at = _scores_page()
    at.text_input(key="funsd_ref").set_value(typed).run()
    assert_no_exception(at)
    assert any(plain_for_markdown(message) in error.value for error in at.error)
    assert not at.metric


def test_a_malformed_prediction_file_names_the_file(tmp_path, monkeypatch):
    reference, prediction = _own_folders(tmp_path, monkeypatch)
    (prediction / "82092117.json").write_text('{"form": [{"id": 1}]}', encoding="utf-8")
    at = _scores_page(funsd_ref="gold", funsd_pred="model")
    assert any("82092117.json" in error.value and "missing key 'label'" in error.value for error in at.error)


def test_own_folders_score_without_simulation(tmp_path, monkeypatch):
    """Gold scored against itself: every headline number is 1, nothing is called simulated, and a
    missing prediction file is listed."""
    reference, prediction = _own_folders(tmp_path, monkeypatch)
    (prediction / "86220490.json").unlink()
    at = _scores_page(funsd_ref="gold", funsd_pred="model")
    assert any("not at" in warning.value for warning in at.warning)  # the shared sample is outside this data root
    assert any("86220490" in warning.value and "no prediction file" in warning.value for warning in at.warning)
    assert not any("simulated" in info.value for info in at.info)
    expected = score_funsd(reference, prediction).headline()
    assert {m.label: m.value for m in at.metric} == {item["label"]: shown(item["value"]) for item in expected}
    assert _frame(at, "document").set_index("document").loc["82092117", "Entity detection F1"] == "1.0000"


def _own_folders(tmp_path: Path, monkeypatch) -> tuple[Path, Path]:
    """Three real gold forms (and their images) in a data root of their own, with a copy as the prediction."""
    _needs_sample()
    monkeypatch.setenv(DATA_ROOT_VARIABLE, str(tmp_path))
    reference, prediction, images = tmp_path / "gold", tmp_path / "model", tmp_path / "images"
    for folder in (reference, prediction, images):
        folder.mkdir()
    for stem in ("82092117", "82504862", "86220490"):
        shutil.copy(FOLDERS["funsd"] / f"{stem}.json", reference)
        shutil.copy(FOLDERS["funsd"] / f"{stem}.json", prediction)
        shutil.copy(FOLDERS["funsd"].parent / "images" / f"{stem}.png", images)
    return reference, prediction

