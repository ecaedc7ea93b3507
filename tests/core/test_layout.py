"""Layout sets and pages (tore_engine.core.layout) built by hand are checked as a reader's are."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tore_engine as tore
from tore_engine.core.layout import PageColumns


def test_layout_sets_built_by_hand_are_checked():
    with pytest.raises(tore.InputError, match="bboxes has shape"):
        tore.Page("p", 10, 10, ["Text", "Table"], np.zeros((1, 4)))
    with pytest.raises(tore.InputError, match="duplicate page id"):
        tore.LayoutSet("m", [tore.Page.empty("p", 5, 5), tore.Page.empty("p", 5, 5)])
    with pytest.raises(tore.InputError, match="labels not in the declared taxonomy"):
        tore.LayoutSet("m", [tore.Page("p", 5, 5, ["x"], np.array([[0, 0, 1, 1]]))], taxonomy=["y"])


def test_declared_names_are_checked_in_linear_time():
    """120,000 declared names (a 1.4 MB file): a repeated one is named, and labels missing from the
    taxonomy are found by their first box with one pass over the boxes, twenty named at most."""
    names = [f"class-{k}" for k in range(120_000)]
    with pytest.raises(tore.InputError, match=r"'taxonomy' lists a class twice: 'class-5', 'class-9'$"):
        tore.LayoutSet("m", [], taxonomy=[*names, "class-9", "class-5"])
    page = tore.Page("p", 5, 5, names, np.tile([0.0, 0.0, 1.0, 1.0], (len(names), 1)))
    with pytest.raises(tore.InputError) as caught:
        tore.LayoutSet("m", [tore.Page.empty("o", 5, 5), page], taxonomy=["class-3"])
    expected = "; ".join(f"'class-{k}' (first at page 'p', box {k})" for k in [0, 1, 2, *range(4, 21)])
    assert caught.value.problem == f"labels not in the declared taxonomy: {expected}; and 119,979 more"


def test_reprs_are_one_short_line_without_the_data():
    """A page of 10,000 boxes, and a layout set whose pages are columns, print as one short line each."""
    boxes = np.tile([0.0, 0.0, 1.5, 1.0], (10_000, 1))
    page = tore.Page("p", 612.5, 792, ["Text"] * 10_000, boxes, np.full(10_000, 0.5))
    assert repr(page) == "Page('p', 612.5 x 792, 10,000 boxes, scored)"
    assert repr(tore.Page.empty("q", 10, 20)) == "Page('q', 10 x 20, 0 boxes)"
    layout = tore.LayoutSet("m", PageColumns.from_pages([page, tore.Page.empty("q", 10, 20)]), source="m.json")
    assert repr(layout) == "LayoutSet('m', 2 pages, 1 classes, from m.json)"
    assert repr(layout.pages) == "PageColumns(2 pages, 10,000 boxes)"
    assert repr(layout.pages[0]) == repr(page) and [p.id for p in layout.pages[0:2]] == ["p", "q"]


def test_polygon_rows_count_the_rows_of_the_outlines_that_paint_as_polygons():
    """A triangle spanning y 1.5-7.2 paints rows 1..7 (7 rows); an axis-aligned rectangle given as a
    polygon paints as its box and a plain box is a box: neither weighs as a polygon."""
    page = tore.Page("p", 20, 20, ["a", "b", "c"], np.array([[2, 1.5, 9, 7.2], [0, 0, 5, 5], [1, 1, 3, 3]], dtype=float),
                     polygons=[[(2, 1.5), (9, 4), (3, 7.2)], [(0, 0), (5, 0), (5, 5), (0, 5)], None])
    plain = tore.Page("q", 20, 20, ["a"], np.array([[0, 0, 4, 4]], dtype=float))
    assert PageColumns.from_pages([page, plain]).polygon_rows() == 7
    again = tore.Page("r", 20, 20, page.labels, page.bboxes, polygons=[page.polygons.outline(k) for k in range(3)])
    assert tore.LayoutSet("by hand", [page, plain, again]).polygon_rows() == 14
    assert PageColumns.from_pages([plain]).polygon_rows() == 0


def _page_fields(page: tore.Page) -> tuple:
    outlines = None if page.polygons is None else [None if (o := page.polygons.outline(k)) is None else o.tolist() for k in range(page.box_count)]
    return (page.id, page.width, page.height, page.labels, page.bboxes.tolist(), None if page.scores is None else page.scores.tolist(),
            page.image, outlines)


@pytest.mark.parametrize("positions", [[2, 3, 4], [0], [5, 6], [4, 2, 3], [1, 3, 5], [6, 5]])
def test_a_part_is_its_pages_whether_a_run_or_not(positions):
    """`part` copies slices for a run of pages (a job's batches) and gathers otherwise: either way
    each of its pages is the page it was, outlines, scores and images included."""
    rng = np.random.default_rng(3)
    pages = []
    for k in range(7):
        boxes = rng.integers(0, 3)
        corners = np.sort(rng.uniform(0, 9, (boxes, 2, 2)), axis=1)  # (box, low/high, x/y)
        bboxes = corners.reshape(-1, 4)
        outlines = [[(x1, y1), (x2, y1), (x1, y2)] if j % 2 else None for j, (x1, y1, x2, y2) in enumerate(bboxes.tolist())]
        image = tore.PageImage(Path(f"page{k}.png")) if k % 3 == 0 else None
        pages.append(tore.Page(f"p{k}", 10, 10, ["Text"] * boxes, bboxes, rng.uniform(0, 1, boxes), image,
                               polygons=outlines if any(o is not None for o in outlines) else None))
    columns = PageColumns.from_pages(pages)
    part = columns.part(np.array(positions))
    assert [_page_fields(part[k]) for k in range(len(positions))] == [_page_fields(columns[k]) for k in positions]
    assert part.box_count() == sum(columns[k].box_count for k in positions)
