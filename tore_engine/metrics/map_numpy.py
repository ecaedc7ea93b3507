"""mAP's NumPy path: COCOeval's per-page matching (pycocotools `computeIoU` + `evaluateImg`) and its
`accumulate`, written as plainly as pycocotools writes them. It serves when numba is missing or a
job is too small to load the compiled path (`map_kernel`), and it is that path's cross-check: both
give the same records and curves, bit for bit.
"""

from __future__ import annotations

import numpy as np

from tore_engine.metrics.map_types import (
    AREA_RANGES,
    MAX_DETECTIONS,
    RECALL_POINTS,
    THRESHOLDS,
    Convention,
    PageMatches,
    SideBoxes,
    coco_boxes,
    detection_scores,
)

AREAS = len(AREA_RANGES)
T50, T75 = 0, 5  # the thresholds 0.50 and 0.75 in both conventions


def box_ious(detections: np.ndarray, references: np.ndarray) -> np.ndarray:
    """(detections, references) IoUs of (x, y, width, height) boxes, operation for operation as
    COCO's `bbIou` (pycocotools and faster-coco-eval alike): a side of the intersection that is
    not positive gives 0, so a zero-area box never matches, not even itself. Its C `fmin` and `fmax`
    pass a NaN by (an infinite box's x + width is inf - inf) and its `w <= 0` test lets a NaN side on,
    so `np.fmin`, `np.fmax` and that test here; infinities and NaN as IEEE makes them, silently, as C
    does (`map_types.OVERFLOW_RULE`)."""
    dx, dy, dw, dh = (detections[:, k, None] for k in range(4))
    gx, gy, gw, gh = (references[None, :, k] for k in range(4))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        width = np.fmin(dx + dw, gx + gw) - np.fmax(dx, gx)
        height = np.fmin(dy + dh, gy + gh) - np.fmax(dy, gy)
        overlap = ~((width <= 0) | (height <= 0))
        intersection = width * height
        ious = intersection / (dw * dh + gw * gh - intersection)
    return np.where(overlap, ious, 0.0)


def match_class(ious: np.ndarray, reference_areas: np.ndarray, detection_areas: np.ndarray,
                thresholds: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`evaluateImg` for one page and class, every area range at once: detections (rows of
    `ious`, in score order) take, greedily, the best still free reference box at IoU >= the
    threshold, reference boxes outside the area range last. Returns the detections' matched and
    ignored bits (a match only where not ignored) and the count of reference boxes each area range keeps."""
    matched, ignored = np.zeros(len(ious), np.uint64), np.zeros(len(ious), np.uint64)
    kept = np.zeros(AREAS, np.int64)
    for area, (low, high) in enumerate(AREA_RANGES):
        outside = (reference_areas < low) | (reference_areas > high)
        order = np.argsort(outside, kind="stable")
        skipped, candidates = outside[order].tolist(), ious[:, order].tolist()
        kept[area] = len(outside) - int(outside.sum())
        detection_outside = ((detection_areas < low) | (detection_areas > high)).tolist()
        for threshold_index, threshold in enumerate(thresholds.tolist()):
            bit = np.uint64(1 << (area * THRESHOLDS + threshold_index))
            taken = [False] * len(order)
            for detection, row in enumerate(candidates):
                best, match = min(threshold, 1 - 1e-10), -1
                for reference, iou in enumerate(row):
                    if taken[reference]:
                        continue
                    if match > -1 and not skipped[match] and skipped[reference]:
                        break
                    if iou < best:
                        continue
                    best, match = iou, reference
                if match > -1:
                    taken[match] = True
                    matched[detection] |= bit
                if (match > -1 and skipped[match]) or (match == -1 and detection_outside[detection]):
                    ignored[detection] |= bit
    return matched & ~ignored, ignored, kept  # an ignored detection's match is read by no figure: left 0


def _curve_points(true: np.ndarray, false: np.ndarray, references: int, convention: Convention) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`accumulate`'s curve for detections in ranking order marked true or false positive (neither
    when ignored) against `references` kept reference boxes: where each recall threshold samples
    it, the interpolated precision (the best precision at or after each detection) and the running
    true positive count."""
    true_sum, false_sum = np.cumsum(true).astype(np.float64), np.cumsum(false).astype(np.float64)
    denominators = false_sum + true_sum + convention.epsilon
    denominators[denominators == 0] = 1.0  # faster-coco-eval: no detection counted yet, precision 0
    envelope = np.maximum.accumulate((true_sum / denominators)[::-1])[::-1]
    return np.searchsorted(true_sum / references, convention.recall_thresholds, side="left"), envelope, true_sum


def precision_curve(true: np.ndarray, false: np.ndarray, references: int, convention: Convention) -> tuple[np.ndarray, float]:
    """The interpolated precision at each recall threshold, and the final recall."""
    positions, envelope, true_sum = _curve_points(true, false, references, convention)
    sampled = np.zeros(RECALL_POINTS)
    inside = positions < len(envelope)
    sampled[inside] = envelope[positions[inside]]
    return sampled, float(true_sum[-1] / references) if len(true_sum) else 0.0


def sampled_sum(true: np.ndarray, false: np.ndarray, references: int, convention: Convention) -> float:
    """The sum of `precision_curve`'s sampled precisions, added as the compiled path adds them:
    for each true positive in ranking order, its interpolated precision times the number of
    recall thresholds it is the first to reach (the threshold 0 counts for the first one)."""
    positions, envelope, true_sum = _curve_points(true, false, references, convention)
    if not len(true_sum) or true_sum[-1] == 0:
        return 0.0
    positions = positions[positions < len(envelope)]
    counts = np.bincount(np.maximum(true_sum[positions].astype(np.int64) - 1, 0))
    firsts = np.searchsorted(true_sum, np.arange(len(counts)) + 1)  # where each true positive is
    total = 0.0
    for first, count in zip(firsts.tolist(), counts.tolist()):
        if count:
            total += envelope[first] * count
    return total


def _flags(matched: np.ndarray, ignored: np.ndarray, bit: int) -> tuple[np.ndarray, np.ndarray]:
    """True and false positives at one (area range, threshold) bit."""
    hit, skip = (matched >> np.uint64(bit)) & np.uint64(1), (ignored >> np.uint64(bit)) & np.uint64(1)
    return (hit == 1) & (skip == 0), (hit == 0) & (skip == 0)


def _page_sums(matched: np.ndarray, ignored: np.ndarray, references: int, convention: Convention) -> np.ndarray:
    """One page and class, area range all: the sum of the sampled precisions at each threshold."""
    return np.array([sampled_sum(*_flags(matched, ignored, threshold), references, convention) for threshold in range(THRESHOLDS)])


def page_values(sums: list[np.ndarray]) -> tuple[float, float, float]:
    """A page's map, map_50 and map_75 from its scored classes' threshold sums (NaN without any)."""
    if not sums:
        return np.nan, np.nan, np.nan
    total, at_50, at_75 = 0.0, 0.0, 0.0
    for class_sums in sums:
        for value in class_sums.tolist():
            total += value
        at_50 += class_sums[T50]
        at_75 += class_sums[T75]
    return total / (THRESHOLDS * RECALL_POINTS * len(sums)), at_50 / (RECALL_POINTS * len(sums)), at_75 / (RECALL_POINTS * len(sums))


def match_pages(reference: SideBoxes, prediction: SideBoxes, class_count: int, convention: Convention) -> PageMatches:
    """Every page's records (in page order: `PageMatches.merged` ranks them) and own mAP, page after page."""
    reference_boxes, reference_areas = coco_boxes(reference, convention)
    detection_boxes, detection_areas = coco_boxes(prediction, convention)
    scores = detection_scores(prediction, convention)
    records: list[tuple[np.ndarray, ...]] = []
    ground_truths = np.zeros((class_count, AREAS), np.int64)
    values = np.full((reference.pages, 3), np.nan)
    for page in range(reference.pages):
        first_reference, first_detection = reference.offsets[page], prediction.offsets[page]
        reference_classes = reference.classes[first_reference:reference.offsets[page + 1]]
        detection_classes = prediction.classes[first_detection:prediction.offsets[page + 1]]
        scored: list[np.ndarray] = []
        for label in np.unique(np.concatenate([reference_classes, detection_classes])).tolist():
            references = first_reference + np.flatnonzero(reference_classes == label)
            detections = first_detection + np.flatnonzero(detection_classes == label)
            detections = detections[np.argsort(-scores[detections], kind="stable")][: MAX_DETECTIONS[-1]]
            ious = box_ious(detection_boxes[detections], reference_boxes[references])
            matched, ignored, kept = match_class(ious, reference_areas[references], detection_areas[detections], convention.iou_thresholds)
            ground_truths[label] += kept
            records.append((np.full(len(detections), label), scores[detections], np.arange(len(detections)), matched, ignored))
            if kept[0]:
                scored.append(_page_sums(matched, ignored, int(kept[0]), convention))
        values[page] = page_values(scored)
    types = (*PageMatches.RECORD_TYPES[:3], np.uint64, np.uint64)  # the bits, made rows of a table by `from_bits`
    classes, kept_scores, ranks, matched, ignored = (np.concatenate([record[k] for record in records]).astype(dtype, copy=False) if records else np.zeros(0, dtype)
                                                     for k, dtype in enumerate(types))
    return PageMatches.from_bits(
        classes, kept_scores, ranks, matched, ignored,
        ground_truths,
        np.bincount(reference.classes, minlength=class_count) + np.bincount(prediction.classes, minlength=class_count),
        values,
    )


def accumulate(matches: PageMatches, convention: Convention) -> tuple[np.ndarray, np.ndarray]:
    """COCOeval's `precision` (T, R, K, A, M) and `recall` (T, K, A, M) arrays, -1 where a class
    has no reference box that the area range keeps. Precision only at 100 detections a page (the
    only one any figure reads; -1 at 1 and 10), recall at each."""
    class_count = len(matches.boxes)
    precision = -np.ones((THRESHOLDS, RECALL_POINTS, class_count, AREAS, len(MAX_DETECTIONS)))
    recall = -np.ones((THRESHOLDS, class_count, AREAS, len(MAX_DETECTIONS)))
    bounds = matches.class_bounds()
    all_matched, all_ignored = matches.bits()
    for label in range(class_count):
        records = np.arange(bounds[label], bounds[label + 1])
        for limit_index, limit in enumerate(MAX_DETECTIONS):
            kept = records[matches.ranks[records] < limit]
            matched, ignored = all_matched[kept], all_ignored[kept]
            for area in range(AREAS):
                references = int(matches.ground_truths[label, area])
                if references == 0:
                    continue
                for threshold in range(THRESHOLDS):
                    sampled, final = precision_curve(*_flags(matched, ignored, area * THRESHOLDS + threshold), references, convention)
                    if limit == MAX_DETECTIONS[-1]:
                        precision[threshold, :, label, area, limit_index] = sampled
                    recall[threshold, label, area, limit_index] = final
    return precision, recall
