"""Rasterisation on the compressed grid: the rounding rule and the per-pixel equivalence."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.brute_force import confusion
from tests.helpers import one_page
from tore_engine.core.polygons import Polygons
from tore_engine.engine.raster import PixelExtents, label_sets, pair_table, words_for
from tore_engine.metrics.algorithm1 import contributions
from tore_engine.metrics.matrices import ExactMatrix
from tore_engine.run.runner import evaluate_dataset


def painted_columns(x1: float, x2: float, width: int = 10) -> list[int]:
    extents = PixelExtents.from_boxes(np.array([[x1, 0, x2, 1]], dtype=float), width, 1)
    return list(range(extents.col0[0], extents.col1[0])) if extents.paints[0] else []


def test_outward_rounding_and_the_spec_consequences():
    assert painted_columns(1.2, 2.1) == [1, 2]
    assert painted_columns(2, 2) == []  # integer zero width
    assert painted_columns(2.5, 2.5) == [2]  # fractional zero width
    assert painted_columns(3.5, 3.2) == [3]  # sub-pixel inverted
    assert painted_columns(5, 3) == []  # clearly inverted
    assert painted_columns(8.5, 12) == [8, 9]  # clipped at the right edge
    assert painted_columns(11, 14) == []  # entirely outside
    assert painted_columns(-3, 2) == [0, 1]  # negative coordinates clipped at 0, not wrapped
    assert painted_columns(-0.5, 1) == [0]


def test_clipped_flags_only_boxes_that_paint_and_cross_an_edge():
    boxes = np.array([[-1, 0, 2, 1], [0, 0, 10, 1], [8, 0, 11, 1], [12, 0, 14, 1]], dtype=float)
    extents = PixelExtents.from_boxes(boxes, 10, 1)
    assert extents.paints.tolist() == [True, True, True, False]
    assert extents.clipped.tolist() == [True, False, True, False]


coordinate = st.one_of(st.integers(-5, 40).map(float), st.floats(-1e3, 1e3, allow_nan=False), st.sampled_from([-0.0, 0.5, -1e300, 1e300]))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.tuples(coordinate, coordinate, coordinate, coordinate), st.integers(1, 40), st.integers(1, 40)), max_size=12),
       st.booleans())
def test_extents_are_each_box_rounded_outward_and_clipped_to_its_own_page(boxes, column_major):
    """Boxes of a batch (each with its page's frame) against the rule applied box by box in plain
    Python: outward to whole pixels, clipped to the page; clipped means it paints and crossed an edge."""
    bboxes = np.array([box for box, _, _ in boxes], dtype=float).reshape(-1, 4)
    widths, heights = (np.array([box[k] for box in boxes], dtype=np.int64) for k in (1, 2))
    extents = PixelExtents.from_boxes(np.asfortranarray(bboxes) if column_major else bboxes, widths, heights)
    for k, ((x1, y1, x2, y2), width, height) in enumerate(boxes):
        outward = (math.floor(x1), math.floor(y1), math.ceil(x2), math.ceil(y2))
        frame = (width, height, width, height)
        inside = [min(max(value, 0), side) for value, side in zip(outward, frame)]
        paints = inside[2] > inside[0] and inside[3] > inside[1]
        assert (extents.col0[k], extents.row0[k], extents.col1[k], extents.row1[k]) == tuple(inside)
        assert (extents.paints[k], extents.clipped[k]) == (paints, paints and any(value < 0 or value > side for value, side in zip(outward, frame)))


def test_huge_coordinates_and_pages_cost_no_raster():
    boxes = np.array([[-1e300, -1e300, 1e300, 1e300]])
    extents = PixelExtents.from_boxes(boxes, 10**6, 10**6)
    table = pair_table(10**6, 10**6, (np.array([1]), extents), (np.zeros(0, np.int64), PixelExtents.from_boxes(np.zeros((0, 4)), 10**6, 10**6)), 2)
    assert table.pixels.tolist() == [10**12]


def test_label_sets_use_several_words_beyond_63_classes():
    assert words_for(64) == 1 and words_for(65) == 2 and words_for(200) == 4
    codes = np.zeros((2, 2), dtype=np.uint64)
    codes[0, 1] = np.uint64(1) << np.uint64(5)  # class 69
    sets = label_sets(codes, 70)
    assert np.flatnonzero(sets[0]).tolist() == [69]
    assert np.flatnonzero(sets[1]).tolist() == [0]  # empty set -> Background


def grid_confusion(width, height, reference, prediction, class_count):
    def side(boxes):
        classes = np.array([c for c, _ in boxes], dtype=np.int64)
        coordinates = np.array([b for _, b in boxes], dtype=float).reshape(-1, 4)
        return classes, PixelExtents.from_boxes(coordinates, width, height)

    table = pair_table(width, height, side(reference), side(prediction), class_count)
    counts = contributions(label_sets(table.reference_codes, class_count), label_sets(table.prediction_codes, class_count), table.pixels)
    return ExactMatrix.from_counts(counts).fractions()


coordinate = st.floats(-4, 24, allow_nan=False).map(lambda v: round(v * 4) / 4)


def boxes(class_count):
    box = st.tuples(st.integers(1, class_count - 1), st.lists(coordinate, min_size=4, max_size=4))
    return st.lists(box, max_size=8)


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 20), st.integers(1, 20), boxes(6), boxes(6))
def test_grid_rasterisation_equals_per_pixel_brute_force(width, height, reference, prediction):
    assert grid_confusion(width, height, reference, prediction, 6) == confusion(width, height, reference, prediction, 6)


@settings(max_examples=25, deadline=None)
@given(boxes(70), boxes(70))
def test_seventy_classes_equal_brute_force(reference, prediction):
    assert grid_confusion(16, 12, reference, prediction, 70) == confusion(16, 12, reference, prediction, 70)


def test_total_is_the_sum_of_reference_set_sizes():
    reference = [(1, [0, 0, 6, 4]), (2, [3, 2, 9, 8])]
    prediction = [(3, [1, 1, 5, 5])]
    matrix = grid_confusion(10, 8, reference, prediction, 4)
    overlap = 3 * 2
    assert sum(map(sum, matrix)) == Fraction(10 * 8 + overlap)


def test_pages_painted_in_bands_give_the_same_pairs(monkeypatch):
    reference = [(1 + k % 5, [k % 17, k % 13, k % 17 + 5.5, k % 13 + 4.5]) for k in range(40)]
    prediction = [(1 + k % 3, [k % 11, k % 19, k % 11 + 7, k % 19 + 2.25]) for k in range(30)]
    whole = grid_confusion(24, 24, reference, prediction, 6)
    monkeypatch.setattr("tore_engine.engine.raster.MAX_BAND_CELLS", 7)
    assert grid_confusion(24, 24, reference, prediction, 6) == whole == confusion(24, 24, reference, prediction, 6)


def test_dense_pages_painted_by_prefix_sums_equal_brute_force():
    rng = np.random.default_rng(3)
    reference = [(int(c), [float(v) for v in b]) for c, b in zip(rng.integers(1, 4, 300), rng.uniform(-2, 22, (300, 4)))]
    prediction = [(int(c), [float(v) for v in b]) for c, b in zip(rng.integers(1, 4, 200), rng.uniform(-2, 22, (200, 4)))]
    assert grid_confusion(20, 18, reference, prediction, 4) == confusion(20, 18, reference, prediction, 4)


def test_enormous_page_allocates_no_raster():
    boxes = [{"label": "a", "bbox": [0, 0, 5e5, 5e5]}, {"label": "b", "bbox": [2.5e5, 2.5e5, 1e6, 1e6]}]
    evaluation = evaluate_dataset(one_page(boxes, 1e6, 1e6), one_page(boxes[:1], 1e6, 1e6))
    assert evaluation.pixels == 10**12
    assert evaluation.matrices.exact.fractions()[2][1] == 2.5e5**2  # the overlap: a predicted, b missed


@pytest.mark.parametrize("words", [2, 3, 32])
@pytest.mark.parametrize("collide", [False, True])
def test_unique_rows_are_numpys_rows_and_inverse(words, collide, monkeypatch):
    """The hashed numbering gives np.unique(axis=0)'s very arrays: single bits in every word and
    position (where a plain multiplicative hash collides), zero rows, repeats; and when every
    hash collides, the check sends it NumPy's way with the same result."""
    from tore_engine.engine import raster

    if collide:
        monkeypatch.setattr(raster, "row_hashes", lambda rows: np.zeros(len(rows), np.uint64))
    rng = np.random.default_rng(words)
    rows = np.zeros((3000, words), np.uint64)
    rows[np.arange(3000), rng.integers(0, words, 3000)] = np.uint64(1) << rng.integers(0, 64, 3000).astype(np.uint64)
    rows[::5, -1] |= np.uint64(2**63)
    rows[::11] = 0
    expected, expected_inverse = np.unique(rows, axis=0, return_inverse=True)
    distinct, inverse = raster.unique_rows(rows)
    assert np.array_equal(distinct, expected) and np.array_equal(inverse, expected_inverse.reshape(-1))
    assert len(distinct) > 100


def _mixed_extents(seed: int) -> tuple[np.ndarray, Polygons, PixelExtents]:
    """Twelve boxes on a 30 x 20 page: plain boxes, turned triangles (some off the page, one
    painting nothing) and an axis-aligned outline (which paints as its box)."""
    rng = np.random.default_rng(seed)
    bboxes, outlines = [], []
    for k in range(12):
        x, y = rng.uniform(-5, 28), rng.uniform(-5, 18)
        kind = k % 4
        if kind == 0:
            outline = None
        elif kind == 3:
            outline = [(x, y), (x + 3, y), (x + 3, y + 2), (x, y + 2)]
        else:
            outline = [(x, y), (x + rng.uniform(1, 6), y + rng.uniform(0, 2)), (x + rng.uniform(0, 3), y + rng.uniform(1, 5))]
        if k == 5:
            outline = [(40.0, 40.0), (44.0, 41.0), (41.0, 45.0)]  # beyond the page: paints nothing
        points = np.array(outline if outline is not None else [(x, y), (x + 4, y + 3)])
        bboxes.append([*points.min(axis=0), *points.max(axis=0)])
        outlines.append(outline)
    bboxes_array, polygons = np.array(bboxes), Polygons.of(outlines)
    return bboxes_array, polygons, PixelExtents.from_boxes(bboxes_array, 30, 20, polygons)


def _fields(extents: PixelExtents) -> list[list]:
    return [np.asarray(field).tolist() for field in (extents.col0, extents.col1, extents.row0, extents.row1, extents.paints, extents.clipped,
                                                     extents.pieces, extents.piece_starts, extents.polygon)]


@pytest.mark.parametrize("seed", range(5))
def test_parts_and_takes_of_polygon_extents_are_the_chosen_boxes_extents(seed):
    """`part` and `take` keep each chosen box's pieces (found through `piece_starts`): the same as
    rasterising the chosen boxes alone; `owners` names each piece's box, as one box at a time says."""
    bboxes, polygons, extents = _mixed_extents(seed)
    assert extents.pieces is not None and not extents.paints[5]
    keep = np.random.default_rng(seed).random(len(bboxes)) < 0.5
    keep[1] = True
    assert _fields(extents.take(keep)) == _fields(PixelExtents.from_boxes(bboxes[keep], 30, 20, polygons.take(keep)))
    assert _fields(extents.part(slice(2, 9))) == _fields(PixelExtents.from_boxes(bboxes[2:9], 30, 20, polygons.take(np.arange(2, 9))))
    one_at_a_time = [len(piece) if (piece := PixelExtents.from_boxes(bboxes[k:k + 1], 30, 20, polygons.take(np.array([k]))).pieces) is not None else 0
                     for k in range(len(bboxes))]
    assert extents.owners().tolist() == np.repeat(np.arange(len(bboxes)), one_at_a_time).tolist()
