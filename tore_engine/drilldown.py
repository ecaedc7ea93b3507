"""From a cell of a matrix view back to the pages that make it up.

The app's matrices come in three views: `full` (K x K), `trimmed` (all-zero rows and columns
removed, tore.md section 7) and `reduced` (2x2 Background/Foreground). Full and trimmed cells are
cells of the full matrix, whose per-page contributions the evaluation keeps; a reduced cell is a
sum of each page's integer 2x2 matrix. `page_regions` goes one step further, from a cell and a
page to the exact pixels behind it. `shown_matrices` is what a matrix view shows (a class subset,
and the "all" normalisation besides row and column); `pages_table` and `class_pages` are the
per-page tables behind the views.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from tore_engine.algorithm1 import contribution_entries
from tore_engine.dataset import Evaluation, prepare_page
from tore_engine.layout import Page
from tore_engine.matrices import REDUCED_CLASSES, MatrixSet, ToreMatrices
from tore_engine.raster import PixelExtents, label_grid, label_sets
from tore_engine.taxonomy import Taxonomy

VIEWS = ("full", "trimmed", "reduced")
BACKGROUND = REDUCED_CLASSES[0]


def view_matrices(matrices: ToreMatrices, view: str) -> MatrixSet:
    """The matrix set a view shows."""
    if view not in VIEWS:
        raise ValueError(f"unknown matrix view {view!r}; use one of {', '.join(VIEWS)}")
    return {"full": matrices.full, "trimmed": matrices.trimmed, "reduced": matrices.reduced}[view]


def pages_for_view_cell(
    evaluation: Evaluation, view: str, row: str, column: str, limit: int | None = None
) -> list[tuple[str, float, float]]:
    """The pages behind cell (row class, column class) of a view, largest contribution first
    (ties in page order): (page id, contribution in pixels, share of the cell)."""
    if view == "reduced":
        return _pages_for_reduced_cell(evaluation, REDUCED_CLASSES.index(row), REDUCED_CLASSES.index(column), limit)
    classes = evaluation.matrices.classes
    return evaluation.cell_pages(classes.index(row), classes.index(column), limit)


def _pages_for_reduced_cell(evaluation: Evaluation, row: int, column: int, limit: int | None) -> list[tuple[str, float, float]]:
    values = evaluation.page_reduced[:, row, column]
    hits = np.flatnonzero(values)
    order = hits[np.lexsort((hits, -values[hits]))][:limit]
    total = int(values.sum())
    return [(evaluation.page_ids[k], float(values[k]), int(values[k]) / total) for k in order]


def _page_view_matrix(evaluation: Evaluation, view: str, page_index: int) -> tuple[list[str], np.ndarray, np.ndarray]:
    """One page's matrix in a view's classes (full and trimmed cells are full-matrix cells), and
    the whole dataset's matrix it is part of."""
    if view == "reduced":
        return REDUCED_CLASSES, evaluation.page_reduced[page_index].astype(float), evaluation.matrices.reduced.confusion
    view_matrices(evaluation.matrices, view)  # checks the view's name
    return evaluation.matrices.classes, evaluation.page_matrix(page_index), evaluation.matrices.full.confusion


def page_cells(evaluation: Evaluation, view: str, page_index: int) -> list[tuple[str, str, float, float]]:
    """The non-zero cells of one page in a view, largest first (ties in matrix order): (row
    class, column class, the page's pixels in the cell, their share of the cell)."""
    classes, page, whole = _page_view_matrix(evaluation, view, page_index)
    cells = np.flatnonzero(page.reshape(-1))
    order = cells[np.lexsort((cells, -page.reshape(-1)[cells]))]
    rows, columns = np.divmod(order, len(classes))
    return [(classes[i], classes[j], float(page[i, j]), float(page[i, j] / whole[i, j]))
            for i, j in zip(rows.tolist(), columns.tolist())]


def page_cell(evaluation: Evaluation, view: str, page_index: int, row: str, column: str) -> tuple[float, float]:
    """One page's pixels in cell (row class, column class) of a view, and their share of the cell
    (0 for an empty cell)."""
    classes, page, whole = _page_view_matrix(evaluation, view, page_index)
    i, j = classes.index(row), classes.index(column)
    return float(page[i, j]), float(page[i, j] / whole[i, j]) if whole[i, j] else 0.0


def cell_page_values(evaluation: Evaluation, view: str, row: str, column: str) -> np.ndarray:
    """Every page's pixels in cell (row class, column class) of a view, in page order."""
    if view == "reduced":
        return evaluation.page_reduced[:, REDUCED_CLASSES.index(row), REDUCED_CLASSES.index(column)].astype(float)
    classes = evaluation.matrices.classes
    hits = evaluation.contribution_cell == classes.index(row) * evaluation.taxonomy.size + classes.index(column)
    values = np.zeros(len(evaluation.page_ids))
    np.add.at(values, evaluation.contribution_page[hits], evaluation.contribution_value[hits])
    return values


@dataclass(frozen=True)
class ShownMatrices(MatrixSet):
    """A view's matrices as shown: some of its classes, and one more normalisation, `share`: each
    cell over the whole view's total (before any class is left out). Leaving classes out changes
    no value: recall stays over the whole row, precision over the whole column."""

    share: np.ndarray


def shown_matrices(matrices: ToreMatrices, view: str, classes: Collection[str] | None = None, *, hide_background: bool = False) -> ShownMatrices:
    """The rows and columns of a view whose class is in `classes` (all when None), without
    Background if `hide_background`, in the view's order."""
    whole = view_matrices(matrices, view)
    total = whole.confusion.sum()
    share = whole.confusion / total if total else np.zeros_like(whole.confusion)

    def kept(names: list[str]) -> list[int]:
        return [k for k, name in enumerate(names) if (classes is None or name in classes) and not (hide_background and name == BACKGROUND)]

    rows, columns = kept(whole.rows), kept(whole.columns)
    pick = np.ix_(rows, columns)
    return ShownMatrices([whole.rows[k] for k in rows], [whole.columns[k] for k in columns], whole.confusion[pick],
                         whole.recall[pick], whole.precision[pick], share[pick])


def page_class_pixels(evaluation: Evaluation) -> tuple[np.ndarray, np.ndarray]:
    """(pages, K) arrays: each page's reference pixels of each matrix class (its matrix's row
    sums) and predicted pixels (column sums); a pixel shared by several classes is split as
    Algorithm 1 splits it."""
    shape = (len(evaluation.page_ids), evaluation.taxonomy.size)
    rows, columns = np.divmod(evaluation.contribution_cell, evaluation.taxonomy.size)
    reference, predicted = np.zeros(shape), np.zeros(shape)
    np.add.at(reference, (evaluation.contribution_page, rows), evaluation.contribution_value)
    np.add.at(predicted, (evaluation.contribution_page, columns), evaluation.contribution_value)
    return reference, predicted


REFERENCE_SUFFIX, PREDICTION_SUFFIX = " (ref)", " (pred)"


def _side_classes(side_index: dict[str, int], pixels: np.ndarray) -> dict[str, int]:
    """A side's labels that have pixels anywhere, in matrix order: label -> matrix class index."""
    present = pixels.sum(axis=0) > 0
    return {label: index for label, index in sorted(side_index.items(), key=lambda item: item[1]) if present[index]}


def pages_table(evaluation: Evaluation):
    """One row a page, in page order: its pixels, the reduced view's Foreground recall, precision
    and F1, its number of input warnings, then the pixels of each class on the reference side
    (`<label> (ref)`) and on the prediction side (`<label> (pred)`), for the classes that occur."""
    import pandas as pd

    reference, predicted = page_class_pixels(evaluation)
    warnings = Counter(warning.page for warning in evaluation.input_warnings)
    table = pd.DataFrame(evaluation.page_foreground_scores()).rename(
        columns={"recall": "foreground recall", "precision": "foreground precision", "f1": "foreground F1"})
    table["warnings"] = [warnings[page] for page in evaluation.page_ids]
    taxonomy = evaluation.taxonomy
    sides = ((taxonomy.reference_index, reference, REFERENCE_SUFFIX), (taxonomy.prediction_index, predicted, PREDICTION_SUFFIX))
    columns = {f"{label}{suffix}": pixels[:, index] for side_index, pixels, suffix in sides
               for label, index in _side_classes(side_index, pixels).items()}
    return pd.concat([table, pd.DataFrame(columns)], axis=1)


def class_pages(evaluation: Evaluation, label: str) -> list[tuple[str, float, float, float]]:
    """The pages where matrix class `label` occurs on either side, most wrong pixels first (ties in
    page order): (page, reference pixels, predicted pixels, pixels predicted as the class itself).
    Wrong pixels: reference + predicted - 2 x right (single taxonomy, where a class is its own
    column)."""
    k = evaluation.matrices.classes.index(label)
    reference, predicted = page_class_pixels(evaluation)
    right = cell_page_values(evaluation, "full", label, label)
    wrong = reference[:, k] + predicted[:, k] - 2 * right
    hits = np.flatnonzero((reference[:, k] > 0) | (predicted[:, k] > 0))
    order = hits[np.lexsort((hits, -wrong[hits]))]
    return [(evaluation.page_ids[p], float(reference[p, k]), float(predicted[p, k]), float(right[p])) for p in order]


def top_confusions(matrices: MatrixSet, count: int = 10) -> list[tuple[str, str, float, float, float]]:
    """The largest non-zero cells that pair two different classes, largest first (ties in matrix
    order): (row class, column class, pixels, recall, precision). The list beside a large matrix."""
    confusion = np.asarray(matrices.confusion)
    different = ~matrices.same_class()
    cells = np.flatnonzero(different.reshape(-1) & (confusion.reshape(-1) > 0))
    order = cells[np.lexsort((cells, -confusion.reshape(-1)[cells]))][:count]
    rows, columns = np.divmod(order, confusion.shape[1])
    return [
        (matrices.rows[i], matrices.columns[j], float(confusion[i, j]), float(matrices.recall[i, j]), float(matrices.precision[i, j]))
        for i, j in zip(rows.tolist(), columns.tolist())
    ]


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
    distinct, cell_pair = np.unique(codes, axis=0, return_inverse=True)
    truth = label_sets(distinct[:, :words], taxonomy.size)
    predicted = label_sets(distinct[:, words:], taxonomy.size)
    numerators, denominators = _pair_shares(truth, predicted, view, row_index, column_index)
    cell_pair = cell_pair.reshape(-1)
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
