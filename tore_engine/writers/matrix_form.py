"""How the writers lay out a K x K matrix, so that what they write grows with the cells that hold
pixels, not with K squared (docs/cli.md#large-taxonomies).

Up to `DENSE_CLASS_LIMIT` classes every cell is written (report.json's lists of rows, a CSV grid).
Beyond, the matrices are *sparse*: the non-zero cells of the confusion matrix, row by row, each with
its confusion, recall and precision (recall and precision are non-zero exactly there). 2,047 classes
of one box each are 4,094 such cells, against 4.2 million cells a matrix. report.json says which
(`matrix_form`). A heatmap draws at most `HEATMAP_CLASS_LIMIT` classes a side, those with the most
pixels, as the app does: more cells than a screen shows would only make the file heavy.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from tore_engine.metrics.matrices import MatrixSet
from tore_engine.writers.tables import MATRIX_KINDS

DENSE_CLASS_LIMIT = 256  # classes (Background included) up to which every cell is written: 65,536 cells a matrix
HEATMAP_CLASS_LIMIT = 100  # classes a side a report's heatmap draws (the app's heatmaps draw as many)
DENSE, SPARSE = "dense", "sparse"
SPARSE_COLUMNS = ("reference", "prediction")  # a sparse CSV's first columns; the third is the matrix's kind


def matrix_form(classes: int) -> str:
    """`DENSE` up to `DENSE_CLASS_LIMIT` classes, else `SPARSE`."""
    return DENSE if classes <= DENSE_CLASS_LIMIT else SPARSE


def form_json(classes: int) -> dict:
    """report.json's `matrix_form`: the layout of `matrices` and `trimmed`, and the rule that chose it."""
    return {"form": matrix_form(classes), "dense_up_to": DENSE_CLASS_LIMIT}


@dataclass(frozen=True)
class SparseCells:
    """The non-zero cells of a matrix set's confusion matrix, row by row: indices into its `rows`
    and `columns`, and each kind's value there."""

    row: np.ndarray
    column: np.ndarray
    values: dict[str, np.ndarray]  # MATRIX_KINDS -> (cells,)

    @classmethod
    def of(cls, matrices: MatrixSet) -> "SparseCells":
        row, column = np.nonzero(np.asarray(matrices.confusion))
        return cls(row, column, {kind: np.asarray(getattr(matrices, kind))[row, column] for kind in MATRIX_KINDS})

    def to_json(self, kind: str) -> dict:
        """One kind's cells as report.json holds them."""
        return {"row": self.row.tolist(), "column": self.column.tolist(), "value": self.values[kind].tolist()}


def matrices_json(matrices: MatrixSet, form: str) -> dict:
    """report.json's confusion, recall and precision of a matrix set: lists of rows, or each one's
    sparse cells."""
    if form == DENSE:
        return matrices.to_json()
    cells = SparseCells.of(matrices)
    return {kind: cells.to_json(kind) for kind in MATRIX_KINDS}


def sparse_csv_rows(matrices: MatrixSet, kind: str) -> Iterator[list[str | float]]:
    """One matrix as sparse CSV rows: one a non-zero cell, its reference class, predicted class and value."""
    cells = SparseCells.of(matrices)
    yield [*SPARSE_COLUMNS, kind]
    for i, j, value in zip(cells.row.tolist(), cells.column.tolist(), cells.values[kind].tolist()):
        yield [matrices.rows[i], matrices.columns[j], value]


@dataclass(frozen=True)
class HeatmapClasses(MatrixSet):
    """Some classes of a matrix set, each cell as in the whole set, with the whole rows' and
    columns' pixels (where one is 0 the cell's recall or precision is undefined: the figure reads
    them, as it reads the app's `ShownMatrices`)."""

    row_pixels: np.ndarray
    column_pixels: np.ndarray


def heatmap_classes(matrices: MatrixSet) -> tuple[MatrixSet, str]:
    """What a report's heatmap draws: the whole matrix set, or beyond `HEATMAP_CLASS_LIMIT` rows or
    columns the classes with the most pixels (reference and predicted; the first in matrix order on
    a tie), and a note saying so ("" when whole)."""
    confusion = np.asarray(matrices.confusion, dtype=float)
    if max(confusion.shape) <= HEATMAP_CLASS_LIMIT:
        return matrices, ""
    row_pixels, column_pixels = confusion.sum(axis=1), confusion.sum(axis=0)
    pixels: dict[str, float] = {}
    for names, totals in ((matrices.rows, row_pixels), (matrices.columns, column_pixels)):
        for name, total in zip(names, totals.tolist()):
            pixels[name] = pixels.get(name, 0.0) + total
    kept = set(sorted(pixels, key=lambda name: -pixels[name])[:HEATMAP_CLASS_LIMIT])  # sorted() is stable
    rows = [i for i, name in enumerate(matrices.rows) if name in kept]
    columns = [j for j, name in enumerate(matrices.columns) if name in kept]
    picked = matrices.picked(rows, columns)
    shown = HeatmapClasses(picked.rows, picked.columns, picked.confusion, picked.recall, picked.precision, row_pixels[rows], column_pixels[columns])
    note = (f"{len(pixels):,} classes: the {HEATMAP_CLASS_LIMIT} with the most pixels (reference and predicted) drawn, "
            "each cell as in the whole matrix; report.json and the CSVs have every class")
    return shown, note
