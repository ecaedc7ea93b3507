"""TORE's page kernel: rasterisation, Algorithm 1 and each page's cells of a whole batch in one
compiled (numba) call, to the same bits as the NumPy path of `dataset.evaluate_batch`.

Instead of painting a grid, the kernel sweeps each page's row bands (the rows between consecutive
box edges, whose label sets do not change downwards): in a band it walks the active boxes' column
edges left to right, keeping a count per class and side, and adds each column interval's pixels to
its (reference set, predicted set) pair in a small hash table. Algorithm 1 (docs/algorithm.md#algorithm-1)
then runs on the page's distinct pairs as bit sets, adding exact integer numerators per
(cell, denominator). What floats there are come from the same NumPy operations as the NumPy path
(`cell_values_by_page`): each exact sum divided once, then added in increasing denominator order.

A label set is one 64-bit word (bit c = class c), so the kernel takes taxonomies of up to
`MAX_CLASSES` = 64 classes, Background included; wider ones keep the NumPy path, which has no
limit. So do pages with more than `MAX_BOXES` boxes (whose grid the NumPy path may have to refuse,
`raster.MAX_PAGE_CELLS`), pages so huge that sums need Python integers, and everything when numba
is not installed. `evaluate` makes that choice, and the cold-cache one: see its docstring.

    python -m tore_engine.run.warm    # load or compile TORE's kernels into their cache folder now
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from tore_engine.core import jit
from tore_engine.core.offsets import offsets_of
from tore_engine.engine.polygons import PIECE_TYPE
from tore_engine.engine.raster import MAX_PAGE_CELLS, WORD_BITS
from tore_engine.metrics.algorithm1 import ExactCounts

if TYPE_CHECKING:
    from tore_engine.engine.raster import PageTask, PixelExtents

MAX_CLASSES = WORD_BITS  # bit c of a word = class c
MAX_BOXES = (math.isqrt(MAX_PAGE_CELLS) - 1) // 2  # a page's grid then has at most MAX_PAGE_CELLS cells

KERNEL_ENV = "TORE_PAGE_KERNEL"
AUTO, NUMPY, ALWAYS = "auto", "numpy", "always"  # ALWAYS: the kernel whenever it applies, compiling if need be
LOAD_AFTER_PAGES = 1_000  # warm cache, numba not imported yet: its import and the load (0.3-0.5 s) pay off after about this many pages
COMPILE_AFTER_PAGES = 4_000  # cold cache: below this a process never waits for a compile
POLYGON_COMPILE_AFTER_PAGES = 100  # the same with polygons: the NumPy path takes about 0.03 s a page of turned regions
COMPILE_SECONDS = 3  # about what the one compile takes (benchmarks/RESULTS.md)
WHAT = "TORE's page kernel"

BOX_FIELDS = ("col0", "col1", "row0", "row1", "class")  # the columns of the kernel's box array
COL0, COL1, ROW0, ROW1, LABEL = range(len(BOX_FIELDS))
INITIAL_SLOTS = 1024  # pair hash table slots (a page has about 60 distinct pairs); it doubles when half full

# Constants of the compiled code, as 64-bit unsigned words (mixing signed and unsigned integers
# would make numba compute in floats).
_ZERO, _ONE = np.uint64(0), np.uint64(1)
_INT_ONE = np.int64(1)  # a denominator of 1 typed as int64, not as a literal
_HASH_T, _HASH_P, _HASH_SHIFT = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F), np.uint64(40)
_M1, _M2, _M4, _H01 = (np.uint64(m) for m in (0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F, 0x0101010101010101))
_S1, _S2, _S4, _S56 = (np.uint64(s) for s in (1, 2, 4, 56))
_SIDE_SHIFT = MAX_CLASSES.bit_length() - 1  # a class counter's side: counter >> _SIDE_SHIFT (0 reference, 1 prediction)

# (page bounds into the cells, cells = row * K + column, their values, (pages, 2, 2) reduced, counts)
Cells = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, ExactCounts]
# a batch's polygon pieces: (k, 4) `PIECE_TYPE` col0, col1, row0, row1 by box, and where each box's pieces start ((boxes + 1,))
Pieces = tuple[np.ndarray, np.ndarray]

_kernels = jit.Kernels()
_pages_seen = 0  # pages this process has been asked to evaluate: the size of its job so far


# --- the compiled code (plain Python until `_kernels` compiles it) -------------------------------
# Written for a short compilation and a fast loop: only scalar arithmetic, indexing and 1-D
# `np.zeros` (numba's sorts, fancy indexing and each new array shape compile whole
# implementations); counters start as `np.int64(0)`, as a bare 0 would be compiled into helpers
# once more as a literal; and the hot loops call no helper with array arguments, since numba
# counts the references of each array passed, two atomic operations a call, which would cost more
# than the work.


@_kernels.helper
def _popcount(bits):
    bits = bits - ((bits >> _S1) & _M1)
    bits = (bits & _M2) + ((bits >> _S2) & _M2)
    bits = (bits + (bits >> _S4)) & _M4
    return np.int64((bits * _H01) >> _S56)


@_kernels.helper
def _pop_lowest(bits):
    """The index of the lowest set bit, and the bits without it."""
    lowest = bits & (~bits + _ONE)
    return _popcount(lowest - _ONE), bits ^ lowest


@_kernels.helper
def _bit(index):
    return _ONE << np.uint64(index)


@_kernels.helper
def _slot(truth, predicted, slots):
    """Where the hash table (of a power of two slots) starts looking for the pair."""
    return np.int64(((truth * _HASH_T) ^ (predicted * _HASH_P)) >> _HASH_SHIFT) & (slots - 1)


@_kernels.helper
def _blocks(truth, predicted, pixels):
    """`pixels * c(T, P)` of Algorithm 1 (cases tested in the order 1, 2, 3, 4) as two blocks of
    equal terms: the diagonal (i, i) for i in `diagonal`, each `numerator / denominator`; and every
    (i, j) with i in `rows` and j in `columns`, each `pixels / cross_denominator`."""
    truth_only = truth & ~predicted
    predicted_only = predicted & ~truth
    size_p = _popcount(predicted)
    if truth_only == _ZERO and predicted_only == _ZERO:  # 1: T = P
        return truth, _INT_ONE, pixels, _ZERO, _ZERO, _INT_ONE
    if truth_only == _ZERO:  # 2: T a proper subset of P
        return truth, size_p, pixels * _popcount(truth), truth, predicted_only, size_p
    if predicted_only == _ZERO:  # 3: P a proper subset of T
        return predicted, _INT_ONE, pixels, truth_only, predicted, size_p
    return truth & predicted, _INT_ONE, pixels, truth_only, predicted_only, _popcount(predicted_only)  # 4: mixed


@_kernels.helper
def _by_first_row(rows, count, height):
    """The indices of `rows[:count]` in row order: counted into rows when they are many for the
    page's height (a turned region's pieces), else a Shell sort (a page of a few boxes may be
    2^31 pixels tall)."""
    order = np.zeros(count, np.int64)
    if count > height // 8:
        at = np.zeros(height + 2, np.int64)
        for h in range(count):
            at[rows[h] + 1] += 1
        for row in range(height + 1):
            at[row + 1] += at[row]
        for h in range(count):
            order[at[rows[h]]] = h
            at[rows[h]] += 1
        return order
    for h in range(count):
        order[h] = h
    gap = 1
    while gap < count // 3:
        gap = 3 * gap + 1
    while gap > 0:
        for i in range(gap, count):
            h = order[i]
            j = i
            while j >= gap and rows[order[j - gap]] > rows[h]:
                order[j] = order[j - gap]
                j -= gap
            order[j] = h
        gap //= 3
    return order


@_kernels.helper
def _new_table(slots):
    """A pair hash table: each slot's (reference bits, predicted bits) at `2 * slot` and `2 * slot
    + 1` of `keys`, its (pixels, owning page) there in `counts`, so that a new page needs no
    clearing; and the slots the current page uses, in order."""
    return np.zeros(2 * slots, np.uint64), np.zeros(2 * slots, np.int64), np.zeros(slots, np.int64)


@_kernels.helper
def _table_for(pairs, slots):
    """An empty table of at least `slots` slots in which `pairs` pairs keep it at most half full
    (so that probing stays short)."""
    while 2 * pairs > slots:
        slots *= 2
    return _new_table(slots)


@_kernels.helper
def _grown(array, capacity):
    if len(array) >= capacity:
        return array
    larger = np.zeros(capacity if capacity > 2 * len(array) else 2 * len(array), np.int64)
    for n in range(len(array)):
        larger[n] = array[n]
    return larger


@_kernels.helper
def _page_terms(numerators, row_cells, cell_denominators, k, totals, out, n_cells, n_terms):
    """Move the page's exact sums to the outputs `out` (cells, their first terms, the terms' sums
    and denominators), cells ascending and each cell's denominators ascending, and add them to the
    batch totals; clears the page's sums. Returns the new numbers of cells and terms."""
    cells, first, sums, denominators = out
    for i in range(k):
        columns = row_cells[i]
        row_cells[i] = _ZERO
        while columns != _ZERO:
            j, columns = _pop_lowest(columns)
            cell = i * k + j
            cells[n_cells], first[n_cells] = cell, n_terms
            n_cells += 1
            remaining = cell_denominators[cell]
            cell_denominators[cell] = _ZERO
            while remaining != _ZERO:
                below, remaining = _pop_lowest(remaining)
                index = cell * (k + 1) + below + 1
                sums[n_terms], denominators[n_terms] = numerators[index], below + 1
                totals[(below + 1) * k * k + cell] += numerators[index]
                numerators[index] = 0
                n_terms += 1
    return n_cells, n_terms


@_kernels.helper
def _sweep_page(table, page, width, height, boxes, pieces, piece_starts, first, prediction_from, last):
    """Every pixel of one page (boxes `first:last`, a polygon's its pieces) added to its pair in the
    table, row band by row band (the rows between consecutive rectangle edges, whose label sets do
    not change downwards): in a band, the active rectangles' column edges left to right, counting
    each class in and out. Returns the page's number of pairs; or, when the table became too small
    for them, minus the number it needs room for (the caller sweeps the page again in a larger
    one). Growing it here would make its arrays loop variables, which numba reference-counts at
    every band: six atomic operations a pixel row of turned regions, 10 % of the kernel's time.

    The rectangles go in chains: a polygon's piece follows the one before it in the chain when it
    starts on the row where that one ends, so a turned region (a rectangle a pixel row) is one
    chain; a box is a chain of itself. A band's active chains hold their current rectangle in
    slots; where a rectangle ends, its chain moves on to the next (a few reads, no search, its
    edges' new columns written where the edges are), and the band's edges, kept in order from band
    to band, are put back in order by insertion (a turned region's edges move a step or two a row).
    Only chain heads are sorted by first row."""
    keys, counts, used = table
    n = last - first
    # the chain heads: a box that paints, or a piece that does not follow the one before it
    room = piece_starts[last] - piece_starts[first] + n
    head_boxes, head_pieces, head_rows = np.zeros(room, np.int64), np.zeros(room, np.int64), np.zeros(room, np.int64)
    count = np.int64(0)
    for box in range(first, last):
        if piece_starts[box + 1] > piece_starts[box]:
            for piece in range(piece_starts[box], piece_starts[box + 1]):
                if piece == piece_starts[box] or pieces[piece - 1, ROW1] != pieces[piece, ROW0]:
                    head_boxes[count], head_pieces[count], head_rows[count] = box, piece, pieces[piece, ROW0]
                    count += 1
        elif boxes[box, COL1] > boxes[box, COL0] and boxes[box, ROW1] > boxes[box, ROW0]:
            head_boxes[count], head_pieces[count], head_rows[count] = box, -1, boxes[box, ROW0]  # the box itself
            count += 1
    order = _by_first_row(head_rows, count, height)
    # per slot: its current piece (-1: the box itself), the end of its box's pieces, its class
    # counter, and its rectangle's columns and end row
    slot_piece, slot_last, slot_counter = np.zeros(count, np.int64), np.zeros(count, np.int64), np.zeros(count, np.int64)
    slot_end = np.zeros(count, np.int64)
    free, free_count = np.zeros(count, np.int64), np.int64(0)
    used_slots = np.int64(0)
    events, event_count = np.zeros(2 * count, np.int64), np.int64(0)  # 2 * slot + 1 opens, 2 * slot closes
    columns = np.zeros(2 * count, np.int64)  # each event's column in this band, where the event is in `events`
    position = np.zeros(2 * count, np.int64)  # each event's place in `events`: a chain moving on writes its columns there
    covering = np.zeros(2 * MAX_CLASSES, np.int64)
    # The table slot of the pair each interval position had when last looked up (-1: none): from
    # one pixel row of turned regions to the next most positions keep their pair, and reading the
    # slot back beats a lookup (9% of the kernel). Only pages with pieces remember: a box page's
    # bands seldom repeat.
    remember = piece_starts[last] > piece_starts[first]
    remembered = np.full(2 * count + 1, -1, np.int64)
    remembered_truth, remembered_predicted = np.zeros(2 * count + 1, np.uint64), np.zeros(2 * count + 1, np.uint64)
    y, entered, size = np.int64(0), np.int64(0), np.int64(0)
    while y < height:
        below, removed = height, False
        for slot in range(used_slots):  # rectangles ending on row y: their chain moves on, or ends
            if 0 <= slot_end[slot] <= y:
                piece = slot_piece[slot]
                if piece >= 0 and piece + 1 < slot_last[slot] and pieces[piece + 1, ROW0] == y:
                    slot_piece[slot] = piece + 1
                    columns[position[2 * slot + 1]], columns[position[2 * slot]] = pieces[piece + 1, COL0], pieces[piece + 1, COL1]
                    slot_end[slot] = pieces[piece + 1, ROW1]
                else:
                    slot_end[slot] = -1
                    free[free_count] = slot
                    free_count += 1
                    removed = True
            if 0 <= slot_end[slot] < below:
                below = slot_end[slot]
        if removed:  # the ended chains' edges out of the order
            kept = np.int64(0)
            for e in range(event_count):
                if slot_end[events[e] >> 1] >= 0:
                    events[kept], columns[kept] = events[e], columns[e]
                    position[events[kept]] = kept
                    kept += 1
            event_count = kept
        while entered < count and head_rows[order[entered]] <= y:  # chains starting on row y: their edges at the end
            box, piece = head_boxes[order[entered]], head_pieces[order[entered]]
            if free_count > 0:
                free_count -= 1
                slot = free[free_count]
            else:
                slot = used_slots
                used_slots += 1
            slot_piece[slot], slot_last[slot] = piece, piece_starts[box + 1]
            slot_counter[slot] = boxes[box, LABEL] + (MAX_CLASSES if box >= prediction_from else 0)  # its class's counter
            events[event_count], events[event_count + 1] = 2 * slot + 1, 2 * slot
            position[2 * slot + 1], position[2 * slot] = event_count, event_count + 1
            if piece < 0:
                columns[event_count], columns[event_count + 1], slot_end[slot] = boxes[box, COL0], boxes[box, COL1], boxes[box, ROW1]
            else:
                columns[event_count], columns[event_count + 1], slot_end[slot] = pieces[piece, COL0], pieces[piece, COL1], pieces[piece, ROW1]
            below = min(below, slot_end[slot])
            event_count += 2
            entered += 1
        if entered < count and head_rows[order[entered]] < below:
            below = head_rows[order[entered]]
        for e in range(1, event_count):  # the edges in column order again (insertion: they moved little)
            column = columns[e]
            if columns[e - 1] > column:
                event = events[e]
                j = e
                while j > 0 and columns[j - 1] > column:
                    events[j], columns[j] = events[j - 1], columns[j - 1]
                    position[events[j]] = j
                    j -= 1
                events[j], columns[j] = event, column
                position[event] = j
        if 2 * (size + event_count + 1) > len(used):  # a band adds at most event_count + 1 pairs
            return -(size + event_count + 1)
        truth, predicted = _ZERO, _ZERO  # the current interval's reference and predicted label sets
        x = np.int64(0)
        for e in range(event_count + 1):
            edge = columns[e] if e < event_count else width
            if edge > x:  # the interval [x, edge) of the band has the pair (truth, predicted)
                slot = remembered[e] if remember else -1
                if slot < 0 or remembered_truth[e] != truth or remembered_predicted[e] != predicted:
                    slot = _slot(truth, predicted, len(used))
                    while counts[2 * slot + 1] == page and (keys[2 * slot] != truth or keys[2 * slot + 1] != predicted):
                        slot = (slot + 1) & (len(used) - 1)
                    if counts[2 * slot + 1] != page:
                        keys[2 * slot], keys[2 * slot + 1], counts[2 * slot], counts[2 * slot + 1] = truth, predicted, 0, page
                        used[size] = slot
                        size += 1
                    if remember:
                        remembered[e], remembered_truth[e], remembered_predicted[e] = slot, truth, predicted
                counts[2 * slot] += (edge - x) * (below - y)
                x = edge
            if e < event_count:
                event = events[e]
                counter = slot_counter[event >> 1]
                covering[counter] += 2 * (event & 1) - 1
                # the class's bit set or cleared on its side, without branches (a band's events come
                # in no predictable order) and in registers (an array of the two sets cost 3 %)
                bit = _bit(counter & (MAX_CLASSES - 1))
                on = _ZERO - np.uint64(covering[counter] > 0)  # all ones while the class covers the interval
                predicted_bit = bit & (_ZERO - np.uint64(counter >> _SIDE_SHIFT))
                truth_bit = bit ^ predicted_bit
                truth = (truth & ~truth_bit) | (truth_bit & on)
                predicted = (predicted & ~predicted_bit) | (predicted_bit & on)
        y = below
    return size


@_kernels.entry(lambda t: (t.int64[:, ::1], t.int64[::1], t.int64[:, ::1], t.int64, t.uint32[:, ::1], t.int64[::1]))
def _evaluate_pages(frames, offsets, boxes, k, pieces, piece_starts):
    """All pages of a batch. `frames` holds each page's (width, height), `boxes` each box's
    (first column, end column, first row, end row, class); page p's reference boxes are
    `offsets[2p]:offsets[2p + 1]`, its prediction's `offsets[2p + 1]:offsets[2p + 2]`. A box
    that is a polygon paints its pieces, `pieces[piece_starts[b]:piece_starts[b + 1]]` (col0,
    col1, row0, row1); `piece_starts` is empty when no box is one. The pieces are read where they
    are (`_sweep_page`): no array of every pixel row of a batch's polygons is made for the kernel.

    Returns each page's cells (sorted) with the index of their first term, the terms (exact
    numerator sums and their denominators, in increasing denominator order within a cell), the
    page bounds into the cells, the reduced matrices (4 a page), the batch's exact counts as a
    dense (K + 1, K, K) array indexed by (denominator, row, column), and the batch's number of
    distinct pairs and largest pixel count of a pair (to tell whether int64 sufficed).
    """
    pages = len(frames)
    reduced = np.zeros(4 * pages, np.int64)
    totals = np.zeros((k + 1) * k * k, np.int64)
    # The page's exact sums by (cell, denominator); each row's cells and each cell's denominators
    # as bits, which give the output order without sorting.
    numerators, row_cells, cell_denominators = np.zeros(k * k * (k + 1), np.int64), np.zeros(k, np.uint64), np.zeros(k * k, np.uint64)
    table = _new_table(np.int64(INITIAL_SLOTS))
    out = (np.zeros(64 * pages, np.int64), np.zeros(64 * pages, np.int64), np.zeros(64 * pages, np.int64), np.zeros(64 * pages, np.int64))
    bounds = np.zeros(pages + 1, np.int64)
    n_cells, n_terms, n_pairs, most_pixels = np.int64(0), np.int64(0), 0, 0
    starts = piece_starts if len(piece_starts) else np.zeros(len(boxes) + 1, np.int64)
    for page in range(pages):
        first, prediction_from, last = offsets[2 * page], offsets[2 * page + 1], offsets[2 * page + 2]
        size = _sweep_page(table, page + 1, frames[page, 0], frames[page, 1], boxes, pieces, starts, first, prediction_from, last)
        while size < 0:  # the page's pairs need a larger table: sweep it again in one
            table = _table_for(-size, 2 * len(table[2]))
            size = _sweep_page(table, page + 1, frames[page, 0], frames[page, 1], boxes, pieces, starts, first, prediction_from, last)
        keys, counts, used = table
        new_terms = 0
        for n in range(size):
            pixels = counts[2 * used[n]]
            truth = keys[2 * used[n]] if keys[2 * used[n]] != _ZERO else _ONE  # the empty set is {Background}
            predicted = keys[2 * used[n] + 1] if keys[2 * used[n] + 1] != _ZERO else _ONE
            diagonal, denominator, numerator, rows, columns, cross_denominator = _blocks(truth, predicted, pixels)
            for block in range(2):
                if block == 1:
                    diagonal, denominator, numerator = rows, cross_denominator, pixels
                while diagonal != _ZERO:
                    i, diagonal = _pop_lowest(diagonal)
                    others = _bit(i) if block == 0 else columns
                    while others != _ZERO:
                        j, others = _pop_lowest(others)
                        index = (i * k + j) * (k + 1) + denominator
                        new_terms += 1 if numerators[index] == 0 else 0
                        numerators[index] += numerator
                        row_cells[i] |= _bit(j)
                        cell_denominators[i * k + j] |= _bit(denominator - 1)
            truth_fg, predicted_fg = (truth & _ONE) == _ZERO, (predicted & _ONE) == _ZERO
            reduced[4 * page + (2 if truth_fg else 0) + (1 if predicted_fg else 0)] += pixels * (_popcount(truth) if truth_fg else 1)
            most_pixels = pixels if pixels > most_pixels else most_pixels
        n_pairs += size
        out = (_grown(out[0], n_cells + new_terms), _grown(out[1], n_cells + new_terms), _grown(out[2], n_terms + new_terms), _grown(out[3], n_terms + new_terms))
        n_cells, n_terms = _page_terms(numerators, row_cells, cell_denominators, k, totals, out, n_cells, n_terms)
        bounds[page + 1] = n_cells
    return out[0][:n_cells], out[1][:n_cells], out[2][:n_terms], out[3][:n_terms], bounds, reduced, totals, n_pairs, most_pixels


# --- the Python side -----------------------------------------------------------------------------


def kernel_arrays(extents: PixelExtents, classes: np.ndarray) -> tuple[np.ndarray, Pieces | None]:
    """Boxes as the kernel takes them (rows of `BOX_FIELDS`), a polygon's box painting nothing
    itself; and the pieces the polygons paint instead, by box (None when no box is one)."""
    boxes = np.column_stack([extents.col0, extents.col1, extents.row0, extents.row1, classes]).astype(np.int64).reshape(-1, len(BOX_FIELDS))
    if extents.pieces is None or extents.piece_starts is None or extents.polygon is None:
        return boxes, None
    boxes[extents.polygon, COL1] = boxes[extents.polygon, COL0]
    return boxes, (np.ascontiguousarray(extents.pieces, PIECE_TYPE).reshape(-1, 4), extents.piece_starts)


def _inputs(tasks: Sequence[PageTask]) -> tuple[np.ndarray, np.ndarray, np.ndarray, Pieces | None]:
    """The batch as the arrays `_evaluate_pages` takes: frames, offsets, boxes and the polygons'
    pieces (`kernel_arrays` of each side, joined)."""
    sides = [kernel_arrays(extents, classes) for task in tasks
             for classes, extents in ((task.reference_classes, task.reference_extents), (task.prediction_classes, task.prediction_extents))]
    offsets = offsets_of([len(boxes) for boxes, _ in sides])
    boxes = np.concatenate([side for side, _ in sides]) if sides else np.zeros((0, len(BOX_FIELDS)), np.int64)
    pieces = None
    if any(side_pieces is not None for _, side_pieces in sides):
        counts = np.concatenate([np.zeros(len(side), np.int64) if side_pieces is None else np.diff(side_pieces[1]) for side, side_pieces in sides])
        pieces = (np.concatenate([side_pieces[0] for _, side_pieces in sides if side_pieces is not None]),
                  offsets_of(counts))
    frames = np.array([(task.width, task.height) for task in tasks], np.int64).reshape(-1, 2)
    return frames, offsets, boxes, pieces


def _exact_counts(totals: np.ndarray, class_count: int) -> ExactCounts:
    """Dense (denominator, row, column) totals as the sparse `ExactCounts`, in its key order."""
    k = class_count
    flat = np.flatnonzero(totals)
    return ExactCounts(k, flat // (k * k), (flat // k) % k, flat % k, totals[flat])


def _fits_int64(pairs: int, most_pixels: int, class_count: int) -> bool:
    """Whether every sum of the batch stays far enough below 2^63 that the NumPy path, too, keeps
    int64 rather than Python integers (`algorithm1.exact_integers`): a pair adds at most K^2 terms
    of at most `pixels * K` each."""
    return pairs * most_pixels * class_count**3 <= np.iinfo(np.int64).max


def _run(frames: np.ndarray, offsets: np.ndarray, boxes: np.ndarray, class_count: int, pieces: Pieces | None) -> Cells | None:
    """What `dataset.numpy_cells` computes from these pages, bit for bit; None for a batch of
    pages so huge that its sums need Python integers."""
    rectangles, starts = pieces if pieces is not None else (np.zeros((0, 4), PIECE_TYPE), np.zeros(0, np.int64))
    *arrays, pairs, most_pixels = _kernels.load()(frames, offsets, boxes, class_count, rectangles, starts)
    if not _fits_int64(pairs, most_pixels, class_count):
        return None
    cells, first, sums, denominators, bounds, reduced, totals = arrays
    values = np.add.reduceat(sums / denominators, first) if len(first) else np.zeros(0)
    return bounds, cells, values, reduced.reshape(-1, 2, 2), _exact_counts(totals, class_count)


# --- when to use it ------------------------------------------------------------------------------


def kernel_mode() -> str:
    """`$TORE_PAGE_KERNEL`: auto, numpy or always (the sweep kernel follows it too)."""
    mode = os.environ.get(KERNEL_ENV) or AUTO
    if mode not in (AUTO, NUMPY, ALWAYS):
        raise ValueError(f"{KERNEL_ENV} must be {AUTO!r}, {NUMPY!r} or {ALWAYS!r}, not {mode!r}")
    return mode


def _load(wait: bool, may_compile: bool) -> str | None:
    return jit.ready(_kernels, WHAT, COMPILE_SECONDS, wait=wait, may_compile=may_compile)


def _made_ready(always: bool, polygons: bool = False) -> bool:
    """Load the kernel when that pays off for this process's job so far, or compile it when the
    job is large; at once when `always`. Pages with polygons load it at once: the polygon
    rasteriser has imported numba already, and the NumPy path paints a polygon's rectangles (one a
    pixel row, often) one by one (benchmarks/RESULTS.md, polygons)."""
    if not always and not polygons and not jit.load_pays_off(_pages_seen, LOAD_AFTER_PAGES):
        return False
    compile_after = POLYGON_COMPILE_AFTER_PAGES if polygons else COMPILE_AFTER_PAGES
    return _load(wait=always, may_compile=always or _pages_seen >= compile_after) is not None


def preload_for_pool() -> None:
    """Before a local pool forks: when this process has numba loaded already (a compiled reader
    read a large input), so that each worker would load the kernel anyway (`jit.load_pays_off`),
    load it here from a warm cache (about 0.01 s once numba is up), so that forked workers
    inherit it instead of each loading it."""
    if "numba" in sys.modules and kernel_mode() == AUTO and not _kernels.loaded:
        _load(wait=False, may_compile=False)


def evaluate(tasks: Sequence[PageTask], class_count: int, job_pages: int = 0) -> Cells | None:
    """`evaluate_arrays` of these tasks."""
    polygon_pages = np.array([any(extents.polygon is not None and extents.polygon.any() for extents in (task.reference_extents, task.prediction_extents))
                              for task in tasks], bool)
    frames, offsets, boxes, pieces = _inputs(tasks)
    return evaluate_arrays(frames, offsets, boxes, class_count, job_pages, polygon_pages if polygon_pages.any() else None, pieces)


def evaluate_arrays(frames: np.ndarray, offsets: np.ndarray, boxes: np.ndarray, class_count: int, job_pages: int = 0,
                    polygon_pages: np.ndarray | None = None, pieces: Pieces | None = None) -> Cells | None:
    """The batch's cells as `dataset.numpy_cells` gives them, or None when the kernel declines
    and the NumPy path must do it. `frames` are the pages' (width, height), `offsets` the first
    box of each side (page 0's reference, page 0's prediction, ...), `boxes` rows of
    `BOX_FIELDS`; `job_pages` is the size of the whole evaluation, when known. `pieces`: what
    the boxes that are polygons paint instead of themselves (`PreparedBatch.kernel_inputs`).

    It declines when numba is missing, when the taxonomy has more than `MAX_CLASSES` classes, when
    a page has more than `MAX_BOXES` boxes (`_too_finely_cut`; `polygon_pages` flags the pages
    some of whose boxes are a polygon's rectangles), or when pages are so huge that sums need Python
    integers. Otherwise it evaluates once it is loaded in this process. Until then a process
    counts the pages it has been asked to evaluate (its job so far; a pool's workers each their
    own), or takes `job_pages` when that is more: from
    `LOAD_AFTER_PAGES` on it loads the kernel from a warm disk cache, and on a cold cache it
    compiles once its job reaches `COMPILE_AFTER_PAGES`, after a notice on stderr, so small jobs
    never wait for a compile; a batch with polygons loads it at once and compiles it from
    `POLYGON_COMPILE_AFTER_PAGES` on. `TORE_PAGE_KERNEL=numpy` always takes the NumPy path;
    `TORE_PAGE_KERNEL=always` takes the kernel whenever it applies, loading or compiling at once.
    """
    global _pages_seen
    _pages_seen = max(_pages_seen + len(frames), job_pages)
    mode = kernel_mode()
    if mode == NUMPY or class_count > MAX_CLASSES or not jit.numba_available():
        return None
    if len(frames) and _too_finely_cut(frames, _page_rectangles_count(offsets, pieces), polygon_pages):
        return None
    polygons = polygon_pages is not None and bool(polygon_pages.any())
    return _run(frames, offsets, boxes, class_count, pieces) if _kernels.loaded or _made_ready(mode == ALWAYS, polygons) else None


def _page_rectangles_count(offsets: np.ndarray, pieces: Pieces | None) -> np.ndarray:
    """The rectangles each page paints: a box each, or a polygon's pieces."""
    if pieces is None:
        return offsets[2::2] - offsets[0:-1:2]
    each = np.maximum(np.diff(pieces[1]), 1)
    return np.diff(offsets_of(each)[offsets[0::2]])


def _too_finely_cut(frames: np.ndarray, boxes: np.ndarray, polygon_pages: np.ndarray | None) -> bool:
    """Whether a page has more boxes than the kernel takes (`MAX_BOXES`). A polygon's rectangles
    (one a pixel row, often) count only on a page of more than `MAX_PAGE_CELLS` pixels: on a
    smaller one the NumPy path's grid is at most the pixel grid, which it never refuses."""
    many = boxes > MAX_BOXES
    if polygon_pages is not None:
        many &= ~polygon_pages | (frames[:, 0] * frames[:, 1] > MAX_PAGE_CELLS)
    return bool(many.any())


def warm() -> str:
    """Load the kernel from its cache folder, compiling it there first when the cache is cold;
    says which, and how long it took."""
    return jit.warm(_kernels, WHAT, COMPILE_SECONDS, without_numba="numba is not installed: TORE evaluates pages with its NumPy path")
