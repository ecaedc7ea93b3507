"""Polygons rasterised exactly: each polygon as the integer pixel rectangles it paints.

A pixel belongs to a polygon when the polygon covers a part of the pixel's square of positive
area (docs/formats.md#polygons). For a simple polygon that holds exactly when its outline passes
through the square's open interior, or the square's centre lies inside it (even-odd rule): a
boundary point inside the open square has interior points of the polygon next to it; otherwise the
open square lies wholly inside or wholly outside. That is what this module computes, row by row of
pixels, and it is also the rule's definition for a polygon that is not simple (self-intersecting,
or of zero area: it paints the pixels its outline passes through, as a box of fractional zero width
paints its column). An axis-aligned rectangle paints `[floor(x1), ceil(x2)) x [floor(y1), ceil(y2))`:
today's box rule, bit for bit.

Exact, without sampling: every decision is the sign of `x(Y) - q`, where `x(Y)` is where an edge
crosses the line `y = Y` (an integer or half-integer row edge or centre) and `q` an integer or
half-integer column edge or centre. That is the sign of an orientation determinant of three points,
decided by Shewchuk's floating-point filter and, when the filter cannot tell, exactly with
error-free transformations (expansions). It is exact for the coordinates `core.polygons` admits
(at most 2^40 in magnitude, none between 0 and 2^-400), where no product overflows or underflows.

Each row's painted column intervals (`[c0, c1)`) are the union of the columns the outline passes
through and the runs between the row centre line's crossings; rows with the same interval are
merged into one rectangle, so an axis-aligned rectangle is one rectangle, and the rasteriser
(`raster`, the page and sweep kernels) paints the rectangles as it paints boxes. A strictly convex
polygon (a turned box, a skewed scan's region) takes a shorter way to the same rows
(`_convex_rows`): in each row, the floor of its leftmost point to the ceiling of its rightmost.
"""

from __future__ import annotations

import math

import numpy as np

from tore_engine.core import jit

WHAT = "TORE's polygon rasteriser"
COMPILE_SECONDS = 3
LOCK_NAME = "polygons-compile.lock"

# A piece's columns and rows lie on its page, in [0, side], and a page's sides are at most
# `layout.MAX_PAGE_SIDE` = 2^31: 32 unsigned bits hold them, half the memory the rasteriser writes
# and the page kernel reads in int64 (a turned region is a piece a pixel row).
PIECE_TYPE = np.uint32
_FILTER = 3.3306690738754716e-16  # Shewchuk's ccwerrboundA, (3 + 16 eps) eps with eps = 2^-53
_SPLITTER = 134217729.0  # 2^27 + 1: splits a double into two halves of 26 bits (Dekker)
_ESTIMATE_ERROR = 2.0**-48  # 32 ulps (of 2^-53): a bound on an interpolated abscissa's error, with room to spare

_kernels = jit.Kernels(borrowing=True)  # helpers make no array (the entry does): no reference counting a call


# --- exact orientation (plain Python until `_kernels` compiles it) -------------------------------


@_kernels.helper
def _two_sum(a, b):
    s = a + b
    bv = s - a
    return s, (a - (s - bv)) + (b - bv)


@_kernels.helper
def _two_product(a, b):
    p = a * b
    c = _SPLITTER * a
    a_hi = c - (c - a)
    a_lo = a - a_hi
    c = _SPLITTER * b
    b_hi = c - (c - b)
    b_lo = b - b_hi
    return p, a_lo * b_lo - (((p - a_hi * b_hi) - a_lo * b_hi) - a_hi * b_lo)


@_kernels.helper
def _exact_sign(terms, expansion):
    """The sign of the exact sum of `terms`: grown into a nonoverlapping expansion (Shewchuk's
    Grow-Expansion) in `expansion`, whose largest nonzero component has the sum's sign."""
    size = 0
    for term in terms:
        carry = term
        for i in range(size):
            carry, expansion[i] = _two_sum(carry, expansion[i])
        expansion[size] = carry
        size += 1
    for i in range(size - 1, -1, -1):
        if expansion[i] > 0:
            return 1
        if expansion[i] < 0:
            return -1
    return 0


@_kernels.helper
def _orientation(ax, ay, bx, by, qx, qy, scratch):
    """The sign of the orientation determinant of (a, b, q): positive when q lies left of a->b.
    For an upward edge (ay < by) it is the sign of x(qy) - qx. `scratch`: 40 floats of room."""
    left = (ax - qx) * (by - qy)
    right = (ay - qy) * (bx - qx)
    determinant = left - right
    bound = _FILTER * (abs(left) + abs(right))
    if determinant > bound:
        return 1
    if -determinant > bound:
        return -1
    d, terms, expansion = scratch[:8], scratch[8:24], scratch[24:40]
    d[0], d[1] = _two_sum(ax, -qx)  # the four differences, each exactly as hi + lo
    d[2], d[3] = _two_sum(by, -qy)
    d[4], d[5] = _two_sum(ay, -qy)
    d[6], d[7] = _two_sum(bx, -qx)
    n = 0
    for i in range(2):
        for j in range(2):
            terms[n], terms[n + 1] = _two_product(d[i], d[2 + j])
            high, low = _two_product(d[4 + i], d[6 + j])
            terms[n + 2], terms[n + 3] = -high, -low
            n += 4
    return _exact_sign(terms, expansion)


@_kernels.helper
def _estimator(ax, ay, bx, by):
    """The upward edge a->b's slope dx/dy and the bound on `_smallest_column`'s estimate's error,
    computed once an edge."""
    return (bx - ax) / (by - ay), _ESTIMATE_ERROR * (abs(bx - ax) + abs(ax) + abs(bx))


@_kernels.helper
def _smallest_column(ax, ay, bx, by, slope, margin, y, offset, strict, scratch):
    """The smallest integer c with c + offset > x(y) (`strict`) or c + offset >= x(y), where x(y)
    is the abscissa of the upward edge a->b (ay < by) at height y, ay <= y <= by; `slope` and
    `margin` from `_estimator`. Small enough to be inlined where it is called (twice a pixel row
    of a turned region), the exact steps apart in `_exact_column`: as one function, every call
    paid for the exact steps' registers and arguments, 19 % of the rasteriser's time."""
    estimate = ax + slope * (y - ay)
    # The estimate's error is below 7 ulps of |bx - ax| + |ax| (six roundings, the slope's two
    # included, and |slope * (y - ay)| <= |bx - ax|), well inside `margin`: far enough from a
    # column edge, its floor is the answer, strict or not; else the exact predicates decide.
    low, high = estimate - margin - offset, estimate + margin - offset
    column = math.floor(low)
    if column == math.floor(high) and low > column:
        return np.int64(column + 1)
    return _exact_column(ax, ay, bx, by, np.int64(column), y, offset, strict, scratch)


@_kernels.helper
def _exact_column(ax, ay, bx, by, column, y, offset, strict, scratch):
    """`_smallest_column` by the exact predicates, from `column`, within a small fraction of a
    pixel of the answer: one or two steps."""
    for _ in range(64):
        sign = _orientation(ax, ay, bx, by, column + offset, y, scratch)  # sign of x(y) - (column + offset)
        if sign < 0 or (sign == 0 and not strict):
            below = _orientation(ax, ay, bx, by, column - 1 + offset, y, scratch)
            if below < 0 or (below == 0 and not strict):
                column -= 1
            else:
                break
        else:
            column += 1
    return column


# --- one polygon's row intervals ------------------------------------------------------------------


@_kernels.helper
def _clamp(value, low, high):
    return low if value < low else (high if value > high else value)


@_kernels.helper
def _polygon_events(xs, ys, width, height, row0, hits, toggles, scratch):
    """Each row's outline intervals (`hits[:, row]`: row, c0, c1) and centre-line crossings
    (`toggles`: row, first column whose centre lies right of the crossing), rows relative to
    `row0`; returns their counts. Columns clamped to [0, width]."""
    n = len(xs)
    hit_count, toggle_count = 0, 0
    for k in range(n):
        ax, ay, bx, by = xs[k], ys[k], xs[(k + 1) % n], ys[(k + 1) % n]
        if ay > by:
            ax, ay, bx, by = bx, by, ax, ay
        if ay == by:  # horizontal (or a repeated point): only a row it lies strictly inside
            if ax != bx and ay != math.floor(ay) and 0 <= ay < height:
                low, high = min(ax, bx), max(ax, bx)
                hits[hit_count, 0] = np.int64(math.floor(ay)) - row0
                hits[hit_count, 1] = np.int64(_clamp(math.floor(low), -1.0, width + 1.0))
                hits[hit_count, 2] = np.int64(_clamp(math.ceil(high), -1.0, width + 1.0))
                hit_count += 1
            continue
        slope, margin = _estimator(ax, ay, bx, by)
        first = max(math.floor(ay), 0.0)
        last = min(math.ceil(by), float(height))
        r = first
        while r < last:
            bottom, top = max(r, ay), min(r + 1.0, by)
            # abscissae at the strip's bottom and top: the endpoints' own where they lie inside
            if ax <= bx:
                c0 = math.floor(ax) if bottom == ay else _smallest_column(ax, ay, bx, by, slope, margin, bottom, 1.0, True, scratch)
                c1 = math.ceil(bx) if top == by else _smallest_column(ax, ay, bx, by, slope, margin, top, 0.0, False, scratch)
            else:
                c0 = math.floor(bx) if top == by else _smallest_column(ax, ay, bx, by, slope, margin, top, 1.0, True, scratch)
                c1 = math.ceil(ax) if bottom == ay else _smallest_column(ax, ay, bx, by, slope, margin, bottom, 0.0, False, scratch)
            hits[hit_count, 0] = np.int64(r) - row0
            hits[hit_count, 1] = np.int64(_clamp(c0, -1.0, width + 1.0))
            hits[hit_count, 2] = np.int64(_clamp(c1, -1.0, width + 1.0))
            hit_count += 1
            middle = r + 0.5
            if ay <= middle < by:  # the centre line crosses this edge (half-open: vertices counted once)
                toggles[toggle_count, 0] = np.int64(r) - row0
                toggles[toggle_count, 1] = np.int64(_clamp(_smallest_column(ax, ay, bx, by, slope, margin, middle, 0.5, True, scratch), 0.0, float(width)))
                toggle_count += 1
            r += 1.0
    return hit_count, toggle_count


@_kernels.helper
def _by_row(events, count, rows, order, starts, filled):
    """A counting sort of `events[:count]` by row into `order`, each row's first event into
    `starts` (rows + 1 zeros); `filled`: room for rows."""
    for e in range(count):
        starts[events[e, 0] + 1] += 1
    for r in range(rows):
        starts[r + 1] += starts[r]
        filled[r] = starts[r]
    for e in range(count):
        r = events[e, 0]
        order[filled[r]] = e
        filled[r] += 1


@_kernels.helper
def _insertion_sort(values, count):
    for i in range(1, count):
        value = values[i]
        j = i
        while j > 0 and values[j - 1] > value:
            values[j] = values[j - 1]
            j -= 1
        values[j] = value


@_kernels.helper
def _row_intervals(hits, hit_order, hit_starts, toggles, toggle_order, toggle_starts, r, width, starts, ends, columns):
    """Row r's painted intervals, sorted and merged, into `starts`/`ends`; returns how many.
    `columns`: room for the row's crossings."""
    n = 0
    t0, t1 = toggle_starts[r], toggle_starts[r + 1]
    for i in range(t1 - t0):
        columns[i] = toggles[toggle_order[t0 + i], 1]
    _insertion_sort(columns, t1 - t0)
    for i in range(0, t1 - t0 - 1, 2):
        if columns[i + 1] > columns[i]:
            starts[n], ends[n] = columns[i], columns[i + 1]
            n += 1
    for i in range(hit_starts[r], hit_starts[r + 1]):
        c0 = max(hits[hit_order[i], 1], 0)
        c1 = min(hits[hit_order[i], 2], width)
        if c1 > c0:
            starts[n], ends[n] = c0, c1
            n += 1
    # sort the intervals by start (insertion sort on pairs), then merge overlapping or touching ones
    for i in range(1, n):
        s, e = starts[i], ends[i]
        j = i
        while j > 0 and starts[j - 1] > s:
            starts[j], ends[j] = starts[j - 1], ends[j - 1]
            j -= 1
        starts[j], ends[j] = s, e
    merged = 0
    for i in range(n):
        if merged > 0 and starts[i] <= ends[merged - 1]:
            if ends[i] > ends[merged - 1]:
                ends[merged - 1] = ends[i]
        else:
            starts[merged], ends[merged] = starts[i], ends[i]
            merged += 1
    return merged


@_kernels.helper
def _convex_turn(xs, ys, scratch):
    """1 or -1 (the way every vertex turns) when the polygon is strictly convex and winds once,
    else 0: each turn's exact orientation has that sign, and the edges' vertical direction changes
    twice round the outline (a locally convex outline winding w times changes it 2w times, no turn
    passing half a circle)."""
    n = len(xs)
    turn = 0
    for k in range(n):
        a, b, c = k, (k + 1) % n, (k + 2) % n
        sign = _orientation(xs[a], ys[a], xs[b], ys[b], xs[c], ys[c], scratch)
        if sign == 0 or (turn != 0 and sign != turn):
            return 0
        turn = sign
    previous = 0
    for k in range(n):  # the last edge going up or down, where the count starts
        if ys[(k + 1) % n] != ys[k]:
            previous = 1 if ys[(k + 1) % n] > ys[k] else -1
    changes = 0
    for k in range(n):
        if ys[(k + 1) % n] != ys[k]:
            direction = 1 if ys[(k + 1) % n] > ys[k] else -1
            changes += 1 if direction != previous else 0
            previous = direction
    return turn if changes == 2 else 0


@_kernels.helper
def _convex_rows(xs, ys, turn, width, row0, low, high, scratch):
    """A strictly convex polygon's painted interval in each row `row0 + r` of `low`/`high`
    (`[low[r], high[r])`, clamped to [0, width]): in a row the polygon meets, every column whose
    open interval meets the polygon's within the row's closed strip, that is, from the floor of
    its leftmost point there to the ceiling of its rightmost; those are vertices in the strip or
    where the strip's lines cross the left chain (for the floor) and the right chain (the ceiling).
    What `_polygon_events` and `_row_intervals` give such a polygon, with a third of the exact
    predicates and no sorting."""
    rows = len(low)
    for r in range(rows):
        low[r], high[r] = width + 1, -1
    n = len(xs)
    for k in range(n):
        x, y = xs[k], ys[k]
        first = math.floor(y) - (1 if y == math.floor(y) else 0)  # the rows whose closed strip holds the vertex
        for r in range(np.int64(first) - row0, np.int64(math.floor(y)) - row0 + 1):
            if 0 <= r < rows:
                low[r] = min(low[r], np.int64(_clamp(math.floor(x), -1.0, width + 1.0)))
                high[r] = max(high[r], np.int64(_clamp(math.ceil(x), -1.0, width + 1.0)))
    for k in range(n):
        ax, ay, bx, by = xs[k], ys[k], xs[(k + 1) % n], ys[(k + 1) % n]
        if ay == by:
            continue
        right = (ay < by) == (turn > 0)  # the interior lies left of an edge going up when the turns are positive
        if ay > by:
            ax, ay, bx, by = bx, by, ax, ay
        slope, margin = _estimator(ax, ay, bx, by)
        line = max(math.floor(ay) + 1.0, float(row0))
        last = min(math.ceil(by) - 1.0, float(row0 + rows))
        below = np.int64(line) - row0  # the row below the line (rows grow downwards)
        offset, strict = (0.0, False) if right else (1.0, True)
        while line <= last:  # each row line strictly inside the edge: the rows above and below it
            column = min(max(_smallest_column(ax, ay, bx, by, slope, margin, line, offset, strict, scratch), np.int64(-1)), width + 1)
            if right:
                if below >= 1:
                    high[below - 1] = max(high[below - 1], column)
                if below < rows:
                    high[below] = max(high[below], column)
            else:
                if below >= 1:
                    low[below - 1] = min(low[below - 1], column)
                if below < rows:
                    low[below] = min(low[below], column)
            line += 1.0
            below += 1
    for r in range(rows):
        low[r], high[r] = max(low[r], 0), min(high[r], width)


@_kernels.helper
def _is_rectangle(xs, ys):
    """Whether 4 points are an axis-aligned rectangle of positive width and height, in order:
    each side changes one coordinate, x and y by turns, between the extremes."""
    if len(xs) != 4:
        return False
    for k in range(4):  # the sides first: a turned box fails at once, before any extreme is found
        x, y, next_x, next_y = xs[k], ys[k], xs[(k + 1) % 4], ys[(k + 1) % 4]
        if (x == next_x) == (y == next_y) or (x == next_x) == (next_x == xs[(k + 2) % 4]):
            return False
    if xs.min() == xs.max() or ys.min() == ys.max():
        return False
    for k in range(4):
        if (xs[k] != xs.min() and xs[k] != xs.max()) or (ys[k] != ys.min() and ys[k] != ys.max()):
            return False
    return True


@_kernels.entry(lambda t: (t.float64[:, ::1], t.int64[::1], t.int64[::1], t.int64[::1], t.boolean))
def _pieces(points, offsets, widths, heights, convex_path):
    """Every polygon's pixel rectangles (col0, col1, row0, row1), polygon after polygon, and where
    each polygon's pieces start (polygon p's are `pieces[firsts[p]:firsts[p + 1]]`). Polygon p is
    `points[offsets[p]:offsets[p + 1]]` on a page of `widths[p]` x `heights[p]`.
    `convex_path`: a strictly convex polygon's rows from `_convex_rows` (the general rows are
    the tests' cross-check)."""
    scratch = np.zeros(40)  # the exact predicates' room
    # Room for a rectangle a pixel row, what a convex polygon takes at most, so that the arrays
    # seldom grow; left unwritten (`np.empty`), the room a polygon does not take costs no memory.
    room, most_rows = 64, 0
    for p in range(len(offsets) - 1):
        if offsets[p + 1] > offsets[p]:
            ys = points[offsets[p]:offsets[p + 1], 1]
            rows = max(0, np.int64(min(math.ceil(ys.max()), float(heights[p])) - max(math.floor(ys.min()), 0.0)))
            room, most_rows = room + rows, max(most_rows, rows)
    pieces, firsts = np.empty((room, 4), PIECE_TYPE), np.zeros(len(offsets), np.int64)
    row_low, row_high = np.empty(most_rows, np.int64), np.empty(most_rows, np.int64)  # a convex polygon's rows, each polygon's in turn
    count = 0
    for p in range(len(offsets) - 1):
        firsts[p] = count
        xs, ys = points[offsets[p]:offsets[p + 1], 0], points[offsets[p]:offsets[p + 1], 1]
        width, height = widths[p], heights[p]
        if len(xs) == 0:
            continue
        low, high = ys.min(), ys.max()
        row0 = np.int64(max(math.floor(low), 0.0)) if low < height else height
        row1 = np.int64(min(math.ceil(high), float(height))) if high > 0 else 0
        if row1 <= row0:
            continue
        if _is_rectangle(xs, ys):  # the box rule at once (what the rows would give)
            col0 = np.int64(max(math.floor(xs.min()), 0.0)) if xs.min() < width else width
            col1 = np.int64(min(math.ceil(xs.max()), float(width))) if xs.max() > 0 else 0
            if col1 > col0:
                if count == len(pieces):
                    larger = np.empty((2 * count, 4), PIECE_TYPE)
                    larger[:count] = pieces[:count]
                    pieces = larger
                pieces[count, 0], pieces[count, 1], pieces[count, 2], pieces[count, 3] = col0, col1, row0, row1
                count += 1
            continue
        rows = row1 - row0
        turn = _convex_turn(xs, ys, scratch) if convex_path else 0
        if turn != 0:
            if count + rows > len(pieces):  # room for a rectangle a row
                larger = np.empty((2 * count + rows, 4), PIECE_TYPE)
                larger[:count] = pieces[:count]
                pieces = larger
            low, high = row_low[:rows], row_high[:rows]
            _convex_rows(xs, ys, turn, width, row0, low, high, scratch)
            start = -1
            for r in range(rows + 1):  # rows with the same interval as one rectangle
                if start >= 0 and (r == rows or low[r] != low[start] or high[r] != high[start]):
                    pieces[count, 0], pieces[count, 1], pieces[count, 2], pieces[count, 3] = low[start], high[start], row0 + start, row0 + r
                    count += 1
                    start = -1
                if r < rows and start < 0 and high[r] > low[r]:
                    start = r
            continue
        capacity = 0  # events: an edge's rows, and one for a horizontal edge
        for k in range(len(xs)):
            a, b = min(ys[k], ys[(k + 1) % len(xs)]), max(ys[k], ys[(k + 1) % len(xs)])
            capacity += 1 + max(0, np.int64(min(math.ceil(b), float(height)) - max(math.floor(a), 0.0)))
        hits, toggles = np.zeros((capacity, 3), np.int64), np.zeros((capacity, 2), np.int64)
        hit_count, toggle_count = _polygon_events(xs, ys, width, height, row0, hits, toggles, scratch)
        hit_order, hit_starts, toggle_order, toggle_starts = np.zeros(hit_count, np.int64), np.zeros(rows + 1, np.int64), np.zeros(toggle_count, np.int64), np.zeros(rows + 1, np.int64)
        filled = np.zeros(rows, np.int64)
        _by_row(hits, hit_count, rows, hit_order, hit_starts, filled)
        _by_row(toggles, toggle_count, rows, toggle_order, toggle_starts, filled)
        most = 0
        for r in range(rows):
            most = max(most, hit_starts[r + 1] - hit_starts[r] + toggle_starts[r + 1] - toggle_starts[r])
        starts, ends, columns = np.zeros(most + 1, np.int64), np.zeros(most + 1, np.int64), np.zeros(most + 1, np.int64)
        open_starts, open_ends, open_rows = np.zeros(most + 1, np.int64), np.zeros(most + 1, np.int64), np.zeros(most + 1, np.int64)
        next_starts, next_ends, next_rows = np.zeros(most + 1, np.int64), np.zeros(most + 1, np.int64), np.zeros(most + 1, np.int64)
        opened = 0
        for r in range(rows + 1):
            n = _row_intervals(hits, hit_order, hit_starts, toggles, toggle_order, toggle_starts, r, width, starts, ends, columns) if r < rows else 0
            # intervals equal to one of the previous row's extend its rectangle; the others close or open
            i, j, kept = 0, 0, 0
            if count + opened > len(pieces):  # room for every rectangle this row may close
                larger = np.empty((2 * (count + opened), 4), PIECE_TYPE)
                larger[:count] = pieces[:count]
                pieces = larger
            while i < opened or j < n:
                if i < opened and j < n and open_starts[i] == starts[j] and open_ends[i] == ends[j]:
                    next_starts[kept], next_ends[kept], next_rows[kept] = starts[j], ends[j], open_rows[i]
                    kept, i, j = kept + 1, i + 1, j + 1
                elif j >= n or (i < opened and (open_starts[i] < starts[j] or open_starts[i] == starts[j] and open_ends[i] < ends[j])):
                    pieces[count, 0], pieces[count, 1], pieces[count, 2], pieces[count, 3] = open_starts[i], open_ends[i], row0 + open_rows[i], row0 + r
                    count += 1
                    i += 1
                else:
                    next_starts[kept], next_ends[kept], next_rows[kept] = starts[j], ends[j], r
                    kept, j = kept + 1, j + 1
            for m in range(kept):
                open_starts[m], open_ends[m], open_rows[m] = next_starts[m], next_ends[m], next_rows[m]
            opened = kept
    firsts[len(offsets) - 1] = count
    return pieces[:count], firsts


# --- the Python side ------------------------------------------------------------------------------


def _compiled() -> bool:
    """Whether the compiled rasteriser is loaded (loading or compiling it now if need be)."""
    if _kernels.loaded:
        return True
    if not jit.numba_available():
        return False
    return jit.ready(_kernels, WHAT, COMPILE_SECONDS, wait=True, may_compile=True, lock_name=LOCK_NAME) is not None


def pixel_pieces(points: np.ndarray, offsets: np.ndarray, widths: np.ndarray, heights: np.ndarray,
                 convex_path: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Polygon p's painted pixels (`points[offsets[p]:offsets[p + 1]]`, (x, y) rows, on a page of
    `widths[p]` x `heights[p]` pixels) as rectangles: `(pieces, starts)`, pieces (k, 4)
    `PIECE_TYPE` rows col0, col1, row0, row1 (end-exclusive), polygon after polygon, and starts
    (polygons + 1,) int64: polygon p's are `pieces[starts[p]:starts[p + 1]]`.
    `convex_path=False` rasterises convex polygons as any other (the tests' cross-check)."""
    if len(widths) and max(np.max(widths), np.max(heights)) > np.iinfo(PIECE_TYPE).max:
        raise ValueError(f"a page side beyond {np.iinfo(PIECE_TYPE).max:,} pixels (pages are checked to at most 2^31)")
    arguments = (np.ascontiguousarray(points, np.float64).reshape(-1, 2), np.ascontiguousarray(offsets, np.int64),
                 np.ascontiguousarray(widths, np.int64), np.ascontiguousarray(heights, np.int64), convex_path)
    function = _kernels.load() if _compiled() else _pieces
    pieces, starts = function(*arguments)
    return np.asarray(pieces, PIECE_TYPE).reshape(-1, 4), np.asarray(starts, np.int64)


def warm() -> str:
    """Load the rasteriser from its cache folder, compiling it there first when the cache is cold."""
    return jit.warm(_kernels, WHAT, COMPILE_SECONDS, without_numba="numba is not installed: polygons are rasterised in Python", lock_name=LOCK_NAME)
