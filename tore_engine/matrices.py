"""From exact confusion counts to the matrices users read: confusion, recall (row-normalised),
precision (column-normalised), per-class scores, the zero-trimmed and the reduced 2x2 views.

Every float is one correctly rounded division of two exact integers (Python's int / int), so the
numbers do not depend on summation order (tore.md sections 7 and 8).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from tore_engine.algorithm1 import ExactCounts

REDUCED_CLASSES = ["Background", "Foreground"]


@dataclass(frozen=True)
class ExactMatrix:
    """A K x K matrix of non-negative rationals as integer numerators over one common denominator."""

    numerators: list[list[int]]
    denominator: int

    @classmethod
    def from_counts(cls, counts: ExactCounts) -> "ExactMatrix":
        k = counts.class_count
        common = math.lcm(1, *(int(d) for d in np.unique(counts.denominator)))
        numerators = [[0] * k for _ in range(k)]
        for d, i, j, n in zip(counts.denominator.tolist(), counts.row.tolist(), counts.column.tolist(), counts.numerator.tolist()):
            numerators[i][j] += n * (common // d)
        return cls(numerators, common)

    @classmethod
    def from_integers(cls, matrix: np.ndarray) -> "ExactMatrix":
        return cls([[int(v) for v in row] for row in np.asarray(matrix)], 1)

    def fractions(self) -> list[list[Fraction]]:
        return [[Fraction(n, self.denominator) for n in row] for row in self.numerators]

    def floats(self) -> np.ndarray:
        return _divide(self.numerators, [[self.denominator] * len(row) for row in self.numerators])

    def recall(self) -> np.ndarray:
        sums = [sum(row) for row in self.numerators]
        return _divide(self.numerators, [[s] * len(row) for row, s in zip(self.numerators, sums)])

    def precision(self) -> np.ndarray:
        sums = [sum(column) for column in zip(*self.numerators)] if self.numerators else []
        return _divide(self.numerators, [sums for _ in self.numerators])


def _divide(numerators: list[list[int]], denominators: list[list[int]]) -> np.ndarray:
    """Element-wise correctly rounded n / d, 0 where d is 0."""
    return np.array(
        [[n / d if d else 0.0 for n, d in zip(nrow, drow)] for nrow, drow in zip(numerators, denominators)],
        dtype=np.float64,
    ).reshape(len(numerators), len(numerators[0]) if numerators else 0)


def f1_score(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


@dataclass(frozen=True)
class MatrixSet:
    """Confusion, recall and precision over `rows` x `columns`."""

    rows: list[str]
    columns: list[str]
    confusion: np.ndarray
    recall: np.ndarray
    precision: np.ndarray

    @classmethod
    def from_exact(cls, classes: list[str], exact: ExactMatrix) -> "MatrixSet":
        return cls(classes, classes, exact.floats(), exact.recall(), exact.precision())

    def trimmed(self) -> "MatrixSet":
        """Every all-zero row and column of the confusion matrix removed, the same from the others."""
        rows = np.flatnonzero(self.confusion.any(axis=1))
        columns = np.flatnonzero(self.confusion.any(axis=0))
        pick = np.ix_(rows, columns)
        return MatrixSet(
            [self.rows[i] for i in rows],
            [self.columns[j] for j in columns],
            self.confusion[pick],
            self.recall[pick],
            self.precision[pick],
        )

    def to_json(self) -> dict:
        return {
            "confusion": self.confusion.tolist(),
            "recall": self.recall.tolist(),
            "precision": self.precision.tolist(),
        }


def per_class_scores(matrices: MatrixSet) -> dict[str, dict[str, float]]:
    """Recall, precision and F1 of every taxonomy class (Background excluded), single mode."""
    scores = {}
    for k, name in enumerate(matrices.rows[1:], start=1):
        recall, precision = float(matrices.recall[k, k]), float(matrices.precision[k, k])
        scores[name] = {"recall": recall, "precision": precision, "f1": f1_score(precision, recall)}
    return scores


@dataclass(frozen=True)
class ToreMatrices:
    """Everything `report.json` says about the matrices of one evaluation."""

    mode: str
    full: MatrixSet
    reduced: MatrixSet
    exact: ExactMatrix
    reduced_exact: ExactMatrix

    @classmethod
    def from_counts(cls, mode: str, classes: list[str], counts: ExactCounts, reduced: np.ndarray) -> "ToreMatrices":
        """`reduced` is the integer 2x2 Background/Foreground matrix (see `algorithm1.reduced_counts`)."""
        exact = ExactMatrix.from_counts(counts)
        reduced_exact = ExactMatrix.from_integers(reduced)
        return cls(mode, MatrixSet.from_exact(classes, exact), MatrixSet.from_exact(REDUCED_CLASSES, reduced_exact), exact, reduced_exact)

    @property
    def classes(self) -> list[str]:
        return self.full.rows

    @property
    def trimmed(self) -> MatrixSet:
        return self.full.trimmed()

    @property
    def per_class(self) -> dict[str, dict[str, float]] | None:
        return per_class_scores(self.full) if self.mode == "single" else None
