"""The sweep's compiled (numba) rasterisation: every page of a batch rasterised once for all the
sweep's minimum scores (`metrics.sweep.MIN_SCORES`), instead of once a point.

A box is kept at the first `level` points (`sweep.score_levels`: a box scored 0.42 is kept at
0.05 ... 0.40, an unscored one at all 19). Like the page kernel, the kernel sweeps each page's row
bands and walks the active boxes' column edges, but it counts, per side and class, the covering
boxes of each level, so that it knows each class's highest level there: class c is in a side's
label set at point k exactly when its highest covering level is at least k. Each column interval
therefore has one (reference set, predicted set) pair a point, which change only at the levels in
use there (usually none or one or two): the interval's pixels go to each run of points that share
a pair, as differences along the points (`counts[k] += pixels` where the run starts and `-=` past
its end), summed per pair over the whole batch. What comes out is the batch's pixel count of each
pair at each point: `metrics.sweep.SweepState.from_pairs` applies Algorithm 1 to them. The counts
are exactly those a run at each minimum score rasterises (tested point by point against runs with
`--min-score`).

Taxonomies of more than 64 classes, pages with more boxes than the page kernel takes, batches of
more than 2^62 pixels and a missing numba leave it to the sweep's NumPy path (`sweep_grid`, also
painted once for all points); `TORE_PAGE_KERNEL` switches both kernels alike.
"""

from __future__ import annotations

import numpy as np

from tore_engine.core import jit
from tore_engine.core.offsets import offsets_of
from tore_engine.engine import page_kernel
from tore_engine.engine.preparation import PreparedBatch
from tore_engine.metrics.sweep import POINTS

MAX_CLASSES = 64  # a label set is one 64-bit word
LEVELS = POINTS + 1  # level 0: kept at no point (left out before the kernel)
MAX_PIXELS = 2**56  # a batch's pixels: a pair's count times K (at most 64: Algorithm 1's numerators) then fits in int64
LOAD_AFTER_PAGES = 50  # the other path runs the pages 19 times (about 6 ms a page): loading (0.3-0.5 s) pays off early
COMPILE_AFTER_PAGES = 500  # and a cold compile (about 4 s) after this many
COMPILE_SECONDS = 4  # 3.6 s of CPU measured
WHAT = "TORE's sweep kernel"
LOCK_NAME = "compile-sweep.lock"
INITIAL_SLOTS = 1024  # pair hash table slots; it doubles when half full
BOX_FIELDS = ("col0", "col1", "row0", "row1", "class", "level", "side")
COL0, COL1, ROW0, ROW1, LABEL, LEVEL, SIDE = range(len(BOX_FIELDS))

_ZERO, _ONE = np.uint64(0), np.uint64(1)
_HASH_T, _HASH_P, _HASH_SHIFT = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F), np.uint64(40)

_kernels = jit.Kernels(borrowing=True)  # the helpers make no array: no reference counting on every call


# --- the compiled code (plain Python until `_kernels` compiles it) ---------------------------------


@_kernels.helper
def _cover(cover, top, bits, used, side, label, level, step):
    """A box of `side`, `label` and `level` enters (`step` 1) or leaves (-1) the current column:
    its class's count at that level, its highest level (`top`), and the classes whose highest level
    is each level (`bits[side * LEVELS + level]`) follow. Returns the levels in use (bit L: some
    class of either side has its highest level at L)."""
    at = side * MAX_CLASSES + label
    cover[at * LEVELS + level] += step
    old = top[at]
    new = old
    if step > 0 and level > old:
        new = level
    elif step < 0 and level == old and cover[at * LEVELS + level] == 0:
        new = level - 1
        while new > 0 and cover[at * LEVELS + new] == 0:
            new -= 1
    if new != old:
        bit = _ONE << np.uint64(label)
        if old > 0:
            bits[side * LEVELS + old] &= ~bit
            if bits[old] | bits[LEVELS + old] == _ZERO:
                used &= ~(_ONE << np.uint64(old))
        if new > 0:
            bits[side * LEVELS + new] |= bit
            used |= _ONE << np.uint64(new)
        top[at] = new
    return used


@_kernels.helper
def _slot(truth, predicted, slots):
    """Where the hash table (of a power of two slots) starts looking for the pair."""
    return np.int64(((truth * _HASH_T) ^ (predicted * _HASH_P)) >> _HASH_SHIFT) & (slots - 1)


@_kernels.helper
def _add_run(table, pairs, diffs, size, truth, predicted, low, high, pixels):
    """`pixels` to the pair at points `low..high` (1-based), as differences along the points. The
    pairs are numbered as they come (`table[slot]` holds the number, -1 when free); pair 0 is the
    empty pair, all Background, which has no slot."""
    pair = np.int64(0)
    if truth != _ZERO or predicted != _ZERO:
        slots = len(table)
        slot = _slot(truth, predicted, slots)
        while table[slot] >= 0 and (pairs[2 * table[slot]] != truth or pairs[2 * table[slot] + 1] != predicted):
            slot = (slot + 1) & (slots - 1)
        if table[slot] < 0:
            table[slot] = size
            pairs[2 * size], pairs[2 * size + 1] = truth, predicted
            size += 1
        pair = table[slot]
    diffs[pair * POINTS + low - 1] += pixels
    if high < POINTS:
        diffs[pair * POINTS + high] -= pixels
    return size


@_kernels.helper
def _lowest_level(used):
    """The lowest set bit's index (`used` is not 0)."""
    lowest = used & (~used + _ONE)
    level = np.int64(0)
    while lowest > _ONE:
        lowest >>= _ONE
        level += 1
    return level


@_kernels.helper
def _add_interval(table, pairs, diffs, size, bits, used, truth, predicted, pixels):
    """An interval's pixels at every point. At point 1 its pair is every covering class (`truth`,
    `predicted`); going up the points, the classes whose highest level is the level passed leave
    it (only the levels in `used` change it), until the empty pair."""
    low = np.int64(1)
    while used != _ZERO:
        level = _lowest_level(used)
        size = _add_run(table, pairs, diffs, size, truth, predicted, low, level, pixels)
        truth &= ~bits[level]
        predicted &= ~bits[LEVELS + level]
        low = level + 1
        used &= ~(_ONE << np.uint64(level))
    if low <= POINTS:
        size = _add_run(table, pairs, diffs, size, truth, predicted, low, np.int64(POINTS), pixels)
    return size


@_kernels.helper
def _rehash(table, pairs, size):
    """Every pair's number into an empty, larger table."""
    slots = len(table)
    for pair in range(1, size):
        slot = _slot(pairs[2 * pair], pairs[2 * pair + 1], slots)
        while table[slot] >= 0:
            slot = (slot + 1) & (slots - 1)
        table[slot] = pair


# Where `_sweep_bands` stands: the page, its row, the boxes entered and gone, the active ones and
# the pairs numbered.
PAGE, ROW, ENTERED, GONE, ACTIVE, SIZE = range(6)


@_kernels.helper
def _sweep_bands(frames, bounds, boxes, down, up, by_edge, cover, top, bits, table, pairs, diffs, state):
    """The bands of every page from where `state` stands, until the last (True) or until a band's
    pairs might not fit the table (False: `state` stands at that band, for the caller to grow the
    table and call again; taking the band's boxes in again then changes nothing). The caller
    grows it: grown here, its arrays would be loop variables, which numba reference-counts at
    every band (4 % of a `--sweep` run's samples)."""
    page, y, entered, gone, active, size = state[PAGE], state[ROW], state[ENTERED], state[GONE], state[ACTIVE], state[SIZE]
    while page < len(frames):
        first, n = bounds[page], bounds[page + 1] - bounds[page]
        width, height = frames[page, 0], frames[page, 1]
        while y < height:
            while gone < n and boxes[up[first + gone], ROW1] <= y:  # a box ends: out of both lists
                for start in (0, n):
                    position = start
                    while by_edge[position] != up[first + gone]:
                        position += 1
                    for shifted in range(position, start + active - 1):
                        by_edge[shifted] = by_edge[shifted + 1]
                active -= 1
                gone += 1
            while entered < n and boxes[down[first + entered], ROW0] <= y:  # a box starts: sorted in
                box = down[first + entered]
                for start, field in ((0, COL0), (n, COL1)):
                    position = start + active
                    while position > start and boxes[by_edge[position - 1], field] > boxes[box, field]:
                        by_edge[position] = by_edge[position - 1]
                        position -= 1
                    by_edge[position] = box
                active += 1
                entered += 1
            below = height
            if entered < n and boxes[down[first + entered], ROW0] < below:
                below = boxes[down[first + entered], ROW0]
            if gone < n and boxes[up[first + gone], ROW1] < below:
                below = boxes[up[first + gone], ROW1]
            # The band's intervals (at most 2 * active + 1) each add at most one pair a run, and a run
            # a level in use (at most active) and one more: room for them all, the table at most half
            # full. Growing before the band, not in the loop below, keeps that loop free of new arrays (7x faster).
            if 2 * (size + (2 * active + 1) * (min(active, POINTS) + 1)) > len(table):
                state[PAGE], state[ROW], state[ENTERED], state[GONE], state[ACTIVE], state[SIZE] = page, y, entered, gone, active, size
                return False
            used, truth, predicted = _ZERO, _ZERO, _ZERO  # a band's walk starts and ends with no box open
            x, starts, ends = np.int64(0), np.int64(0), np.int64(0)
            while ends < active or x < width:
                edge, box, opening = width, np.int64(-1), False
                if ends < active:
                    opening = starts < active and boxes[by_edge[starts], COL0] <= boxes[by_edge[n + ends], COL1]
                    box = by_edge[starts] if opening else by_edge[n + ends]
                    edge = boxes[box, COL0] if opening else boxes[box, COL1]
                if edge > x:  # the interval [x, edge) of the band
                    size = _add_interval(table, pairs, diffs, size, bits, used, truth, predicted, (edge - x) * (below - y))
                    x = edge
                if box >= 0:
                    side, label = boxes[box, SIDE], boxes[box, LABEL]
                    used = _cover(cover, top, bits, used, side, label, boxes[box, LEVEL], 1 if opening else -1)
                    present = _ONE << np.uint64(label) if top[side * MAX_CLASSES + label] > 0 else _ZERO
                    if side == 0:
                        truth = (truth & ~(_ONE << np.uint64(label))) | present
                    else:
                        predicted = (predicted & ~(_ONE << np.uint64(label))) | present
                    if opening:
                        starts += 1
                    else:
                        ends += 1
            y = below
        page += 1
        y, entered, gone, active = np.int64(0), np.int64(0), np.int64(0), np.int64(0)
    state[PAGE], state[SIZE] = page, size
    return True


@_kernels.entry(lambda t: (t.int64[:, ::1], t.int64[::1], t.int64[:, ::1], t.int64[::1], t.int64[::1]))
def _sweep_pages(frames, bounds, boxes, down, up):
    """Every page of a batch (page p's boxes `bounds[p]:bounds[p + 1]` of `boxes`, rows of
    `BOX_FIELDS`, only boxes that paint and are kept at some point; `down` and `up` their indices
    by first and by end row, page by page). Returns each distinct pair's (reference bits,
    predicted bits) and its pixels at each point, (pairs, POINTS)."""
    most = np.int64(1)
    for page in range(len(frames)):
        most = max(most, bounds[page + 1] - bounds[page])
    by_edge = np.zeros(2 * most, np.int64)
    cover, top, bits = np.zeros(2 * MAX_CLASSES * LEVELS, np.int64), np.zeros(2 * MAX_CLASSES, np.int64), np.zeros(2 * LEVELS, np.uint64)
    table = np.full(INITIAL_SLOTS, -1, np.int64)
    pairs, diffs = np.zeros(INITIAL_SLOTS, np.uint64), np.zeros(INITIAL_SLOTS // 2 * POINTS, np.int64)  # room for half the slots' pairs
    state = np.zeros(SIZE + 1, np.int64)
    state[SIZE] = 1  # pair 0: the empty pair
    while not _sweep_bands(frames, bounds, boxes, down, up, by_edge, cover, top, bits, table, pairs, diffs, state):
        table = np.full(2 * len(table), -1, np.int64)
        _rehash(table, pairs, state[SIZE])
        pairs, diffs = np.concatenate((pairs, np.zeros(len(pairs), np.uint64))), np.concatenate((diffs, np.zeros(len(diffs), np.int64)))
    size = state[SIZE]
    counts = np.zeros((size, POINTS), np.int64)
    for pair in range(size):
        running = np.int64(0)
        for k in range(POINTS):
            running += diffs[pair * POINTS + k]
            counts[pair, k] = running
    return pairs[: 2 * size].reshape((size, 2)), counts


# --- the Python side -------------------------------------------------------------------------------


def _inputs(prepared: PreparedBatch, levels: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The kernel's arrays: the boxes that paint and are kept at some point, page by page, and their
    orders by first and by end row."""
    sides = np.repeat(np.arange(len(prepared.offsets) - 1), np.diff(prepared.offsets))
    owners, extents = prepared.extents.rectangles()  # a polygon as the rectangles it paints
    kept = np.flatnonzero(levels[owners] > 0)
    owner = owners[kept]
    page = sides[owner] // 2
    boxes = np.column_stack([extents.col0[kept], extents.col1[kept], extents.row0[kept], extents.row1[kept],
                             prepared.classes[owner], levels[owner], sides[owner] % 2]).astype(np.int64)
    bounds = offsets_of(np.bincount(page, minlength=len(prepared.frames)))
    down, up = (np.argsort((page << 32) | boxes[:, edge], kind="stable").astype(np.int64) for edge in (ROW0, ROW1))  # rows < 2^31
    return np.ascontiguousarray(prepared.frames, np.int64), bounds, np.ascontiguousarray(boxes), down, up


def _applies(prepared: PreparedBatch, class_count: int) -> bool:
    """Whether the kernel takes this batch (else `sweep_grid`)."""
    if class_count > MAX_CLASSES or not jit.numba_available():
        return False
    frames = prepared.frames
    if len(frames) and (prepared.offsets[2::2] - prepared.offsets[0:-1:2]).max() > page_kernel.MAX_BOXES:
        return False  # as the page kernel: the NumPy path says whether such a page is too finely cut
    return sum(int(width) * int(height) for width, height in frames.tolist()) <= MAX_PIXELS


def _ready(job_pages: int, always: bool) -> bool:
    if _kernels.loaded:
        return True
    if not always and not jit.load_pays_off(job_pages, LOAD_AFTER_PAGES):
        return False
    return jit.ready(_kernels, WHAT, COMPILE_SECONDS, wait=True, may_compile=always or job_pages >= COMPILE_AFTER_PAGES, lock_name=LOCK_NAME) is not None


def sweep_pairs(prepared: PreparedBatch, levels: np.ndarray, class_count: int, job_pages: int = 0) -> tuple[np.ndarray, np.ndarray] | None:
    """Each distinct (reference bits, predicted bits) pair of the batch, (pairs, 2) uint64, and its
    pixels at each point, (pairs, POINTS) int64; `levels[b]` is how many points keep box b. None
    when the kernel declines (see the module) or is not loaded for a job of `job_pages` pages:
    from `LOAD_AFTER_PAGES` on it is loaded from a warm cache, compiled on a cold one from
    `COMPILE_AFTER_PAGES`; at once with `TORE_PAGE_KERNEL=always`, never with `numpy`."""
    mode = page_kernel.kernel_mode()
    if mode == page_kernel.NUMPY or not _applies(prepared, class_count):
        return None
    if not _ready(max(job_pages, len(prepared.frames)), mode == page_kernel.ALWAYS):
        return None
    return _kernels.load()(*_inputs(prepared, levels))


def warm() -> str:
    """Load the kernel from its cache folder, compiling it there first when the cache is cold."""
    return jit.warm(_kernels, WHAT, COMPILE_SECONDS, without_numba="numba is not installed: the sweep runs each point with TORE's NumPy path",
                    lock_name=LOCK_NAME)
