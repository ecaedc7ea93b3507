"""The gallery's thumbnails (tore_engine.plots.thumbnails): which thumbnail pixels are lit and how
much, against hand-counted regions and the engine's contribution of a demo page, and the JPEG
they make."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from tests.helpers import DEMO
from tore_engine.api import load_pair
from tore_engine.engine.cell_regions import CellRegions, page_regions
from tore_engine.plots.thumbnails import (
    VEIL_COLOUR,
    VEIL_OPACITY,
    Outlines,
    cell_thumbnail,
    lit_share,
    thumbnail_size,
)
from tore_engine.run.runner import evaluate_dataset


@pytest.fixture(scope="module")
def demo():
    reference, model_a = load_pair(DEMO / "reference.json", DEMO / "model_a.json")
    return reference, model_a, evaluate_dataset(reference, model_a)


def _regions(rectangles: list[tuple[int, int, int, int]], shares: list[tuple[int, int]]) -> CellRegions:
    """Regions from (x0, x1, y0, y1) rectangles and their (numerator, denominator) shares."""
    x0, x1, y0, y1 = (np.array(side, dtype=np.int64) for side in zip(*rectangles))
    numerators, denominators = (np.array(side, dtype=np.int64) for side in zip(*shares))
    none = np.zeros(0, dtype=np.int64)
    return CellRegions(x0, x1, y0, y1, numerators, denominators, none, none)


def test_the_size_keeps_the_pages_proportions():
    assert thumbnail_size(612, 792) == (278, 360)
    assert thumbnail_size(100, 50, max_side=100) == (100, 50)


def test_at_one_thumbnail_pixel_a_page_pixel_each_region_is_lit_by_its_share():
    regions = _regions([(10, 30, 10, 20), (30, 40, 10, 20)], [(1, 1), (1, 2)])
    share = lit_share(regions, 100, 50, (100, 50))
    expected = np.zeros((50, 100))
    expected[10:20, 10:30] = 1.0
    expected[10:20, 30:40] = 0.5
    assert np.allclose(share, expected, atol=1e-12)


def test_a_thumbnail_pixel_gets_the_mean_of_the_page_pixels_it_covers():
    """A 10 x 10 page drawn 5 x 5: each thumbnail pixel covers 2 x 2 page pixels."""
    share = lit_share(_regions([(0, 1, 0, 2)], [(1, 1)]), 10, 10, (5, 5))
    assert share[0, 0] == pytest.approx(0.5) and share.sum() == pytest.approx(0.5)


def test_the_lit_area_is_the_pages_contribution_to_the_cell(demo):
    """Summed over the thumbnail, the lit share times a thumbnail pixel's page area is the page's
    contribution to the cell (exact, from the engine's regions), at any thumbnail size."""
    reference, prediction, evaluation = demo
    page_id, _, _ = evaluation.pages_for_cell("Text", "Table").iloc[0]
    page = reference.page_ids().index(page_id)
    regions = page_regions(reference.pages[page], prediction.pages[page], evaluation.taxonomy, "full", "Text", "Table")
    width, height = reference.pages[page].width, reference.pages[page].height
    for side in (120, 360):
        size = thumbnail_size(width, height, side)
        lit = lit_share(regions, width, height, size).sum() * (width / size[0]) * (height / size[1])
        assert lit == pytest.approx(float(regions.contribution()), rel=1e-9)


def _png(colour: tuple[int, int, int], size: tuple[int, int]) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, format="PNG")
    return buffer.getvalue()


def _close(pixel, expected, tolerance: int = 6) -> bool:
    return all(abs(int(a) - int(b)) <= tolerance for a, b in zip(pixel, expected))


def test_the_thumbnail_is_veiled_but_where_the_cell_is_and_outlines_its_boxes():
    white = (255, 255, 255)
    veiled = tuple(round(channel * (1 - VEIL_OPACITY) + veil * VEIL_OPACITY) for channel, veil in zip(white, VEIL_COLOUR))
    regions = _regions([(20, 60, 20, 40)], [(1, 1)])
    jpeg = cell_thumbnail(_png(white, (400, 200)), 200, 100, regions, [Outlines(np.array([[100, 60, 180, 90]]), "#ff0000")], max_side=200)
    picture = Image.open(io.BytesIO(jpeg))
    assert picture.format == "JPEG" and picture.size == (200, 100)  # the image, twice as large, stretched to the page
    assert _close(picture.getpixel((40, 30)), white) and _close(picture.getpixel((5, 5)), veiled)
    assert _close(picture.getpixel((140, 60)), (255, 0, 0), tolerance=60)  # on the box's top edge
    assert _close(picture.getpixel((140, 75)), veiled)  # inside the box: only its outline is drawn


def test_without_an_image_the_page_is_a_plain_ground():
    jpeg = cell_thumbnail(None, 100, 100, _regions([(0, 50, 0, 100)], [(1, 1)]), max_side=100)
    picture = Image.open(io.BytesIO(jpeg))
    assert _close(picture.getpixel((25, 50)), (240, 240, 240)) and picture.getpixel((75, 50))[0] < 130


def test_a_polygon_is_outlined_as_itself():
    """A triangle's slanted edge is drawn, and its bounding box's corner it leaves out is not."""
    white = (255, 255, 255)
    regions = _regions([(0, 200, 0, 100)], [(1, 1)])  # nothing veiled
    triangle = np.array([[20, 20], [180, 20], [20, 90]], dtype=float)
    outlines = [Outlines(np.array([[20, 20, 180, 90]]), "#ff0000", (triangle,))]
    picture = Image.open(io.BytesIO(cell_thumbnail(_png(white, (200, 100)), 200, 100, regions, outlines, max_side=200)))
    red, green, blue = picture.getpixel((100, 55))  # on the slanted edge (180,20)-(20,90): red, blurred by JPEG
    assert red > green + 80 and red > blue + 80
    assert _close(picture.getpixel((178, 88)), white)  # the bounding box's corner: no edge there
