"""Entity and word matching (tore_engine.scorers.funsd.matching): the optimal and the greedy ICDAR rule, on
the overlapping pairs only, against the dense brute force (tests/funsd/dense.py), and its limits."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.scorers.funsd import dense
from tests.scorers.funsd.helpers import entity
from tore_engine.core.errors import InputError
from tore_engine.scorers.funsd import FunsdDocument, matching
from tore_engine.scorers.funsd.matching import (
    BoxMatching,
    assignment,
    box_overlaps,
    greedy_icdar_matches,
    match_boxes,
)


def boxes(*rows) -> np.ndarray:
    return np.array(rows, dtype=np.float64).reshape(-1, 4)


def test_optimal_and_greedy_matching_differ_as_the_spec_says():
    # GT 0 overlaps both predictions; greedy takes pred 0 for GT 0 and leaves GT 1 unmatched.
    reference = FunsdDocument.from_json({"form": [entity(0, "other", (0, 0, 10, 10)), entity(1, "other", (4, 0, 14, 10))]}, doc_id="g")
    prediction = FunsdDocument.from_json({"form": [entity(0, "other", (3, 0, 13, 10)), entity(1, "other", (0, 0, 10, 10))]}, doc_id="p")
    overlaps = box_overlaps(reference.entity_boxes(), prediction.entity_boxes())
    assert overlaps.rows.tolist() == [0, 0, 1, 1] and overlaps.columns.tolist() == [0, 1, 0, 1]
    assert overlaps.iou.tolist() == [70 / 130, 1.0, 90 / 110, 60 / 140]
    matched = BoxMatching.of(overlaps)
    assert matched.optimal == [(0, 1), (1, 0)] and matched.optimal_iou == [1.0, 9 / 11]
    assert greedy_icdar_matches(overlaps) == [(0, 0)] and matched.greedy_count == 1


def test_iou_of_exactly_one_half_is_a_match_only_for_the_optimal_rule():
    half = match_boxes(boxes([0, 0, 10, 10]), boxes([0, 0, 10, 5]), what="words")
    assert half.optimal == [(0, 0)] and half.optimal_iou == [0.5] and half.greedy_count == 0
    touching = box_overlaps(boxes([0, 0, 10, 10]), boxes([10, 0, 20, 10], [0, 10, 10, 20]))
    assert touching.iou.size == 0  # boxes that only touch do not overlap


def test_pairs_below_one_half_still_decide_the_assignment():
    # docs/benchmarks.md#matching: assign first, threshold after. GT 0 - pred 0 is 0.5, but GT 0 - pred 1 (0.45) and
    # GT 1 - pred 0 (0.45) total more, so nothing is kept although a pair reaches 0.5.
    iou = np.array([[0.5, 0.45], [0.45, 0.0]])
    overlaps = matching.Overlaps((2, 2), np.array([0, 0, 1]), np.array([0, 1, 0]), np.array([0.5, 0.45, 0.45]))
    assert sorted(zip(*(side.tolist() for side in assignment(overlaps)))) == [(0, 1), (1, 0)]
    assert BoxMatching.of(overlaps).optimal == [] == dense.dense_matching(iou).optimal


# --- the dense brute force, on random boxes ------------------------------------------------------

coordinate = st.integers(0, 8).map(float) | st.floats(0, 8, allow_nan=False, width=32).map(float)


@st.composite
def box_arrays(draw, max_boxes: int = 9) -> np.ndarray:
    """Boxes on a small grid (ties, touching and identical boxes are frequent), some of zero size."""
    rows = []
    for _ in range(draw(st.integers(0, max_boxes))):
        x1, y1 = draw(coordinate), draw(coordinate)
        rows.append([x1, y1, x1 + draw(st.integers(0, 4)), y1 + draw(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0]))])
    return boxes(*rows)


@settings(max_examples=400, deadline=None)
@given(box_arrays(), box_arrays(), st.sampled_from([1, 3, matching.CHUNK]))
def test_matching_equals_the_dense_brute_force(reference, prediction, chunk):
    matrix = dense.iou_matrix(reference, prediction)
    with mock.patch.object(matching, "CHUNK", chunk):  # small chunks: pairs cut across chunks
        overlaps = box_overlaps(reference, prediction)
    positive = np.argwhere(matrix > 0)
    assert overlaps.rows.tolist() == positive[:, 0].tolist() and overlaps.columns.tolist() == positive[:, 1].tolist()
    assert overlaps.iou.tolist() == matrix[matrix > 0].tolist()  # bit for bit
    assert greedy_icdar_matches(overlaps) == dense.greedy_icdar(matrix)
    rows, columns = assignment(overlaps)
    assert len(set(columns.tolist())) == columns.size and list(rows) == sorted(set(rows.tolist()))
    assert dense.total(matrix, zip(rows, columns)) == pytest.approx(dense.total(matrix, dense.assignment(matrix)), abs=dense.MARGIN)
    if dense.unique_optimum(matrix):
        assert BoxMatching.of(overlaps) == dense.dense_matching(matrix)


def test_absurd_coordinates_overlap_nothing_as_in_the_dense_rule():
    huge = boxes([-1e308, -1e308, 1e308, 1e308])  # its area is beyond float range: no finite union
    assert dense.iou_matrix(huge, huge)[0, 0] == 0.0 and box_overlaps(huge, huge).iou.size == 0


# --- bounds --------------------------------------------------------------------------------------


def test_more_boxes_than_a_form_can_match_is_an_input_error_naming_the_file():
    many = np.tile([0.0, 0.0, 1.0, 1.0], (matching.MAX_BOXES + 1, 1))
    with pytest.raises(InputError, match=r"^file p\.json: the prediction has 20,001 words on this form, more than the 20,000"):
        box_overlaps(boxes([0, 0, 1, 1]), many, what="words", files=("r.json", "p.json"))


def test_too_many_overlapping_pairs_is_an_input_error_before_they_are_all_found():
    side = 1500  # 1500 x 1500 identical boxes: 2.25 million overlapping pairs
    same = np.tile([0.0, 0.0, 10.0, 10.0], (side, 1))
    with pytest.raises(InputError, match=r"^file p\.json: more than 2,000,000 pairs of its entities and the reference's "
                                         r"overlap on this form \(reference r\.json\)"):
        box_overlaps(same, same, what="entities", files=("r.json", "p.json"))


def test_candidates_come_from_the_axis_on_which_fewer_boxes_overlap():
    # two interleaved columns of the most boxes a form may have: every pair shares its x range
    # (400 million), each box overlaps one box of the other side in y
    n = matching.MAX_BOXES
    reference = boxes(*([0, 2 * k, 1, 2 * k + 1] for k in range(n)))
    prediction = boxes(*([0, 2 * k + 0.5, 1, 2 * k + 1.5] for k in range(n)))
    tested = []
    original = matching._Runs.pairs

    def counted(runs):
        for drivers, others in original(runs):
            tested.append(drivers.size)
            yield drivers, others

    with mock.patch.object(matching._Runs, "pairs", counted):
        overlaps = box_overlaps(reference, prediction)
    assert overlaps.rows.tolist() == list(range(n)) and overlaps.columns.tolist() == list(range(n))
    assert sum(tested) == n  # along y, only predicted box k starts inside reference box k
