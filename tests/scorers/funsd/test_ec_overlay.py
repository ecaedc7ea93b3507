"""EC-FUNSD overlays: entity boxes from their words, matches by span, links judged as el_e2e_directed."""

from __future__ import annotations

import json

import pytest

from tests.helpers import shared_path
from tore_engine.core.errors import InputError
from tore_engine.scorers.funsd import EcDocument, EcEntities, score_ec_document
from tore_engine.scorers.funsd.ec_overlay import (
    ec_folder_overlays,
    ec_overlay,
    find_ec_page_image,
)

GOLD = {
    "img": {"fname": "images/form.png", "width": 200, "height": 100},
    "document": [
        {"id": 0, "box": [0, 0, 50, 10], "text": "Name: Ann", "words": [
            {"id": 0, "box": [0, 0, 20, 10], "text": "Name:"}, {"id": 1, "box": [30, 0, 50, 10], "text": "Ann"}]},
        {"id": 1, "box": [0, 20, 90, 30], "text": "Date: today now", "words": [
            {"id": 2, "box": [0, 20, 20, 30], "text": "Date:"}, {"id": 3, "box": [30, 20, 60, 32], "text": "today"},
            {"id": 4, "box": [65, 18, 90, 30], "text": "now"}]},
    ],
    "label_entities": [
        {"entity_id": 0, "label": "question", "word_idx": [0]},
        {"entity_id": 1, "label": "answer", "word_idx": [1]},
        {"entity_id": 2, "label": "question", "word_idx": [2]},
        {"entity_id": 3, "label": "answer", "word_idx": [3, 4]},
    ],
    "label_linkings": [[0, 1], [2, 3]],
}
PREDICTION = {  # entity 10 exact, 11 wrong class, 12 exact, 13 a shorter span (unmatched)
    "label_entities": [
        {"entity_id": 10, "label": "question", "word_idx": [0]},
        {"entity_id": 11, "label": "header", "word_idx": [1]},
        {"entity_id": 12, "label": "question", "word_idx": [2]},
        {"entity_id": 13, "label": "answer", "word_idx": [3]},
    ],
    "label_linkings": [[10, 11], [12, 13], [10, 12]],
}


def _overlay(prediction: dict = PREDICTION) -> dict:
    return ec_overlay(EcDocument.from_json(GOLD, doc_id="form"), EcEntities.from_json(prediction))


def test_entities_take_the_union_of_their_word_boxes_and_match_by_span():
    overlay = _overlay()
    assert [e["box"] for e in overlay["gt_entities"]] == [[0, 0, 20, 10], [30, 0, 50, 10], [0, 20, 20, 30], [30, 18, 90, 32]]
    assert [e["matched_pred_id"] for e in overlay["gt_entities"]] == [10, 11, 12, None]
    assert [(e["matched_gt_id"], e["label_correct"]) for e in overlay["pred_entities"]] == [(0, True), (1, False), (2, True), (None, None)]
    assert overlay["pred_entities"][3]["box"] == [30, 20, 60, 32]


def test_links_are_judged_as_the_end_to_end_directed_score():
    overlay = _overlay()
    assert overlay["gt_links"] == [{"from": 0, "to": 1, "found": False}, {"from": 2, "to": 3, "found": False}]
    assert all(not link["correct"] for link in overlay["pred_links"])
    gold = EcDocument.from_json(GOLD, doc_id="form")
    assert score_ec_document(gold, EcEntities.from_json(PREDICTION)).panel()["el_e2e_directed"]["tp"] == 0
    perfect = _overlay({"label_entities": GOLD["label_entities"], "label_linkings": [[0, 1], [1, 0]]})
    assert perfect["gt_links"] == [{"from": 0, "to": 1, "found": True}, {"from": 2, "to": 3, "found": False}]
    assert perfect["pred_links"] == [{"from": 0, "to": 1, "correct": True}, {"from": 1, "to": 0, "correct": False}]


def test_a_prediction_over_unknown_words_is_an_input_error():
    with pytest.raises(InputError, match="not in the gold document"):
        _overlay({"label_entities": [{"entity_id": 1, "label": "answer", "word_idx": [99]}], "label_linkings": []})


def test_page_image_is_found_beside_the_jsons_or_in_extra_folders(tmp_path):
    (tmp_path / "jsons").mkdir()
    (tmp_path / "elsewhere").mkdir()
    annotation = tmp_path / "jsons" / "form.json"
    gold = EcDocument.from_json(GOLD, doc_id="form")
    assert find_ec_page_image(annotation, gold) is None
    (tmp_path / "elsewhere" / "form.png").write_bytes(b"png")
    assert find_ec_page_image(annotation, gold, (tmp_path / "elsewhere",)) == tmp_path / "elsewhere" / "form.png"
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "form.png").write_bytes(b"png")
    assert find_ec_page_image(annotation, gold, (tmp_path / "elsewhere",)) == (tmp_path / "images" / "form.png").resolve()


def test_real_sample_against_itself_is_all_matched(tmp_path):
    jsons = shared_path("data", "funsd", "ec_funsd", "jsons")
    images = shared_path("data", "funsd", "funsd", "testing_data", "images")
    overlays, found_images = ec_folder_overlays(jsons, jsons, (images,))
    assert len(overlays) == 10 and all(found_images.values())
    for overlay in overlays.values():
        assert all(e["matched_pred_id"] == e["id"] for e in overlay["gt_entities"])
        assert all(link["found"] for link in overlay["gt_links"])
    gold = json.loads((jsons / "82504862.json").read_text(encoding="utf-8"))
    assert len(overlays["82504862"]["gt_entities"]) == len(gold["label_entities"])
