"""The OmniDocBench reference (tore_engine.scorers.omnidocbench.reference): page frames from the images or
the polygons, boxes as the derived COCO file has them, keys it does not read, and schema errors."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from PIL import Image

from tests.helpers import load_shared_json, shared_path, write_json
from tests.scorers.omnidocbench.helpers import DEMO
from tore_engine.core.errors import InputError
from tore_engine.scorers.omnidocbench.categories import EVAL_CLASSES
from tore_engine.scorers.omnidocbench.layout_ap import coco_ground_truth
from tore_engine.scorers.omnidocbench.layout_predictions import load_layout_prediction
from tore_engine.scorers.omnidocbench.reference import load_reference


def test_frames_come_from_the_images_and_ten_sizes_are_swapped(reference):
    assert len(reference.pages) == 18
    for page in reference.pages:
        with Image.open(page.image_path) as image:
            assert (page.width, page.height) == (image.width, image.height)
    assert len(reference.swapped_pages) == 10
    assert {page.frame_source for page in reference.pages} == {"image"}


def test_without_images_the_swap_is_detected_from_the_polygons(reference, tmp_path):
    copy = tmp_path / "OmniDocBench.json"
    shutil.copy(shared_path(*DEMO, "OmniDocBench_demo.json"), copy)
    alone = load_reference(copy)
    assert [(p.width, p.height) for p in alone.pages] == [(p.width, p.height) for p in reference.pages]
    swapped = {p.id for p in alone.pages if p.frame_source == "page_info_swapped"}
    assert swapped == set(reference.swapped_pages)
    assert all(page.image_path is None for page in alone.pages)


def test_boxes_and_sizes_agree_with_the_derived_coco_file(reference):
    coco = load_shared_json(*DEMO, "coco", "gt_eval10.coco.json")
    for image, page in zip(coco["images"], reference.pages):
        assert (image["width"], image["height"]) == (page.width, page.height)
    categories = {c["id"]: c["name"] for c in coco["categories"]}
    ours = coco_ground_truth(reference)
    theirs = sorted((a["image_id"], categories[a["category_id"]], *np.round(a["bbox"], 9)) for a in coco["annotations"])
    mine = sorted((a["image_id"], EVAL_CLASSES[a["category_id"] - 1], *np.round(a["bbox"], 9)) for a in ours.dataset["annotations"])
    assert mine == theirs


def test_malformed_reference_names_page_and_box(tmp_path):
    page = {"page_info": {"image_path": "a.jpg", "width": 100, "height": 200}, "layout_dets": [
        {"category_type": "title", "poly": [0, 0, 10, 0, 10, 10, 0, 10]},
        {"category_type": "text_block", "poly": [0, 0, 10]},
    ]}
    with pytest.raises(InputError) as error:
        load_reference(write_json(tmp_path / "gt.json", [page]))
    assert (error.value.page, error.value.box) == ("a.jpg", 1) and "(at [0].layout_dets[1].poly)" in error.value.problem
    with pytest.raises(InputError, match=r"expected array, got object"):
        load_reference(write_json(tmp_path / "bad.json", {"pages": []}))


def test_keys_the_official_evaluator_does_not_read_are_skipped(tmp_path, reference):
    """OmniDocBench files carry more than scoring reads (and versions add keys): they are not errors."""
    data = load_shared_json(*DEMO, "OmniDocBench_demo.json")
    data[0]["page_info"]["new_in_v2"] = {"anything": [1]}
    data[0]["layout_dets"][0]["reviewer"] = "x"
    data[0]["future_section"] = []
    again = load_reference(write_json(tmp_path / "gt.json", data))
    assert [page.blocks for page in again.pages] == [page.blocks for page in reference.pages]
    official_file = shared_path(*DEMO, "pred_layout_detection", "detection_prediction.json")
    official = load_shared_json(*DEMO, "pred_layout_detection", "detection_prediction.json")
    official["results"][0]["extra"] = "not read"
    official["model"] = "unnamed"
    prediction = load_layout_prediction(write_json(tmp_path / "pred.json", official), reference)
    expected = load_layout_prediction(official_file, reference)
    assert prediction.box_count == expected.box_count == 436
    assert [page.labels for page in prediction.pages] == [page.labels for page in expected.pages]


@pytest.mark.parametrize("page, problem, page_id", [
    ({"page_info": [1], "layout_dets": []}, "expected object, got array (at [0].page_info)", None),
    ({"page_info": {"image_path": 5}, "layout_dets": []}, "expected str, got int (at [0].page_info.image_path)", None),
    ({"page_info": {"image_path": "a.jpg", "width": 1, "height": 1}, "layout_dets": [{"poly": [0] * 8}]},
     "missing key 'category_type' (at [0].layout_dets[0])", "a.jpg"),
    (7, "expected object, got int (at [0])", None),
])
def test_a_page_that_breaks_the_schema_is_named_when_it_can_be(tmp_path, page, problem, page_id):
    with pytest.raises(InputError) as error:
        load_reference(write_json(tmp_path / "gt.json", [page]))
    assert (error.value.problem, error.value.page) == (problem, page_id)
