"""Rasterisation: from one page's boxes to its distinct (reference set, predicted set) pixel pairs.

A pixel's label set is a bit set, one bit a class (bit 0 = Background), packed into 64-bit words,
as many words a pixel as the taxonomy needs (more than 63 classes simply take more words).

We do not paint a pixel raster. The distinct rounded box edges of both sides, with 0, W and H, cut
the page into a grid whose cells are each uniform, so painting the grid and weighting each cell by
its pixel area gives exactly the per-pixel counts (docs/algorithm.md#compressed-grid): about 16 k cells instead
of a million pixels on a DocLayNet page, and a 10^6 x 10^6 page costs no more than a small one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tore_engine.core.errors import InputError
from tore_engine.core.offsets import offsets_of
from tore_engine.core.polygons import Polygons
from tore_engine.engine.polygons import PIECE_TYPE, pixel_pieces

WORD_BITS = 64
MAX_BAND_CELLS = 1 << 21  # grid cells painted at once: 16 MB a side and word
MAX_PAGE_CELLS = 50_000_000  # beyond this a page would take minutes: refuse it clearly
SLICE_COST_CELLS = 4  # painting a box by slices costs about its area; prefix sums about this many passes over the grid a class
PREFIX_SUM_OVERHEAD = 50_000  # cells' worth of fixed cost before prefix sums can pay off


def words_for(class_count: int) -> int:
    """64-bit words needed for a label set over `class_count` classes (Background included)."""
    return max(1, -(-class_count // WORD_BITS))


@dataclass(frozen=True)
class PixelExtents:
    """Each box's painted pixel range after outward rounding and clipping (docs/algorithm.md#rasterisation).

    A box that is a polygon has its bounding box's range here, and paints the rectangles in
    `pieces` (`engine.polygons`), box after box, `piece_starts` telling where each box's pieces start;
    `rectangles` gives what every box paints, as boxes, to the painters (`pair_table`,
    `label_grid`, the compiled kernels)."""

    col0: np.ndarray
    col1: np.ndarray
    row0: np.ndarray
    row1: np.ndarray
    paints: np.ndarray  # bool: the box covers at least one pixel
    clipped: np.ndarray  # bool: it paints, and part of it lies beyond the page
    pieces: np.ndarray | None = None  # (k, 4) `polygons.PIECE_TYPE` col0, col1, row0, row1 of the rectangles polygons paint, by box
    piece_starts: np.ndarray | None = None  # (boxes + 1,) int64: box b's pieces are pieces[piece_starts[b]:piece_starts[b + 1]]
    polygon: np.ndarray | None = None  # (boxes,) bool: which boxes paint as polygons (not as their box)

    @classmethod
    def from_boxes(cls, bboxes: np.ndarray, width: int | np.ndarray, height: int | np.ndarray,
                   polygons: Polygons | None = None) -> "PixelExtents":
        """`width` and `height` are the page's, or one a box (a batch of pages at once);
        `polygons` the outlines of the boxes that are polygons (their `bboxes` bounding them)."""
        # In place, and `beyond` read four flags at a time: a batch of 20,000 boxes 2.5 -> 1.05 ms
        outward = np.floor(np.ascontiguousarray(bboxes, np.float64))  # x1 y1 x2 y2
        np.ceil(bboxes[:, 2:], out=outward[:, 2:])
        frame = np.stack(np.broadcast_arrays(width, height, width, height), axis=-1).astype(np.float64)  # sides below 2^31: exact
        inside = np.maximum(outward, 0.0)
        np.minimum(inside, frame, out=inside)
        beyond = (inside != outward).view(np.uint32)[:, 0] != 0  # a box's four flags as one word: is any set
        col0, row0, col1, row1 = inside.astype(np.int64).T
        paints = (col1 > col0) & (row1 > row0)
        # An axis-aligned rectangle's outline bounding its box paints as the box (the same pixels)
        if polygons is None:
            return cls(col0, col1, row0, row1, paints, paints & beyond)
        as_box = polygons.axis_aligned_rectangles()
        if as_box.any():  # (turned boxes have none to bound)
            as_box[as_box] = (polygons.take(as_box).bounding_boxes() == bboxes[as_box]).all(axis=1)
        polygon = polygons.is_polygon() & ~as_box
        if not polygon.any():
            return cls(col0, col1, row0, row1, paints, paints & beyond)
        boxes = np.flatnonzero(polygon)
        outlines = polygons.take(boxes)
        frames = np.broadcast_to(frame, outward.shape)  # one frame a box, also when the page's is given once
        pieces, starts = pixel_pieces(outlines.points, outlines.offsets, frames[boxes, 0], frames[boxes, 1])
        counts = np.zeros(len(bboxes), np.int64)
        counts[boxes] = np.diff(starts)
        paints = paints.copy()
        paints[boxes] = counts[boxes] > 0
        return cls(col0, col1, row0, row1, paints, paints & beyond, pieces, offsets_of(counts), polygon)

    def part(self, boxes: slice) -> "PixelExtents":
        """The boxes of a slice (of step 1)."""
        if self.pieces is None or self.piece_starts is None or self.polygon is None:
            return PixelExtents(self.col0[boxes], self.col1[boxes], self.row0[boxes], self.row1[boxes], self.paints[boxes], self.clipped[boxes])
        start, stop, _ = boxes.indices(len(self.col0))
        first, last = self.piece_starts[start], self.piece_starts[stop]
        return PixelExtents(self.col0[boxes], self.col1[boxes], self.row0[boxes], self.row1[boxes], self.paints[boxes], self.clipped[boxes],
                            self.pieces[first:last], self.piece_starts[start:stop + 1] - first, self.polygon[boxes])

    def take(self, keep: np.ndarray) -> "PixelExtents":
        """The boxes where `keep` (bool) is true."""
        fields = (self.col0[keep], self.col1[keep], self.row0[keep], self.row1[keep], self.paints[keep], self.clipped[keep])
        if self.pieces is None or self.piece_starts is None or self.polygon is None:
            return PixelExtents(*fields)
        counts = np.diff(self.piece_starts)
        return PixelExtents(*fields, self.pieces[np.repeat(keep, counts)], offsets_of(counts[keep]), self.polygon[keep])

    def owners(self) -> np.ndarray:
        """(k,) the box of each piece (ascending)."""
        if self.piece_starts is None:
            return np.zeros(0, np.int64)
        return np.repeat(np.arange(len(self.col0)), np.diff(self.piece_starts))

    def rectangles(self) -> tuple[np.ndarray, "PixelExtents"]:
        """What the boxes paint, as boxes that all paint: the boxes themselves, and each polygon's
        pieces in its place; with the box each comes from (ascending)."""
        if self.pieces is None or self.piece_starts is None or self.polygon is None:
            painting = np.flatnonzero(self.paints)
            return painting, self if len(painting) == len(self.paints) else self.take(self.paints)
        owners, rows = self.painted_rows()
        everywhere = np.ones(len(owners), bool)
        return owners, PixelExtents(rows[:, 0], rows[:, 1], rows[:, 2], rows[:, 3], everywhere, ~everywhere)

    def painted_rows(self) -> tuple[np.ndarray, np.ndarray]:
        """`rectangles` as one (rectangles, 4) int64 array of col0, col1, row0, row1, with the box
        each comes from: the boxes' and the pieces' rows (each run in box order) merged by box in
        one scatter."""
        plain = np.flatnonzero(self.paints if self.polygon is None else self.paints & ~self.polygon)
        owners = self.owners()
        pieces = self.pieces if self.pieces is not None else np.zeros((0, 4), PIECE_TYPE)
        rows = np.empty((len(plain) + len(owners), 4), np.int64)
        if not len(plain):  # every painting box a polygon (PAGE-XML, OmniDocBench's `poly`): nothing to merge
            rows[:] = pieces
            return owners, rows
        at_plain = np.arange(len(plain)) + np.searchsorted(owners, plain, "left")
        at_pieces = np.arange(len(owners)) + np.searchsorted(plain, owners, "right")
        merged = np.empty(len(rows), np.int64)
        merged[at_plain], merged[at_pieces] = plain, owners
        for column, field in enumerate((self.col0, self.col1, self.row0, self.row1)):
            rows[at_plain, column] = field[plain]
        rows[at_pieces] = pieces
        return merged, rows


@dataclass(frozen=True)
class PageTask:
    """One page ready to rasterise: the reference frame and each side's class indices and boxes."""

    page_id: str
    width: int
    height: int
    reference_classes: np.ndarray
    reference_extents: PixelExtents
    prediction_classes: np.ndarray
    prediction_extents: PixelExtents


@dataclass(frozen=True)
class PairTable:
    """The distinct (T, P) label-set pairs of a page and how many pixels have each."""

    reference_codes: np.ndarray  # (n, words) uint64; all-zero = {Background}
    prediction_codes: np.ndarray  # (n, words) uint64
    pixels: np.ndarray  # (n,) int64


def cell_edges(width: int, height: int, sides: list[PixelExtents]) -> tuple[np.ndarray, np.ndarray]:
    """The grid: every painted box edge of both sides, plus the page edges. When the boxes are so
    many that this grid has more cells than the page has pixels, the pixel grid is cheaper."""
    x_edges = [np.array([0, width], dtype=np.int64)]
    y_edges = [np.array([0, height], dtype=np.int64)]
    for extents in sides:
        _, painting = extents.rectangles()
        x_edges += [painting.col0, painting.col1]
        y_edges += [painting.row0, painting.row1]
    xs, ys = np.unique(np.concatenate(x_edges)), np.unique(np.concatenate(y_edges))
    if (len(xs) - 1) * (len(ys) - 1) > width * height:
        xs, ys = np.arange(width + 1, dtype=np.int64), np.arange(height + 1, dtype=np.int64)
    cells = (len(xs) - 1) * (len(ys) - 1)
    if cells > MAX_PAGE_CELLS:
        raise InputError(
            f"the page's boxes cut it into {cells:,} distinct regions, more than the {MAX_PAGE_CELLS:,} "
            "that one page may have; split the page or drop duplicate boxes"
        )
    return xs, ys


def _cover_by_slices(grid: np.ndarray, rows: tuple, cols: tuple, word: np.ndarray, bit: np.ndarray) -> None:
    """OR box by box: fastest for the few dozen boxes of a typical page (plain Python integers
    index faster than NumPy scalars)."""
    for r0, r1, c0, c1, w, b in zip(*(a.tolist() for a in (*rows, *cols, word, bit))):
        grid[r0:r1, c0:c1, w] |= b


def _cover_by_prefix_sums(grid: np.ndarray, rows: tuple, cols: tuple, classes: np.ndarray) -> None:
    """OR class by class through a 2-D difference array: the cost does not grow with the boxes'
    areas, for pages with thousands of large overlapping boxes."""
    ny, nx = grid.shape[:2]
    for label in np.unique(classes):
        mine = classes == label
        difference = np.zeros((ny + 1, nx + 1), dtype=np.int64)
        r0, r1, c0, c1 = rows[0][mine], rows[1][mine], cols[0][mine], cols[1][mine]
        for r, c, sign in ((r0, c0, 1), (r0, c1, -1), (r1, c0, -1), (r1, c1, 1)):
            np.add.at(difference, (r, c), sign)
        covered = difference.cumsum(axis=0).cumsum(axis=1)[:ny, :nx] > 0
        grid[covered, label // WORD_BITS] |= np.uint64(1) << np.uint64(label % WORD_BITS)


def paint(grid: np.ndarray, positions: np.ndarray, extents: PixelExtents, xs: np.ndarray, ys: np.ndarray) -> None:
    """OR each box's bit (at `positions`, one per box) into the grid cells it covers.
    `ys` may be a band of the page's row edges: boxes are clipped to it."""
    owners, extents = extents.rectangles()
    r0 = np.searchsorted(ys, np.clip(extents.row0, ys[0], ys[-1]))
    r1 = np.searchsorted(ys, np.clip(extents.row1, ys[0], ys[-1]))
    inside = r1 > r0
    rows = (r0[inside], r1[inside])
    cols = (np.searchsorted(xs, extents.col0[inside]), np.searchsorted(xs, extents.col1[inside]))
    positions = positions[owners[inside]]
    area = int(((rows[1] - rows[0]) * (cols[1] - cols[0])).sum())
    cells = grid.shape[0] * grid.shape[1]
    prefix_sums_cost = SLICE_COST_CELLS * cells * len(np.unique(positions)) + PREFIX_SUM_OVERHEAD
    if area > SLICE_COST_CELLS * cells + PREFIX_SUM_OVERHEAD and area > prefix_sums_cost:
        _cover_by_prefix_sums(grid, rows, cols, positions)
    else:
        bits = np.left_shift(np.uint64(1), (positions % WORD_BITS).astype(np.uint64))
        _cover_by_slices(grid, rows, cols, positions // WORD_BITS, bits)


def _sum_runs(keys: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each run of equal neighbouring keys as one key with its summed weight."""
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    return keys[starts], np.add.reduceat(weights, starts)


def _sum_by_key(keys: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct keys, sorted, with the sum of their weights (integers, exactly). Neighbouring grid
    cells mostly share their pair, so merging runs first leaves a sort of a few hundred keys."""
    keys, weights = _sum_runs(keys, weights)
    order = np.argsort(keys)  # integer sums: the order among equal keys does not matter
    return _sum_runs(keys[order], weights[order])


@dataclass(frozen=True)
class _Packing:
    """Both label sets of a cell in one 64-bit key, painted directly: the reference's bits above
    the prediction's, which are shifted down to the lowest class the page's prediction uses (in
    dual mode that drops the whole reference block). Then one sort counts the pairs."""

    shift: int
    width: int  # bits of the prediction part

    @classmethod
    def fit(cls, reference_classes: np.ndarray, prediction_classes: np.ndarray, class_count: int) -> "_Packing | None":
        """The packing for these painted classes, or None when they do not fit in one word."""
        if class_count > WORD_BITS:
            return None
        shift = int(prediction_classes.min()) if len(prediction_classes) else 0
        width = int(prediction_classes.max()) - shift + 1 if len(prediction_classes) else 0
        reference_width = int(reference_classes.max()) + 1 if len(reference_classes) else 0
        return cls(shift, width) if reference_width + width < WORD_BITS else None

    def table(self, keys: np.ndarray, weights: np.ndarray) -> PairTable:
        distinct, pixels = _sum_by_key(keys, weights)
        truth = distinct >> np.uint64(self.width)
        predicted = (distinct & np.uint64((1 << self.width) - 1)) << np.uint64(self.shift)
        return PairTable(truth[:, None], predicted[:, None], pixels)


# A fixed offset a word: splitmix64's Weyl sequence (its state's steps by the golden ratio; not
# `np.random`, whose import costs every run 7 ms)
_ROW_HASH = np.arange(1, 1025, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)


def row_hashes(rows: np.ndarray) -> np.ndarray:
    """One word a row: each word (plus a fixed offset by position) through splitmix64's
    finaliser, a bijection, then summed."""
    mixed = rows + _ROW_HASH[: rows.shape[1]]
    for shift, multiplier in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB)):
        mixed ^= mixed >> np.uint64(shift)
        mixed *= np.uint64(multiplier)
    mixed ^= mixed >> np.uint64(31)
    return mixed.sum(axis=1, dtype=np.uint64)


def unique_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`np.unique(rows, axis=0, return_inverse=True)` of (n, words) uint64 label sets, the same
    arrays (rows in lexicographic order, word 0 first; a flat inverse), made fast.

    NumPy sorts rows as structured values, about 100x slower than sorting integers (0.1 s for
    a 2,047-class page's grid): so each row is hashed to one word, the hashes are sorted, and
    the rows a hash stands for are checked equal; only a collision (then checked, never trusted)
    takes NumPy's way."""
    if rows.shape[1] == 1 or rows.shape[1] > len(_ROW_HASH) or not len(rows):
        distinct, inverse = np.unique(rows, axis=0, return_inverse=True)
        return distinct, inverse.reshape(-1)
    _, first, inverse = np.unique(row_hashes(rows), return_index=True, return_inverse=True)
    if not np.array_equal(rows[first][inverse], rows):
        distinct, inverse = np.unique(rows, axis=0, return_inverse=True)
        return distinct, inverse.reshape(-1)
    order = np.lexsort(rows[first].T[::-1])  # word 0 the primary key, as NumPy's row order
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return rows[first[order]], rank[inverse.reshape(-1)]


def _general_pairs(reference: np.ndarray, prediction: np.ndarray, weights: np.ndarray) -> PairTable:
    """Any number of words: number the distinct label sets of each side, then pair the numbers."""
    ref_unique, ref_ids = unique_rows(reference)
    pred_unique, pred_ids = unique_rows(prediction)
    pair_ids = ref_ids.astype(np.int64) * len(pred_unique) + pred_ids
    distinct, pixels = _sum_by_key(pair_ids, weights)
    return PairTable(ref_unique[distinct // len(pred_unique)], pred_unique[distinct % len(pred_unique)], pixels)


def _band_pairs(reference: tuple[np.ndarray, PixelExtents], prediction: tuple[np.ndarray, PixelExtents], xs: np.ndarray,
                band: np.ndarray, words: int, packing: _Packing | None) -> PairTable:
    """The pair table of one horizontal band of the grid."""
    weights = (np.diff(band)[:, None] * np.diff(xs)[None, :]).reshape(-1)
    shape = (len(band) - 1, len(xs) - 1)
    (reference_classes, reference_extents), (prediction_classes, prediction_extents) = reference, prediction
    if packing is not None:
        keys = np.zeros((*shape, 1), dtype=np.uint64)
        paint(keys, reference_classes + packing.width, reference_extents, xs, band)
        paint(keys, prediction_classes - packing.shift, prediction_extents, xs, band)
        return packing.table(keys.reshape(-1), weights)
    truth = np.zeros((*shape, words), dtype=np.uint64)
    predicted = np.zeros((*shape, words), dtype=np.uint64)
    paint(truth, reference_classes, reference_extents, xs, band)
    paint(predicted, prediction_classes, prediction_extents, xs, band)
    return _general_pairs(truth.reshape(-1, words), predicted.reshape(-1, words), weights)


def pair_table(
    width: int,
    height: int,
    reference: tuple[np.ndarray, PixelExtents],
    prediction: tuple[np.ndarray, PixelExtents],
    class_count: int,
) -> PairTable:
    """Rasterise both sides of one page (class indices and extents per side) into a pair table.

    A page whose grid would exceed `MAX_BAND_CELLS` (thousands of boxes) is painted in horizontal
    bands, whose pair tables are then merged, so memory stays bounded whatever the input.
    """
    xs, ys = cell_edges(width, height, [reference[1], prediction[1]])
    packing = _Packing.fit(reference[0][reference[1].paints], prediction[0][prediction[1].paints], class_count)
    band_rows = max(1, MAX_BAND_CELLS // (len(xs) - 1))
    tables = [
        _band_pairs(reference, prediction, xs, ys[start : start + band_rows + 1], words_for(class_count), packing)
        for start in range(0, len(ys) - 1, band_rows)
    ]
    if len(tables) == 1:
        return tables[0]
    return _general_pairs(
        np.concatenate([t.reference_codes for t in tables]),
        np.concatenate([t.prediction_codes for t in tables]),
        np.concatenate([t.pixels for t in tables]),
    )


@dataclass(frozen=True)
class LabelGrid:
    """Both sides' label sets on the page's grid: cell (r, c) spans rows `ys[r]:ys[r+1]` and columns
    `xs[c]:xs[c+1]`, every pixel of it with the same (T, P) pair. For drawing where a matrix cell's
    pixels are, on the very grid the matrices are counted on."""

    xs: np.ndarray  # (nx + 1,) column edges
    ys: np.ndarray  # (ny + 1,) row edges
    reference_codes: np.ndarray  # (ny, nx, words) uint64
    prediction_codes: np.ndarray  # (ny, nx, words) uint64


def label_grid(width: int, height: int, reference: tuple[np.ndarray, PixelExtents],
               prediction: tuple[np.ndarray, PixelExtents], class_count: int) -> LabelGrid:
    """Paint one page's two sides on its grid (one band: for a single page on screen)."""
    xs, ys = cell_edges(width, height, [reference[1], prediction[1]])
    words = words_for(class_count)
    codes = []
    for classes, extents in (reference, prediction):
        grid = np.zeros((len(ys) - 1, len(xs) - 1, words), dtype=np.uint64)
        paint(grid, classes, extents, xs, ys)
        codes.append(grid)
    return LabelGrid(xs, ys, *codes)


def label_sets(codes: np.ndarray, class_count: int) -> np.ndarray:
    """Bit-packed label sets (n, words) as a boolean (n, class_count) matrix; empty sets become
    {Background}."""
    as_bytes = np.ascontiguousarray(codes).astype("<u8").view(np.uint8).reshape(len(codes), -1)
    members = np.unpackbits(as_bytes, axis=1, bitorder="little")[:, :class_count].astype(bool)
    members[:, 0] |= ~members.any(axis=1)
    return members

