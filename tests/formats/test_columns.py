"""`ColumnsBuilder`: pages added one by one and pages handed over in columns (the compiled parser's
chunks), in any order, build the columns of those pages in that order."""

from __future__ import annotations

import numpy as np

from tore_engine.core.layout import Page, PageColumns
from tore_engine.formats.columns import ColumnsBuilder
from tore_engine.formats.page_parser import ParsedPages


def _page(k: int, rng: np.random.Generator) -> Page:
    boxes = int(rng.integers(0, 3))
    corners = np.sort(rng.uniform(0, 9, (boxes, 2, 2)), axis=1)  # (box, low/high, x/y)
    bboxes = corners.reshape(-1, 4)
    outlines = [[(x1, y1), (x2, y1), (x1, y2)] if (j + k) % 2 else None for j, (x1, y1, x2, y2) in enumerate(bboxes.tolist())]
    scores = rng.uniform(0, 1, boxes) if k % 3 else None
    return Page(f"p{k}", 10 + k, 20, [f"c{(j + k) % 3}" for j in range(boxes)], bboxes, scores,
                polygons=outlines if any(o is not None for o in outlines) else None)


def _parsed(pages: list[Page]) -> ParsedPages:
    """The pages as the compiled parser gives them."""
    labels = sorted({label for page in pages for label in page.labels}, reverse=True)
    boxes = [(page, j) for page in pages for j in range(page.box_count)]
    scored = any(page.scores is not None for page in pages)
    outline = [None if page.polygons is None else page.polygons.outline(j) for page, j in boxes]
    return ParsedPages(np.zeros((len(pages), 2), np.int64), [page.id for page in pages],
                       np.array([(page.width, page.height) for page in pages], float).reshape(-1, 2),
                       np.array([page.box_count for page in pages], np.int64),
                       np.array([page.bboxes[j] for page, j in boxes], float).reshape(-1, 4),
                       np.array([labels.index(page.labels[j]) for page, j in boxes], np.int64), labels,
                       np.array([np.nan if page.scores is None else page.scores[j] for page, j in boxes], float) if scored else None,
                       [(None, None, None)] * len(pages),
                       np.array([0 if points is None else len(points) for points in outline], np.int64),
                       np.concatenate([np.zeros(0)] + [points.reshape(-1) for points in outline if points is not None]))


def _fields(columns: PageColumns) -> list:
    return [[(page.id, page.width, page.height, page.labels, page.bboxes.tolist(),
              None if page.scores is None else np.nan_to_num(page.scores, nan=-1.0).tolist(),
              None if page.polygons is None else [None if (o := page.polygons.outline(j)) is None else o.tolist() for j in range(page.box_count)])
             for page in (columns[k] for k in range(len(columns.ids)))]]


def test_added_and_extended_pages_build_in_order():
    rng = np.random.default_rng(11)
    pages = [_page(k, rng) for k in range(9)]
    builder = ColumnsBuilder()
    for page in pages[:2]:
        builder.add(page.id, page.width, page.height, page.labels, page.bboxes.reshape(-1).tolist(),
                    None if page.scores is None else page.scores.tolist(),
                    polygons=None if page.polygons is None else [page.polygons.outline(j) for j in range(page.box_count)])
    builder.extend(_parsed(pages[2:5]))
    builder.extend(_parsed(pages[5:6]))
    for page in pages[6:]:
        builder.add(page.id, page.width, page.height, page.labels, page.bboxes.reshape(-1).tolist(),
                    None if page.scores is None else page.scores.tolist(),
                    polygons=None if page.polygons is None else [page.polygons.outline(j) for j in range(page.box_count)])
    assert _fields(builder.build()) == _fields(PageColumns.from_pages(pages))


def test_nothing_added_builds_no_pages():
    columns = ColumnsBuilder().build()
    assert columns.ids == [] and columns.bboxes.shape == (0, 4) and columns.offsets.tolist() == [0] and columns.polygons is None
