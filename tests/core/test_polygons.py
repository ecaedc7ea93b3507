"""`Polygons.axis_aligned_rectangles`, which lets an outline that is its own box paint as the box,
against the rasteriser's own test (`engine.polygons._is_rectangle`, run as Python: once the rasteriser is
loaded, the module's name is its compiled helper, which only a kernel calls)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

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
