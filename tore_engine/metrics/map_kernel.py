"""mAP's compiled (numba) path: the same matching records, page values and precision-recall curves
as `map_numpy`, bit for bit, about a hundred times faster.

Two entries, each loaded or compiled on its own (`jit.Kernels`): `_match_pages` (a run of pages,
run in the workers) and `_accumulate` (the curves of all pages, in the driver; the runs' records
are joined by `PageMatches.merged`, in NumPy, which outran a compiled merge). Both are plain
Python until compiled; the same rules as TORE's page kernel say when that pays off (`use_kernels`),
and `warm()` loads or compiles both into the cache folder ahead of a run.
"""

from __future__ import annotations

import os
import sys

import numpy as np

from tore_engine.core import jit
from tore_engine.metrics import score_order
from tore_engine.metrics.map_types import (
    AREA_RANGES,
    CODE_TYPE,
    MAX_DETECTIONS,
    RANK_TYPE,
    RECALL_POINTS,
    THRESHOLDS,
    Convention,
    PageMatches,
    SideBoxes,
    coco_boxes,
    detection_scores,
)

KERNEL_ENV = "TORE_MAP_KERNEL"
AUTO, NUMPY, ALWAYS = "auto", "numpy", "always"
# warm cache, numba not imported yet: its import and the loads (about 0.3 s) pay off from about this many
# pages (of `BOXES_A_PAGE` boxes): 20 synthetic pages of 80 boxes 0.59-0.66 s either way, 50 pages 0.58-0.71 s
# against 1.09-1.21 s on the NumPy path (benchmarks/RESULTS.md)
LOAD_AFTER_PAGES = 40
COMPILE_AFTER_PAGES = 5_000  # cold cache: below this a job never waits for a compile
BOXES_A_PAGE = 50  # both sides' boxes of a typical page (DocLayNet's: about 20 a side): a job's size in pages by its boxes
COMPILE_SECONDS = {"matching": 7, "accumulation": 2}  # CPU seconds of each entry's cold compile (6.5, 2.1 measured)
LOCK_NAME = "compile-map.lock"

AREAS = len(AREA_RANGES)
LIMIT = MAX_DETECTIONS[-1]
T50, T75 = 0, 5
_ZERO, _ONE = np.uint64(0), np.uint64(1)
_FIELD = np.uint64((1 << THRESHOLDS) - 1)  # one area range's threshold bits
_MIX_MATCHED, _MIX_IGNORED = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F)  # odd multipliers spreading the bits (`_encode`)

# No helper makes an array (buffers come from the entries), so none pays numba's reference
# counting on each call: the matching ran twice as fast without it.
# Like every kernel (`jit.Kernels`), they run without the GIL: accumulating runs in the driver,
# where the app's server also answers (0.7 s at 100,000 pages), and so does matching in the app's
# evaluating thread (about 1 s on a page of a million boxes).
matching = jit.Kernels(borrowing=True)
accumulating = jit.Kernels(borrowing=True)


# --- a page's curves (the matching's helpers) ----------------------------------------------------


def _distinct_thresholds(matched, ignored, count, shift):
    """The thresholds (bit t) of one area range whose true and false positives among the first
    `count` records are not those of the threshold before: bit 0, and bit t where some record
    matches or counts at t but not at t - 1, or the other way round. The others' curves are their
    predecessor's (a detection's IoU rarely falls between two thresholds of one page and class)."""
    differing = _ZERO
    for i in range(count):
        valid = ~(ignored[i] >> shift) & _FIELD
        hits = (matched[i] >> shift) & valid
        differing |= (hits ^ (hits << _ONE)) | (valid ^ (valid << _ONE))
    return (differing | _ONE) & _FIELD


def _positives(matched, ignored, count, shift, epsilon, distinct, precisions, true_counts, falses):
    """One pass over the first `count` records (in ranking order) for the thresholds `distinct`
    (bit t) of one area range (bits `shift:shift + THRESHOLDS`): for each, the number of true
    positives `true_counts[t]` and, for the k-th, the precision there, `precisions[t, k]`. Only true
    positives matter: the interpolated precision at any detection is the best at a true positive
    at or after it (a false positive lowers the precision, an ignored one keeps it), and the
    recall rises only at them. `falses` is room for the false positive counts."""
    for t in range(THRESHOLDS):
        true_counts[t] = 0
        falses[t] = 0
    for i in range(count):
        valid = ~(ignored[i] >> shift) & _FIELD & distinct
        if valid == _ZERO:
            continue
        hits = (matched[i] >> shift) & valid
        for t in range(THRESHOLDS):
            bit = _ONE << np.uint64(t)
            if hits & bit != _ZERO:
                true_counts[t] += 1
                precisions[t, true_counts[t] - 1] = true_counts[t] / ((falses[t] + true_counts[t]) + epsilon)
            elif valid & bit != _ZERO:
                falses[t] += 1


def _envelope(precisions, count):
    """The best precision at or after each of the first `count` true positives, in place."""
    for k in range(count - 1, 0, -1):
        if precisions[k] > precisions[k - 1]:
            precisions[k - 1] = precisions[k]


def _sampled_sum(precisions, true_count, references, recall_thresholds):
    """`map_numpy.sampled_sum`: the samples' sum, true positive by true positive (each counts the
    recall thresholds it is the first to reach, found by bisection)."""
    below, total = 0, 0.0
    for k in range(true_count):
        recall = (k + 1) / references
        low, high = below, len(recall_thresholds)  # the thresholds <= recall are those before `low`
        while low < high:
            middle = (low + high) // 2
            if recall_thresholds[middle] <= recall:
                low = middle + 1
            else:
                high = middle
        if low > below:
            total += precisions[k] * (low - below)
        below = low
    return total


for _helper in (_distinct_thresholds, _positives, _envelope, _sampled_sum):
    matching.helper(_helper)


# --- matching --------------------------------------------------------------------------------------


@matching.helper
def _sort_by_class(order, first, count, classes, scores, by_score, buffer):
    """A stable bottom-up merge sort of `order[:count]` (box indices `first + k`) by class, then
    by score descending when `by_score`."""
    for k in range(count):
        order[k] = first + k
    width = 1
    while width < count:
        for low in range(0, count, 2 * width):
            middle, high = min(low + width, count), min(low + 2 * width, count)
            i, j, out = low, middle, low
            while i < middle and j < high:
                a, b = order[i], order[j]
                later = classes[b] < classes[a] or (by_score and classes[b] == classes[a] and scores[b] > scores[a])
                if later:
                    buffer[out] = b
                    j += 1
                else:
                    buffer[out] = a
                    i += 1
                out += 1
            while i < middle:
                buffer[out] = order[i]
                i += 1
                out += 1
            while j < high:
                buffer[out] = order[j]
                j += 1
                out += 1
        for k in range(count):
            order[k] = buffer[k]
        width *= 2


@matching.helper
def _iou(d, g, detections, references):
    """COCO's `bbIou` of detection box d and reference box g, (x, y, width, height) each."""
    # Python floats where this runs uncompiled: IEEE infinities without NumPy's overflow warnings
    dx, dy, dw, dh = float(detections[d, 0]), float(detections[d, 1]), float(detections[d, 2]), float(detections[d, 3])
    gx, gy, gw, gh = float(references[g, 0]), float(references[g, 1]), float(references[g, 2]), float(references[g, 3])
    # C's fmin and fmax, as bbIou: a NaN side (an infinite box's inf - inf) is passed by (written out:
    # `box_kernel` borrows this function into its own module, without helpers of this one)
    a, b = dx + dw, gx + gw
    width = (b if a != a or (b == b and b < a) else a) - (gx if dx != dx or (gx == gx and gx > dx) else dx)
    if width <= 0:
        return 0.0
    a, b = dy + dh, gy + gh
    height = (b if a != a or (b == b and b < a) else a) - (gy if dy != dy or (gy == gy and gy > dy) else dy)
    if height <= 0:
        return 0.0
    intersection = width * height
    union = dw * dh + gw * gh - intersection
    if union == 0.0:  # areas that underflow to 0 (sides of 1e-170): C's quotient, as bbIou's, not a ZeroDivisionError
        return np.nan if intersection == 0.0 else np.inf
    return intersection / union


@matching.helper
def _area_masks(areas, masks):
    """Each box's area ranges, bit a set where range a keeps it (COCOeval's test: an area below
    the range's low end or above its high one is left out; a NaN area is kept), once for all
    pages instead of at every class's every range."""
    for box in range(len(areas)):
        mask = 0
        for area in range(AREAS):
            if not (areas[box] < AREA_RANGES_K[area, 0] or areas[box] > AREA_RANGES_K[area, 1]):
                mask |= 1 << area
        masks[box] = mask


@matching.helper
def _outside(area, mask):
    return (mask >> area) & 1 == 0


@matching.helper
def _masks_present(boxes, count, masks):
    """The set of the area masks of `boxes[:count]`, bit m set where a box's mask is m."""
    present = 0
    for k in range(count):
        present |= 1 << masks[boxes[k]]
    return present


@matching.helper
def _same_as(area, present):
    """An earlier area range that leaves out exactly the same boxes of this page and class, those
    whose area masks are in `present` (then the matches are the same: most classes' boxes all fall
    in one range), or -1."""
    for earlier in range(area):
        same = True
        for mask in range(1 << AREAS):
            if (present >> mask) & 1 and _outside(area, mask) != _outside(earlier, mask):
                same = False
        if same:
            return earlier
    return -1


@matching.helper
def _match_class(ious, references, reference_count, detections, detection_count, reference_masks, detection_masks,
                 thresholds, kept, taken, gt_order, skipped, matched, ignored, out, candidates):
    """`map_numpy.match_class` for one page and class: writes the detections' bits at
    `out:out + detection_count` of `matched` and `ignored`, and each area range's kept count.

    The thresholds are matched independently (each its own taken boxes), so detection by detection
    for all of them at once. An area range with no reference box and no detection in it is
    skipped: whatever matches, every detection is ignored there. A detection looks only at its
    candidates, the reference boxes (in matching order) it could match at the lowest threshold:
    any other fails `iou < best` at every threshold, and passing over it cannot change the outcome
    of the loop's early stop (the boxes after it are left out by the area range as well). With one
    candidate (most detections) the thresholds it matches at are those its IoU reaches where the
    box is still free, found for all at once. So the matches are `match_class`'s (`taken` and
    `candidates` are room for them)."""
    for d in range(detection_count):
        matched[out + d], ignored[out + d] = np.uint64(0), np.uint64(0)
    detections_present = _masks_present(detections, detection_count, detection_masks)
    present = _masks_present(references, reference_count, reference_masks) | detections_present
    for area in range(AREAS):
        earlier = _same_as(area, present)
        if earlier >= 0:
            kept[area] = kept[earlier]
            to, since = np.uint64(area * THRESHOLDS), np.uint64(earlier * THRESHOLDS)
            for d in range(detection_count):
                matched[out + d] |= ((matched[out + d] >> since) & _FIELD) << to
                ignored[out + d] |= ((ignored[out + d] >> since) & _FIELD) << to
            continue
        n = 0
        for outside in range(2):  # the kept reference boxes first, each group in file order
            for g in range(reference_count):
                if _outside(area, reference_masks[references[g]]) == (outside == 1):
                    gt_order[n], skipped[n] = g, outside == 1
                    n += 1
            if outside == 0:
                kept[area] = n
        if kept[area] == 0 and _all_outside(area, detections_present):
            for d in range(detection_count):  # nothing to find, nothing inside: every detection ignored (most ranges, most classes)
                ignored[out + d] |= _FIELD << np.uint64(area * THRESHOLDS)
            continue
        lowest = min(thresholds[0], 1 - 1e-10)
        for position in range(reference_count):
            taken[position] = _ZERO  # bit t: taken at threshold t
        for d in range(detection_count):
            count = 0
            for position in range(reference_count):
                if not ious[d, gt_order[position]] < lowest:
                    candidates[count] = position
                    count += 1
            hits, lost = _ZERO, _ZERO
            if count == 1:  # most detections: one box to match, or none
                position = candidates[0]
                hits = _one_candidate(ious[d, gt_order[position]], thresholds, taken[position])
                taken[position] |= hits
                lost = hits if skipped[position] else _ZERO
            elif count > 1:
                hits, lost = _greedy(ious, d, gt_order, candidates, count, skipped, taken, thresholds)
            if _outside(area, detection_masks[detections[d]]):
                lost |= _FIELD & ~hits
            matched[out + d] |= hits << np.uint64(area * THRESHOLDS)
            ignored[out + d] |= lost << np.uint64(area * THRESHOLDS)
    for d in range(detection_count):
        matched[out + d] &= ~ignored[out + d]  # as `map_numpy.match_class`: no figure reads an ignored detection's match


@matching.helper
def _one_candidate(iou, thresholds, taken):
    """The thresholds at which a detection with one candidate matches it: those whose limit its
    IoU reaches, where it is not taken yet (`taken`: bit t, taken at threshold t)."""
    passing = _ZERO
    for t in range(THRESHOLDS):
        if not iou < min(thresholds[t], 1 - 1e-10):
            passing |= _ONE << np.uint64(t)
    return passing & ~taken


@matching.helper
def _greedy(ious, d, gt_order, candidates, count, skipped, taken, thresholds):
    """COCOeval's choice for detection d at each threshold among its `count` candidates
    (`candidates[:count]`, in matching order): the best IoU still free, the area range's own boxes before the others; what
    it chooses is taken (`taken`, bit t at threshold t). Returns the thresholds where it matched,
    and those where what it matched lies outside the area range."""
    hits, lost = _ZERO, _ZERO
    for t in range(THRESHOLDS):
        bit = _ONE << np.uint64(t)
        best, match = min(thresholds[t], 1 - 1e-10), -1
        for candidate in range(count):
            position = candidates[candidate]
            if taken[position] & bit:
                continue
            if match > -1 and not skipped[match] and skipped[position]:
                break
            iou = ious[d, gt_order[position]]
            if iou < best:
                continue
            best, match = iou, position
        if match > -1:
            taken[match] |= bit
            hits |= bit
            if skipped[match]:
                lost |= bit
    return hits, lost


@matching.helper
def _all_outside(area, present):
    """Whether area range `area` leaves out every box whose mask is in `present`."""
    for mask in range(1 << AREAS):
        if (present >> mask) & 1 and not _outside(area, mask):
            return False
    return True


@matching.helper
def _encode(matched, ignored, count, slots, table, codes):
    """`map_types.match_patterns` in one pass, its rows in the order first met: each record's
    (matched, ignored) pair looked up in an open-addressing hash table (`slots`, at least twice as
    many as the records, -1 where empty) of the rows of `table` written so far; `codes[k]`, record
    k's row. Returns the rows written."""
    mask = np.uint64(len(slots) - 1)
    rows = 0
    for k in range(count):
        bits_matched, bits_ignored = matched[k], ignored[k]
        mixed = (bits_matched * _MIX_MATCHED) ^ (bits_ignored * _MIX_IGNORED)
        slot = (mixed ^ (mixed >> np.uint64(29))) & mask
        while True:
            row = slots[slot]
            if row < 0:
                table[rows, 0], table[rows, 1] = bits_matched, bits_ignored
                slots[slot], codes[k] = rows, rows
                rows += 1
                break
            if table[row, 0] == bits_matched and table[row, 1] == bits_ignored:
                codes[k] = row
                break
            slot = (slot + _ONE) & mask
    return rows


@matching.entry(lambda t: (t.int64[::1], t.float64[:, ::1], t.float64[::1], t.int64[::1],
                            t.int64[::1], t.float64[:, ::1], t.float64[::1], t.int64[::1], t.float64[::1],
                            t.int64, t.float64[::1], t.float64[::1], t.float64))
def _match_pages(reference_offsets, reference_boxes, reference_areas, reference_classes,
                 detection_offsets, detection_boxes, detection_areas, detection_classes, scores,
                 class_count, thresholds, recall_thresholds, epsilon):
    """`map_numpy.match_pages` of prepared columns (COCO boxes, areas, convention scores), the
    records in page order (`PageMatches.merged` ranks them), their match bits as rows of a table
    (`_encode`)."""
    pages = len(reference_offsets) - 1
    most, most_references = 1, 1
    for page in range(pages):
        most_references = max(most_references, reference_offsets[page + 1] - reference_offsets[page])
        most = max(most, most_references, detection_offsets[page + 1] - detection_offsets[page])
    total = len(detection_classes)
    out_classes, out_scores, out_ranks = np.zeros(total, np.int16), np.zeros(total, np.float64), np.zeros(total, np.uint8)  # `PageMatches.RECORD_TYPES`
    matched, ignored = np.zeros(total, np.uint64), np.zeros(total, np.uint64)
    ground_truths = np.zeros((class_count, AREAS), np.int64)
    values = np.full((pages, 3), np.nan)
    reference_order, detection_order, buffer = np.zeros(most, np.int64), np.zeros(most, np.int64), np.zeros(most, np.int64)
    ious = np.zeros((min(most, LIMIT), most_references))  # kept detections x reference boxes (a million of one side: not 800 MB)
    kept, taken, gt_order, skipped = np.zeros(AREAS, np.int64), np.zeros(most, np.uint64), np.zeros(most, np.int64), np.zeros(most, np.bool_)
    precisions, true_counts, falses = np.zeros((THRESHOLDS, LIMIT)), np.zeros(THRESHOLDS, np.int64), np.zeros(THRESHOLDS, np.int64)
    candidates = np.zeros(most, np.int64)
    reference_masks, detection_masks = np.zeros(len(reference_areas), np.int64), np.zeros(len(detection_areas), np.int64)
    _area_masks(reference_areas, reference_masks)
    _area_masks(detection_areas, detection_masks)
    records = 0
    for page in range(pages):
        r0, r_count = reference_offsets[page], reference_offsets[page + 1] - reference_offsets[page]
        d0, d_count = detection_offsets[page], detection_offsets[page + 1] - detection_offsets[page]
        _sort_by_class(reference_order, r0, r_count, reference_classes, scores, False, buffer)
        _sort_by_class(detection_order, d0, d_count, detection_classes, scores, True, buffer)
        i, j = 0, 0
        scored, total_sum, sum_50, sum_75 = 0, 0.0, 0.0, 0.0
        while i < r_count or j < d_count:
            label = class_count
            if i < r_count:
                label = reference_classes[reference_order[i]]
            if j < d_count and detection_classes[detection_order[j]] < label:
                label = detection_classes[detection_order[j]]
            g_first = i
            while i < r_count and reference_classes[reference_order[i]] == label:
                i += 1
            d_first = j
            while j < d_count and detection_classes[detection_order[j]] == label:
                j += 1
            g_count, d_kept = i - g_first, min(j - d_first, LIMIT)
            references, detections = reference_order[g_first:i], detection_order[d_first:d_first + d_kept]
            for d in range(d_kept):
                for g in range(g_count):
                    ious[d, g] = _iou(detections[d], references[g], detection_boxes, reference_boxes)
                out_classes[records + d], out_scores[records + d], out_ranks[records + d] = label, scores[detections[d]], d
            _match_class(ious, references, g_count, detections, d_kept, reference_masks, detection_masks,
                         thresholds, kept, taken, gt_order, skipped, matched, ignored, records, candidates)
            for area in range(AREAS):
                ground_truths[label, area] += kept[area]
            if kept[0] > 0:
                scored += 1
                page_matched, page_ignored = matched[records:records + d_kept], ignored[records:records + d_kept]
                distinct = _distinct_thresholds(page_matched, page_ignored, d_kept, _ZERO)
                _positives(page_matched, page_ignored, d_kept, _ZERO, epsilon, distinct, precisions, true_counts, falses)
                threshold_sum = 0.0
                for t in range(THRESHOLDS):
                    if distinct & (_ONE << np.uint64(t)) != _ZERO:
                        _envelope(precisions[t], true_counts[t])
                        threshold_sum = _sampled_sum(precisions[t], true_counts[t], kept[0], recall_thresholds)
                    total_sum += threshold_sum
                    if t == T50:
                        sum_50 += threshold_sum
                    if t == T75:
                        sum_75 += threshold_sum
            records += d_kept
        if scored > 0:
            points = len(recall_thresholds) * scored
            values[page, 0], values[page, 1], values[page, 2] = total_sum / (len(thresholds) * points), sum_50 / points, sum_75 / points
    capacity = 16
    while capacity < 2 * records:
        capacity *= 2
    slots, table, codes = np.full(capacity, -1, np.int64), np.zeros((records, 2), np.uint64), np.zeros(records, np.int32)
    rows = _encode(matched, ignored, records, slots, table, codes)
    return out_classes[:records], out_scores[:records], out_ranks[:records], codes, table[:rows].copy(), ground_truths, values


# --- accumulation ----------------------------------------------------------------------------------


@accumulating.entry(lambda t: (t.uint8[::1], t.int32[::1], t.uint64[::1], t.uint64[::1], t.int64[::1], t.int64[:, ::1], t.float64[::1], t.float64))
def _accumulate(ranks, codes, matched, ignored, bounds, ground_truths, recall_thresholds, epsilon):
    """`map_numpy.accumulate` of records in ranking order (class c's at `bounds[c]:bounds[c + 1]`),
    as flat C-ordered precision (T, R, K, A, M) and recall (T, K, A, M) arrays: the curves at 100
    detections a page, only the recall (true positives counted) at 1 and 10. Each curve is read
    straight from the records, with no copy of a class's records nor its curve (`_samples`); a
    record's bits are row `codes[k]` of `matched` and `ignored` (`PageMatches.patterns`)."""
    class_count, limits, points = len(bounds) - 1, len(MAX_DETECTIONS), len(recall_thresholds)
    precision = np.full(THRESHOLDS * points * class_count * AREAS * limits, -1.0)
    recall = np.full(THRESHOLDS * class_count * AREAS * limits, -1.0)
    best, started = np.zeros((THRESHOLDS, points)), np.zeros(THRESHOLDS, np.int64)
    true_counts, falses = np.zeros(THRESHOLDS, np.int64), np.zeros(THRESHOLDS, np.int64)
    for label in range(class_count):
        for limit_index in range(limits):
            limit = MAX_DETECTIONS_K[limit_index]
            for area in range(AREAS):
                references = ground_truths[label, area]
                if references == 0:
                    continue
                shift = np.uint64(area * THRESHOLDS)
                if limit_index < limits - 1:
                    _true_positives(ranks, codes, matched, ignored, bounds[label], bounds[label + 1], limit, shift, true_counts)
                    for t in range(THRESHOLDS):
                        recall[((t * class_count + label) * AREAS + area) * limits + limit_index] = true_counts[t] / references
                    continue
                _samples(ranks, codes, matched, ignored, bounds[label], bounds[label + 1], limit, shift, epsilon, references, recall_thresholds,
                         best, started, true_counts, falses)
                for t in range(THRESHOLDS):
                    recall[((t * class_count + label) * AREAS + area) * limits + limit_index] = true_counts[t] / references
                    for r in range(points):
                        precision[(((t * points + r) * class_count + label) * AREAS + area) * limits + limit_index] = best[t, r]
    return precision, recall


@accumulating.helper
def _true_positives(ranks, codes, matched, ignored, start, end, limit, shift, true_counts):
    """The true positives at each threshold of one area range among records `start:end` ranked
    below `limit` on their page."""
    for t in range(THRESHOLDS):
        true_counts[t] = 0
    for k in range(start, end):
        if ranks[k] >= limit:
            continue
        hits = (matched[codes[k]] >> shift) & ~(ignored[codes[k]] >> shift) & _FIELD
        for t in range(THRESHOLDS):
            true_counts[t] += np.int64((hits >> np.uint64(t)) & _ONE)


@accumulating.helper
def _samples(ranks, codes, matched, ignored, start, end, limit, shift, epsilon, references, recall_thresholds, best, started, true_counts, falses):
    """One pass over records `start:end` (in ranking order; those ranked below `limit` on their page)
    for every threshold t of one area range: its true positives `true_counts[t]` and the curve's
    samples `best[t, j]`, the interpolated precision (the best at or after) at the first true
    positive whose recall reaches recall threshold j, 0 where none does: `map_numpy.precision_curve`.

    Instead of each threshold's precision at every true positive (10 a record of the largest class:
    130 MB at 100,000 pages), a true positive's precision raises the best of the last threshold
    its recall reached (`started[t]` of them so far), and the bests become running maxima from the
    end at the last: the same maxima of the same values. Only true positives matter (`_positives`)."""
    points = len(recall_thresholds)
    for t in range(THRESHOLDS):
        true_counts[t], falses[t], started[t] = 0, 0, 0
        for j in range(points):
            best[t, j] = 0.0
    for k in range(start, end):
        if ranks[k] >= limit:
            continue
        valid = ~(ignored[codes[k]] >> shift) & _FIELD
        if valid == _ZERO:
            continue
        hits = (matched[codes[k]] >> shift) & valid
        for t in range(THRESHOLDS):
            bit = _ONE << np.uint64(t)
            if hits & bit != _ZERO:
                true_counts[t] += 1
                reached, recall = started[t], true_counts[t] / references
                while reached < points and recall_thresholds[reached] <= recall:
                    reached += 1
                started[t] = reached
                precision = true_counts[t] / ((falses[t] + true_counts[t]) + epsilon)
                if reached > 0 and precision > best[t, reached - 1]:
                    best[t, reached - 1] = precision
            elif valid & bit != _ZERO:
                falses[t] += 1
    for t in range(THRESHOLDS):
        for j in range(started[t] - 2, -1, -1):
            if best[t, j + 1] > best[t, j]:
                best[t, j] = best[t, j + 1]


AREA_RANGES_K = np.ascontiguousarray(AREA_RANGES)  # globals the compiled code reads as constants
MAX_DETECTIONS_K = np.array(MAX_DETECTIONS, np.int64)


# --- the Python side -------------------------------------------------------------------------------


def match_pages(reference: SideBoxes, prediction: SideBoxes, class_count: int, convention: Convention) -> PageMatches:
    """`map_numpy.match_pages`, compiled."""
    reference_boxes, reference_areas = coco_boxes(reference, convention)
    detection_boxes, detection_areas = coco_boxes(prediction, convention)
    scores = detection_scores(prediction, convention)
    classes, record_scores, ranks, codes, patterns, ground_truths, values = matching.load()(
        np.ascontiguousarray(reference.offsets, np.int64), np.ascontiguousarray(reference_boxes), reference_areas,
        np.ascontiguousarray(reference.classes, np.int64),
        np.ascontiguousarray(prediction.offsets, np.int64), np.ascontiguousarray(detection_boxes), detection_areas,
        np.ascontiguousarray(prediction.classes, np.int64), scores,
        class_count, convention.iou_thresholds, convention.recall_thresholds, convention.epsilon)
    boxes = np.bincount(reference.classes, minlength=class_count) + np.bincount(prediction.classes, minlength=class_count)
    return PageMatches(classes, record_scores, ranks, codes, patterns, ground_truths, boxes, values)


def accumulate(matches: PageMatches, convention: Convention) -> tuple[np.ndarray, np.ndarray]:
    """`map_numpy.accumulate`, compiled."""
    class_count = len(matches.boxes)
    precision, recall = accumulating.load()(
        np.ascontiguousarray(matches.ranks, RANK_TYPE), np.ascontiguousarray(matches.codes, CODE_TYPE),
        np.ascontiguousarray(matches.patterns[:, 0]), np.ascontiguousarray(matches.patterns[:, 1]), matches.class_bounds(), np.ascontiguousarray(matches.ground_truths), convention.recall_thresholds, convention.epsilon)
    limits = len(MAX_DETECTIONS)
    return (precision.reshape(THRESHOLDS, RECALL_POINTS, class_count, AREAS, limits),
            recall.reshape(THRESHOLDS, class_count, AREAS, limits))


# --- when to use it --------------------------------------------------------------------------------


def _mode() -> str:
    mode = os.environ.get(KERNEL_ENV) or AUTO
    if mode not in (AUTO, NUMPY, ALWAYS):
        raise ValueError(f"{KERNEL_ENV} must be {AUTO!r}, {NUMPY!r} or {ALWAYS!r}, not {mode!r}")
    return mode


OTHER_KERNELS: dict[jit.Kernels, tuple[str, float]] = {}  # kernels of other modules that follow these rules: their notice and compile seconds
OTHER_KERNELS[score_order.ordering] = (score_order.WHAT, score_order.COMPILE_SECONDS)


def _what(kernels: jit.Kernels) -> tuple[str, float]:
    """The kernel's name in notices, and about how long its compile takes."""
    if kernels in OTHER_KERNELS:
        return OTHER_KERNELS[kernels]
    name = "matching" if kernels is matching else "accumulation"
    return f"mAP's {name} kernel", COMPILE_SECONDS[name]


def _ready(kernels: jit.Kernels, pages: int, always: bool) -> bool:
    if kernels.loaded:
        return True
    if not always and not jit.load_pays_off(pages, LOAD_AFTER_PAGES):
        return False
    return jit.ready(kernels, *_what(kernels), wait=True, may_compile=always or pages >= COMPILE_AFTER_PAGES,
                     lock_name=LOCK_NAME) is not None


def use_kernels(kernels: jit.Kernels, pages: int, boxes: int = 0) -> bool:
    """Whether `kernels` serve a job of `pages` pages (or of `boxes` boxes, counted as pages of
    `BOXES_A_PAGE`, whichever is more: 41 pages of 2,047 classes cost the NumPy path a minute):
    never with `TORE_MAP_KERNEL=numpy` or without numba; with `always`, loading or compiling at
    once; otherwise from `LOAD_AFTER_PAGES` on when the disk cache has them, compiling them (after
    a notice) only for jobs of `COMPILE_AFTER_PAGES` or more."""
    mode = _mode()
    if mode == NUMPY or not jit.numba_available():
        return False
    return _ready(kernels, max(pages, boxes // BOXES_A_PAGE), mode == ALWAYS)


def use_score_order(records: int, pages: int) -> bool:
    """Whether `records` scores of a job of `pages` pages are sorted by `score_order`'s kernel:
    from `score_order.COMPILED_FROM_RECORDS` on (fewer sort faster in NumPy than it loads), when
    `use_kernels` says so."""
    return records >= score_order.COMPILED_FROM_RECORDS and use_kernels(score_order.ordering, pages)


def preload_for_pool(kernels: jit.Kernels = matching) -> None:
    """Before a local pool forks: load `kernels` (the matching entry, or one of `OTHER_KERNELS`)
    here from a warm cache when numba is loaded already (each worker would load it then), so that
    the forked workers inherit it instead of each loading it (as `page_kernel.preload_for_pool`)."""
    if "numba" in sys.modules and _mode() == AUTO and not kernels.loaded:
        jit.ready(kernels, *_what(kernels), wait=False, may_compile=False, lock_name=LOCK_NAME)


def warm() -> list[str]:
    """Load the two entries, and the other modules' kernels registered in `OTHER_KERNELS`, from
    the cache folder, compiling them there first when it is cold."""
    without = "numba is not installed: mAP uses its NumPy path"
    return [jit.warm(kernels, *_what(kernels), without_numba=without, lock_name=LOCK_NAME) for kernels in (matching, accumulating, *OTHER_KERNELS)]
