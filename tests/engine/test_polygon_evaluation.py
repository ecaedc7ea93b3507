"""Whole evaluations with polygons: boxes given as 4-point polygons change no bit (NumPy path and
page kernel), and pages of polygons count what the per-pixel brute force counts."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.bench_polygons import data_sets
from benchmarks.synthetic import synthetic_layouts
from tests.brute_force import contribution
from tests.engine.test_page_kernel import evaluation_state
from tests.engine.test_polygons import brute_force, simple
from tests.helpers import load_vector
from tore_engine.core.layout import LayoutSet, Page, PageColumns, page_source
from tore_engine.core.polygons import Polygons
from tore_engine.engine import page_kernel as kernel
from tore_engine.formats.native import from_document as from_native
from tore_engine.metrics.matrices import ExactMatrix
from tore_engine.run.runner import evaluate_dataset

pytest.importorskip("shapely")


def as_polygons(layout: LayoutSet) -> LayoutSet:
    """The same layout, every box of positive width and height given as its 4-point polygon."""
    columns = page_source(layout).columns()
    assert isinstance(columns, PageColumns)
    x1, y1, x2, y2 = columns.bboxes.T
    outlines = [[(a, b), (c, b), (c, d), (a, d)] if a < c and b < d else None for a, b, c, d in zip(x1, y1, x2, y2)]
    polygons = Polygons.of(outlines)
    assert polygons.is_polygon().sum() > 0.9 * len(outlines)
    converted = PageColumns(columns.ids, columns.sizes, columns.offsets, columns.bboxes, columns.codes, columns.vocabulary,
                            columns.scores, columns.images, polygons)
    return LayoutSet(layout.name, converted, layout.taxonomy)


@pytest.mark.parametrize("mode", [kernel.NUMPY, kernel.ALWAYS])
def test_boxes_as_polygons_give_the_same_evaluation_bit_for_bit(monkeypatch, mode):
    monkeypatch.setenv(kernel.KERNEL_ENV, mode)
    pages = load_vector("tore_public_pages.json")
    datasets = [(from_native(pages["reference"], "gt.json"), from_native(pages["prediction"], "model.json")), synthetic_layouts(60)]
    for reference, prediction in datasets:
        for taxonomy in ("single", "dual"):
            expected = evaluation_state(evaluate_dataset(reference, prediction, taxonomy=taxonomy))
            *state, warnings = evaluation_state(evaluate_dataset(as_polygons(reference), as_polygons(prediction), taxonomy=taxonomy))
            notes = [warning for warning in warnings if "are polygons" in warning["message"]]
            assert [note["side"] for note in notes] == ["reference", "prediction"]
            assert (*state, [warning for warning in warnings if warning not in notes]) == expected


def test_turned_regions_give_the_same_evaluation_on_both_paths():
    """Pages of regions turned by up to 30 degrees (`bench_polygons`): a rectangle a pixel row a
    region, which the page kernel sweeps as one chain of rectangles (`page_kernel._sweep_page`)
    and the NumPy path paints one by one, to the same bits."""
    numpy_path, kernel_path = on_both_paths(*data_sets(12, 30.0)["rotated"])
    assert numpy_path == kernel_path
    assert numpy_path[4], "the pages have cells"


def on_both_paths(reference: LayoutSet, prediction: LayoutSet) -> list[tuple]:
    """The evaluation's state by the NumPy path, then by the page kernel."""
    states = []
    for mode in (kernel.NUMPY, kernel.ALWAYS):
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv(kernel.KERNEL_ENV, mode)
            states.append(evaluation_state(evaluate_dataset(reference, prediction, taxonomy="single", map="off")))
    return states


def star_pages(name: str, seed: int, count: int = 60) -> LayoutSet:
    """Pages of boxes and star-shaped polygons (convex or not; some beyond the page, some thinner
    than a pixel), with no-polygon pages among them."""
    rng = np.random.default_rng(seed)
    pages = []
    for k in range(count):
        width, height = int(rng.integers(20, 160)), int(rng.integers(20, 160))
        labels, bboxes, outlines = [], [], []
        for _ in range(int(rng.integers(0, 10))):
            cx, cy, kind = rng.uniform(-10, width + 10), rng.uniform(-10, height + 10), rng.integers(0, 3)
            labels.append(f"c{rng.integers(1, 5)}")
            if kind == 0:
                x2, y2 = cx + rng.uniform(0, width / 2), cy + rng.uniform(0, height / 2)
                bboxes.append([cx, cy, x2, y2])
                outlines.append(None)
                continue
            angles = np.sort(rng.uniform(0, 2 * math.pi, int(rng.integers(3, 9))))
            radii = rng.uniform(0.3, min(width, height) / 2, len(angles)) if kind == 1 else np.full(len(angles), rng.uniform(0.3, min(width, height) / 2))
            points = [(round(cx + r * math.cos(a), 2), round(cy + r * math.sin(a), 2)) for a, r in zip(angles, radii)]
            bboxes.append([min(x for x, _ in points), min(y for _, y in points), max(x for x, _ in points), max(y for _, y in points)])
            outlines.append(points)
        pages.append(Page(f"p{k}", width, height, labels, np.array(bboxes).reshape(-1, 4),
                          polygons=outlines if any(outline is not None for outline in outlines) else None))
    return LayoutSet(name, pages, [f"c{k}" for k in range(1, 5)])


@pytest.mark.parametrize("seed", [1, 2])
def test_star_polygons_among_boxes_give_the_same_evaluation_on_both_paths(seed):
    """Polygons that are not convex paint several rectangles a row, in no row order, and some
    rows of a polygon beyond the page paint none: the page kernel's chains of them
    (`page_kernel._sweep_page`) count what the NumPy path paints, to the same bits."""
    numpy_path, kernel_path = on_both_paths(star_pages("gt", seed), star_pages("model", seed + 100))
    assert numpy_path == kernel_path


SIZE = 9


@st.composite
def polygon_pages(draw, classes: int) -> list[tuple[int, list[tuple[float, float]]]]:
    regions = []
    for _ in range(draw(st.integers(0, 3))):
        centre = (draw(st.integers(0, 2 * SIZE)) / 2, draw(st.integers(0, 2 * SIZE)) / 2)
        angles = sorted(draw(st.lists(st.integers(0, 359), min_size=3, max_size=7, unique=True)))
        radii = draw(st.lists(st.integers(1, 4 * SIZE), min_size=len(angles), max_size=len(angles)))
        points = [(round(2 * (centre[0] + r / 6 * math.cos(math.radians(a)))) / 2, round(2 * (centre[1] + r / 6 * math.sin(math.radians(a)))) / 2)
                  for a, r in zip(angles, radii)]
        if simple(points):  # the brute force's exact area holds for simple polygons (the rule's domain)
            regions.append((draw(st.integers(1, classes - 1)), points))
    return regions


def exact_pixel_sets(regions) -> list[list[set[int]]]:
    sets = [[set() for _ in range(SIZE)] for _ in range(SIZE)]
    for label, points in regions:
        covered = brute_force(points, SIZE, SIZE)
        for row, col in zip(*np.nonzero(covered)):
            sets[row][col].add(label)
    for row in sets:
        for pixel in row:
            pixel.add(0) if not pixel else None
    return sets


def layout(regions, classes: int, name: str) -> LayoutSet:
    labels = [f"c{label}" for label, _ in regions]
    bboxes = [[min(x for x, _ in p), min(y for _, y in p), max(x for x, _ in p), max(y for _, y in p)] for _, p in regions]
    page = Page("p", SIZE, SIZE, labels, np.array(bboxes).reshape(-1, 4), polygons=[p for _, p in regions])
    return LayoutSet(name, [page], [f"c{k}" for k in range(1, classes)])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(polygon_pages(4), polygon_pages(4), st.sampled_from([kernel.NUMPY, kernel.ALWAYS]))
def test_polygon_pages_count_what_brute_force_counts(reference, prediction, mode):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(kernel.KERNEL_ENV, mode)
        evaluation = evaluate_dataset(layout(reference, 4, "gt"), layout(prediction, 4, "model"), taxonomy="single")
    truth, predicted = exact_pixel_sets(reference), exact_pixel_sets(prediction)
    expected = [[Fraction(0)] * 4 for _ in range(4)]
    for row in range(SIZE):
        for col in range(SIZE):
            for (i, j), value in contribution(truth[row][col], predicted[row][col]).items():
                expected[i][j] += value
    assert ExactMatrix.from_counts(evaluation.counts).fractions() == expected


def test_page_by_page_preparation_and_cell_regions_take_polygons():
    """`evaluate_batch` (pages prepared one by one, a frame given once a page) and the regions
    behind a cell agree with the batch path on a polygon page."""
    from tore_engine.core.taxonomy import resolve_taxonomy
    from tore_engine.engine.cell_regions import page_regions
    from tore_engine.run.runner import evaluate_batch

    reference = layout([(1, [(0.0, 0.0), (8.0, 0.0), (0.0, 8.0)])], 3, "gt")
    prediction = layout([(1, [(0.0, 0.0), (8.0, 0.0), (8.0, 8.0), (0.0, 8.0)])], 3, "model")
    taxonomy = resolve_taxonomy(reference, prediction, "single")
    batch = evaluate_batch([(reference.pages[0], prediction.pages[0])], taxonomy)
    whole = evaluate_dataset(reference, prediction, taxonomy="single")
    assert batch.counts.numerator.tolist() == whole.counts.numerator.tolist()
    regions = page_regions(reference.pages[0], prediction.pages[0], taxonomy, "full", "Background", "c1")
    area = sum(int((x1 - x0) * (y1 - y0)) for x0, x1, y0, y1 in zip(regions.x0, regions.x1, regions.y0, regions.y1))
    assert area == 64 - 36  # the square's pixels the triangle (36 with positive area, on the grid) leaves as Background
