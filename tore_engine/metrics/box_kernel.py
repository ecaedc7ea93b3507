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
    taken boxes, -1 any) counts as 0."""
    best, where = -1.0, 0
    for g in range(count):
        value = ious[row, g]
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


@class_aps.entry(lambda t: (t.int32[::1], t.int16[::1], t.boolean[::1], t.int64[::1], t.float64[::1], t.float64[::1], t.int64[::1]))
def _class_aps(ranking, classes, true, references, recall_points, aps, counts):
    """TIDE's AP of each class (`APDataObject.get_ap`, as `box_outcomes._average_precision`) over
    the records `ranking` lists, sorted by class: `aps[c]` (0 where class c has no reference box)
    and `counts[c]`, its records. Two passes a class, with none of the NumPy path's arrays of all
    records but a byte each: a forward pass counts a class's records and hits (keeping the hit
    flags in ranking order), a backward pass makes each record's precision envelope (the best
    precision at or after it) and gives it to the recall points it is the first to reach, which
    are summed in their own order afterwards, as TIDE sums them."""
    sampled = np.zeros(len(recall_points))
    hit = np.empty(len(ranking), np.bool_)  # each record's flag in ranking order: the backward pass reads it in order
    start, total = 0, len(ranking)
    while start < total:
        label = classes[ranking[start]]
        stop, hits = start, 0
        while stop < total and classes[ranking[stop]] == label:
            hit[stop] = true[ranking[stop]]
            if hit[stop]:
                hits += 1
            stop += 1
        counts[label] = stop - start
        wanted = references[label]
        if wanted > 0:
            point = len(recall_points) - 1
            reached = hits / wanted  # the last record's recall: points beyond it are never reached
            while point >= 0 and recall_points[point] > reached:
                sampled[point] = 0.0
                point -= 1
            best = 0.0
            for k in range(stop - 1, start - 1, -1):
                precision = hits / (k - start + 1)
                if precision > best:
                    best = precision
                if hit[k]:
                    hits -= 1
                before = hits / wanted if k > start else -1.0  # the previous record's recall
                while point >= 0 and recall_points[point] > before:
                    sampled[point] = best
                    point -= 1
            summed = 0.0
            for value in sampled:
                summed += value
            aps[label] = summed / len(recall_points) * 100
        start = stop
