"""Loaders: the native format, COCO, and a clear error for every kind of bad input."""

from __future__ import annotations

import json

import pytest
from conftest import layout_json, write_json

from tore_engine.errors import InputError
from tore_engine.loaders import detect_format, load_layout, load_pair


def good_page(**changes):
    page = {"id": "p1", "width": 100, "height": 50, "boxes": [{"label": "Text", "bbox": [1, 2, 30, 40], "score": 0.5}]}
    page.update(changes)
    return page


def error_of(tmp_path, document) -> InputError:
    path = tmp_path / "bad.json"
    path.write_text(document if isinstance(document, str) else json.dumps(document), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_layout(path)
    return caught.value


def test_native_layout_is_read_column_wise(tmp_path):
    path = write_json(tmp_path / "model-x.json", layout_json(None, [good_page(image="img/p1.png")]) | {"name": "m"})
    layout = load_layout(path)
    assert layout.name == "m" and layout.taxonomy is None
    page = layout.pages[0]
    assert (page.id, page.width, page.height, page.labels) == ("p1", 100.0, 50.0, ["Text"])
    assert page.bboxes.tolist() == [[1, 2, 30, 40]] and page.scores.tolist() == [0.5]
    assert page.image.path == tmp_path / "img" / "p1.png"


def test_name_defaults_to_the_file_stem(tmp_path):
    assert load_layout(write_json(tmp_path / "heron.json", {"pages": []})).name == "heron"


@pytest.mark.parametrize(
    "document, where, problem",
    [
        ("{not json", (None, None), "is not valid JSON: Expecting property name enclosed in double quotes at line 1, column 2"),
        ({"pages": [good_page(id=None)]}, (None, None), "pages[0] has no 'id'"),
        ({"pages": [{"id": "p1", "height": 5}]}, ("p1", None), "missing key 'width'"),
        ({"pages": [good_page(width=0)]}, ("p1", None), "width must be a positive finite number, got 0"),
        ({"pages": [good_page(height=-3)]}, ("p1", None), "height must be a positive finite number, got -3"),
        ({"pages": [good_page(boxes=[{"label": "Text"}])]}, ("p1", 0), "missing key 'bbox'"),
        ({"pages": [good_page(boxes=[{"label": "Text", "bbox": [1, 2, 3]}])]}, ("p1", 0), "bbox must have 4 numbers [x1, y1, x2, y2], got 3: [1, 2, 3]"),
        ({"pages": [good_page(boxes=[{"label": "T", "bbox": [0, 0, 1, 1]}, {"label": "T", "bbox": [1, "a", 3, 4]}])]}, ("p1", 1), "bbox must hold numbers only, got [1, 'a', 3, 4]"),
        ({"pages": [good_page(), good_page()]}, ("p1", None), "duplicate page id"),
        ({"taxonomy": ["Table"], "pages": [good_page()]}, (None, None), "labels not in the declared taxonomy: 'Text' (first at page 'p1', box 0)"),
        ([1, 2], (None, None), "not a layout JSON: expected an object with a 'pages' list"),
    ],
)
def test_bad_input_names_file_page_box_and_problem(tmp_path, document, where, problem):
    error = error_of(tmp_path, document)
    assert (error.page, error.box, error.problem) == (*where, problem)
    assert error.file == str(tmp_path / "bad.json")
    assert str(tmp_path / "bad.json") in error.paragraph()


def test_nan_and_infinite_coordinates_are_errors(tmp_path):
    error = error_of(tmp_path, '{"pages": [{"id": "p", "width": 9, "height": 9, "boxes": [{"label": "a", "bbox": [0, NaN, 1, 1]}]}]}')
    assert (error.page, error.box) == ("p", 0) and "NaN or infinite" in error.problem
    error = error_of(tmp_path, '{"pages": [{"id": "p", "width": 9, "height": 9, "boxes": [{"label": "a", "bbox": [0, 0, Infinity, 1]}]}]}')
    assert "NaN or infinite" in error.problem


def test_non_utf8_and_missing_files(tmp_path):
    path = tmp_path / "latin.json"
    path.write_bytes(b'{"pages": [], "name": "\xe9"}')
    with pytest.raises(InputError, match="is not UTF-8"):
        load_layout(path)
    with pytest.raises(InputError, match="no such file"):
        load_layout(tmp_path / "absent.json")


COCO = {
    "images": [{"id": 7, "file_name": "a.png", "width": 20, "height": 10}, {"id": 9, "file_name": "b.png", "width": 20, "height": 10}],
    "categories": [{"id": 3, "name": "table"}, {"id": 1, "name": "text"}],
    "annotations": [{"id": 1, "image_id": 7, "category_id": 1, "bbox": [2, 1, 5, 4]}, {"id": 2, "image_id": 9, "category_id": 3, "bbox": [0, 0, 20, 10]}],
}


def test_coco_instances_and_results_list(tmp_path):
    reference_path = write_json(tmp_path / "gt.json", COCO)
    results = [{"image_id": 9, "category_id": 1, "bbox": [1, 1, 2, 2], "score": 0.9}]
    prediction_path = write_json(tmp_path / "dets.json", results)
    assert detect_format(reference_path) == "coco"
    reference, prediction = load_pair(reference_path, prediction_path)
    assert reference.taxonomy == ["text", "table"]  # ordered by category id
    assert [p.id for p in reference.pages] == ["a.png", "b.png"]
    assert reference.pages[0].bboxes.tolist() == [[2, 1, 7, 5]]
    assert prediction.pages[0].labels == [] and prediction.pages[1].labels == ["text"]
    assert prediction.pages[1].scores.tolist() == [0.9]


def test_coco_prediction_with_its_own_categories(tmp_path):
    reference_path = write_json(tmp_path / "gt.json", COCO)
    other = COCO | {"categories": [{"id": 1, "name": "paragraph"}, {"id": 3, "name": "grid"}]}
    _, prediction = load_pair(reference_path, write_json(tmp_path / "model.json", other))
    assert prediction.taxonomy == ["paragraph", "grid"] and prediction.name == "model"


def test_coco_errors_name_page_and_annotation(tmp_path):
    reference_path = write_json(tmp_path / "gt.json", COCO)
    bad = write_json(tmp_path / "dets.json", [{"image_id": 7, "category_id": 1, "bbox": [0, 0, float("nan"), 1]}])
    with pytest.raises(InputError) as caught:
        load_pair(reference_path, bad)
    assert (caught.value.page, caught.value.box) == ("a.png", 0)
    assert "NaN or infinite" in caught.value.problem and "(annotation 0)" in caught.value.problem
    unknown = write_json(tmp_path / "dets2.json", [{"image_id": 8, "category_id": 1, "bbox": [0, 0, 1, 1]}])
    with pytest.raises(InputError, match="unknown image_id 8"):
        load_pair(reference_path, unknown)
