"""Large files are read page by page, with the same result as reading them whole."""

from __future__ import annotations

import pytest
from conftest import load_shared_json, write_json
from test_loaders import COCO

from tore_engine.dataset import evaluate_dataset
from tore_engine.errors import InputError
from tore_engine.jsonstream import LazyArray
from tore_engine.loaders import detect_format, load_layout, load_pair, read_document
from tore_engine.report import build_report


@pytest.fixture
def stream_everything(monkeypatch):
    monkeypatch.setattr("tore_engine.jsonstream.LARGE_FILE_BYTES", 0)


def test_streamed_public_vectors_give_the_same_report(tmp_path, monkeypatch):
    pages = load_shared_json("vectors", "tore_public_pages.json")
    gt, model = write_json(tmp_path / "gt.json", pages["reference"]), write_json(tmp_path / "model.json", pages["prediction"])
    whole = build_report(evaluate_dataset(*load_pair(gt, model)))
    monkeypatch.setattr("tore_engine.jsonstream.LARGE_FILE_BYTES", 0)
    assert isinstance(read_document(gt, ("pages",), ("name",))["pages"], LazyArray)
    reference, prediction = load_pair(gt, model)
    assert (reference.name, reference.taxonomy, len(reference.pages)) == ("gt", pages["reference"]["taxonomy"], 60)
    assert build_report(evaluate_dataset(reference, prediction)) == whole


def test_streamed_coco_instances_and_results(tmp_path, stream_everything):
    gt = write_json(tmp_path / "gt.json", COCO)
    results = write_json(tmp_path / "dets.json", [{"image_id": 9, "category_id": 1, "bbox": [1, 1, 2, 2], "score": 0.9}])
    assert detect_format(gt) == detect_format(results) == "coco"
    reference, prediction = load_pair(gt, results)
    assert reference.pages[0].bboxes.tolist() == [[2, 1, 7, 5]]
    assert prediction.pages[1].labels == ["text"] and prediction.pages[1].scores.tolist() == [0.9]


def test_streamed_broken_json_is_a_clear_error(tmp_path, stream_everything):
    path = tmp_path / "broken.json"
    path.write_text('{"name": "x", "pages": [{"id": "p", "width": 5, "height": 5, "boxes": [}]}')
    with pytest.raises(InputError) as caught:
        load_layout(path)
    assert caught.value.file == str(path) and caught.value.problem.startswith("is not valid JSON")
