"""COCO: instances, images + categories without annotations, results lists against an images file."""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings

from tests.helpers import shared_path, write_json
from tests.mutations import json_values, loads_or_input_error, mutations
from tore_engine.api import load, load_pair
from tore_engine.core.errors import InputError
from tore_engine.formats import coco

COCO = {
    "images": [{"id": 7, "file_name": "a.png", "width": 20, "height": 10}, {"id": 9, "file_name": "b.png", "width": 20, "height": 10}],
    "categories": [{"id": 3, "name": "table"}, {"id": 1, "name": "text"}],
    "annotations": [{"id": 1, "image_id": 7, "category_id": 1, "bbox": [2, 1, 5, 4]}, {"id": 2, "image_id": 9, "category_id": 3, "bbox": [0, 0, 20, 10]}],
}


def test_coco_instances_and_results_list(tmp_path):
    reference_path = write_json(tmp_path / "gt.json", COCO)
    results = [{"image_id": 9, "category_id": 1, "bbox": [1, 1, 2, 2], "score": 0.9}]
    reference, prediction = load_pair(reference_path, write_json(tmp_path / "dets.json", results))
    assert reference.taxonomy == ["text", "table"]  # ordered by category id
    assert [p.id for p in reference.pages] == ["a.png", "b.png"]
    assert reference.pages[0].bboxes.tolist() == [[2, 1, 7, 5]]
    assert prediction.pages[0].labels == [] and prediction.pages[1].labels == ["text"]
    assert prediction.pages[1].scores.tolist() == [0.9]


def test_coco_prediction_with_its_own_categories(tmp_path):
    other = COCO | {"categories": [{"id": 1, "name": "paragraph"}, {"id": 3, "name": "grid"}]}
    _, prediction = load_pair(write_json(tmp_path / "gt.json", COCO), write_json(tmp_path / "model.json", other))
    assert prediction.taxonomy == ["paragraph", "grid"] and prediction.name == "model"


def test_images_and_categories_without_annotations_is_a_side_without_boxes(tmp_path):
    images = {key: COCO[key] for key in ("images", "categories")}
    layout = load(write_json(tmp_path / "images.json", images))
    assert [page.box_count for page in layout.pages] == [0, 0] and layout.taxonomy == ["text", "table"]


def test_two_results_lists_against_one_images_file(tmp_path):
    images = write_json(tmp_path / "images.json", {key: COCO[key] for key in ("images", "categories")})
    a = write_json(tmp_path / "a.json", [{"image_id": 7, "category_id": 1, "bbox": [0, 0, 5, 5], "score": 0.4}])
    b = write_json(tmp_path / "b.json", [{"image_id": 7, "category_id": 3, "bbox": [1, 1, 5, 5], "score": 0.8}])
    reference, prediction = load_pair(a, b, coco_images=images)
    assert (reference.name, reference.pages[0].labels, prediction.pages[0].labels) == ("a", ["text"], ["table"])
    with pytest.raises(InputError, match="needs the images \\+ categories file"):
        load_pair(a, b)


def test_the_real_docling_results_read_against_their_images_file():
    folder = shared_path("data", "layouts", "docling_two_layout_models")
    reference, prediction = load_pair(folder / "coco_results_pre_heron_default_layout_model.json",
                                      folder / "coco_results_heron_layout_model.json",
                                      coco_images=folder / "coco_images_and_categories.json")
    assert len(reference.pages) == len(prediction.pages) == 7
    assert reference.pages[0].image.path.name == "2305.03393v1-pg9_p0.png" and reference.pages[0].image.path.is_file()
    images = json.loads((folder / "coco_images_and_categories.json").read_text())["images"]
    for layout, results in ((reference, "coco_results_pre_heron_default_layout_model.json"), (prediction, "coco_results_heron_layout_model.json")):
        boxes = Counter(result["image_id"] for result in json.loads((folder / results).read_text()))  # one box a result
        assert [page.box_count for page in layout.pages] == [boxes[image["id"]] for image in images]


@pytest.mark.parametrize(
    "change, problem",
    [
        ({"categories": [{"id": 1, "name": "text"}, {"id": 2, "name": "text"}]}, "categories 1 and 2 have the same name 'text'; a class must have one id (merge them, or rename one)"),
        ({"categories": [{"id": 1, "name": "text"}, {"id": 1, "name": "table"}]}, "category id 1 is listed twice"),
        ({"categories": []}, "COCO 'categories' must be a non-empty list"),
        ({"images": [{"id": 7, "file_name": "a.png", "width": "20", "height": 10}]}, "expected float, got str (at images[0].width)"),
        ({"annotations": {"a": 1}}, "COCO 'annotations' must be a list"),
        ({"annotations": [{"image_id": 7, "category_id": 1, "bbox": [0, 0, 1]}]}, "annotation 0: expected a list of 4 numbers (at bbox)"),
        ({"annotations": [{"image_id": 8, "category_id": 1, "bbox": [0, 0, 1, 1]}]}, "annotation 0 refers to unknown image_id 8"),
    ],
)
def test_bad_coco_is_a_clear_error(tmp_path, change, problem):
    with pytest.raises(InputError) as caught:
        load(write_json(tmp_path / "gt.json", COCO | change))
    assert caught.value.problem == problem and caught.value.file == str(tmp_path / "gt.json")


def test_unknown_category_names_page_and_box(tmp_path):
    reference_path = write_json(tmp_path / "gt.json", COCO)
    bad = write_json(tmp_path / "dets.json", [{"image_id": 7, "category_id": 5, "bbox": [0, 0, 1, 1]}])
    with pytest.raises(InputError) as caught:
        load_pair(reference_path, bad)
    assert (caught.value.page, caught.value.box) == ("a.png", 0) and "unknown category_id 5" in caught.value.problem


# --- hostile input ------------------------------------------------------------------------------


VALID_COCO = {
    "images": [{"id": 1, "file_name": "p1.png", "width": 50, "height": 40}],
    "categories": [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}],
    "annotations": [{"id": 1, "image_id": 1, "category_id": 2, "bbox": [1, 2, 10, 10], "score": 0.3}],
}


def read_coco_document(document) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "hostile.json"
        path.write_text(json.dumps(document), encoding="utf-8")
        coco.read(path)


@settings(max_examples=300, deadline=None)
@given(json_values | mutations(VALID_COCO))
def test_coco_loader_never_crashes(document):
    loads_or_input_error(read_coco_document, document)


def test_segmentation_polygons_rle_masks_and_rectangles(tmp_path):
    """One polygon that is not an axis-aligned rectangle becomes the box's polygon (its bbox the
    polygon's bounding box); a rectangle, an RLE mask or several polygons leave the bbox, the last
    two with a warning naming the page and box."""
    from tore_engine.formats.coco import read

    triangle = [10, 10, 50, 12, 30, 40]
    annotations = [
        {"id": 1, "image_id": 1, "category_id": 1, "bbox": [10, 10, 40, 30], "segmentation": [triangle]},
        {"id": 2, "image_id": 1, "category_id": 1, "bbox": [0, 0, 5, 5], "segmentation": [[0, 0, 5, 0, 5, 5, 0, 5]]},
        {"id": 3, "image_id": 1, "category_id": 1, "bbox": [0, 0, 5, 5], "segmentation": {"counts": [0, 25], "size": [60, 80]}, "iscrowd": 1},
        {"id": 4, "image_id": 1, "category_id": 1, "bbox": [0, 0, 9, 9], "segmentation": [[0, 0, 4, 0, 4, 4], [5, 5, 9, 5, 9, 9]]},
    ]
    path = tmp_path / "gt.json"
    path.write_text(json.dumps({"images": [{"id": 1, "file_name": "p.png", "width": 80, "height": 60}],
                                "categories": [{"id": 1, "name": "Text"}], "annotations": annotations}))
    layout = read(path)
    page = layout.pages[0]
    assert page.bboxes.tolist() == [[10, 10, 50, 40], [0, 0, 5, 5], [0, 0, 5, 5], [0, 0, 9, 9]]
    assert page.polygons.outline(0).reshape(-1).tolist() == triangle
    assert [page.polygons.outline(k) for k in (1, 2, 3)] == [None, None, None]
    located = [(w.page, w.box) for w in layout.warnings if w.page is not None]
    assert located == [("p.png", 2), ("p.png", 3)]
    assert any("RLE mask" in w.message for w in layout.warnings) and any("has 2 polygons" in w.message for w in layout.warnings)
