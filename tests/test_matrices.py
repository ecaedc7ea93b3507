"""Derived matrices: normalisation, zero handling, trimming, exact rounding of huge counts."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from tore_engine.algorithm1 import ExactCounts
from tore_engine.matrices import ExactMatrix, MatrixSet, f1_score, per_class_scores


def test_recall_and_precision_are_zero_where_the_sum_is_zero():
    exact = ExactMatrix.from_integers(np.array([[0, 0, 0], [0, 3, 1], [0, 0, 0]]))
    assert exact.recall().tolist() == [[0, 0, 0], [0, 0.75, 0.25], [0, 0, 0]]
    assert exact.precision().tolist() == [[0, 0, 0], [0, 1, 1], [0, 0, 0]]


def test_trimmed_removes_all_zero_rows_and_columns_of_the_confusion_matrix():
    exact = ExactMatrix.from_integers(np.array([[0, 0, 0], [0, 3, 1], [0, 2, 0]]))
    trimmed = MatrixSet.from_exact(["Background", "a", "b"], exact).trimmed()
    assert (trimmed.rows, trimmed.columns) == (["a", "b"], ["a", "b"])
    assert trimmed.confusion.tolist() == [[3, 1], [2, 0]]
    assert trimmed.recall.tolist() == [[0.75, 0.25], [1, 0]]
    assert trimmed.precision.tolist() == [[0.6, 1], [0.4, 0]]


def test_per_class_f1_and_zero_support():
    exact = ExactMatrix.from_integers(np.array([[5, 0, 0], [1, 3, 0], [0, 0, 0]]))
    scores = per_class_scores(MatrixSet.from_exact(["Background", "a", "b"], exact))
    assert scores["a"] == {"recall": 0.75, "precision": 1.0, "f1": f1_score(1.0, 0.75)}
    assert scores["b"] == {"recall": 0.0, "precision": 0.0, "f1": 0.0}


def test_huge_counts_still_round_once_and_correctly():
    big = 3 * 10**17 + 1  # beyond 2^53: float64 cannot hold it exactly
    counts = ExactCounts.summed(2, [1, 3, 7], [1, 1, 1], [1, 0, 1], [big, big, 5])
    exact = ExactMatrix.from_counts(counts)
    assert exact.denominator == 21
    cell = Fraction(big) + Fraction(5, 7)
    assert exact.fractions()[1][1] == cell
    assert exact.floats()[1, 1] == float(cell)
    assert exact.recall()[1, 1] == float(cell / (cell + Fraction(big, 3)))
