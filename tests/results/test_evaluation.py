"""The result of an evaluation (tore_engine.results.evaluation): its DataFrames hold the matrices' numbers; dual
mode has no per-class scores."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture(scope="module")
def demo(demo_a, demo_b):
    return demo_a, demo_b


def test_dataframes_hold_the_matrices_numbers(demo):
    a, _ = demo
    matrices = a.matrices
    assert a.classes == matrices.classes and a.classes[0] == "Background"
    for frame, values in ((a.confusion, matrices.full.confusion), (a.recall, matrices.full.recall), (a.precision, matrices.full.precision)):
        assert list(frame.index) == list(frame.columns) == a.classes
        assert np.array_equal(frame.to_numpy(), values)
    assert np.array_equal(a.trimmed.recall.to_numpy(), matrices.trimmed.recall)
    assert list(a.reduced.precision.index) == ["Background", "Foreground"]
    report = a.to_json()
    assert a.per_class[["recall", "precision", "f1"]].to_dict("index") == report["per_class"]
    support = a.confusion.sum(axis=1)
    assert np.allclose(a.per_class["support"], support.loc[a.per_class.index], rtol=1e-12)
    assert a.pages.index.tolist() == a.page_ids and a.pages["pixels"].tolist() == a.page_pixels.tolist()


def test_dual_mode_has_no_per_class_scores(demo):
    _, b = demo
    assert b.matrices.mode == "dual" and b.per_class is None
