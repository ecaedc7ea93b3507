"""One-to-one box matching at IoU 0.5 (funsd.md 2.1 and 2.3).

Two rules are offered because published numbers use both: the optimal assignment (maximum total
IoU over the whole matrix, pairs below 0.5 dropped afterwards, kept at exactly 0.5) and the
ICDAR-2015 greedy rule (GT-major, first free prediction with IoU strictly above 0.5).
"""

from __future__ import annotations

import numpy as np

IOU_THRESHOLD = 0.5

Matches = list[tuple[int, int]]  # (reference index, prediction index), sorted by reference index


def iou_matrix(reference: np.ndarray, prediction: np.ndarray) -> np.ndarray:
    """IoU of every reference box (rows) with every predicted box (columns); 0 for an empty union,
    and 0 where absurd coordinates (areas beyond float range) leave no finite union."""
    a = reference[:, None, :]
    b = prediction[None, :, :]
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        inter_w = np.maximum(0.0, np.minimum(a[..., 2], b[..., 2]) - np.maximum(a[..., 0], b[..., 0]))
        inter_h = np.maximum(0.0, np.minimum(a[..., 3], b[..., 3]) - np.maximum(a[..., 1], b[..., 1]))
        inter = inter_w * inter_h
        area_a = (a[..., 2] - a[..., 0]) * (a[..., 3] - a[..., 1])
        area_b = (b[..., 2] - b[..., 0]) * (b[..., 3] - b[..., 1])
        union = area_a + area_b - inter
        usable = (union > 0) & np.isfinite(union)
        return np.where(usable, inter / np.where(usable, union, 1.0), 0.0)


def optimal_matches(iou: np.ndarray) -> Matches:
    """Hungarian assignment maximising total IoU; an assigned pair is kept iff IoU >= 0.5."""
    from scipy.optimize import linear_sum_assignment  # imported here: `tore evaluate --format funsd` needs no scipy

    if iou.size == 0:
        return []
    rows, columns = linear_sum_assignment(iou, maximize=True)
    return [(int(r), int(c)) for r, c in zip(rows, columns) if iou[r, c] >= IOU_THRESHOLD]


def greedy_icdar_matches(iou: np.ndarray) -> Matches:
    """ICDAR-2015 DetectionIoUEvaluator: for each GT in order, the first unused prediction with IoU > 0.5."""
    used = np.zeros(iou.shape[1], dtype=bool)
    matches = []
    for row in range(iou.shape[0]):
        candidates = np.flatnonzero(~used & (iou[row] > IOU_THRESHOLD))
        if candidates.size:
            used[candidates[0]] = True
            matches.append((row, int(candidates[0])))
    return matches
