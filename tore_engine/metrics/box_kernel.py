"""TIDE's per-page decisions (tidecv 1.0.1 `TIDEExample` and `TIDERun._eval_image`), box by box:
which prediction matches which reference box, and why each other prediction is wrong.

One function, `_page_outcomes`, over a run of pages: plain Python until numba compiles it (with
mAP's rules for when that pays off, `map_kernel.use_kernels`), the same decisions either way. It
borrows mAP's IoU (COCO's `bbIou`, which TIDE calls through pycocotools too) and mAP's stable
sort of a page's detections by score.

What TIDE does on a page, in its order: predictions sorted by score (stable), the first
`MAX_DETECTIONS` kept; each in turn takes the reference box of its class with the highest IoU
(the first on a tie; taken boxes count as 0) when that IoU is at least 0.5. Each prediction left
over gets one error, tested in this order: no reference box on the page (Bkg); its best IoU with a
box of its class, taken or not, within [0.1, 0.5] (Loc); with a box of another class >= 0.5
(Cls); with a taken box of its class >= 0.5 (Dupe); its best IoU with any box <= 0.1 (Bkg); else
Both. A Cls or Loc error whose box is free may turn into a true positive when fixed, for the
first such prediction of that box only (TIDE's `BestGTMatch`: the highest score, the earliest on a
tie); a free reference box no such error points at is Miss.
"""

from __future__ import annotations

import types
from collections.abc import Callable

import numpy as np

from tore_engine.core import jit
from tore_engine.metrics import map_kernel

MAX_DETECTIONS = 100  # tidecv's `Data.max_dets`: a page's predictions beyond its 100 best are never looked at
POSITIVE, BACKGROUND = 0.5, 0.1  # TIDE(pos_threshold=0.5, background_threshold=0.1)
# A box's kind: what TIDE made of it. Prediction kinds, then reference kinds.
IGNORED, TP, CLS, LOC, BOTH, DUPE, BKG, FN, MISS = range(9)
ERROR_KINDS = {"Cls": CLS, "Loc": LOC, "Both": BOTH, "Dupe": DUPE, "Bkg": BKG, "Miss": MISS}  # TIDE's order of its main errors

outcomes = jit.Kernels(borrowing=True)


def _borrowed(function: Callable) -> Callable:
    """mAP's kernel helper as a helper of this module (numba rebinds a helper in the globals of
    the module that defines it, and this entry reads its own)."""
    own = types.FunctionType(function.__code__, globals(), function.__name__, function.__defaults__)
    return outcomes.helper(own)


_iou = _borrowed(map_kernel._iou)
_sort_by_class = _borrowed(map_kernel._sort_by_class)


@outcomes.helper
def _first_best(ious, row, count, mask, used, want_used):
    """numpy's argmax of TIDE's masked IoU row: the first reference box of the highest value, where
    a box left out by `mask` (its class: 1 the same, 0 another, -1 any) or by `want_used` (1 only
    taken boxes, -1 any) counts as 0. A NaN IoU (two boxes whose areas underflow: 0 / 0) is the
    row's maximum, as numpy's argmax makes it, and survives the masks, which tidecv multiplies into
    its matrices, but for the taken boxes of its true-positive pass (`want_used` 0), whose column it
    sets to 0."""
    best, where = -1.0, 0
    for g in range(count):
        value = ious[row, g]
        if value != value and not (want_used == 0 and used[0, g] == 1):
            return g, value
        if (mask >= 0 and mask != used[1, g]) or (want_used >= 0 and want_used != used[0, g]):
            value = 0.0
        if value > best:
            best, where = value, g
    return where, best


@outcomes.entry(lambda t: (t.int64[::1], t.float64[:, ::1], t.int64[::1], t.int64[::1], t.float64[:, ::1], t.int64[::1], t.float64[::1]))
def _page_outcomes(reference_offsets, reference_boxes, reference_classes, detection_offsets, detection_boxes, detection_classes, scores):
    """TIDE's decisions on each page: for every detection and every reference box (file order) its
    kind, its partner's index within the page (-1: none) and the IoU with it (NaN: none); for a Cls
    or Loc detection the class its fix makes it a true positive of, -1 when the fix drops it; and
    the kept detections in page order, each page's by rank (TIDE's order of its records)."""
    pages = len(reference_offsets) - 1
    total_detections, total_references = len(detection_classes), len(reference_classes)
    # Held for every box of a run (4 million a side at 100,000 pages): partners, fixes and positions in
    # 32 bits (a run's boxes, a page's positions and the classes fit), IoUs in float64 as TIDE's.
    kinds, partners, ious_out = np.zeros(total_detections, np.int8), np.full(total_detections, -1, np.int32), np.full(total_detections, np.nan)
    fixes = np.full(total_detections, -1, np.int32)
    reference_kinds, reference_partners = np.full(total_references, FN, np.int8), np.full(total_references, -1, np.int32)
    reference_ious = np.full(total_references, np.nan)
    ranked = np.zeros(total_detections, np.int32)
    most, most_references = 1, 1
    for page in range(pages):
        most_references = max(most_references, reference_offsets[page + 1] - reference_offsets[page])
        most = max(most, most_references, detection_offsets[page + 1] - detection_offsets[page])
    order, buffer, no_classes = np.zeros(most, np.int64), np.zeros(most, np.int64), np.zeros(total_detections, np.int64)
    ious = np.zeros((min(most, MAX_DETECTIONS), most_references))  # kept detections x reference boxes (a million of one side: not 800 MB)
    state = np.zeros((2, most), np.int64)  # row 0: taken; row 1: same class as the detection at hand
    best_of = np.full(most, -1, np.int64)  # per reference box: the detection its fix would turn true (BestGTMatch)
    usable = np.zeros(most, np.bool_)
    kept_count = 0
    for page in range(pages):
        r0, r_count = reference_offsets[page], reference_offsets[page + 1] - reference_offsets[page]
        d0, d_count = detection_offsets[page], detection_offsets[page + 1] - detection_offsets[page]
        _sort_by_class(order, d0, d_count, no_classes, scores, True, buffer)
        kept = min(d_count, MAX_DETECTIONS)
        for g in range(r_count):
            state[0, g], best_of[g], usable[g] = 0, -1, False
        for k in range(kept):
            d = order[k]
            ranked[kept_count + k] = d
            for g in range(r_count):
                ious[k, g] = _iou(d, r0 + g, detection_boxes, reference_boxes)
            for g in range(r_count):
                state[1, g] = 1 if reference_classes[r0 + g] == detection_classes[d] else 0
            g, best = _first_best(ious, k, r_count, 1, state, 0)
            if r_count > 0 and best >= POSITIVE:
                state[0, g] = 1
                kinds[d], partners[d], ious_out[d] = TP, g, ious[k, g]
                reference_kinds[r0 + g], reference_partners[r0 + g], reference_ious[r0 + g] = TP, d - d0, ious[k, g]
        kept_count += kept
        for k in range(kept):
            d = order[k]
            if kinds[d] == TP:
                continue
            if r_count == 0:
                kinds[d] = BKG
                continue
            for g in range(r_count):
                state[1, g] = 1 if reference_classes[r0 + g] == detection_classes[d] else 0
            g, best = _first_best(ious, k, r_count, 1, state, -1)
            if BACKGROUND <= best <= POSITIVE:
                kinds[d], partners[d], ious_out[d] = LOC, g, best
            else:
                g, best = _first_best(ious, k, r_count, 0, state, -1)
                if best >= POSITIVE:
                    kinds[d], partners[d], ious_out[d] = CLS, g, best
                else:
                    g, best = _first_best(ious, k, r_count, 1, state, 1)
                    if best >= POSITIVE:
                        kinds[d], partners[d], ious_out[d] = DUPE, g, best
                    else:
                        g, best = _first_best(ious, k, r_count, -1, state, -1)
                        kinds[d] = BKG if best <= BACKGROUND else BOTH
            if (kinds[d] == LOC or kinds[d] == CLS) and state[0, partners[d]] == 0:
                usable[partners[d]] = True
                if best_of[partners[d]] < 0:  # the first is the best: a later one has no higher score
                    best_of[partners[d]] = d
                    fixes[d] = detection_classes[d] if kinds[d] == LOC else reference_classes[r0 + partners[d]]
        for g in range(r_count):
            if state[0, g] == 0 and not usable[g]:
                reference_kinds[r0 + g] = MISS
    return kinds, partners, ious_out, fixes, ranked[:kept_count], reference_kinds, reference_partners, reference_ious


# The plain Python path: the same code over a copy of this module's globals as they are now, so that
# it keeps calling the Python helpers once numba has rebound the module's own names to compiled ones
# (which Python cannot call).
plain_page_outcomes = types.FunctionType(_page_outcomes.__code__, dict(globals()), "plain_page_outcomes")


class_aps = jit.Kernels()


@class_aps.entry(lambda t: (t.int16[::1], t.boolean[::1], t.boolean[::1], t.int64[::1], t.float64[::1], t.float64[::1], t.int64[::1]))
def _class_aps(classes, true, keep, references, recall_points, aps, counts):
    """TIDE's AP of each class (`APDataObject.get_ap`, as `box_outcomes._average_precision`) over
    the records, given in ranking order, that `keep` keeps (all when it is empty): `aps[c]` (0
    where class c has no reference box) and `counts[c]`, its records. A class's records are read
    in their order, whatever the other classes between them, which is what the NumPy path's stable
    sort by class gives it: so the summary sorts no record by class, and the records are read in
    sequence. Two passes, each class's state beside them: a forward pass counts each class's
    records and hits, a backward pass makes each record's precision envelope (the best precision
    at or after it in its class) and gives it to the recall points it is the first to reach, which
    are summed in their own order afterwards, as TIDE sums them."""
    every, class_count, points = len(keep) == 0, len(references), len(recall_points)
    hits, best = np.zeros(class_count, np.int64), np.zeros(class_count)
    for record in range(len(classes)):
        if every or keep[record]:
            label = classes[record]
            counts[label] += 1
            if true[record]:
                hits[label] += 1
    sampled = np.zeros((class_count, points))  # points beyond a class's last recall are never reached: 0
    point = np.full(class_count, points - 1, np.int64)  # each class's highest recall point not sampled yet
    for label in range(class_count):
        if references[label] > 0:
            reached = hits[label] / references[label]  # the last record's recall
            while point[label] >= 0 and recall_points[point[label]] > reached:
                point[label] -= 1
    position = counts.copy()  # the record's place in its class, from 1, read from the end
    for record in range(len(classes) - 1, -1, -1):
        if not (every or keep[record]):
            continue
        label = classes[record]
        wanted = references[label]
        if wanted <= 0:
            continue
        precision = hits[label] / position[label]
        if precision > best[label]:
            best[label] = precision
        if true[record]:
            hits[label] -= 1
        before = hits[label] / wanted if position[label] > 1 else -1.0  # the previous record's recall
        while point[label] >= 0 and recall_points[point[label]] > before:
            sampled[label, point[label]] = best[label]
            point[label] -= 1
        position[label] -= 1
    for label in range(class_count):
        if references[label] > 0:
            summed = 0.0
            for p in range(points):
                summed += sampled[label, p]
            aps[label] = summed / points * 100
