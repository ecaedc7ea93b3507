"""From a cell of a matrix view back to the pages that make it up.

The app's matrices come in three views: `full` (K x K), `trimmed` (all-zero rows and columns
removed, docs/algorithm.md#derived-matrices) and `reduced` (2x2 Background/Foreground). Full and trimmed cells are
cells of the full matrix, whose per-page contributions the evaluation keeps; a reduced cell is a
sum of each page's integer 2x2 matrix. `page_regions` goes one step further, from a cell and a
page to the exact pixels behind it (`engine.cell_regions`). `pages_table` and `class_pages` are
the per-page tables behind the views. A class name a view lacks is a `KeyError` that names its
classes (`evaluation.class_index`).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import numpy as np

from tore_engine.core.offsets import run_of_items
from tore_engine.metrics.matrices import REDUCED_CLASSES, MatrixSet, view_matrices
from tore_engine.results.evaluation import Evaluation, class_index

if TYPE_CHECKING:
    import pandas as pd


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
    i, j = class_index(classes, row, f"class of the {view} view"), class_index(classes, column, f"class of the {view} view")
    return float(page[i, j]), float(page[i, j] / whole[i, j]) if whole[i, j] else 0.0


def cell_page_values(evaluation: Evaluation, view: str, row: str, column: str) -> np.ndarray:
    """Every page's pixels in cell (row class, column class) of a view, in page order."""
    classes = REDUCED_CLASSES if view == "reduced" else evaluation.matrices.classes
    i, j = class_index(classes, row, "matrix class"), class_index(classes, column, "matrix class")
    if view == "reduced":
        return evaluation.page_reduced[:, i, j].astype(float)
    return evaluation.page_sums(evaluation.contribution_cell == i * evaluation.taxonomy.size + j)


def page_class_pixels(evaluation: Evaluation) -> tuple[np.ndarray, np.ndarray]:
    """(pages, K) arrays: each page's reference pixels of each matrix class (its matrix's row
    sums) and predicted pixels (column sums); a pixel shared by several classes is split as
    Algorithm 1 splits it."""
    pages, size = len(evaluation.page_ids), evaluation.taxonomy.size
    rows, columns = np.divmod(evaluation.contribution_cell, size)
    first = run_of_items(evaluation.contribution_offsets) * size  # bincount sums in entry order, as np.add.at, 5x faster
    reference, predicted = (np.bincount(first + side, weights=evaluation.contribution_value, minlength=pages * size).reshape(pages, size)
                            for side in (rows, columns))
    return reference, predicted


REFERENCE_SUFFIX, PREDICTION_SUFFIX = " (ref)", " (pred)"


def _side_classes(side_index: dict[str, int], pixels: np.ndarray) -> dict[str, int]:
    """A side's labels that have pixels anywhere, in matrix order: label -> matrix class index."""
    present = pixels.sum(axis=0) > 0
    return {label: index for label, index in sorted(side_index.items(), key=lambda item: item[1]) if present[index]}


def pages_table(evaluation: Evaluation, pages: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row a page, in page order: its pixels, the reduced view's Foreground recall, precision
    and F1, its number of input warnings, then the pixels of each class on the reference side
    (`<label> (ref)`) and on the prediction side (`<label> (pred)`), for the classes that occur.
    `pages`: `evaluation.pages` when the caller has it made already."""
    import pandas as pd

    reference, predicted = page_class_pixels(evaluation)
    warnings = Counter(warning.page for warning in evaluation.input_warnings)
    table = (evaluation.pages if pages is None else pages).reset_index().rename(columns={
        "foreground_recall": "foreground recall", "foreground_precision": "foreground precision", "foreground_f1": "foreground F1"})
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
    k = class_index(evaluation.matrices.classes, label, "matrix class")
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
