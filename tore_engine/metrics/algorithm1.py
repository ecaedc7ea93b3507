"""Algorithm 1 of Krstinic et al. (2020): the multi-label confusion contribution of label-set pairs.

Vectorised over the distinct (T, P) pairs of a page, each weighted by its pixel count. The result is
exact: every contribution is `integer / d` with `d` in 1..K, so we return sparse integer numerators
keyed by (d, row, column) and leave the one rounding to the very end (docs/algorithm.md#algorithm-1 and docs/algorithm.md#exactness-and-determinism).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

INT64_MAX = int(np.iinfo(np.int64).max)


def exact_integers(values: np.ndarray, terms: int = 1) -> np.ndarray:
    """Non-negative integers as int64 when `terms` times the largest of them fits in int64, else
    as Python integers (an object array). Pixel counts of huge pages (a 10^9 x 10^9 page has
    10^18 pixels) overflow int64 once multiplied by |T| or summed over pages; deciding from the
    largest value costs one pass and keeps the fast int64 path for every realistic input."""
    if values.dtype == object:
        return values
    largest = int(values.max(initial=0))
    return values.astype(np.int64) if largest * terms <= INT64_MAX else values.astype(object)


@dataclass(frozen=True)
class ExactCounts:
    """A sparse sum of `numerator / denominator` entries of a K x K matrix, in integers.

    This is the mergeable state of a TORE evaluation: adding two of them is exact and does not
    depend on order, so pages, batches and workers can be summed in any order, bit for bit alike.
    """

    class_count: int
    denominator: np.ndarray  # (m,) int64
    row: np.ndarray  # (m,) int64
    column: np.ndarray  # (m,) int64
    numerator: np.ndarray  # (m,) int64, or Python integers where int64 could overflow

    @classmethod
    def empty(cls, class_count: int) -> "ExactCounts":
        zeros = np.zeros(0, dtype=np.int64)
        return cls(class_count, zeros, zeros, zeros, zeros)

    @classmethod
    def summed(cls, class_count: int, denominator, row, column, numerator) -> "ExactCounts":
        """Entries with equal (d, row, column) added together; sorted by that key."""
        k = class_count
        keys = (np.asarray(denominator, np.int64) * k + row) * k + column
        order = np.argsort(keys)  # integer sums: the order among equal keys does not matter
        keys = keys[order]
        numerator = np.asarray(numerator)
        numerator = exact_integers(numerator if numerator.dtype == object else numerator.astype(np.int64), len(keys))
        starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]) if len(keys) else np.zeros(0, np.int64)
        totals = np.add.reduceat(numerator[order], starts) if len(keys) else numerator[:0]
        distinct = keys[starts]
        keep = totals != 0
        distinct, totals = distinct[keep], totals[keep]
        return cls(k, distinct // (k * k), (distinct // k) % k, distinct % k, totals)

    @classmethod
    def merge(cls, parts: list["ExactCounts"], class_count: int) -> "ExactCounts":
        if not parts:
            return cls.empty(class_count)
        return cls.summed(
            class_count,
            np.concatenate([p.denominator for p in parts]),
            np.concatenate([p.row for p in parts]),
            np.concatenate([p.column for p in parts]),
            np.concatenate([p.numerator for p in parts]),
        )


def _cross_entries(rows: np.ndarray, columns: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For every pair p, all (i, j) with rows[p, i] and columns[p, j]: returns (p, i, j)."""
    row_pair, row_class = np.nonzero(rows)
    col_pair, col_class = np.nonzero(columns)
    per_pair = np.bincount(col_pair, minlength=len(rows))
    first = np.cumsum(per_pair) - per_pair
    repeats = per_pair[row_pair]
    block_start = np.cumsum(repeats) - repeats
    within = np.arange(repeats.sum()) - np.repeat(block_start, repeats)
    column_index = np.repeat(first[row_pair], repeats) + within
    return np.repeat(row_pair, repeats), np.repeat(row_class, repeats), col_class[column_index]


def contribution_entries(truth: np.ndarray, predicted: np.ndarray, pixels: np.ndarray) -> tuple[np.ndarray, ...]:
    r"""Every non-zero term of `pixels[p] * c(T_p, P_p)` as (pair, denominator, row, column,
    numerator), not yet summed.

    `truth` and `predicted` are boolean (pairs, K) label-set matrices (Background already set for
    empty sets). The four cases of docs/algorithm.md#algorithm-1, tested in the order 1, 2, 3, 4:
    1. T = P: c[i,i] = 1 for i in T.
    2. T proper subset of P: c[i,i] = |T|/|P| for i in T; c[i,j] = 1/|P| for i in T, j in P\T.
    3. P proper subset of T: c[j,j] = 1 for j in P; c[i,j] = 1/|P| for i in T\P, j in P.
    4. otherwise: c[i,i] = 1 for i in T and P; c[i,j] = 1/|P\T| for i in T\P, j in P\T.
    """
    truth_only = truth & ~predicted
    predicted_only = predicted & ~truth
    has_truth_only = truth_only.any(axis=1)
    has_predicted_only = predicted_only.any(axis=1)
    over = ~has_truth_only & has_predicted_only  # case 2
    under = has_truth_only & ~has_predicted_only  # case 3
    size_t = truth.sum(axis=1)
    size_p = predicted.sum(axis=1)
    # A numerator is at most pixels * K, and a cell sums at most one term a pair.
    pixels = exact_integers(pixels, len(pixels) * truth.shape[1])

    # Diagonal: the shared labels T and P (T itself in cases 1-2, P in case 3).
    diag_pair, diag_class = np.nonzero(truth & predicted)
    diag_denominator = np.where(over, size_p, 1)[diag_pair]
    diag_numerator = (pixels * np.where(over, size_t, 1))[diag_pair]

    # Off-diagonal: rows T (case 2) or T\P (cases 3-4) against columns P (case 3) or P\T (cases 2, 4).
    off_rows = np.where(over[:, None], truth, truth_only)
    off_columns = np.where(under[:, None], predicted, predicted_only)
    off_denominator = np.where(has_truth_only & has_predicted_only, predicted_only.sum(axis=1), size_p)
    off_pair, off_row, off_column = _cross_entries(off_rows, off_columns)

    return (
        np.concatenate([diag_pair, off_pair]),
        np.concatenate([diag_denominator, off_denominator[off_pair]]),
        np.concatenate([diag_class, off_row]),
        np.concatenate([diag_class, off_column]),
        np.concatenate([diag_numerator, pixels[off_pair]]),
    )


def contributions(truth: np.ndarray, predicted: np.ndarray, pixels: np.ndarray) -> ExactCounts:
    """Sum over pairs of `pixels[p] * c(T_p, P_p)`, exactly."""
    _, denominator, row, column, numerator = contribution_entries(truth, predicted, pixels)
    return ExactCounts.summed(truth.shape[1], denominator, row, column, numerator)


def cell_values_by_page(page: np.ndarray, denominator: np.ndarray, row: np.ndarray, column: np.ndarray, numerator: np.ndarray, class_count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each page's non-zero cells and their float values, from unsummed terms.

    Terms are first added exactly per (page, denominator, cell); each cell's value is then the sum
    of `numerator / denominator` in increasing denominator order, so it depends on the page's
    input alone, not on which pages share its batch. Returns (page, cell = row * K + column, value),
    sorted by page and cell.
    """
    cells = row * class_count + column
    keys = (page * (class_count + 1) + denominator) * class_count * class_count + cells
    order = np.argsort(keys)  # integer sums: the order among equal keys does not matter
    keys = keys[order]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]) if len(keys) else np.zeros(0, np.int64)
    sums = np.add.reduceat(numerator[order], starts) if len(keys) else numerator[:0]
    page, cells, denominator = page[order][starts], cells[order][starts], denominator[order][starts]
    order = np.lexsort((denominator, cells, page))
    page, cells = page[order], cells[order]
    values = np.asarray(sums[order] / denominator[order], dtype=np.float64)  # Python integers divide too
    if not len(cells):
        return page, cells, values
    starts = np.flatnonzero(np.r_[True, (cells[1:] != cells[:-1]) | (page[1:] != page[:-1])])
    return page[starts], cells[starts], np.add.reduceat(values, starts)


def reduced_counts(truth: np.ndarray, predicted: np.ndarray, pixels: np.ndarray, page: np.ndarray, pages: int) -> np.ndarray:
    """The 2x2 Background/Foreground confusion of each page's pairs, in integers: (pages, 2, 2).

    Background is exclusive and each reference label's row receives exactly 1 a pixel, so a pixel
    adds 1 to BG/BG, |T| to FG/BG, 1 to BG/FG or |T| to FG/FG (docs/algorithm.md#dual-taxonomy); this is what
    summing the blocks of the full matrix gives, without its fractions.
    """
    truth_fg, predicted_fg = ~truth[:, 0], ~predicted[:, 0]
    weight = exact_integers(pixels, len(pixels) * truth.shape[1]) * np.where(truth_fg, truth.sum(axis=1), 1)
    reduced = np.zeros((pages, 2, 2), dtype=weight.dtype)
    np.add.at(reduced, (page, truth_fg.astype(np.int64), predicted_fg.astype(np.int64)), weight)
    return reduced
