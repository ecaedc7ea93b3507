"""Box by box, which ground-truth blocks and predicted boxes the IoU-0.5 matching of the layout
evaluation pairs up, so that the app can draw a page with its matched and unmatched boxes.

It is the same greedy COCO matching (same class, IoU >= 0.5, highest score first) that gives the
`iou50` precision/recall/F1 of `layout_ap`, so a page's drawing agrees with its table row. Boxes
whose class is outside the 10 eval classes are kept, marked as not evaluated.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tore_engine.scorers.omnidocbench.categories import (
    eval_class_of_gt,
    eval_class_of_prediction,
)
from tore_engine.scorers.omnidocbench.layout_ap import (
    coco_detections,
    coco_ground_truth,
    matches_at_iou50,
)
from tore_engine.scorers.omnidocbench.layout_predictions import LayoutPrediction, scores_or_nan
from tore_engine.scorers.omnidocbench.reference import Reference

MATCHED, UNMATCHED, NOT_EVALUATED = "matched", "unmatched", "not evaluated"


@dataclass(frozen=True)
class MatchedBox:
    """One box in its own class name, with its eval class and its partner on the other side."""

    label: str
    eval_class: str | None  # None: outside the 10 eval classes, so never matched
    bbox: tuple[float, float, float, float]  # x1, y1, x2, y2 in image pixels
    score: float | None
    partner: int | None  # index of the matched box on the other side of the page

    @property
    def status(self) -> str:
        if self.eval_class is None:
            return NOT_EVALUATED
        return MATCHED if self.partner is not None else UNMATCHED


@dataclass(frozen=True)
class PageMatches:
    """One page's ground-truth blocks (in `layout_dets` order) and predicted boxes (in file order)."""

    page: str
    width: float
    height: float
    image: Path | None
    reference: list[MatchedBox]
    prediction: list[MatchedBox]


def _coco_order(pages_labels: list[list[str]], eval_class_of: Callable[[str], str | None]) -> list[tuple[int, int]]:
    """(page position, box index) of each evaluated box, in the order `layout_ap` numbers its COCO
    annotations (annotation id = position in this list + 1)."""
    return [
        (page_position, box_index)
        for page_position, labels in enumerate(pages_labels)
        for box_index, label in enumerate(labels)
        if eval_class_of(label) is not None
    ]


def box_matches_at_iou50(reference: Reference, prediction: LayoutPrediction) -> list[PageMatches]:
    """Every page of the reference with its boxes on both sides and their IoU-0.5 partners."""
    gt = coco_ground_truth(reference)
    dt = gt.loadRes(coco_detections(prediction))
    gt_positions = _coco_order([[block.category for block in page.blocks] for page in reference.pages], eval_class_of_gt)
    dt_positions = _coco_order([list(page.labels) for page in prediction.pages], eval_class_of_prediction)
    partners_of_gt: dict[tuple[int, int], int] = {}
    partners_of_dt: dict[tuple[int, int], int] = {}
    for dt_id, gt_id in matches_at_iou50(gt, dt).items():
        (page_position, dt_index), (_, gt_index) = dt_positions[dt_id - 1], gt_positions[gt_id - 1]
        partners_of_dt[(page_position, dt_index)] = gt_index
        partners_of_gt[(page_position, gt_index)] = dt_index
    pages = []
    for position, (page, predicted) in enumerate(zip(reference.pages, prediction.pages)):
        gt_boxes = [
            MatchedBox(block.category, eval_class_of_gt(block.category), block.bbox, None,
                       partners_of_gt.get((position, index)))
            for index, block in enumerate(page.blocks)
        ]
        dt_boxes = [
            MatchedBox(label, eval_class_of_prediction(label), (x1, y1, x2, y2),
                       None if math.isnan(score) else score, partners_of_dt.get((position, index)))
            for index, (label, (x1, y1, x2, y2), score)
            in enumerate(zip(predicted.labels, predicted.bboxes.tolist(), scores_or_nan(predicted).tolist()))
        ]
        pages.append(PageMatches(page.id, page.width, page.height, page.image_path, gt_boxes, dt_boxes))
    return pages
