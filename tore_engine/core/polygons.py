"""Boxes that are polygons (docs/formats.md#polygons), column-wise: a region that is not an
axis-aligned box gives its outline, and its `bbox` is the outline's bounding box (what mAP and the
box outcomes read). The points of all the boxes of a page or a layout set are one (m, 2) array;
box k's are `points[offsets[k]:offsets[k + 1]]`, none for a plain box.

Polygons are untrusted input: finite numbers, at least 3 points, at most `MAX_POINTS` a polygon
and `MAX_PAGE_POINTS` a page, and coordinates within the range where the rasteriser
(`engine.polygons`) is exact: at most `MAX_COORDINATE` in magnitude and none closer to 0 than
`MIN_COORDINATE` but 0 itself. A polygon need not be simple; one that is not is rasterised as
`engine.polygons` defines.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tore_engine.core.errors import InputError
from tore_engine.core.offsets import offsets_of, rows_of_runs

MAX_POINTS = 100_000  # a polygon's points: the outline of a whole page region traced pixel by pixel
MAX_PAGE_POINTS = 1_000_000  # a page's polygon points
MAX_COORDINATE = 2.0**40  # pixels; page sides are at most 2^31
MIN_COORDINATE = 2.0**-400  # below this (but 0) products in the exact predicates could underflow
_FEW_POINTS = 8  # outlines of as many points at most take element-wise bounds (`bounding_boxes`)


@dataclass(frozen=True)
class Polygons:
    """Each box's outline: box k's (x, y) points are `points[offsets[k]:offsets[k + 1]]`."""

    offsets: np.ndarray  # (boxes + 1,) int64
    points: np.ndarray  # (m, 2) float64

    @classmethod
    def of(cls, outlines: Sequence[object | None]) -> "Polygons":
        """From one entry a box: None for a plain box, else its points as (x, y) pairs or a flat
        list x1, y1, x2, y2, ... (not yet checked: `check` does)."""
        arrays = [np.zeros((0, 2)) if outline is None else _points(outline) for outline in outlines]
        counts = [len(points) for points in arrays]
        return cls(offsets_of(counts), np.concatenate(arrays or [np.zeros((0, 2))]).reshape(-1, 2))

    @classmethod
    def none(cls, boxes: int) -> "Polygons":
        return cls(np.zeros(boxes + 1, np.int64), np.zeros((0, 2)))

    @classmethod
    def concatenate(cls, parts: Sequence["Polygons"]) -> "Polygons":
        counts = np.concatenate([np.diff(part.offsets) for part in parts] or [np.zeros(0, np.int64)])
        return cls(offsets_of(counts), np.concatenate([part.points for part in parts] or [np.zeros((0, 2))]))

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def counts(self) -> np.ndarray:
        return np.diff(self.offsets)

    def is_polygon(self) -> np.ndarray:
        """(boxes,) bool: which boxes have an outline."""
        return self.counts() > 0

    def outline(self, box: int) -> np.ndarray | None:
        start, end = self.offsets[box], self.offsets[box + 1]
        return self.points[start:end] if end > start else None

    def take(self, boxes: np.ndarray) -> "Polygons":
        """The outlines of `boxes` (indices or a boolean mask), in that order."""
        boxes = np.flatnonzero(boxes) if np.asarray(boxes).dtype == bool else np.asarray(boxes, np.int64)
        if len(boxes) == len(self) and (boxes == np.arange(len(self))).all():
            return self  # every box in order (a batch whose boxes are all polygons, all predictions paired): nothing to gather
        starts = self.offsets[boxes]
        counts = self.offsets[boxes + 1] - starts  # not `counts()[boxes]`: a batch's few boxes of a job's millions
        return Polygons(offsets_of(counts), self.points[rows_of_runs(starts, counts)])

    def between(self, first: int, end: int) -> "Polygons":
        """The outlines of boxes first .. end - 1 (a copy)."""
        start, stop = self.offsets[first], self.offsets[end]
        return Polygons(self.offsets[first:end + 1] - start, self.points[start:stop].copy())

    def scaled(self, numerator: np.ndarray, denominator: np.ndarray) -> "Polygons":
        """Each box's points times its (x, y) `numerator`, divided by its `denominator` (rows a
        box), in float64: the scaling rule of docs/algorithm.md#rasterisation, as `layout.scaled_boxes`."""
        counts = self.counts()
        with np.errstate(over="ignore"):
            points = self.points * np.repeat(numerator, counts, axis=0) / np.repeat(denominator, counts, axis=0)
        return Polygons(self.offsets, points)

    def _alike(self, outlines: np.ndarray, size: int) -> list[np.ndarray] | None:
        """The k-th points of `outlines` (each of `size` points), k = 0 .. size - 1, as strided
        views when those outlines hold every point (a file of turned boxes: every outline 4 points),
        else None. Views, not gathers: 4 gathers of 400,000 outlines took 44 ms, these none."""
        if len(outlines) * size != len(self.points):
            return None
        grouped = self.points.reshape(-1, size, 2)
        return [grouped[:, k] for k in range(size)]

    def bounding_boxes(self) -> np.ndarray:
        """(boxes, 4) x1, y1, x2, y2 of each outline; NaN for a plain box."""
        boxes = np.full((len(self), 4), np.nan)
        has = np.flatnonzero(self.is_polygon())
        if not len(has):
            return boxes
        counts = self.offsets[has + 1] - self.offsets[has]
        corners = self._alike(has, int(counts[0])) if counts[0] <= _FEW_POINTS and (counts == counts[0]).all() else None
        if corners is None:
            starts = self.offsets[has]  # no points lie between two outlines
            boxes[has, :2], boxes[has, 2:] = np.minimum.reduceat(self.points, starts, axis=0), np.maximum.reduceat(self.points, starts, axis=0)
            return boxes
        for axis in (0, 1):  # a few points each: element-wise, a coordinate at a time (10 ms for 400,000 turned boxes; reduceat 25)
            low = high = corners[0][:, axis]
            for points in corners[1:]:
                low, high = np.minimum(low, points[:, axis]), np.maximum(high, points[:, axis])
            boxes[has, axis], boxes[has, 2 + axis] = low, high
        return boxes

    def axis_aligned_rectangles(self) -> np.ndarray:
        """(boxes,) bool: which outlines are 4 points of an axis-aligned rectangle of positive
        width and height, in order round it, which paint exactly their bounding box (the
        rasteriser's `_is_rectangle`): (a, b) (c, b) (c, d) (a, d) or (a, b) (a, d) (c, d) (c, b)
        with a != c and b != d."""
        found = np.zeros(len(self), bool)
        four = np.flatnonzero(self.counts() == 4)
        if not len(four):
            return found
        corners = self._alike(four, 4) or [self.points[self.offsets[four] + k] for k in range(4)]
        (x0, y0), (x1, y1), (x2, y2), (x3, y3) = (points.T for points in corners)
        across_first = (y0 == y1) & (x1 == x2) & (y2 == y3) & (x3 == x0)
        down_first = (x0 == x1) & (y1 == y2) & (x2 == x3) & (y3 == y0)
        found[four] = (across_first | down_first) & (x0 != x2) & (y0 != y2)
        return found

    def problem(self, bboxes: np.ndarray) -> tuple[int, str] | None:
        """The first box whose outline is invalid, or whose `bbox` is not its outline's bounding
        box, and what is wrong; None when all are valid."""
        counts = self.counts()
        if ((counts > 0) & (counts < 3)).any():
            box = int(np.flatnonzero((counts > 0) & (counts < 3))[0])
            return box, f"a polygon needs at least 3 points, got {int(counts[box])}"
        if (counts > MAX_POINTS).any():
            box = int(np.flatnonzero(counts > MAX_POINTS)[0])
            return box, f"the polygon has {int(counts[box]):,} points, more than the {MAX_POINTS:,} a polygon may have"
        point = _first_bad_point(self.points)
        if point is not None:
            box = int(np.searchsorted(self.offsets, point, side="right")) - 1
            return box, (f"polygon point {point - int(self.offsets[box])} is {self.points[point].tolist()}: coordinates must be finite, "
                         f"at most 2^40 in magnitude, and 0 or at least 2^-400")
        bounds = self.bounding_boxes()
        mismatched = np.flatnonzero((bounds != bboxes).any(axis=1) & (counts > 0))  # a plain box's NaN bounds differ: not an outline's
        if len(mismatched):
            box = int(mismatched[0])
            return box, f"bbox {bboxes[box].tolist()} is not the bounding box {bounds[box].tolist()} of its polygon"
        return None


_CHECKED_POINTS = 65_536  # points checked at a time: a layout set's 1.6 million at once made 60 MB of temporaries, each page first touched


def _first_bad_point(points: np.ndarray) -> int | None:
    """The first point with a coordinate NaN, infinite, beyond `MAX_COORDINATE` or nonzero below
    `MIN_COORDINATE` in magnitude; None when there is none."""
    for start in range(0, len(points), _CHECKED_POINTS):
        magnitude = np.abs(points[start : start + _CHECKED_POINTS])
        bad = ~(magnitude <= MAX_COORDINATE) | ((magnitude < MIN_COORDINATE) & (magnitude > 0))  # NaN compares false
        if bad.any():
            return start + int(np.flatnonzero(bad.any(axis=1))[0])
    return None


def _points(outline: object) -> np.ndarray:
    try:
        array = np.asarray(outline, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError("a polygon must be numbers: [x1, y1, x2, y2, ...] or [[x1, y1], [x2, y2], ...]") from None
    if array.ndim == 1 and len(array) % 2 == 0:
        return array.reshape(-1, 2)
    if array.ndim == 2 and array.shape[1] == 2:
        return array
    raise InputError(f"a polygon must be [x1, y1, x2, y2, ...] or [[x1, y1], ...], got an array of shape {array.shape}")


def check_page(polygons: Polygons | None, bboxes: np.ndarray, page_offsets: np.ndarray, page_ids: Sequence[str]) -> None:
    """Every page's polygons valid (`Polygons.problem`), and no page with more than
    `MAX_PAGE_POINTS` polygon points; the error names the page and box."""
    if polygons is None:
        return
    found = polygons.problem(bboxes)
    if found is not None:
        box, problem = found
        page = int(np.searchsorted(page_offsets, box, side="right")) - 1
        raise InputError(problem, page=page_ids[page], box=box - int(page_offsets[page]))
    per_page = polygons.offsets[page_offsets[1:]] - polygons.offsets[page_offsets[:-1]]
    if (per_page > MAX_PAGE_POINTS).any():
        page = int(np.flatnonzero(per_page > MAX_PAGE_POINTS)[0])
        raise InputError(f"the page's polygons have {int(per_page[page]):,} points, more than the {MAX_PAGE_POINTS:,} a page may have", page=page_ids[page])
