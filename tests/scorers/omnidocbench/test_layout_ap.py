"""Layout detection AP and F1 at IoU 0.5 (tore_engine.scorers.omnidocbench.layout_ap) against the official demo
result and a brute-force greedy matcher."""

from __future__ import annotations

import math

import pytest

from tests.helpers import load_shared_json, write_json
from tests.scorers.omnidocbench.helpers import DEMO, TOLERANCE, _as_layout_json
from tore_engine.scorers.omnidocbench.categories import EVAL_CLASSES
from tore_engine.scorers.omnidocbench.layout_ap import score_layout
from tore_engine.scorers.omnidocbench.layout_predictions import load_layout_prediction


def test_layout_ap_equals_the_official_demo_result(layout_scores):
    expected = load_shared_json(*DEMO, "reference_results", "layout_detection_official_demo_mAP.json")
    pairs = {"mAP": "bbox_mAP", "AP50": "bbox_mAP_50", "AP75": "bbox_mAP_75",
             "AP_small": "bbox_mAP_s", "AP_medium": "bbox_mAP_m", "AP_large": "bbox_mAP_l"}
    for ours, theirs in pairs.items():
        assert layout_scores[ours] == pytest.approx(expected[theirs], abs=TOLERANCE)
    assert list(layout_scores["per_class"]) == list(EVAL_CLASSES)
    for name, value in layout_scores["per_class"].items():
        assert value == pytest.approx(expected[f"bbox_{name}_precision"], abs=TOLERANCE)
    assert layout_scores["mAP"] == pytest.approx(0.5999473124324551, abs=TOLERANCE)


def _greedy_tp_at_iou50(reference, prediction) -> int:
    """Independent brute force: per page and class, boxes by score (stable), each takes the unmatched
    ground truth of highest IoU >= 0.5."""
    from tore_engine.scorers.omnidocbench.categories import (
        eval_class_of_gt,
        eval_class_of_prediction,
    )

    def iou(a, b):
        w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
        h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
        union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - w * h
        return w * h / union if union > 0 else 0.0

    tp = 0
    for page, predicted in zip(reference.pages, prediction.pages):
        for name in EVAL_CLASSES:
            truth = [b.bbox for b in page.blocks if eval_class_of_gt(b.category) == name]
            boxes = [(s if not math.isnan(s) else 1.0, i, box) for i, (label, box, s) in
                     enumerate(zip(predicted.labels, predicted.bboxes, predicted.scores)) if eval_class_of_prediction(label) == name]
            taken = set()
            for _, _, box in sorted(boxes, key=lambda item: (-item[0], item[1])):
                best, best_iou = None, 0.5 - 1e-10
                for j, gt_box in enumerate(truth):
                    value = iou(box, gt_box)
                    if j not in taken and value >= best_iou:
                        best, best_iou = j, value
                if best is not None:
                    taken.add(best)
                    tp += 1
    return tp


def test_f1_at_iou50_matches_a_brute_force_greedy_matcher(reference, prediction_file, layout_scores):
    prediction = load_layout_prediction(prediction_file, reference)
    tp = _greedy_tp_at_iou50(reference, prediction)
    iou50 = layout_scores["iou50"]
    assert iou50["tp"] == tp
    assert (iou50["tp"] + iou50["fp"], iou50["tp"] + iou50["fn"]) == (436, 373)
    assert iou50["f1"] == pytest.approx(2 * tp / (436 + 373))
    assert sum(row["tp"] for row in layout_scores["per_page"]) == tp


def test_predictions_without_scores_are_flagged_and_still_give_f1(reference, prediction_file, tmp_path):
    path = write_json(tmp_path / "pred.json", _as_layout_json(prediction_file, reference, scores=False))
    prediction = load_layout_prediction(path, reference)
    scores = score_layout(reference, prediction)
    assert scores["has_scores"] is False
    assert scores["iou50"]["tp"] == _greedy_tp_at_iou50(reference, prediction)
