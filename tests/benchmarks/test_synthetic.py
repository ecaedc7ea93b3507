"""The synthetic benchmark dataset: deterministic, valid, and the size that was asked for."""

from __future__ import annotations

import json

import numpy as np
import pytest

from benchmarks.synthetic import (
    DOCLAYNET_CLASSES,
    synthetic_layouts,
    synthetic_page_pairs,
    write_layout_files,
)
from tore_engine.formats.native import read as load_layout


def test_same_seed_gives_identical_json_files(tmp_path):
    first = write_layout_files(tmp_path / "a", pages=12, seed=7)
    second = write_layout_files(tmp_path / "b", pages=12, seed=7)
    other_seed = write_layout_files(tmp_path / "c", pages=12, seed=8)
    for a, b, c in zip(first, second, other_seed):
        assert a.read_bytes() == b.read_bytes()
        assert a.read_bytes() != c.read_bytes()


def test_a_page_does_not_depend_on_how_many_pages_are_made():
    few = list(synthetic_page_pairs(3, seed=1))
    many = list(synthetic_page_pairs(30, seed=1))
    for (ref_a, pred_a), (ref_b, pred_b) in zip(few, many):
        assert ref_a.labels == ref_b.labels and np.array_equal(ref_a.bboxes, ref_b.bboxes)
        assert pred_a.labels == pred_b.labels and np.array_equal(pred_a.bboxes, pred_b.bboxes)


@pytest.mark.parametrize("boxes", [40, 7])
def test_pages_boxes_and_classes_as_asked(boxes):
    reference, prediction = synthetic_layouts(50, seed=3, boxes=boxes)
    assert len(reference.pages) == len(prediction.pages) == 50
    assert [p.id for p in reference.pages] == [p.id for p in prediction.pages]
    assert reference.taxonomy == prediction.taxonomy == DOCLAYNET_CLASSES
    assert all(page.box_count == boxes for page in reference.pages)
    predicted_counts = [page.box_count for page in prediction.pages]
    assert 0.8 * boxes <= np.mean(predicted_counts) <= 1.2 * boxes
    for layout in (reference, prediction):
        assert set(layout.labels_in_use()) <= set(DOCLAYNET_CLASSES)
        for page in layout.pages:
            assert (page.width, page.height) == (1025, 1025)
            assert page.bboxes.shape == (page.box_count, 4)
            assert np.isfinite(page.bboxes).all() and (page.bboxes >= 0).all()


def test_pages_have_the_features_the_benchmark_needs():
    reference, prediction = synthetic_layouts(100, seed=0)
    assert len(reference.labels_in_use()) == len(DOCLAYNET_CLASSES) == 17
    boxes = np.concatenate([page.bboxes for page in prediction.pages])
    assert (boxes[:, 2] > 1025).any() and (boxes[:, 3] > 1025).any()  # crossing right / bottom edge
    assert (boxes != np.round(boxes)).any()  # fractional coordinates
    assert any(r.labels != p.labels for r, p in zip(reference.pages, prediction.pages))
    assert any(_overlapping(page.bboxes) for page in reference.pages)  # multi-label pixels


def test_size_scales_the_same_pages():
    small, _ = synthetic_layouts(5, seed=2, size=1025)
    large, _ = synthetic_layouts(5, seed=2, size=2050)
    for a, b in zip(small.pages, large.pages):
        assert a.labels == b.labels
        assert np.allclose(2 * a.bboxes, b.bboxes, atol=0.011)


def test_written_files_load_as_the_layouts_in_memory(tmp_path):
    reference_path, prediction_path = write_layout_files(tmp_path, pages=4, seed=5, boxes=10)
    reference, prediction = synthetic_layouts(4, seed=5, boxes=10)
    for path, expected in ((reference_path, reference), (prediction_path, prediction)):
        loaded = load_layout(path)
        assert loaded.name == expected.name and loaded.taxonomy == expected.taxonomy
        for a, b in zip(loaded.pages, expected.pages):
            assert a.id == b.id and a.labels == b.labels and np.array_equal(a.bboxes, b.bboxes)
    assert "score" in json.loads(prediction_path.read_text())["pages"][0]["boxes"][0]


def _overlapping(bboxes: np.ndarray) -> bool:
    x1, y1, x2, y2 = (bboxes[:, k] for k in range(4))
    overlap_x = np.minimum(x2[:, None], x2[None]) > np.maximum(x1[:, None], x1[None])
    overlap_y = np.minimum(y2[:, None], y2[None]) > np.maximum(y1[:, None], y1[None])
    both = overlap_x & overlap_y
    np.fill_diagonal(both, False)
    return bool(both.any())
