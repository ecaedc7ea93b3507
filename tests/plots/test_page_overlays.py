"""The page charts (tore_engine.plots.page_overlays over plots.page_chart), without Streamlit: valid
Plotly, one colour a class in every pane, the hover's numbers, panes zooming together, the veil
exactly on the cell's pixels, the agreement pane's colours and hatches, names drawn as text, and a
page of more boxes than a screen shows capped with a note."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from tests.helpers import page_legend, page_rows, plotly_texts, valid_plotly
from tore_engine.core.layout import Page
from tore_engine.core.taxonomy import BACKGROUND, Taxonomy
from tore_engine.engine.agreement import DIFFERENT_CLASS, ONLY_PREDICTION, ONLY_REFERENCE, SAME_CLASS, agreement_raster
from tore_engine.engine.cell_regions import page_regions
from tore_engine.plots import page_chart, page_overlays
from tore_engine.plots.page_overlays import Highlight, Pane
from tore_engine.plots.palette import AGREEMENT_STYLES, class_color


def _page(labels_boxes, scores=None, size=10):
    labels = [label for label, _ in labels_boxes]
    return Page("p", size, size, labels, np.array([box for _, box in labels_boxes], dtype=float).reshape(-1, 4),
                None if scores is None else np.array(scores, dtype=float))


def _taxonomy(*classes: str) -> Taxonomy:
    index = {name: k + 1 for k, name in enumerate(classes)}
    return Taxonomy("single", [BACKGROUND, *classes], index, index)


def _rows(spec: dict, kind: str) -> list[dict]:
    return page_rows(spec, kind)


def _png(uri: str) -> np.ndarray:
    return np.array(Image.open(io.BytesIO(page_overlays.base64.b64decode(uri.split(",", 1)[1]))))


def test_one_colour_a_class_in_every_pane_its_hover_and_one_zoom():
    reference = _page([("Text", [0, 0, 4, 4]), ("Title", [0, 5, 4, 6])])
    prediction = _page([("Title", [0, 0, 4, 4]), ("Text", [5, 5, 9, 9])], scores=[0.9, float("nan")])
    spec = valid_plotly(page_overlays.page_overlay([Pane("reference", reference), Pane("model", prediction)], 10, 10, "data:image/png;base64,"))
    boxes = _rows(spec, "box")
    assert sorted((row["pane"], row["group"]) for row in boxes) == [(0, "Text"), (0, "Title"), (1, "Text"), (1, "Title")]
    assert page_legend(spec) == {"Text": class_color("Text"), "Title": class_color("Title")}  # one entry a class, for every pane
    assert all(row["outline"] == class_color(row["group"]) for row in boxes)
    scored = next(row for row in boxes if row["pane"] == 1 and row["group"] == "Title")
    assert scored["tip"] == {"title": "Title", "box": "0", "score": "0.900", "x1, y1, x2, y2": "0.0, 0.0, 4.0, 4.0"}
    assert (scored["x"], scored["y"], scored["x2"], scored["y2"]) == (0, 0, 4, 4)
    assert next(row for row in boxes if row["pane"] == 1 and row["group"] == "Text")["tip"]["score"] == "no score"
    layout = spec["layout"]
    assert layout["meta"]["panes"] == ["reference", "model"]
    assert layout["xaxis2"]["matches"] == "x" and layout["yaxis2"]["matches"] == "y"  # one zoom moves both panes
    assert layout["xaxis"]["range"] == [0, 10] and layout["yaxis"]["range"] == [10, 0]  # the page's frame, y down
    assert layout["xaxis"]["domain"][1] < layout["xaxis2"]["domain"][0]  # side by side
    pages = [image for image in layout["images"] if image["name"] == "page"]
    assert [(image["xref"], image["source"]) for image in pages] == [("x", "data:image/png;base64,"), ("x2", "data:image/png;base64,")]
    assert layout["legend"]["itemclick"] == "toggleothers"  # a click on a class shows it alone


def test_a_small_box_inside_a_large_one_is_drawn_after_it():
    page = _page([("Text", [1, 1, 2, 2]), ("Table", [0, 0, 9, 9])])
    spec = page_overlays.page_overlay([Pane("reference", page)], 10, 10, None)
    assert [row["group"] for row in _rows(spec, "box")] == ["Table", "Text"]  # so the small box keeps its hover


def test_the_veil_clears_exactly_the_cells_pixels_by_their_share():
    reference = _page([("Text", [0, 0, 6, 4]), ("Table", [2, 0, 6, 4])])  # [2, 6) x [0, 4): {Text, Table}
    prediction = _page([("Table", [0, 0, 4, 4])])
    taxonomy = _taxonomy("Table", "Text")
    regions = page_regions(reference, prediction, taxonomy, "full", "Text", "Table")
    veil = _png(page_overlays.data_uri(page_overlays.veil_png(regions, 10, 10)))
    lit = veil[..., 3] < page_overlays.VEIL_ALPHA
    expected = np.zeros((10, 10), dtype=bool)
    for x0, x1, y0, y1 in zip(regions.x0, regions.x1, regions.y0, regions.y1):
        expected[y0:y1, x0:x1] = True
    assert lit.tolist() == expected.tolist() and expected.any()
    given = (1 - veil[..., 3] / page_overlays.VEIL_ALPHA).sum()  # each pixel's share, to the veil's 1/140
    assert given == pytest.approx(float(regions.contribution()), abs=expected.sum() * 0.5 / page_overlays.VEIL_ALPHA)
    spec = page_overlays.page_overlay([Pane("reference", reference, Highlight("Text → Table", regions, regions.reference_boxes.tolist()))],
                                      10, 10, None)
    assert [row["url"] for row in _rows(spec, "picture")] == [page_overlays.data_uri(page_overlays.veil_png(regions, 10, 10))]
    outlined = [row for row in _rows(spec, "box") if row["group"] == "boxes behind Text → Table"]
    assert sorted(int(row["tip"]["box"]) for row in outlined) == sorted(regions.reference_boxes.tolist()) and outlined[0]["line"] == 3
    assert outlined[0]["fill"] is None  # outlined, not filled


def test_a_huge_pages_veil_is_drawn_smaller():
    reference = _page([("Text", [0, 0, 30_000, 100])], size=40_000)
    regions = page_regions(reference, _page([], size=40_000), _taxonomy("Text"), "full", "Text", "Background")
    veil = _png(page_overlays.data_uri(page_overlays.veil_png(regions, 40_000, 40_000)))
    assert veil.shape[:2] == (page_overlays.MAX_VEIL_SIDE, page_overlays.MAX_VEIL_SIDE)
    assert veil[0, 0, 3] == 0 and veil[-1, -1, 3] == page_overlays.VEIL_ALPHA


def test_agreement_pane_paints_each_category_in_its_colour_and_hatch():
    reference = _page([("Text", [0, 0, 4, 4]), ("Table", [0, 6, 2, 8])])
    prediction = _page([("Text", [2, 2, 6, 6]), ("Title", [0, 6, 2, 8])])
    raster = agreement_raster(reference, prediction, compare_classes=True)
    picture = np.array(Image.open(io.BytesIO(page_overlays.agreement_png(raster))))
    for (row, column), code in {(0, 0): ONLY_REFERENCE, (5, 5): ONLY_PREDICTION, (3, 3): SAME_CLASS, (7, 1): DIFFERENT_CLASS}.items():
        colour, _ = AGREEMENT_STYLES[code]
        assert picture[row, column, :3].tolist() == [int(colour[k : k + 2], 16) for k in (1, 3, 5)]
    assert picture[0, 0, 3] == page_overlays.AGREEMENT_ALPHA  # on a "\\" hatch line ((x + y) % 9 < 3)
    assert picture[0, 3, 3] == page_overlays.AGREEMENT_TINT_ALPHA  # between two lines
    assert picture[9, 9, 3] == 0  # transparent where neither side has a box
    spec = valid_plotly(page_overlays.page_overlay([Pane("reference", reference)], 10, 10, "data:image/png;base64,", agreement=raster))
    assert spec["layout"]["meta"]["panes"] == ["reference", "agreement"]
    assert [(row["pane"], row["url"]) for row in _rows(spec, "picture")] == [(1, page_overlays.data_uri(page_overlays.agreement_png(raster)))]
    legend = page_legend(spec)
    assert legend["in both, same class (4.0% of the page, solid)"] == AGREEMENT_STYLES[SAME_CLASS][0]
    assert legend["only in the reference (12.0% of the page, hatched \\)"] == AGREEMENT_STYLES[ONLY_REFERENCE][0]


def test_names_and_titles_are_drawn_as_text():
    hostile = "<img src=x onerror=alert(1)><b>bold</b>"
    page = _page([(hostile, [0, 0, 4, 4])])
    spec = valid_plotly(page_overlays.page_overlay([Pane(hostile, page)], 10, 10, None))
    texts = plotly_texts(spec)
    assert texts and not any("<img" in text or "<b>bold" in text for text in texts)  # escaped wherever Plotly reads markup
    assert _rows(spec, "box")[0]["tip"]["title"] == hostile and spec["layout"]["meta"]["panes"] == [hostile]
    assert set(page_legend(spec)) == {hostile}


def test_a_page_of_more_boxes_than_a_screen_shows_draws_the_largest_with_a_note():
    count = page_chart.MAX_BOXES + 1_000
    sides = np.arange(1, count + 1, dtype=float) / count * 9  # box k is the k-th smallest
    page = Page("p", 10, 10, ["Text"] * count, np.stack([np.zeros(count), np.zeros(count), sides, sides], axis=1))
    spec = page_overlays.page_overlay([Pane("reference", page), Pane("model", page)], 10, 10, None)
    boxes = _rows(spec, "box")
    assert len(boxes) == 2 * page_chart.MAX_BOXES
    assert min(row["x2"] for row in boxes) == pytest.approx(sides[1_000])  # the 1,000 smallest left out
    assert spec["layout"]["meta"]["note"] == f"{count:,} boxes on a pane: the {page_chart.MAX_BOXES:,} largest of each pane drawn"
    assert any("largest of each pane drawn" in note["text"] for note in spec["layout"]["annotations"])


def test_panes_keep_the_pages_proportions_within_the_row():
    assert page_chart.pane_size(612, 792, 2, 770) == (362, 468)
    assert page_chart.pane_size(100, 10_000, 1, 740) == (50, page_chart.MAX_PANE_HEIGHT)  # a very tall page: at most 1,000 px high


def test_a_polygon_is_drawn_as_its_outline():
    outline = [(1.0, 1.0), (8.0, 2.0), (5.0, 9.0)]
    page = Page("p", 10, 10, ["Text", "Table"], np.array([[1, 1, 8, 9], [0, 0, 2, 2]], dtype=float), polygons=[outline, None])
    rows = _rows(page_overlays.page_overlay([Pane("reference", page)], 10, 10, None), "box")
    drawn = {row["group"]: row["points"] for row in rows}
    assert drawn == {"Text": outline, "Table": [(0, 0), (2, 0), (2, 2), (0, 2)]}


def test_a_panes_page_image_and_its_pictures_are_each_drawn():
    """plotly.js draws one image per (xref, x, sizex, yref, y, sizey) of a subplot: the veil at the
    page image's very place was dropped in Chromium (one image a pane instead of two)."""
    page = _page([("Text", [0, 0, 6, 4])])
    regions = page_regions(page, _page([("Table", [0, 0, 4, 4])]), _taxonomy("Table", "Text"), "full", "Text", "Table")
    highlight = Highlight("Text → Table", regions, [0])
    spec = page_overlays.page_overlay([Pane("reference", page, highlight), Pane("model", page, highlight)], 10, 10, "data:image/png;base64,")
    images = spec.layout.images
    keys = [(image.xref, image.x, image.sizex, image.yref, image.y, image.sizey) for image in images]
    assert len(images) == 4 and len(set(keys)) == 4
    assert all(image.sizex == pytest.approx(10, rel=1e-8) for image in images)  # the same page frame, to a billionth
