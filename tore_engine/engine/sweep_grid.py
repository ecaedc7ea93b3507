"""The sweep's NumPy path, for what the compiled sweep kernel declines (taxonomies of more than 64
classes, a missing numba): each page's grid painted once for all the sweep's minimum scores.

A box is kept at the first `level` points (`metrics.sweep.score_levels`). Going down the points
from the last, the boxes of each level are OR-ed into the grid the higher levels left, so that
after level k the grid holds exactly what a run at point k paints; the grid's distinct
(reference set, predicted set) pairs and their pixels are read there (the same grid as
`raster.pair_table` draws, finer than a point's own, so the same pixels). A point no box starts
at has its successor's pairs. What comes out is the batch's distinct pairs, as bit-packed words,
and each pair's pixels at each point: `metrics.sweep.SweepState.from_label_sets` applies
Algorithm 1 once a pair. One run a point (the runner's other path) would paint every page 19
times and apply Algorithm 1 19 times; at 2,047 classes that is about 0.2 s a page and point.
"""

from __future__ import annotations

import numpy as np

from tore_engine.core.errors import InputError
from tore_engine.engine.preparation import PreparedBatch
from tore_engine.engine.raster import MAX_BAND_CELLS, WORD_BITS, PixelExtents, cell_edges, paint, row_hashes, unique_rows, words_for
from tore_engine.metrics.sweep import POINTS

MAX_SUM = 2**63  # a batch's pixels times K (Algorithm 1's numerators) below this: int64 throughout


def applies(prepared: PreparedBatch, class_count: int) -> bool:
    """Whether the batch's sums fit in int64 (else the runner's other path, one run a point)."""
    pixels = sum(int(width) * int(height) for width, height in prepared.frames.tolist())
    return pixels * max(class_count, 1) < MAX_SUM


def sweep_pairs(prepared: PreparedBatch, levels: np.ndarray, class_count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each distinct (reference, predicted) pair of the batch as (pairs, words) uint64 codes a
    side, and its pixels at each point, (pairs, POINTS) int64; `levels[b]` is how many points
    keep box b."""
    words = words_for(class_count)
    codes, pixels = np.zeros((0, 2 * words), np.uint64), np.zeros((0, POINTS), np.int64)
    for page, task in enumerate(prepared.tasks()):
        sides = tuple((classes, extents, levels[start:stop]) for classes, extents, (start, stop) in (
            (task.reference_classes, task.reference_extents, prepared.offsets[2 * page : 2 * page + 2]),
            (task.prediction_classes, task.prediction_extents, prepared.offsets[2 * page + 1 : 2 * page + 3])))
        try:
            page_codes, page_pixels = _page_pairs(task.width, task.height, sides, words)
        except InputError as error:
            raise error.located(page=task.page_id) from None
        codes, pixels = _summed(np.concatenate([codes, page_codes]), np.concatenate([pixels, page_pixels]))
    return codes[:, :words], codes[:, words:], pixels


def _summed(codes: np.ndarray, pixels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Equal codes as one, their pixels added (integers, exactly)."""
    distinct, inverse = unique_rows(codes)
    totals = np.zeros((len(distinct), POINTS), np.int64)
    np.add.at(totals, inverse, pixels)
    return distinct, totals


def _page_pairs(width: int, height: int, sides: tuple[tuple[np.ndarray, PixelExtents, np.ndarray], ...], words: int) -> tuple[np.ndarray, np.ndarray]:
    """One page's distinct pairs (codes of both sides side by side) and their pixels at each point."""
    kept = [(classes[levels > 0], extents.take(levels > 0), levels[levels > 0]) for classes, extents, levels in sides]
    xs, ys = cell_edges(width, height, [extents for _, extents, _ in kept])
    band_rows = max(1, MAX_BAND_CELLS // (len(xs) - 1))
    found_codes, found_pixels = [], []
    for start in range(0, len(ys) - 1, band_rows):
        band = ys[start : start + band_rows + 1]
        cells = _BandCells(xs, band, words)
        distinct, cell_pixels = cells.pairs()
        for point in range(POINTS, 0, -1):
            starting = [(classes[levels == point], extents.take(levels == point)) for classes, extents, levels in kept]
            if any(len(classes) for classes, _ in starting):
                distinct, cell_pixels = cells.painted(starting)
            at_point = np.zeros((len(distinct), POINTS), np.int64)
            at_point[:, point - 1] = cell_pixels
            found_codes.append(distinct)
            found_pixels.append(at_point)
    return _summed(np.concatenate(found_codes), np.concatenate(found_pixels))


class _BandCells:
    """A band of the page's grid, painted a level at a time, with each cell's row of words hashed
    (`raster.row_hashes`) so that a level re-hashes only the cells its boxes cover.

    Cells of equal hash are one pair once their rows are checked equal: each cell a level covers
    against its hash's representative, which is a cell the level left alone whenever the hash has
    one (those are equal among themselves, checked when last covered). A collision (never seen:
    2^-64 a pair of rows) sends the rest of the band to `raster.unique_rows`, which checks every row."""

    def __init__(self, xs: np.ndarray, band: np.ndarray, words: int) -> None:
        self.xs, self.band, self.words = xs, band, words
        self.grid = np.zeros((len(band) - 1, len(xs) - 1, 2 * words), np.uint64)  # the reference's words, then the prediction's
        self.rows = self.grid.reshape(-1, 2 * words)
        self.weights = (np.diff(band)[:, None] * np.diff(xs)[None, :]).reshape(-1)
        self.hashes = row_hashes(self.rows)
        self.collided = False

    def painted(self, boxes: list[tuple[np.ndarray, PixelExtents]]) -> tuple[np.ndarray, np.ndarray]:
        """Each side's (classes, extents) OR-ed in; then the band's pairs."""
        covered = np.zeros((*self.grid.shape[:2], 1), np.uint64)
        for side, (classes, extents) in enumerate(boxes):
            paint(self.grid, classes + side * self.words * WORD_BITS, extents, self.xs, self.band)
            paint(covered, np.zeros(len(classes), np.int64), extents, self.xs, self.band)
        touched = np.flatnonzero(covered.reshape(-1))
        self.hashes[touched] = row_hashes(self.rows[touched])
        return self.pairs(touched)

    def pairs(self, touched: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The band's distinct rows and their pixels, cells of equal hash as one (`touched`: the
        cells re-hashed since the last call; None: all of them)."""
        if self.collided:
            return self._counted(*unique_rows(self.rows))
        fresh = np.zeros(len(self.rows), bool)
        fresh[slice(None) if touched is None else touched] = True
        order = np.lexsort((fresh, self.hashes))  # in each hash's run, the cells left alone first
        ordered = self.hashes[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
        group = np.empty(len(order), np.int64)
        group[order] = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(order)]))
        representative = order[starts]
        checked = np.flatnonzero(fresh)
        if not np.array_equal(self.rows[checked], self.rows[representative[group[checked]]]):
            self.collided = True
            return self._counted(*unique_rows(self.rows))
        return self._counted(self.rows[representative], group)

    def _counted(self, distinct: np.ndarray, group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        pixels = np.zeros(len(distinct), np.int64)
        np.add.at(pixels, group, self.weights)
        return distinct, pixels
