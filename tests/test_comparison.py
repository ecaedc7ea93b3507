"""B minus A on matrices and per-class scores."""

import numpy as np
import pytest

from tore_engine.comparison import comparable, matrix_difference, mean_scores, page_deltas, per_class_deltas
from tore_engine.matrices import MatrixSet


def _matrices(rows, confusion):
    confusion = np.array(confusion, dtype=float)
    recall = confusion / confusion.sum(axis=1, keepdims=True)
    precision = confusion / confusion.sum(axis=0, keepdims=True)
    return MatrixSet(rows, rows, confusion, recall, precision)


def test_difference_is_b_minus_a_cell_by_cell():
    a = _matrices(["Background", "Text"], [[3, 1], [1, 3]])
    b = _matrices(["Background", "Text"], [[4, 0], [2, 2]])
    difference = matrix_difference(a, b)
    assert difference.confusion.tolist() == [[1, -1], [1, -1]]
    assert difference.recall.tolist() == [[0.25, -0.25], [0.25, -0.25]]
    assert difference.precision[1, 1] == pytest.approx(1.0 - 0.75)


def test_matrices_with_other_classes_are_not_comparable():
    a = _matrices(["Background", "Text"], [[1, 1], [1, 1]])
    b = _matrices(["Background", "text"], [[1, 1], [1, 1]])
    assert not comparable(a, b)
    with pytest.raises(ValueError):
        matrix_difference(a, b)


def test_per_class_deltas_and_means():
    a = {"Text": {"recall": 0.5, "precision": 1.0, "f1": 2 / 3}, "Title": {"recall": 0.0, "precision": 0.0, "f1": 0.0}}
    b = {"Text": {"recall": 0.75, "precision": 0.5, "f1": 0.6}, "Title": {"recall": 1.0, "precision": 1.0, "f1": 1.0}}
    deltas = per_class_deltas(a, b)
    assert deltas["Text"] == pytest.approx({"recall": 0.25, "precision": -0.5, "f1": 0.6 - 2 / 3})
    assert deltas["Title"] == {"recall": 1.0, "precision": 1.0, "f1": 1.0}
    assert mean_scores(a) == pytest.approx({"recall": 0.25, "precision": 0.5, "f1": 1 / 3})
    assert mean_scores({}) == {"recall": 0.0, "precision": 0.0, "f1": 0.0}


def test_page_deltas_follow_a_and_skip_pages_b_lacks():
    a = [{"page": "p1", "f1": 0.5}, {"page": "p2", "f1": 1.0}, {"page": "p3", "f1": 0.0}]
    b = [{"page": "p2", "f1": 0.25}, {"page": "p1", "f1": 0.75}]
    assert page_deltas(a, b) == [
        {"page": "p1", "F1 A": 0.5, "F1 B": 0.75, "B − A": 0.25},
        {"page": "p2", "F1 A": 1.0, "F1 B": 0.25, "B − A": -0.75},
    ]
