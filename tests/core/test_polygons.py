"""`Polygons.axis_aligned_rectangles`, which lets an outline that is its own box paint as the box,
against the rasteriser's own test (`engine.polygons._is_rectangle`, run as Python: once the rasteriser is
loaded, the module's name is its compiled helper, which only a kernel calls); `bounding_boxes`
against each outline's own minima and maxima. Both take views instead of gathers when every outline
has the same few points (a file of turned boxes): lists of such outlines test that way, mixed ones
the general one."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tore_engine.core import polygons
from tore_engine.core.polygons import Polygons
from tore_engine.engine import polygons as rasteriser

corner = st.sampled_from([0.0, 1.0, 2.5])  # few values: rectangles, their turns and near-misses come often
outline = st.one_of(
    st.lists(st.tuples(corner, corner), min_size=3, max_size=6),
    st.tuples(corner, corner, corner, corner, st.permutations(range(4))).map(
        lambda v: [[(v[0], v[1]), (v[2], v[1]), (v[2], v[3]), (v[0], v[3])][k] for k in v[4]]),
)


is_rectangle = getattr(rasteriser._is_rectangle, "py_func", rasteriser._is_rectangle)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.none(), outline), min_size=1, max_size=8))
def test_axis_aligned_rectangles_are_what_the_rasteriser_takes_for_one(outlines):
    polygons = Polygons.of(outlines)
    expected = [outline is not None and bool(is_rectangle(*np.array(outline, float).T)) for outline in outlines]
    assert polygons.axis_aligned_rectangles().tolist() == expected


def test_an_axis_aligned_rectangle_in_either_direction_and_a_bow_tie():
    polygons = Polygons.of([[(1, 2), (5, 2), (5, 7), (1, 7)], [(1, 2), (1, 7), (5, 7), (5, 2)], [(1, 2), (5, 7), (5, 2), (1, 7)], None])
    assert polygons.axis_aligned_rectangles().tolist() == [True, True, False, False]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), outline), min_size=1, max_size=8), st.data())
def test_take_gives_the_chosen_boxes_outlines_in_order(outlines, data):
    chosen = data.draw(st.lists(st.integers(0, len(outlines) - 1), max_size=10))
    taken = Polygons.of(outlines).take(np.array(chosen, np.int64))
    expected = Polygons.of([outlines[k] for k in chosen])
    assert taken.offsets.tolist() == expected.offsets.tolist()
    assert taken.points.tolist() == expected.points.tolist()
    mask = data.draw(st.lists(st.booleans(), min_size=len(outlines), max_size=len(outlines)))
    assert Polygons.of(outlines).take(np.array(mask, bool)).points.tolist() == Polygons.of([o for o, m in zip(outlines, mask) if m]).points.tolist()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), outline.filter(lambda points: len(points) == 4)), min_size=1, max_size=8))
def test_axis_aligned_rectangles_of_four_point_outlines_only(outlines):
    """Every outline 4 points: the outlines' corners are views of the points, not gathers."""
    polygons = Polygons.of(outlines)
    expected = [outline is not None and bool(is_rectangle(*np.array(outline, float).T)) for outline in outlines]
    assert polygons.axis_aligned_rectangles().tolist() == expected


coordinate = st.floats(-1e6, 1e6, allow_nan=False)


@settings(max_examples=300, deadline=None)
@given(st.integers(3, 10), st.data())
def test_bounding_boxes_are_each_outlines_minima_and_maxima(size, data):
    """Outlines all of `size` points (element-wise up to 8, reduceat beyond), or of mixed sizes."""
    same_size = st.lists(st.tuples(coordinate, coordinate), min_size=size, max_size=size)
    mixed = st.lists(st.tuples(coordinate, coordinate), min_size=3, max_size=10)
    outlines = data.draw(st.lists(st.one_of(st.none(), data.draw(st.sampled_from([same_size, mixed]))), min_size=1, max_size=8))
    expected = [[np.nan] * 4 if outline is None else [*np.min(outline, axis=0), *np.max(outline, axis=0)] for outline in outlines]
    np.testing.assert_array_equal(Polygons.of(outlines).bounding_boxes(), np.array(expected, float).reshape(-1, 4))


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf, 2.0**41, 2.0**-401])
def test_a_point_beyond_the_exact_range_is_a_problem(value):
    """NaN, infinite, beyond 2^40 or nearer 0 than 2^-400: named by box and point (the check is
    one comparison, which NaN fails)."""
    outlines = [[(0.0, 0.0), (4.0, 0.0), (4.0, 3.0)], None, [(1.0, 1.0), (2.0, 1.0), (2.0, value)]]
    bboxes = np.array([[0.0, 0.0, 4.0, 3.0], [0.0, 0.0, 1.0, 1.0], [1.0, 1.0, 2.0, 2.0]])
    box, message = Polygons.of(outlines).problem(bboxes)
    assert box == 2 and message.startswith("polygon point 2 is") and "must be finite" in message


@pytest.mark.parametrize("point", [0, polygons._CHECKED_POINTS - 1, polygons._CHECKED_POINTS, 3 * polygons._CHECKED_POINTS + 5])
def test_points_are_checked_in_blocks_and_the_first_bad_one_is_named(point):
    """Beyond a block of points too, and the first of two: box and point within its outline as
    when all were checked at once."""
    boxes = 3 * polygons._CHECKED_POINTS // 4 + 4
    points = np.tile([[1.0, 1.0], [3.0, 1.0], [3.0, 2.0], [1.0, 2.0]], (boxes, 1)) + np.repeat(np.arange(boxes, dtype=float), 4)[:, None]
    points[point, 1], points[-1, 0] = np.nan, np.inf
    found = Polygons(np.arange(0, 4 * boxes + 1, 4), points).problem(np.zeros((boxes, 4)))
    assert found is not None and found[0] == point // 4 and found[1].startswith(f"polygon point {point % 4} is [")


def test_a_bbox_that_does_not_bound_its_outline_is_a_problem_and_plain_boxes_are_not():
    outlines = [None, [(0.0, 0.0), (4.0, 0.0), (4.0, 3.0)], None, [(1.0, 1.0), (2.0, 1.0), (2.0, 2.0)]]
    bboxes = np.array([[5.0, 5.0, 6.0, 6.0], [0.0, 0.0, 4.0, 3.0], [0.0, 0.0, 1.0, 1.0], [1.0, 1.0, 2.0, 3.0]])
    assert Polygons.of(outlines).problem(bboxes) == (3, "bbox [1.0, 1.0, 2.0, 3.0] is not the bounding box [1.0, 1.0, 2.0, 2.0] of its polygon")
    assert Polygons.of(outlines[:3]).problem(bboxes[:3]) is None
