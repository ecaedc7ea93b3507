"""Box-by-box IoU-0.5 matches of the OmniDocBench layout evaluation, on the real demo: the pairs
equal a brute-force greedy COCO matching written here, and every page's counts equal the scorer's."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers import shared_path
from tests.scorers.omnidocbench.helpers import DEMO
from tore_engine.scorers.omnidocbench.box_matches import (
    MATCHED,
    NOT_EVALUATED,
    UNMATCHED,
    box_matches_at_iou50,
)
from tore_engine.scorers.omnidocbench.categories import (
    eval_class_of_gt,
    eval_class_of_prediction,
)
from tore_engine.scorers.omnidocbench.layout_ap import score_layout
from tore_engine.scorers.omnidocbench.layout_predictions import load_layout_prediction
from tore_engine.scorers.omnidocbench.reference import load_reference


@pytest.fixture(scope="module")
def demo():
    reference = load_reference(shared_path(*DEMO, "OmniDocBench_demo.json"))
    prediction = load_layout_prediction(shared_path(*DEMO, "pred_layout_detection", "detection_prediction.json"), reference)
    return reference, prediction


def _iou(a, b) -> float:
    width = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    height = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = width * height
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)


def _greedy_pairs(gt_boxes, dt_boxes) -> set[tuple[int, int]]:
    """COCO's matching at one threshold, by brute force: detections by falling score (stable), each
    takes the still-free ground truth of its class with the highest IoU >= 0.5. Boxes outside the
    eval classes (class None) never match."""
    pairs, taken = set(), set()
    order = sorted(range(len(dt_boxes)), key=lambda k: -dt_boxes[k][2])
    for d in order:
        d_class, d_box, _ = dt_boxes[d]
        if d_class is None:
            continue
        best, best_iou = None, 0.5 - 1e-10
        for g, (g_class, g_box) in enumerate(gt_boxes):
            if g in taken or g_class != d_class:
                continue
            iou = _iou(g_box, d_box)
            if iou >= best_iou:
                best, best_iou = g, iou
        if best is not None:
            taken.add(best)
            pairs.add((best, d))
    return pairs


def test_pairs_equal_brute_force_greedy_matching(demo):
    reference, prediction = demo
    pages = box_matches_at_iou50(reference, prediction)
    assert [page.page for page in pages] == [page.id for page in reference.pages]
    total = 0
    for page, ref_page, predicted in zip(pages, reference.pages, prediction.pages):
        gt_boxes = [(eval_class_of_gt(block.category), block.bbox) for block in ref_page.blocks]
        dt_boxes = [(eval_class_of_prediction(label), bbox, score)
                    for label, bbox, score in zip(predicted.labels, predicted.bboxes, predicted.scores)]
        expected = _greedy_pairs(gt_boxes, dt_boxes)
        found = {(g, box.partner) for g, box in enumerate(page.reference) if box.partner is not None}
        assert found == expected, page.page
        assert {(box.partner, d) for d, box in enumerate(page.prediction) if box.partner is not None} == found
        total += len(found)
    assert total == 306  # the scorer's tp at IoU 0.5 on the demo


def test_page_counts_equal_the_scorers_per_page_rows(demo):
    reference, prediction = demo
    rows = score_layout(reference, prediction)["per_page"]
    for page, row in zip(box_matches_at_iou50(reference, prediction), rows):
        gt_status = [box.status for box in page.reference]
        dt_status = [box.status for box in page.prediction]
        assert (row["tp"], row["fn"], row["fp"]) == (gt_status.count(MATCHED), gt_status.count(UNMATCHED), dt_status.count(UNMATCHED))
        assert dt_status.count(MATCHED) == row["tp"]


def test_boxes_keep_their_own_classes_scores_and_order(demo):
    reference, prediction = demo
    page = box_matches_at_iou50(reference, prediction)[7]
    ref_page, predicted = reference.pages[7], prediction.pages[7]
    assert [box.label for box in page.reference] == [block.category for block in ref_page.blocks]
    assert [box.label for box in page.prediction] == list(predicted.labels)
    assert np.allclose([box.score for box in page.prediction], predicted.scores)
    assert all(box.score is None for box in page.reference)
    outside = [k for k, block in enumerate(ref_page.blocks) if eval_class_of_gt(block.category) is None]  # no eval class
    assert outside and [k for k, box in enumerate(page.reference) if box.status == NOT_EVALUATED] == outside
    assert all(page.reference[k].partner is None for k in outside)
    assert (page.width, page.height, page.image) == (ref_page.width, ref_page.height, ref_page.image_path)
