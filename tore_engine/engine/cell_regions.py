"""From a matrix cell and one page to the exact pixels behind it: what the app lights on the page.

The regions are cells of the grid the matrices are counted on (`raster.label_grid`), each with the
exact share of its pixels that Algorithm 1 gives to the matrix cell.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from tore_engine.core.layout import Page
from tore_engine.core.taxonomy import Taxonomy
from tore_engine.engine.preparation import prepare_page
from tore_engine.engine.raster import PixelExtents, label_grid, label_sets, unique_rows
from tore_engine.metrics.algorithm1 import contribution_entries
from tore_engine.metrics.matrices import REDUCED_CLASSES


@dataclass(frozen=True)
class CellRegions:
    """Where on one page the pixels of one matrix cell are: rectangles of the page's grid, each
    with the exact share of each of its pixels that Algorithm 1 gives to the cell (a pixel whose
    sets are {Text} and {Text, Table} gives only half of itself to Text -> Table). The regions'
    areas times their shares sum to the page's contribution to the cell."""

    x0: np.ndarray  # (n,) int64 pixel columns [x0, x1)
    x1: np.ndarray
    y0: np.ndarray  # (n,) int64 pixel rows [y0, y1)
    y1: np.ndarray
    numerators: np.ndarray  # (n,) int64: each pixel's share is numerator / denominator
    denominators: np.ndarray
    reference_boxes: np.ndarray  # indices of the reference boxes that make the regions
    prediction_boxes: np.ndarray  # indices of the prediction boxes that make them

    @property
    def areas(self) -> np.ndarray:
        return (self.x1 - self.x0) * (self.y1 - self.y0)

    @property
    def shares(self) -> np.ndarray:
        return self.numerators / self.denominators

    def contribution(self) -> Fraction:
        """The page's contribution to the cell, in pixels, exactly."""
        return sum((Fraction(int(a) * int(n), int(d)) for a, n, d in zip(self.areas, self.numerators, self.denominators)), Fraction(0))


def _pair_shares(truth: np.ndarray, predicted: np.ndarray, view: str, row: int, column: int) -> tuple[np.ndarray, np.ndarray]:
    """Each distinct (T, P) pair's per-pixel share of the cell, as (numerators, denominators)."""
    numerators = np.zeros(len(truth), dtype=np.int64)
    denominators = np.ones(len(truth), dtype=np.int64)
    if view == "reduced":
        truth_fg, predicted_fg = ~truth[:, 0], ~predicted[:, 0]
        hit = (truth_fg == bool(row)) & (predicted_fg == bool(column))
        numerators[hit] = np.where(truth_fg, truth.sum(axis=1), 1)[hit]  # algorithm1.reduced_counts's rule
        return numerators, denominators
    pair, denominator, rows, columns, numerator = contribution_entries(truth, predicted, np.ones(len(truth), dtype=np.int64))
    selected = (rows == row) & (columns == column)  # at most one entry a pair (Algorithm 1's cases)
    numerators[pair[selected]] = numerator[selected]
    denominators[pair[selected]] = denominator[selected]
    return numerators, denominators


def _boxes_in(classes: np.ndarray, extents: PixelExtents, wanted: np.ndarray, regions: tuple[np.ndarray, ...]) -> np.ndarray:
    """The boxes of the wanted classes that overlap any region."""
    x0, x1, y0, y1 = regions
    candidates = np.flatnonzero(np.isin(classes, wanted) & extents.paints)
    overlaps = [
        k for k in candidates.tolist()
        if np.any((extents.col0[k] < x1) & (x0 < extents.col1[k]) & (extents.row0[k] < y1) & (y0 < extents.row1[k]))
    ]
    return np.array(overlaps, dtype=np.int64)


def page_regions(reference: Page, prediction: Page | None, taxonomy: Taxonomy, view: str, row: str, column: str) -> CellRegions:
    """The regions of one page behind cell (row class, column class) of a view (`full`, `trimmed` or
    `reduced`), on the grid the matrices are counted on (`raster.label_grid`)."""
    task, _ = prepare_page(reference, prediction, taxonomy)
    classes = REDUCED_CLASSES if view == "reduced" else taxonomy.classes
    if row not in classes or column not in classes:
        raise ValueError(f"no cell {row!r} -> {column!r} in the {view} view")
    row_index, column_index = classes.index(row), classes.index(column)
    sides = ((task.reference_classes, task.reference_extents), (task.prediction_classes, task.prediction_extents))
    grid = label_grid(task.width, task.height, *sides, taxonomy.size)
    words = grid.reference_codes.shape[2]
    codes = np.concatenate([grid.reference_codes, grid.prediction_codes], axis=2).reshape(-1, 2 * words)
    distinct, cell_pair = unique_rows(codes)
    truth = label_sets(distinct[:, :words], taxonomy.size)
    predicted = label_sets(distinct[:, words:], taxonomy.size)
    numerators, denominators = _pair_shares(truth, predicted, view, row_index, column_index)
    hit = np.flatnonzero(numerators[cell_pair] > 0)
    grid_rows, grid_columns = np.divmod(hit, len(grid.xs) - 1)
    regions = (grid.xs[grid_columns], grid.xs[grid_columns + 1], grid.ys[grid_rows], grid.ys[grid_rows + 1])
    if view == "reduced":
        wanted_reference = np.arange(1, taxonomy.size) if row_index else np.zeros(0, np.int64)
        wanted_prediction = np.arange(1, taxonomy.size) if column_index else np.zeros(0, np.int64)
    else:
        wanted_reference, wanted_prediction = np.array([row_index]), np.array([column_index])
    return CellRegions(
        *regions,
        numerators[cell_pair[hit]],
        denominators[cell_pair[hit]],
        _boxes_in(task.reference_classes, task.reference_extents, wanted_reference, regions),
        _boxes_in(task.prediction_classes, task.prediction_extents, wanted_prediction, regions),
    )
