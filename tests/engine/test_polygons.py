"""The polygon rasteriser against brute force: each pixel square's exact intersection area with
the polygon (Sutherland-Hodgman clipping in fractions, then the shoelace formula), cross-checked
with shapely's float intersection areas, on generated and real polygons."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.helpers import shared_path
from tore_engine.core.layout import MAX_PAGE_SIDE
from tore_engine.core.polygons import MIN_COORDINATE
from tore_engine.engine import polygons

shapely = pytest.importorskip("shapely")

PAGE = 12


def _clip(points: list[tuple[Fraction, Fraction]], axis: int, bound: Fraction, keep_below: bool) -> list[tuple[Fraction, Fraction]]:
    """One Sutherland-Hodgman step: the polygon on one side of `coordinate[axis] = bound`."""
    def inside(p):
        return p[axis] <= bound if keep_below else p[axis] >= bound

    out = []
    for k, current in enumerate(points):
        previous = points[k - 1]
        if inside(current) != inside(previous):
            t = (bound - previous[axis]) / (current[axis] - previous[axis])
            out.append(tuple(previous[i] + t * (current[i] - previous[i]) for i in range(2)))
        if inside(current):
            out.append(current)
    return out


def exact_area(points: list[tuple[float, float]], col: int, row: int) -> Fraction:
    """The exact area of the polygon within pixel (col, row)'s square (a simple polygon's signed
    area is preserved by clipping to a convex window)."""
    clipped = [(Fraction(x), Fraction(y)) for x, y in points]
    for axis, bound, below in ((0, col, False), (0, col + 1, True), (1, row, False), (1, row + 1, True)):
        clipped = _clip(clipped, axis, Fraction(bound), below)
        if not clipped:
            return Fraction(0)
    twice = sum(clipped[k - 1][0] * clipped[k][1] - clipped[k][0] * clipped[k - 1][1] for k in range(len(clipped)))
    return abs(twice) / 2


def brute_force(points: list[tuple[float, float]], width: int, height: int) -> np.ndarray:
    """Which pixels the polygon covers with positive area, each checked against shapely too."""
    covered = np.zeros((height, width), bool)
    polygon = shapely.Polygon(points)
    for row in range(height):
        for col in range(width):
            area = exact_area(points, col, row)
            covered[row, col] = area > 0
            float_area = shapely.intersection(polygon, shapely.box(col, row, col + 1, row + 1)).area
            assert (float_area > 1e-9) <= (area > 0) and (area > 1e-6) <= (float_area > 0), (col, row, area, float_area)
    return covered


def painted(points: list[tuple[float, float]], width: int, height: int) -> np.ndarray:
    pieces, starts = polygons.pixel_pieces(np.array(points, float), np.array([0, len(points)]), np.array([width]), np.array([height]))
    assert starts.tolist() == [0, len(pieces)]
    grid = np.zeros((height, width), np.int64)
    for col0, col1, row0, row1 in pieces.tolist():
        assert 0 <= col0 < col1 <= width and 0 <= row0 < row1 <= height
        grid[row0:row1, col0:col1] += 1
    assert grid.max(initial=0) <= 1, "pieces overlap"
    return grid.astype(bool)


def check(points: list[tuple[float, float]], width: int = PAGE, height: int = PAGE) -> None:
    expected = brute_force(points, width, height)
    np.testing.assert_array_equal(painted(points, width, height), expected)


def simple(points: list[tuple[float, float]]) -> bool:
    ring = shapely.Polygon(points)
    return len(points) >= 3 and ring.is_valid and ring.area > 0 and shapely.LinearRing(points).is_simple


# what `core.polygons` admits (the rasteriser's domain): no coordinate between 0 and MIN_COORDINATE,
# such as the subnormal -5e-324 that once drew a triangle a pixel short
coordinate = st.one_of(st.integers(-2, PAGE + 2).map(float), st.integers(-8, 4 * PAGE + 8).map(lambda v: v / 4),
                       st.floats(-2, PAGE + 2, allow_nan=False, allow_infinity=False).filter(lambda v: v == 0 or abs(v) >= MIN_COORDINATE))


@st.composite
def star_polygons(draw) -> list[tuple[float, float]]:
    """Simple polygons, convex or concave: vertices by increasing angle round a centre."""
    centre = (draw(st.integers(0, PAGE)) + 0.5 * draw(st.integers(0, 1)), draw(st.integers(0, PAGE)) + 0.5 * draw(st.integers(0, 1)))
    angles = sorted(draw(st.lists(st.integers(0, 359), min_size=3, max_size=9, unique=True)))
    radii = draw(st.lists(st.integers(1, 4 * PAGE), min_size=len(angles), max_size=len(angles)))
    snap = draw(st.sampled_from([1, 2, 4, 0]))
    points = []
    for angle, radius in zip(angles, radii):
        x = centre[0] + radius / 4 * math.cos(math.radians(angle))
        y = centre[1] + radius / 4 * math.sin(math.radians(angle))
        points.append((round(x * snap) / snap, round(y * snap) / snap) if snap else (x, y))
    if draw(st.booleans()):  # a collinear point in the middle of an edge
        k = draw(st.integers(0, len(points) - 1))
        a, b = points[k - 1], points[k]
        points.insert(k, ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2))
    return points


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(star_polygons())
def test_simple_polygons_paint_what_brute_force_covers(points):
    assume(simple(points))
    check(points)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(coordinate, coordinate), min_size=3, max_size=3), st.integers(-3, 3), st.integers(-3, 3))
def test_triangles_and_slivers(triangle, dx, dy):
    """Any triangle, and a sliver: a triangle whose third point lies a hair off the first edge."""
    assume(simple(triangle))
    check(triangle)
    a, b = triangle[0], triangle[1]
    sliver = [a, b, ((a[0] + b[0]) / 2 + dx * 1e-9, (a[1] + b[1]) / 2 + dy * 1e-9)]
    assume(simple(sliver))
    check(sliver)


@pytest.mark.parametrize("points", [
    [(1, 1), (5, 1), (5, 4), (1, 4)],  # vertices on pixel corners
    [(0.5, 0.5), (3.5, 3.5), (0.5, 6.5)],  # edges through pixel corners diagonally
    [(2, 0), (4, 2), (2, 4), (0, 2)],  # a diamond on the grid: corners only touched
    [(0, 0), (10, 0), (10, 10), (5, 5.0000001), (0, 10)],  # a deep notch
    [(1, 1), (3, 1), (5, 1), (5, 3), (5, 5), (1, 5)],  # collinear points
    [(3, -4), (15, 6), (6, 16), (-5, 5)],  # beyond every edge of the page
    [(0.25, 0.25), (11.75, 0.25), (0.25, 0.3)],  # a sliver along a row
])
def test_hand_made_polygons(points):
    check([(float(x), float(y)) for x, y in points])


@settings(max_examples=60, deadline=None)
@given(st.tuples(coordinate, coordinate, coordinate, coordinate))
def test_a_rectangle_paints_its_box_exactly(box):
    """A 4-point axis-aligned polygon of positive width and height paints its box (docs/algorithm.md#rasterisation),
    as one rectangle."""
    (x1, x2), (y1, y2) = sorted(box[0::2]), sorted(box[1::2])
    assume(x1 < x2 and y1 < y2)
    pieces, _ = polygons.pixel_pieces(np.array([(x1, y1), (x2, y1), (x2, y2), (x1, y2)]), np.array([0, 4]), np.array([PAGE]), np.array([PAGE]))
    col0, col1 = max(0, math.floor(x1)), min(PAGE, math.ceil(x2))
    row0, row1 = max(0, math.floor(y1)), min(PAGE, math.ceil(y2))
    expected = [[col0, col1, row0, row1]] if col1 > col0 and row1 > row0 else []
    assert pieces.tolist() == expected


@pytest.mark.parametrize("convex_path", [True, False])
def test_pieces_on_the_largest_page_reach_its_far_edges(convex_path):
    """A turned square over the bottom right corner of a page of `MAX_PAGE_SIDE` = 2^31 pixels a
    side paints what the same square paints over the corner of a 12-pixel page, moved by 2^31 - 12
    (dyadic coordinates: the move is exact): its pieces end on column and row 2^31, which 32
    unsigned bits hold (`polygons.PIECE_TYPE`; signed, they would wrap)."""
    square = np.array([(10.25, 7.5), (14.5, 10.25), (11.75, 14.5), (7.5, 11.75)])
    shift = MAX_PAGE_SIDE - PAGE
    small, _ = polygons.pixel_pieces(square, np.array([0, 4]), np.array([PAGE]), np.array([PAGE]), convex_path=convex_path)
    large, _ = polygons.pixel_pieces(square + shift, np.array([0, 4]), np.array([MAX_PAGE_SIDE]), np.array([MAX_PAGE_SIDE]), convex_path=convex_path)
    assert small.tolist() and small[:, [1, 3]].max() == PAGE
    assert (large.astype(np.int64) - shift).tolist() == small.tolist()
    with pytest.raises(ValueError, match="page side"):
        polygons.pixel_pieces(square, np.array([0, 4]), np.array([2**32]), np.array([PAGE]))


def test_a_spike_on_a_rectangle_is_no_rectangle():
    """(0,0) (4,0) (4,3) (4,0): a zero-area spike, which paints only where its outline passes
    through pixels' interiors (nowhere here: every edge lies on pixel edges)."""
    assert not painted([(0.0, 0.0), (4.0, 0.0), (4.0, 3.0), (4.0, 0.0)], 6, 6).any()


def test_degenerate_polygons_paint_their_outline():
    """Zero area: the outline's pixels, as a box of fractional zero width paints its column."""
    assert painted([(2.5, 1.0), (2.5, 4.0), (2.5, 2.0)], 6, 6)[:, 2].tolist() == [False, True, True, True, False, False]
    assert not painted([(2.0, 1.0), (2.0, 4.0), (2.0, 2.0)], 6, 6).any()


def test_real_omnidocbench_regions():
    """OmniDocBench's `poly` regions of the shared demo pages: as 4-point polygons they paint their
    boxes exactly, and rotated by 10 degrees about their centre each pixel matches brute force
    (the first regions, on their page's grid)."""
    pages = json.loads(shared_path("data", "omnidocbench", "OmniDocBench_demo.json").read_text())
    regions = [(page["page_info"], region["poly"]) for page in pages for region in page["layout_dets"] if len(region.get("poly") or []) == 8]
    assert regions
    for info, poly in regions:
        points = np.array(poly, float).reshape(4, 2)
        pieces, _ = polygons.pixel_pieces(points, np.array([0, 4]), np.array([info["width"]]), np.array([info["height"]]))
        (x1, y1), (x2, y2) = points.min(axis=0), points.max(axis=0)
        box = [max(0, math.floor(x1)), min(math.ceil(x2), info["width"]), max(0, math.floor(y1)), min(math.ceil(y2), info["height"])]
        assert pieces.tolist() == ([box] if box[1] > box[0] and box[3] > box[2] else [])
    smallest = sorted(regions, key=lambda region: np.ptp(region[1][0::2]) * np.ptp(region[1][1::2]))
    for _, poly in smallest[:3]:
        points = np.array(poly, float).reshape(4, 2)
        centre = points.mean(axis=0)
        turn = np.array([[math.cos(0.17), -math.sin(0.17)], [math.sin(0.17), math.cos(0.17)]])
        rotated = (points - centre) @ turn.T + centre
        small = rotated - np.floor(rotated.min(axis=0))  # the same polygon, on a page just around it
        width, height = (math.ceil(v) for v in small.max(axis=0))
        check([tuple(p) for p in small.tolist()], width, height)


def _convex_outlines(rng: np.random.Generator, count: int, page: int) -> tuple[np.ndarray, np.ndarray]:
    """`count` convex polygons over a page and beyond its edges, as `pixel_pieces` takes them:
    turned rectangles and convex hulls of random points, their coordinates real, on quarter
    pixels or on the grid, in either direction round the outline."""
    outlines = []
    for k in range(count):
        centre = rng.uniform(-page / 4, 5 * page / 4, 2)
        if k % 2:
            half = rng.uniform(0.2, page / 2, 2)
            theta = rng.uniform(-math.pi, math.pi)
            corners = np.array([(-1, -1), (1, -1), (1, 1), (-1, 1)]) * half
            points = corners @ np.array([[math.cos(theta), -math.sin(theta)], [math.sin(theta), math.cos(theta)]]).T + centre
        else:
            hull = shapely.MultiPoint(rng.normal(centre, page / 6, (rng.integers(3, 12), 2))).convex_hull
            if not isinstance(hull, shapely.Polygon):
                continue
            points = np.array(hull.exterior.coords[:-1])
        snap = (0, 1, 4)[k % 3]
        if snap:
            points = np.round(points * snap) / snap
        outlines.append(points[::-1] if k % 5 == 0 else points)
    return np.concatenate(outlines), np.concatenate([[0], np.cumsum([len(points) for points in outlines])])


def test_convex_polygons_take_a_shorter_path_to_the_same_pieces():
    """The convex path (`_convex_rows`, the floor and ceiling of each row's extremes) against the
    general rows of every polygon (its cross-check), on 3,000 convex polygons: the same
    rectangles, in the same order, bit for bit; also for the polygons that are not convex once
    snapped to the grid, which both paths must then agree take the general rows."""
    page = 40
    points, offsets = _convex_outlines(np.random.default_rng(7), 3000, page)
    sizes = (np.full(len(offsets) - 1, page), np.full(len(offsets) - 1, page - 7))
    fast = polygons.pixel_pieces(points, offsets, *sizes)
    general = polygons.pixel_pieces(points, offsets, *sizes, convex_path=False)
    assert len(fast[0]) > 10_000
    np.testing.assert_array_equal(fast[0], general[0])
    np.testing.assert_array_equal(fast[1], general[1])


@pytest.mark.parametrize("points", [
    [(1.5, 1.5), (8.5, 2.5), (6.5, 9.5)],  # a triangle on half pixels, turning one way
    [(6.5, 9.5), (8.5, 2.5), (1.5, 1.5)],  # and the other
    [(2, 2), (9, 2), (9, 9), (2, 9), (1, 5)],  # a pentagon with a horizontal and a vertical edge
    [(0, 0), (4, 1), (8, 4), (4, 1.0000001)],  # a near-degenerate quadrilateral: not convex
    [(3, 0), (6, 3), (3, 6), (0, 3), (3, 0), (6, 3), (3, 6), (0, 3)],  # a square round twice: not convex
])
def test_convex_path_hand_made(points):
    """Each paints what the general rows paint; the simple ones, what brute force covers."""
    outline = np.array(points, float)
    ends, sizes = np.array([0, len(points)]), (np.array([PAGE]), np.array([PAGE]))
    for fast, general in zip(polygons.pixel_pieces(outline, ends, *sizes), polygons.pixel_pieces(outline, ends, *sizes, convex_path=False)):
        np.testing.assert_array_equal(fast, general)
    if simple([tuple(p) for p in outline.tolist()]):
        check([tuple(p) for p in outline.tolist()])
