"""The writers' bounds on a large taxonomy (`matrix_form`): the classes a report's heatmap draws."""

from __future__ import annotations

import numpy as np

from tore_engine.metrics.matrices import MatrixSet
from tore_engine.writers.matrix_form import HEATMAP_CLASS_LIMIT, heatmap_classes


def test_a_heatmap_beyond_the_limit_draws_the_classes_with_the_most_pixels_each_cell_unchanged():
    rng = np.random.default_rng(42)
    k = HEATMAP_CLASS_LIMIT + 37
    names = [f"c{i}" for i in range(k)]
    confusion = np.where(rng.random((k, k)) < 0.05, rng.integers(1, 1000, (k, k)), 0).astype(float)
    rows, columns = confusion.sum(axis=1, keepdims=True), confusion.sum(axis=0, keepdims=True)
    recall = np.divide(confusion, rows, out=np.zeros_like(confusion), where=rows > 0)
    precision = np.divide(confusion, columns, out=np.zeros_like(confusion), where=columns > 0)
    whole = MatrixSet(names, names, confusion, recall, precision)
    shown, note = heatmap_classes(whole)
    totals = confusion.sum(axis=0) + confusion.sum(axis=1)
    expected = sorted(range(k), key=lambda i: (-totals[i], i))[:HEATMAP_CLASS_LIMIT]  # brute force: most pixels, first on a tie
    assert shown.rows == shown.columns == [names[i] for i in sorted(expected)]
    pick = np.ix_(sorted(expected), sorted(expected))
    assert np.array_equal(shown.recall, recall[pick]) and np.array_equal(shown.confusion, confusion[pick])
    assert f"{k:,} classes: the {HEATMAP_CLASS_LIMIT} with the most pixels" in note
    small = MatrixSet(names[:5], names[:5], confusion[:5, :5], recall[:5, :5], precision[:5, :5])
    assert heatmap_classes(small) == (small, "")
