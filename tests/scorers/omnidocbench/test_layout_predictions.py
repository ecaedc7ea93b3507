"""Layout predictions (tore_engine.scorers.omnidocbench.layout_predictions): the official, COCO results and
layout JSON forms give the same AP; unknown pages and bad categories are reported; pages are layout
pages in the reference frame."""

from __future__ import annotations

import pytest

from tests.helpers import shared_path, write_json
from tests.scorers.omnidocbench.helpers import DEMO, TOLERANCE, _as_layout_json
from tore_engine.core.errors import InputError
from tore_engine.scorers.omnidocbench.layout_ap import score_layout
from tore_engine.scorers.omnidocbench.layout_predictions import load_layout_prediction


def test_the_coco_results_form_gives_the_same_ap(reference, layout_scores):
    results = shared_path(*DEMO, "coco", "pred_eval10.coco_results.json")
    scores = score_layout(reference, load_layout_prediction(results, reference))
    assert scores["mAP"] == pytest.approx(layout_scores["mAP"], abs=TOLERANCE)
    assert scores["per_class"] == pytest.approx(layout_scores["per_class"], abs=TOLERANCE)


def test_the_layout_json_form_gives_the_same_ap(reference, prediction_file, layout_scores, tmp_path):
    path = write_json(tmp_path / "pred.json", _as_layout_json(prediction_file, reference, strip_extension=False))
    prediction = load_layout_prediction(path, reference)
    assert prediction.name == "doclayout" and prediction.box_count == 436
    assert score_layout(reference, prediction)["mAP"] == pytest.approx(layout_scores["mAP"], abs=TOLERANCE)
    # pages at half the image size are scaled back into the reference frame
    half = write_json(tmp_path / "half.json", _as_layout_json(prediction_file, reference, zoom=0.5))
    assert score_layout(reference, load_layout_prediction(half, reference))["mAP"] == pytest.approx(
        layout_scores["mAP"], abs=TOLERANCE)


def test_unknown_pages_and_bad_categories_are_reported(reference, tmp_path):
    data = {"categories": {"0": "title"}, "results": [
        {"image_name": "nowhere", "bbox": [0, 0, 5, 5], "category_id": 0, "score": 0.5}]}
    prediction = load_layout_prediction(write_json(tmp_path / "p.json", data), reference)
    assert prediction.unknown_pages == ["nowhere"] and prediction.box_count == 0
    assert score_layout(reference, prediction)["mAP"] == 0.0
    data["results"][0]["category_id"] = 7
    with pytest.raises(InputError, match="category_id 7"):
        load_layout_prediction(write_json(tmp_path / "q.json", data), reference)


def test_layout_predictions_are_layout_pages_in_the_reference_frame(reference):
    from tore_engine.core.layout import Page

    prediction = load_layout_prediction(shared_path(*DEMO, "pred_layout_detection", "detection_prediction.json"), reference)
    assert all(isinstance(page, Page) for page in prediction.pages)
    assert [(p.id, p.width, p.height) for p in prediction.pages] == [(p.id, p.width, p.height) for p in reference.pages]
    assert prediction.pages[0].image.path == reference.pages[0].image_path and prediction.has_scores
