"""From a cell of a matrix view back to the pages that make it up.

The app's matrices come in three views: `full` (K x K), `trimmed` (all-zero rows and columns
removed, tore.md section 7) and `reduced` (2x2 Background/Foreground). Full and trimmed cells are
cells of the full matrix, whose per-page contributions the evaluation keeps; a reduced cell is a
sum of each page's integer 2x2 matrix.
"""

from __future__ import annotations

import numpy as np

from tore_engine.dataset import DatasetEvaluation
from tore_engine.matrices import REDUCED_CLASSES, MatrixSet, ToreMatrices

VIEWS = ("full", "trimmed", "reduced")


def view_matrices(matrices: ToreMatrices, view: str) -> MatrixSet:
    """The matrix set a view shows."""
    if view not in VIEWS:
        raise ValueError(f"unknown matrix view {view!r}; use one of {', '.join(VIEWS)}")
    return {"full": matrices.full, "trimmed": matrices.trimmed, "reduced": matrices.reduced}[view]


def pages_for_view_cell(
    evaluation: DatasetEvaluation, view: str, row: str, column: str, limit: int | None = None
) -> list[tuple[str, float, float]]:
    """The pages behind cell (row class, column class) of a view, largest contribution first
    (ties in page order): (page id, contribution in pixels, share of the cell)."""
    if view == "reduced":
        return _pages_for_reduced_cell(evaluation, REDUCED_CLASSES.index(row), REDUCED_CLASSES.index(column), limit)
    classes = evaluation.matrices.classes
    return evaluation.pages_for_cell(classes.index(row), classes.index(column), limit)


def _pages_for_reduced_cell(evaluation: DatasetEvaluation, row: int, column: int, limit: int | None) -> list[tuple[str, float, float]]:
    values = evaluation.page_reduced[:, row, column]
    hits = np.flatnonzero(values)
    order = hits[np.lexsort((hits, -values[hits]))][:limit]
    total = int(values.sum())
    return [(evaluation.page_ids[k], float(values[k]), int(values[k]) / total) for k in order]


def top_confusions(matrices: MatrixSet, count: int = 10) -> list[tuple[str, str, float, float, float]]:
    """The largest non-zero cells that pair two different classes, largest first (ties in matrix
    order): (row class, column class, pixels, recall, precision). The list beside a large matrix."""
    confusion = np.asarray(matrices.confusion)
    different = np.array([[row != column for column in matrices.columns] for row in matrices.rows], dtype=bool).reshape(confusion.shape)
    cells = np.flatnonzero(different.reshape(-1) & (confusion.reshape(-1) > 0))
    order = cells[np.lexsort((cells, -confusion.reshape(-1)[cells]))][:count]
    rows, columns = np.divmod(order, confusion.shape[1])
    return [
        (matrices.rows[i], matrices.columns[j], float(confusion[i, j]), float(matrices.recall[i, j]), float(matrices.precision[i, j]))
        for i, j in zip(rows.tolist(), columns.tolist())
    ]
