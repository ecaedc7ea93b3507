"""One-to-one box matching at IoU 0.5 (docs/benchmarks.md#boxes-and-iou and docs/benchmarks.md#matching), in time and memory that grow with
the pairs of boxes that overlap, never with reference x prediction.

Two rules are offered because published numbers use both: the optimal assignment (maximum total
IoU, pairs below 0.5 dropped afterwards, kept at exactly 0.5) and the ICDAR-2015 greedy rule
(GT-major, first free prediction with IoU strictly above 0.5).

A pair of boxes that do not overlap has IoU 0 and adds nothing to any assignment's total, so both
rules need only the overlapping pairs (`box_overlaps`). They are found along the axis on which fewer
boxes overlap (sorted coordinates give each box a contiguous run of candidates), in chunks, the other
axis filtering. Their IoU is computed by the same float operations as a full matrix would be, bit
for bit. The optimal assignment is scipy's sparse solver (LAPJVsp) on those pairs, where every
reference box may also stay alone (an edge of negligible weight to a column of its own), so that a
full matching always exists. Assignments of equal total are not ranked by docs/benchmarks.md#funsd-and-ec-funsd (its vectors
have one optimum, which any correct solver finds); among them this one is deterministic and depends
only on the overlapping pairs.

A page's work is bounded: at most `MAX_BOXES` boxes a side and `MAX_OVERLAPS` overlapping pairs,
each limit an `InputError` naming the files.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from tore_engine.core.errors import InputError

IOU_THRESHOLD = 0.5
MAX_BOXES = 20_000  # words (or entities) of one form, a side: real FUNSD forms have at most a few hundred
MAX_OVERLAPS = 2_000_000  # overlapping (reference, prediction) pairs of one form: 100 per box at the limit
CHUNK = 1 << 20  # candidate pairs tested at once (a few tens of MB)
ALONE = float(np.finfo(np.float64).tiny)  # weight of "this reference box stays unmatched": not 0, which is no edge

Matches = list[tuple[int, int]]  # (reference index, prediction index), sorted by reference index


def pair_iou(reference: np.ndarray, prediction: np.ndarray) -> np.ndarray:
    """IoU of paired boxes (arrays of `[x1, y1, x2, y2]` that broadcast); 0 for an empty union, and 0
    where absurd coordinates (areas beyond float range) leave no finite union."""
    a, b = reference, prediction
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        inter_w = np.maximum(0.0, np.minimum(a[..., 2], b[..., 2]) - np.maximum(a[..., 0], b[..., 0]))
        inter_h = np.maximum(0.0, np.minimum(a[..., 3], b[..., 3]) - np.maximum(a[..., 1], b[..., 1]))
        inter = inter_w * inter_h
        area_a = (a[..., 2] - a[..., 0]) * (a[..., 3] - a[..., 1])
        area_b = (b[..., 2] - b[..., 0]) * (b[..., 3] - b[..., 1])
        union = area_a + area_b - inter
        usable = (union > 0) & np.isfinite(union)
        return np.where(usable, inter / np.where(usable, union, 1.0), 0.0)


@dataclass(frozen=True)
class Overlaps:
    """The (reference, prediction) pairs with IoU > 0, sorted by reference then prediction index."""

    shape: tuple[int, int]  # (reference boxes, predicted boxes)
    rows: np.ndarray
    columns: np.ndarray
    iou: np.ndarray


def box_overlaps(
    reference: np.ndarray, prediction: np.ndarray, *, what: str = "boxes", files: tuple[str | None, str | None] = (None, None)
) -> Overlaps:
    """Every pair of a reference and a predicted box whose IoU is above 0.

    `what` ("words", "entities") and `files` (reference, prediction) name the input in the error
    raised past a limit."""
    shape = (len(reference), len(prediction))
    for side, count, file in zip(("reference", "prediction"), shape, files):
        check_box_count(count, side=side, what=what, file=file)
    rows, columns, iou, found = [], [], [], 0
    for r, c in _candidate_pairs(reference, prediction):
        values = pair_iou(reference[r], prediction[c])
        keep = values > 0
        found += int(np.count_nonzero(keep))
        if found > MAX_OVERLAPS:
            raise InputError(f"more than {MAX_OVERLAPS:,} pairs of its {what} and the reference's overlap on this form "
                             f"(reference {files[0]}): FUNSD scoring matches at most that many on one form", file=files[1])
        rows.append(r[keep])
        columns.append(c[keep])
        iou.append(values[keep])
    if not rows:
        return Overlaps(shape, np.zeros(0, np.intp), np.zeros(0, np.intp), np.zeros(0))
    rows_all, columns_all, iou_all = np.concatenate(rows), np.concatenate(columns), np.concatenate(iou)
    order = np.lexsort((columns_all, rows_all))
    return Overlaps(shape, rows_all[order], columns_all[order], iou_all[order])


def check_box_count(count: int, *, side: str, what: str, file: str | None) -> None:
    """At most `MAX_BOXES` boxes a side: the worst case of `box_overlaps` grows with their product."""
    if count > MAX_BOXES:
        raise InputError(f"the {side} has {count:,} {what} on this form, more than the {MAX_BOXES:,} "
                         "that FUNSD scoring matches on one form", file=file)


def _candidate_pairs(a: np.ndarray, b: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(row, column) index arrays, chunk by chunk, of every pair whose boxes overlap with positive
    area, each pair once. Boxes of zero width or height overlap nothing and are left out."""
    a_index = np.flatnonzero((a[:, 2] > a[:, 0]) & (a[:, 3] > a[:, 1]))
    b_index = np.flatnonzero((b[:, 2] > b[:, 0]) & (b[:, 3] > b[:, 1]))
    if not a_index.size or not b_index.size:
        return
    a, b = a[a_index], b[b_index]
    # along an axis, two boxes overlap iff one starts inside the other: b in a (b.low >= a.low), or
    # a strictly inside b (a.low > b.low); the two sets of pairs are disjoint
    runs = {axis: (_runs(a, b, axis, tie=True), _runs(b, a, axis, tie=False)) for axis in (0, 1)}
    axis = min(runs, key=lambda k: sum(run.size for run in runs[k]))
    other = 1 - axis
    for run, b_drives in zip(runs[axis], (False, True)):
        for drivers, others in run.pairs():
            r, c = (others, drivers) if b_drives else (drivers, others)
            overlapping = np.minimum(a[r, other + 2], b[c, other + 2]) > np.maximum(a[r, other], b[c, other])
            yield a_index[r[overlapping]], b_index[c[overlapping]]


@dataclass(frozen=True)
class _Runs:
    """For each driving box, the run of other boxes (in `order`) from `start` to `stop`."""

    order: np.ndarray
    start: np.ndarray
    stop: np.ndarray

    @property
    def size(self) -> int:
        return int((self.stop - self.start).sum())

    def pairs(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(driver, other) index arrays of every pair of the runs, about `CHUNK` pairs at a time."""
        lengths = self.stop - self.start
        ends = np.cumsum(lengths)  # pairs up to and including each driver
        first = 0
        while first < lengths.size:
            done = ends[first] - lengths[first]  # pairs before this chunk
            last = max(int(np.searchsorted(ends, done + CHUNK, side="right")), first + 1)
            chunk = lengths[first:last]
            drivers = np.repeat(np.arange(first, last), chunk)
            offsets = np.arange(drivers.size) - np.repeat(ends[first:last] - chunk - done, chunk)
            yield drivers, self.order[self.start[drivers] + offsets]
            first = last


def _runs(drivers: np.ndarray, others: np.ndarray, axis: int, *, tie: bool) -> _Runs:
    """The other boxes whose low edge on `axis` lies inside each driver's span: `low <= x < high`
    with `tie`, else `low < x < high`."""
    order = np.argsort(others[:, axis], kind="stable")
    lows = others[order, axis]
    start = np.searchsorted(lows, drivers[:, axis], side="left" if tie else "right")
    stop = np.searchsorted(lows, drivers[:, axis + 2], side="left")
    return _Runs(order, start, stop)  # stop >= start: every box spans low < high


def assignment(overlaps: Overlaps) -> tuple[np.ndarray, np.ndarray]:
    """(rows, columns) of an assignment of maximum total IoU over the overlapping pairs (every
    other pair has IoU 0), each reference box in at most one pair, sorted by row."""
    from scipy.sparse import (
        csr_array,  # imported here: `tore evaluate --format funsd` needs no scipy
    )
    from scipy.sparse.csgraph import min_weight_full_bipartite_matching

    n, m = overlaps.shape
    if not overlaps.iou.size:
        return np.zeros(0, np.intp), np.zeros(0, np.intp)
    # each row's overlapping columns (sorted), then its own "alone" column m + row
    ends = np.searchsorted(overlaps.rows, np.arange(n), side="right")
    indptr = np.concatenate([[0], ends + np.arange(1, n + 1)])
    slots = np.arange(overlaps.rows.size) + overlaps.rows  # each pair's place, after the earlier rows' alone columns
    alone = indptr[1:] - 1
    columns = np.empty(indptr[-1], np.intp)
    weights = np.empty(indptr[-1])
    columns[slots], weights[slots] = overlaps.columns, overlaps.iou
    columns[alone], weights[alone] = m + np.arange(n), ALONE
    graph = csr_array((weights, columns, indptr), shape=(n, m + n))
    rows, matched = min_weight_full_bipartite_matching(graph, maximize=True)
    real = matched < m
    return rows[real], matched[real]


def _positions(overlaps: Overlaps, rows: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """Where each (row, column) pair, one of the overlapping pairs, sits in `overlaps`."""
    keys = overlaps.rows * overlaps.shape[1] + overlaps.columns  # sorted, as the pairs are
    return np.searchsorted(keys, rows * overlaps.shape[1] + columns)


def greedy_icdar_matches(overlaps: Overlaps) -> Matches:
    """ICDAR-2015 DetectionIoUEvaluator: for each GT in order, the first unused prediction with IoU > 0.5."""
    strong = overlaps.iou > IOU_THRESHOLD
    used: set[int] = set()
    matches: Matches = []
    for row, column in zip(overlaps.rows[strong].tolist(), overlaps.columns[strong].tolist()):
        if column not in used and not (matches and matches[-1][0] == row):
            used.add(column)
            matches.append((row, column))
    return matches


@dataclass(frozen=True)
class BoxMatching:
    """What the panels use of one matching of reference boxes to predicted boxes."""

    shape: tuple[int, int]  # (reference boxes, predicted boxes)
    optimal: Matches  # kept pairs of the optimal assignment
    optimal_iou: list[float]  # their IoU
    greedy_count: int  # pairs of the ICDAR greedy rule

    @classmethod
    def of(cls, overlaps: Overlaps) -> "BoxMatching":
        rows, columns = assignment(overlaps)
        iou = overlaps.iou[_positions(overlaps, rows, columns)]
        keep = iou >= IOU_THRESHOLD
        optimal = list(zip(rows[keep].tolist(), columns[keep].tolist()))
        return cls(overlaps.shape, optimal, iou[keep].tolist(), len(greedy_icdar_matches(overlaps)))


def match_boxes(
    reference: np.ndarray, prediction: np.ndarray, *, what: str, files: tuple[str | None, str | None] = (None, None)
) -> BoxMatching:
    """Both rules on one form's reference and predicted boxes (`what`, `files`: see `box_overlaps`)."""
    return BoxMatching.of(box_overlaps(reference, prediction, what=what, files=files))
