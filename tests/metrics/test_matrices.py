"""Derived matrices: normalisation, zero handling, trimming, exact rounding of huge counts."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from tore_engine.metrics.algorithm1 import ExactCounts
from tore_engine.metrics.matrices import (
    ABSENT,
    NEVER_PREDICTED,
    PREDICTED_ONLY,
    ClassTotals,
    ExactMatrix,
    MatrixSet,
    ToreMatrices,
    class_case,
    class_means,
    f1_score,
    per_class_scores,
)


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


def test_per_class_scores_are_undefined_not_zero_where_a_side_has_no_pixel():
    # Background, a (both sides), b (only predicted), c (never predicted), d (on neither side).
    exact = ExactMatrix.from_integers(np.array([[5, 0, 2, 0, 0], [1, 3, 0, 0, 0], [0, 0, 0, 0, 0], [4, 0, 0, 0, 0], [0, 0, 0, 0, 0]]))
    scores = per_class_scores(MatrixSet.from_exact(["Background", "a", "b", "c", "d"], exact))
    assert scores["a"] == {"recall": 0.75, "precision": 1.0, "f1": f1_score(1.0, 0.75)}
    # scikit-learn's F1, 2 tp / (2 tp + fp + fn): 0 with only false positives (b) or only misses (c)
    assert scores["b"] == {"recall": None, "precision": 0.0, "f1": 0.0}
    assert scores["c"] == {"recall": 0.0, "precision": None, "f1": 0.0}
    assert scores["d"] == {"recall": None, "precision": None, "f1": None}
    assert [class_case(True, True), class_case(False, True), class_case(True, False), class_case(False, False)] == [
        None, PREDICTED_ONLY, NEVER_PREDICTED, ABSENT]


def test_class_means_leave_undefined_scores_out():
    per_class = {"a": {"recall": 0.5, "precision": 1.0, "f1": 2 / 3}, "c": {"recall": 0.0, "precision": None, "f1": 0.0}}
    assert class_means(per_class) == {"classes": 2, "recall": 0.25, "precision": 1.0, "f1": 1 / 3, "precision_classes": 1}
    assert class_means({}) == {"classes": 0, "recall": None, "precision": None, "f1": None, "precision_classes": 0}


def test_huge_counts_still_round_once_and_correctly():
    big = 3 * 10**17 + 1  # beyond 2^53: float64 cannot hold it exactly
    counts = ExactCounts.summed(2, [1, 3, 7], [1, 1, 1], [1, 0, 1], [big, big, 5])
    exact = ExactMatrix.from_counts(counts)
    assert exact.denominator == 21
    cell = Fraction(big) + Fraction(5, 7)
    assert exact.fractions()[1][1] == cell
    assert exact.floats()[1, 1] == float(cell)
    assert exact.recall()[1, 1] == float(cell / (cell + Fraction(big, 3)))


def test_summed_counts_beyond_int64_stay_exact():
    half = 2**62
    counts = ExactCounts.summed(2, [1, 1, 1], [1, 1, 0], [1, 1, 0], np.array([half, half, 3], dtype=np.int64))
    assert counts.numerator.tolist() == [3, 2**63]  # (d=1, 0, 0) then (d=1, 1, 1): one past int64
    merged = ExactCounts.merge([counts, counts], 2)
    assert merged.numerator.tolist() == [6, 2**64]
    assert ExactMatrix.from_counts(merged).fractions() == [[6, 0], [0, 2**64]]


def test_integer_matrices_beyond_int64_keep_exact_sums():
    exact = ExactMatrix.from_integers(np.array([[2**62, 2**62], [1, 2**62]], dtype=np.int64))
    assert exact.fractions()[0] == [2**62, 2**62]
    assert exact.recall()[0, 0] == 0.5  # the row sum 2^63 would be negative in int64
    assert exact.precision()[1, 1] == float(Fraction(2**62, 2**63))


def test_means_say_over_which_classes_they_average():
    # Background, a (present), b (only predicted), c (absent from both sides), e (never predicted).
    confusion = np.array([[6, 0, 2, 0, 0], [1, 3, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [5, 0, 0, 0, 0]])
    rows, columns = np.nonzero(confusion)
    counts = ExactCounts.summed(5, np.ones(len(rows), np.int64), rows, columns, confusion[rows, columns])
    matrices = ToreMatrices.from_counts("single", ["Background", "a", "b", "c", "e"], counts, np.array([[6, 2], [6, 3]]))
    recall = [Fraction(6, 8), Fraction(3, 4), 0, 0, 0]  # the matrices' diagonals: 0 where the row is empty
    precision = [Fraction(6, 12), Fraction(3, 3), 0, 0, 0]
    f1 = [f1_score(float(p), float(r)) for p, r in zip(precision, recall)]
    assert matrices.present_classes() == ["a", "e"]  # with reference pixels: b, only predicted, is not
    assert (matrices.classes_in(PREDICTED_ONLY), matrices.classes_in(NEVER_PREDICTED), matrices.classes_in(ABSENT)) == (["b"], ["e"], ["c"])
    means = matrices.means
    # recall and F1 over a and e; precision over a only (e has none: left out, not 0)
    assert means["present_classes"] == {"classes": 2, "recall": float(recall[1]) / 2, "precision": float(precision[1]), "f1": f1[1] / 2,
                                        "precision_classes": 1}
    assert means["all_classes"]["classes"] == 5
    assert means["all_classes"]["recall"] == float(sum(recall) / 5)
    assert means["all_classes"]["precision"] == float(sum(precision) / 5)
    assert means["all_classes"]["f1"] == math.fsum(f1) / 5
    assert ToreMatrices.from_counts("dual", ["Background", "a", "b", "c", "e"], counts, np.array([[6, 2], [6, 3]])).means is None


def test_class_totals_give_the_matrices_per_class_scores_and_present_classes():
    """Without the K x K cells: every class's recall, precision and F1 and the present classes equal
    the dense matrices' (compared with ==), with classes only predicted, only in the reference or
    absent, fractions over several denominators, and numerators beyond 2^53 and beyond int64."""
    rng = np.random.default_rng(3)
    k = 9
    names = [f"c{i}" for i in range(k)]
    for scale in (1, 10**17, 2**62):
        terms = 60
        counts = ExactCounts.summed(k, rng.integers(1, 6, terms), rng.integers(0, k - 2, terms), rng.integers(0, k - 1, terms),
                                    np.array([int(n) * scale for n in rng.integers(1, 1000, terms)], dtype=object))
        matrices = ToreMatrices.from_counts("single", names, counts, np.zeros((2, 2), np.int64))
        totals = ClassTotals.from_counts(names, counts)
        assert totals.per_class() == matrices.per_class
        assert totals.present_classes() == matrices.present_classes()
        assert set(matrices.classes_in(PREDICTED_ONLY)) and set(matrices.classes_in(ABSENT))  # the cases are there
