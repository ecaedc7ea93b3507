"""From exact confusion counts to the matrices users read: confusion, recall (row-normalised),
precision (column-normalised), per-class scores, the zero-trimmed and the reduced 2x2 views.

Every float is one correctly rounded division of two exact integers (Python's int / int), so the
numbers do not depend on summation order (docs/algorithm.md#derived-matrices and docs/algorithm.md#exactness-and-determinism).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from tore_engine.metrics.algorithm1 import ExactCounts, exact_integers
from tore_engine.metrics.rates import f1_score, rates

REDUCED_CLASSES = ["Background", "Foreground"]
VIEWS = ("full", "trimmed", "reduced")  # what a matrix view shows: all classes, the zero-trimmed block, Background/Foreground


EXACT_FLOAT_LIMIT = 2**53  # integers below this convert to float64 exactly
INT64_SAFE_SUM = 2**62  # numerator totals below this stay int64 (row and column sums cannot overflow)


@dataclass(frozen=True)
class ExactMatrix:
    """A matrix of non-negative rationals: integer numerators over one common denominator.

    Numerators are int64 while they safely fit, else Python integers (an object array); either
    way every float derived from them is one correctly rounded division.
    """

    numerators: np.ndarray
    denominator: int

    @classmethod
    def from_counts(cls, counts: ExactCounts) -> "ExactMatrix":
        k = counts.class_count
        scaled, common = _over_common_denominator(counts)
        numerators = np.zeros((k, k), dtype=scaled.dtype)
        np.add.at(numerators, (counts.row, counts.column), scaled)
        return cls(numerators, common)

    @classmethod
    def from_integers(cls, matrix: np.ndarray) -> "ExactMatrix":
        matrix = np.asarray(matrix)
        return cls(exact_integers(matrix, matrix.size), 1)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ExactMatrix) and self.fractions() == other.fractions()

    def fractions(self) -> list[list[Fraction]]:
        return [[Fraction(int(n), self.denominator) for n in row] for row in self.numerators]

    def floats(self) -> np.ndarray:
        return _divide(self.numerators, np.full(self.numerators.shape, self.denominator, dtype=object))

    def recall(self) -> np.ndarray:
        return _divide(self.numerators, self.numerators.sum(axis=1, keepdims=True))

    def precision(self) -> np.ndarray:
        return _divide(self.numerators, self.numerators.sum(axis=0, keepdims=True))


def _over_common_denominator(counts: ExactCounts) -> tuple[np.ndarray, int]:
    """Each term's numerator over the terms' least common denominator (int64 while every sum of
    them fits, else Python integers), and that denominator."""
    common = math.lcm(1, *(int(d) for d in np.unique(counts.denominator)))
    scaled = counts.numerator.astype(object) * (common // counts.denominator.astype(object))
    fits = int(scaled.sum()) < INT64_SAFE_SUM if len(scaled) else True
    return (scaled.astype(np.int64) if fits else scaled), common


def _divide(numerators: np.ndarray, denominators: np.ndarray) -> np.ndarray:
    """Element-wise correctly rounded n / d (0 where d is 0). Below 2^53 both convert to float64
    exactly and IEEE division rounds correctly; above, Python's int / int does."""
    numerators, denominators = np.broadcast_arrays(numerators, denominators)
    small = all(int(np.abs(a).max(initial=0)) < EXACT_FLOAT_LIMIT for a in (numerators, denominators))
    if small:
        n, d = numerators.astype(np.float64), denominators.astype(np.float64)
        return np.divide(n, d, out=np.zeros(n.shape), where=d != 0)
    return np.array(
        [int(n) / int(d) if d else 0.0 for n, d in zip(numerators.ravel(), denominators.ravel())], dtype=np.float64
    ).reshape(numerators.shape)


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

    def same_class(self) -> np.ndarray:
        """Cells that pair a class with itself, by name (the trimmed view keeps names, not positions)."""
        return np.array([[row == column for column in self.columns] for row in self.rows], dtype=bool).reshape(len(self.rows), len(self.columns))

    def trimmed(self) -> "MatrixSet":
        """Every all-zero row and column of the confusion matrix removed, the same from the others."""
        return self.picked(np.flatnonzero(self.confusion.any(axis=1)), np.flatnonzero(self.confusion.any(axis=0)))

    def picked(self, rows: Sequence[int] | np.ndarray, columns: Sequence[int] | np.ndarray) -> "MatrixSet":
        """The rows and columns at these indices, in this order; each cell keeps its value."""
        pick = np.ix_(np.asarray(rows, dtype=np.intp), np.asarray(columns, dtype=np.intp))
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


ClassScores = dict[str, float | None]  # recall, precision, F1 of one class; None where undefined
PREDICTED_ONLY, NEVER_PREDICTED, ABSENT = "predicted only", "never predicted", "on neither side"  # a class's undefined cases


def class_case(support: bool, predicted: bool) -> str | None:
    """Which of a class's scores are undefined, in words: no reference pixel (recall undefined), no
    predicted pixel (precision undefined), neither (all three); None when all are defined."""
    if support:
        return None if predicted else NEVER_PREDICTED
    return PREDICTED_ONLY if predicted else ABSENT


def per_class_scores(matrices: MatrixSet) -> dict[str, ClassScores]:
    """Recall, precision and F1 of every taxonomy class (Background excluded), single mode. Recall is
    None for a class without reference pixels, precision for one without predicted pixels: a ratio
    over nothing is undefined, not 0 (the matrices keep their 0, docs/algorithm.md#derived-matrices). F1 is
    2 tp / (2 tp + fp + fn), as scikit-learn's: 0 when only one side has the class (every pixel of
    it missed, or wrong), None when neither has it."""
    return _class_scores(matrices.rows, matrices.confusion.sum(axis=1) > 0, matrices.confusion.sum(axis=0) > 0,
                         np.diagonal(matrices.recall), np.diagonal(matrices.precision))


def _class_scores(names: list[str], support: np.ndarray, predicted: np.ndarray, recalls: np.ndarray, precisions: np.ndarray) -> dict[str, ClassScores]:
    """`per_class_scores` from each class's reference and predicted presence and its diagonal cell's
    recall and precision."""
    scores: dict[str, ClassScores] = {}
    for k, name in enumerate(names[1:], start=1):
        recall = float(recalls[k]) if support[k] else None
        precision = float(precisions[k]) if predicted[k] else None
        f1 = f1_score(precision, recall) if recall is not None and precision is not None else 0.0 if support[k] or predicted[k] else None
        scores[name] = {"recall": recall, "precision": precision, "f1": f1}
    return scores


@dataclass(frozen=True)
class ClassTotals:
    """The diagonal, row sums and column sums of an evaluation's exact matrix, without its K x K
    cells: all that its per-class scores and present classes read. The sweep needs them at 19
    points, where a dense matrix of 2,048 classes is 130 MB a point; the floats are the same
    correctly rounded divisions as the matrices' diagonals."""

    classes: list[str]
    diagonal: np.ndarray
    row_sums: np.ndarray
    column_sums: np.ndarray

    @classmethod
    def from_counts(cls, classes: list[str], counts: ExactCounts) -> "ClassTotals":
        scaled, _ = _over_common_denominator(counts)
        k = counts.class_count
        diagonal, row_sums, column_sums = (np.zeros(k, dtype=scaled.dtype) for _ in range(3))
        on_diagonal = counts.row == counts.column
        np.add.at(diagonal, counts.row[on_diagonal], scaled[on_diagonal])
        np.add.at(row_sums, counts.row, scaled)
        np.add.at(column_sums, counts.column, scaled)
        return cls(classes, diagonal, row_sums, column_sums)

    def per_class(self) -> dict[str, ClassScores]:
        """`ToreMatrices.per_class` of the same counts, in single mode."""
        return _class_scores(self.classes, self.row_sums > 0, self.column_sums > 0,
                             _divide(self.diagonal, self.row_sums), _divide(self.diagonal, self.column_sums))

    def present_classes(self) -> list[str]:
        """`ToreMatrices.present_classes` of the same counts."""
        return [name for k, name in enumerate(self.classes) if k and self.row_sums[k] > 0]


def _mean(values: list[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def class_means(per_class: Mapping[str, ClassScores]) -> dict:
    """The unweighted mean of each score over the classes given where it is defined (an undefined
    score is left out, as scikit-learn's `zero_division=nan`, never counted as 0); `classes` says
    over how many, `precision_classes` over how many of them precision averages (those predicted)."""
    values = {score: [v for v in (scores[score] for scores in per_class.values()) if v is not None] for score in ("recall", "precision", "f1")}
    return {"classes": len(per_class), **{score: _mean(defined) for score, defined in values.items()}, "precision_classes": len(values["precision"])}


def diagonal_mean(matrices: MatrixSet, indices: list[int]) -> dict:
    """Mean recall, precision and F1 (of each class, then averaged) over the diagonal cells
    `indices`, 0 where a ratio is undefined (docling-metrics-layout's convention); the means are
    None when there are no such cells."""
    recall = [float(matrices.recall[k, k]) for k in indices]
    precision = [float(matrices.precision[k, k]) for k in indices]
    f1 = [f1_score(p, r) for p, r in zip(precision, recall)]
    return {"classes": len(indices), "recall": _mean(recall), "precision": _mean(precision), "f1": _mean(f1)}


def foreground(reduced: ExactMatrix) -> tuple[float, float]:
    """Foreground recall and precision: the Foreground cell of the reduced 2x2 matrix's recall and
    precision."""
    return float(reduced.recall()[1, 1]), float(reduced.precision()[1, 1])


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
    def foreground(self) -> tuple[float, float]:
        """Foreground (every class but Background) recall and precision: the reduced view's cell."""
        return foreground(self.reduced_exact)

    @property
    def trimmed(self) -> MatrixSet:
        return self.full.trimmed()

    @property
    def per_class(self) -> dict[str, ClassScores] | None:
        return per_class_scores(self.full) if self.mode == "single" else None

    def class_cases(self) -> dict[str, str | None]:
        """Each class's case (Background excluded): `class_case` of its reference and predicted pixels."""
        numerators = self.exact.numerators
        support, predicted = numerators.sum(axis=1) > 0, numerators.sum(axis=0) > 0
        return {name: class_case(bool(support[k]), bool(predicted[k])) for k, name in enumerate(self.classes) if k}

    def classes_in(self, case: str) -> list[str]:
        """The classes of one case (`PREDICTED_ONLY`, `NEVER_PREDICTED`, `ABSENT`), in matrix order."""
        return [name for name, found in self.class_cases().items() if found == case]

    def present_classes(self) -> list[str]:
        """The classes (Background excluded) with reference pixels: the ones worth ranking and
        averaging (recall and F1 defined). A class only predicted is not among them."""
        return [name for name, case in self.class_cases().items() if case in (None, NEVER_PREDICTED)]

    @property
    def means(self) -> dict | None:
        """Per-class means, each over a stated set: the classes present in the reference (Background
        excluded; precision over those of them predicted, `class_means`), and all K classes as
        docling-metrics-layout averages (Background and classes absent from both sides included,
        undefined ratios as 0, docs/algorithm.md#derived-matrices). None in dual mode, where the
        diagonal means nothing (docs/algorithm.md#dual-taxonomy)."""
        per_class = self.per_class
        if per_class is None:
            return None
        present = class_means({name: per_class[name] for name in self.present_classes()})
        return {"present_classes": present, "all_classes": diagonal_mean(self.full, list(range(len(self.classes))))}


PageRow = tuple[str, int, float, float, float]  # page id, pixels, Foreground recall, precision, F1


def _foreground_rates(reduced: np.ndarray) -> tuple[float, float, float]:
    scores = rates(int(reduced[1, 1]), int(reduced[:, 1].sum()), int(reduced[1].sum()))  # an empty side scores 0
    recall, precision, f1 = scores.recall, scores.precision, scores.f1
    assert recall is not None and precision is not None and f1 is not None  # EmptyRule.ZERO: 0.0, never None
    return recall, precision, f1


def page_foreground_rates(page_reduced: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per page, its reduced matrix's Foreground recall, precision and F1 (float64 arrays; an empty
    side scores 0, as `rates`).

    Computed over all pages at once when every count is below 2^53, where a float64 division of
    the two counts is the same correctly rounded number as Python's integer division (`rates`);
    page by page with `rates` otherwise."""
    reduced = page_reduced
    if reduced.dtype == object or (len(reduced) and int(reduced.max()) >= EXACT_FLOAT_LIMIT):
        scores = np.array([_foreground_rates(page) for page in reduced], dtype=np.float64).reshape(len(reduced), 3)
        return scores[:, 0], scores[:, 1], scores[:, 2]
    hits = reduced[:, 1, 1].astype(np.float64)
    predicted, actual = reduced[:, :, 1].sum(axis=1).astype(np.float64), reduced[:, 1, :].sum(axis=1).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(predicted > 0, hits / predicted, 0.0)
        recall = np.where(actual > 0, hits / actual, 0.0)
        f1 = np.where(precision + recall > 0, 2 * precision * recall / (precision + recall), 0.0)
    return recall, precision, f1


def page_foreground_columns(page_ids: list[str], page_pixels: np.ndarray, page_reduced: np.ndarray) -> list[list]:
    """Page ids, pixels and the reduced matrices' Foreground recall, precision and F1 (what pages.csv
    holds first: `page_foreground_rates`), a column each."""
    recall, precision, f1 = page_foreground_rates(page_reduced)
    return [list(page_ids), page_pixels.tolist(), recall.tolist(), precision.tolist(), f1.tolist()]


def page_foreground_rows(page_ids: list[str], page_pixels: np.ndarray, page_reduced: np.ndarray) -> list[PageRow]:
    """`page_foreground_columns` a row a page."""
    return list(zip(*page_foreground_columns(page_ids, page_pixels, page_reduced)))


def view_matrices(matrices: ToreMatrices, view: str) -> MatrixSet:
    """The matrix set a view shows."""
    if view not in VIEWS:
        raise ValueError(f"unknown matrix view {view!r}; use one of {', '.join(VIEWS)}")
    return {"full": matrices.full, "trimmed": matrices.trimmed, "reduced": matrices.reduced}[view]
