"""The sweep's metrics against independent values: the minimum scores as `--min-score` reads them,
Algorithm 1 point by point, the best point, and the detection view against pycocotools' own
matching of the boxes above each minimum score. (That every point equals a run with that minimum
score, through the whole engine, is tests/run/test_runner.py's.)"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.metrics.oracles import coco_detections
from tests.metrics.test_mean_average_precision import PATHS, _random_pages
from tore_engine.engine.raster import label_sets
from tore_engine.metrics import map_kernel
from tore_engine.metrics.algorithm1 import contributions, reduced_counts
from tore_engine.metrics.map_types import COCO, SideBoxes
from tore_engine.metrics.mean_average_precision import match_pages
from tore_engine.metrics.sweep import MIN_SCORES, POINTS, Curve, SweepState, detection_counts, score_levels


def test_the_minimum_scores_are_the_decimals_a_user_types():
    assert MIN_SCORES == tuple(float(f"0.{k:02d}") for k in range(5, 100, 5))


def test_a_box_is_kept_at_the_points_its_score_reaches():
    scores = np.array([0.0, 0.04999999, 0.05, 0.1, 0.15, 0.1500000001, 0.5, 0.9499999, 0.95, 1.0, 7.0, -1.0, np.nan])
    expected = [sum(not score < t for t in MIN_SCORES) for score in scores.tolist()]  # `--min-score t` keeps what is not below t
    assert score_levels(scores, len(scores)).tolist() == expected == [0, 0, 1, 2, 3, 3, 10, 18, 19, 19, 19, 0, 19]
    assert score_levels(None, 3).tolist() == [POINTS] * 3  # no score at all: kept everywhere


WORDS = st.integers(0, 2**6 - 1).map(lambda bits: bits << 1)  # classes 1..6, Background (bit 0) never set by a box


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(WORDS, WORDS, st.lists(st.integers(0, 10**6), min_size=POINTS, max_size=POINTS)), min_size=1, max_size=12, unique_by=lambda row: row[:2]))
def test_algorithm1_once_a_pair_equals_algorithm1_at_each_point(rows):
    class_count = 7
    pairs = np.array([row[:2] for row in rows], np.uint64)
    pixels = np.array([row[2] for row in rows], np.int64)

    def label_sets(words: np.ndarray) -> np.ndarray:
        sets = np.array([[(int(word) >> c) & 1 for c in range(class_count)] for word in words], bool).reshape(-1, class_count)
        sets[:, 0] |= ~sets.any(axis=1)  # the empty set is {Background}
        return sets

    truth, predicted = label_sets(pairs[:, 0]), label_sets(pairs[:, 1])
    state = SweepState.from_label_sets(truth, predicted, pixels)
    for point in range(POINTS):
        expected = contributions(truth, predicted, pixels[:, point])
        counts = state.counts[point]
        assert [getattr(counts, name).tolist() for name in ("denominator", "row", "column", "numerator")] == \
               [getattr(expected, name).tolist() for name in ("denominator", "row", "column", "numerator")]
        reduced = reduced_counts(truth, predicted, pixels[:, point], np.zeros(len(pairs), np.int64), 1)[0]
        assert state.reduced[point].tolist() == reduced.tolist()


def test_merged_states_add_their_counts_exactly():
    rng = np.random.default_rng(5)
    pairs = np.unique(rng.integers(0, 2**5, (30, 2)).astype(np.uint64) << np.uint64(1), axis=0)
    truth, predicted = (label_sets(pairs[:, side : side + 1], 6) for side in (0, 1))
    pixels = rng.integers(0, 1000, (len(pairs), POINTS))
    halves = [SweepState.from_label_sets(truth, predicted, part) for part in (pixels // 2, pixels - pixels // 2)]
    whole, merged = SweepState.from_label_sets(truth, predicted, pixels), SweepState.merged(halves, 6)
    for point in range(POINTS):
        assert merged.counts[point].numerator.tolist() == whole.counts[point].numerator.tolist()
        assert merged.reduced[point].tolist() == whole.reduced[point].tolist()


def test_the_best_point_is_the_lowest_minimum_score_of_the_highest_f1():
    f1 = (None, 0.5, 0.7, 0.7, *([0.1] * (POINTS - 4)))
    assert Curve(f1, f1, f1).best == 2
    assert Curve((None,) * POINTS, (None,) * POINTS, (None,) * POINTS).best is None
    assert Curve(f1, f1, f1).to_json()["best"] == {"min_score": 0.15, "f1": 0.7}


@pytest.mark.parametrize("seed", [21, 22])
def test_the_detection_view_is_pycocotools_matching_of_the_boxes_above_each_minimum_score(seed, monkeypatch):
    pages = _random_pages(seed, 40)
    reference = SideBoxes.from_pages([(xyxy, classes, None) for (xyxy, classes), _ in pages])
    prediction = SideBoxes.from_pages([boxes for _, boxes in pages])
    for mode in PATHS:
        monkeypatch.setenv(map_kernel.KERNEL_ENV, mode)
        true, false, references = detection_counts(match_pages(reference, prediction, 4, COCO))
        assert references.tolist() == np.bincount(reference.classes, minlength=4).tolist()
        for point, min_score in enumerate(MIN_SCORES):
            expected_true, expected_false = coco_detections(pages, 4, min_score)
            assert (true[:, point].tolist(), false[:, point].tolist()) == (expected_true.tolist(), expected_false.tolist()), (mode, min_score)
