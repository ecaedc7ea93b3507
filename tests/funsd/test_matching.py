"""Entity matching (tore_engine.funsd.matching): the optimal and the greedy ICDAR rule."""

from __future__ import annotations

import pytest
from tests.funsd.helpers import entity

from tore_engine.funsd import FunsdDocument
from tore_engine.funsd.matching import greedy_icdar_matches, iou_matrix, optimal_matches


def test_optimal_and_greedy_matching_differ_as_the_spec_says():
    # GT 0 overlaps both predictions; greedy takes pred 0 for GT 0 and leaves GT 1 unmatched.
    gt = iou_matrix(FunsdDocument.from_json({"form": [entity(0, "other", (0, 0, 10, 10)), entity(1, "other", (4, 0, 14, 10))]}, doc_id="g").entity_boxes(),
                    FunsdDocument.from_json({"form": [entity(0, "other", (3, 0, 13, 10)), entity(1, "other", (0, 0, 10, 10))]}, doc_id="p").entity_boxes())
    assert gt[0, 0] == pytest.approx(7 / 13) and gt[1, 0] == pytest.approx(9 / 11)
    assert optimal_matches(gt) == [(0, 1), (1, 0)]
    assert greedy_icdar_matches(gt) == [(0, 0)]


def test_iou_of_exactly_one_half_is_a_match_only_for_the_optimal_rule():
    import numpy as np

    iou = iou_matrix(np.array([[0.0, 0, 10, 10]]), np.array([[0.0, 0, 10, 5]]))
    assert iou[0, 0] == 0.5
    assert optimal_matches(iou) == [(0, 0)] and greedy_icdar_matches(iou) == []
    assert iou_matrix(np.array([[0.0, 0, 10, 10]]), np.array([[10.0, 0, 20, 10]]))[0, 0] == 0.0  # touching
