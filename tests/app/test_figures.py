"""The figure builders and page rendering, without Streamlit: hover data, trimmed axes, colour
scales, palette consistency across panes, agreement colours, page images and placeholders."""

from __future__ import annotations

import io
import math

import numpy as np
import pymupdf
import pytest
from PIL import Image

from tore_engine.agreement import DIFFERENT_CLASS, ONLY_PREDICTION, ONLY_REFERENCE, SAME_CLASS, agreement_raster
from tore_engine.dataset import evaluate_dataset
from tore_engine.layout import Page
from tore_engine.formats.native import from_document as from_native
from tore_engine.matrices import MatrixSet
from tore_engine.studio import figures, page_figures, rendering
from tore_engine.studio.palette import AGREEMENT_STYLES, FIXED, HASHED, class_color


@pytest.fixture(scope="module")
def evaluation():
    """Two classes of four, one page 10 x 10: Text [0,0,4,2] (8 px) predicted as Title on its right
    half; Title [0,5,2,6] (2 px) predicted right; nothing else."""
    def layout(name, boxes):
        document = {"name": name, "taxonomy": ["Caption", "Table", "Text", "Title"],
                    "pages": [{"id": "p", "width": 10, "height": 10, "boxes": [{"label": l, "bbox": b} for l, b in boxes]}]}
        return from_native(document, name)

    reference = layout("gt", [("Text", [0, 0, 4, 2]), ("Title", [0, 5, 2, 6])])
    prediction = layout("model", [("Text", [0, 0, 2, 2]), ("Title", [2, 0, 4, 2]), ("Title", [0, 5, 2, 6])])
    return evaluate_dataset(reference, prediction)


def test_heatmap_hover_carries_value_pixels_row_and_column_shares(evaluation):
    matrices = evaluation.matrices.full
    fig = figures.matrix_heatmap(matrices, "recall")
    overlay = fig.data[1]
    k = len(matrices.rows)
    text_index = matrices.rows.index("Text") * k + matrices.columns.index("Title")
    assert overlay.text[text_index] == "Text<br>prediction: Title"
    value, pixels, row_share, column_share = overlay.customdata[text_index]
    assert (value, pixels, row_share, column_share) == (0.5, 4.0, 0.5, pytest.approx(4 / 6))
    assert (overlay.x[text_index], overlay.y[text_index]) == (matrices.columns.index("Title"), matrices.rows.index("Text"))
    assert "pixels" in overlay.hovertemplate and "column % (precision)" in overlay.hovertemplate
    assert fig.data[0].hoverinfo == "skip"  # the heatmap paints; the overlay hovers and clicks
    assert fig.layout.clickmode == "event+select"


def test_trimmed_heatmap_has_only_the_kept_rows_and_columns(evaluation):
    trimmed = evaluation.matrices.trimmed
    assert trimmed.rows == ["Background", "Text", "Title"]
    fig = figures.matrix_heatmap(trimmed, "confusion")
    assert list(fig.layout.yaxis.ticktext) == trimmed.rows
    assert list(fig.layout.xaxis.ticktext) == trimmed.columns
    assert len(fig.data[1].x) == len(trimmed.rows) * len(trimmed.columns)
    assert figures.clicked_cell({"selection": {"points": [{"x": 2, "y": 1}]}}, trimmed.rows, trimmed.columns) == ("Text", "Title")
    assert figures.clicked_cell({"selection": {"points": []}}, trimmed.rows, trimmed.columns) is None


def test_hide_diagonal_blanks_class_with_itself_and_outline_frames_it(evaluation):
    matrices = evaluation.matrices.trimmed
    hidden = np.array(figures.matrix_heatmap(matrices, "confusion", hide_diagonal=True).data[0].z, dtype=float)
    diagonal = matrices.same_class()
    assert np.isnan(hidden[diagonal]).all()
    assert np.array_equal(hidden[~diagonal], matrices.confusion[~diagonal])
    outlined = figures.matrix_heatmap(matrices, "confusion", outline_diagonal=True)
    assert outlined.layout.shapes[0].path.count("M") == diagonal.sum() == 3


def test_colour_scales():
    values = np.array([[0.0, 9.0], [99.0, 999.0]])
    log = figures.colour_scale(values, "log", is_ratio=False)
    assert np.allclose(log.z, np.log10(1 + values))
    assert log.ticktext == ["0", "1", "10", "100"] and log.tickvals[2] == pytest.approx(math.log10(11))
    power = figures.colour_scale(values, "power", is_ratio=False)
    assert np.allclose(power.z, values**0.2)
    assert figures.colour_scale(values, "linear", is_ratio=False).tickvals is None
    ratios = figures.colour_scale(np.array([[0.001, 0.5]]), "log", is_ratio=True)
    assert ratios.z[0, 0] == pytest.approx(math.log10(2))


def test_a_hundred_classes_stay_readable():
    classes = [f"class {k}" for k in range(100)]
    confusion = np.random.default_rng(0).random((100, 100))
    fig = figures.matrix_heatmap(MatrixSet(classes, classes, confusion, confusion, confusion), "confusion")
    assert fig.data[0].texttemplate is None  # no cell text beyond 30 classes
    assert fig.layout.xaxis.showticklabels is False  # no tick labels beyond 60
    assert fig.layout.height < 1000


def test_difference_heatmap_is_centred_on_zero():
    difference = np.array([[0.1, -0.3], [0.0, 0.2]])
    fig = figures.difference_heatmap(MatrixSet(["a", "b"], ["a", "b"], difference, difference, difference), "recall")
    assert (fig.data[0].zmid, fig.data[0].zmin, fig.data[0].zmax) == (0, -0.3, 0.3)
    assert fig.data[1].customdata[1][0] == pytest.approx(-0.3)


def test_per_class_bars_show_every_class(evaluation):
    per_class = evaluation.matrices.per_class
    fig = figures.per_class_bars(per_class)
    assert [bar.name for bar in fig.data] == ["recall", "precision", "f1"]
    assert list(fig.data[0].x) == ["Caption", "Table", "Text", "Title"]
    assert fig.data[0].y[2] == per_class["Text"]["recall"] == 0.5


def _page(labels_boxes, scores=None):
    labels = [label for label, _ in labels_boxes]
    return Page("p", 10, 10, labels, np.array([box for _, box in labels_boxes], dtype=float).reshape(-1, 4),
                None if scores is None else np.array(scores, dtype=float))


def test_palette_is_keyed_by_class_name_across_panes():
    assert class_color("Table") == class_color("table") == class_color(" TABLE ")
    assert class_color("Some new class") == class_color("some new class")
    assert len({class_color(name) for name in ["Caption", "Footnote", "Formula", "List-item", "Page-footer", "Page-header",
                                                 "Picture", "Section-header", "Table", "Text", "Title"]}) == 11
    reference = _page([("Text", [0, 0, 4, 4]), ("Title", [0, 5, 4, 6])])
    prediction = _page([("Title", [0, 0, 4, 4]), ("Text", [5, 5, 9, 9])], scores=[0.9, float("nan")])
    fig = page_figures.page_overlay([page_figures.Pane("reference", reference), page_figures.Pane("model", prediction)], 10, 10, None)
    outlines = [trace for trace in fig.data if trace.mode == "lines"]
    by_class = {}
    for trace in outlines:
        by_class.setdefault(trace.name, []).append(trace)
    for name, traces in by_class.items():
        assert {trace.line.color for trace in traces} == {class_color(name)}
        assert {trace.legendgroup for trace in traces} == {name}
        assert sum(bool(trace.showlegend) for trace in traces) == 1  # one legend entry toggles both panes
    hovers = [text for trace in fig.data if trace.xaxis == "x2" for text in trace.text if text]
    assert any("score 0.900" in text and "[0.0, 0.0, 4.0, 4.0]" in text for text in hovers)
    assert any("no score" in text for text in hovers)
    assert fig.layout.xaxis2.matches == "x" and fig.layout.yaxis2.matches == "y"  # synchronised zoom


def test_agreement_pane_paints_each_category_in_its_colour_and_hatch():
    reference = _page([("Text", [0, 0, 4, 4]), ("Table", [0, 6, 2, 8])])
    prediction = _page([("Text", [2, 2, 6, 6]), ("Title", [0, 6, 2, 8])])
    raster = agreement_raster(reference, prediction, compare_classes=True)
    picture = np.array(Image.open(io.BytesIO(page_figures.agreement_png(raster))))
    for (row, column), code in {(0, 0): ONLY_REFERENCE, (5, 5): ONLY_PREDICTION, (3, 3): SAME_CLASS, (7, 1): DIFFERENT_CLASS}.items():
        colour, _ = AGREEMENT_STYLES[code]
        assert picture[row, column, :3].tolist() == [int(colour[k : k + 2], 16) for k in (1, 3, 5)]
    assert picture[0, 0, 3] == page_figures.AGREEMENT_ALPHA  # on a "\\" hatch line ((x + y) % 9 < 3)
    assert picture[0, 3, 3] == page_figures.AGREEMENT_TINT_ALPHA  # between two lines
    assert picture[9, 9, 3] == 0  # transparent where neither side has a box
    fig = page_figures.page_overlay([page_figures.Pane("reference", reference)], 10, 10, "data:image/png;base64,", agreement=raster)
    assert [a.text for a in fig.layout.annotations] == ["reference", "agreement"]
    assert fig.layout.images[-1].xref == "x2" and fig.layout.images[-1].layer == "above"
    legend = {trace.name: trace for trace in fig.data if trace.legendgroup and trace.legendgroup.startswith("agreement")}
    same = legend["in both, same class (4.0% of the page)"]
    assert same.type == "bar" and same.marker.pattern.fgcolor == AGREEMENT_STYLES[SAME_CLASS][0]
    assert legend["only in the reference (12.0% of the page)"].marker.pattern.shape == "\\"


def test_agreement_colours_are_colour_blind_safe_and_no_class_colour():
    okabe_ito = {"#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000"}
    colours = [colour for colour, _ in AGREEMENT_STYLES.values()]
    assert set(colours) <= okabe_ito and len(set(colours)) == len(colours)
    class_colours = {colour.upper() for colour in [*FIXED.values(), *HASHED]}
    assert not class_colours & set(colours)
    assert len({hatch for _, hatch in AGREEMENT_STYLES.values()}) == len(AGREEMENT_STYLES)  # told apart without colour too


def test_pdf_pages_render_and_broken_pages_get_a_placeholder(tmp_path):
    document = pymupdf.open()
    page = document.new_page(width=200, height=100)
    page.draw_rect(pymupdf.Rect(0, 0, 100, 100), color=(0, 0, 0), fill=(0, 0, 0))
    pdf = document.tobytes()
    document.close()
    rendered = rendering.render_page(pdf, "doc.pdf", 0, max_side=400)
    assert (rendered.width, rendered.height) == (200, 100)
    picture = Image.open(io.BytesIO(rendered.jpeg))
    assert picture.size == (400, 200)
    assert picture.getpixel((50, 100))[0] < 30 and picture.getpixel((350, 100))[0] > 225  # black left half
    with pytest.raises(rendering.PageImageError, match="doc.pdf has 1 pages, no page 3"):
        rendering.render_page(pdf, "doc.pdf", 2)
    with pytest.raises(rendering.PageImageError, match="^broken.pdf is not a readable PDF$"):
        rendering.render_page(b"not a pdf", "broken.pdf", 0)
    placeholder = Image.open(io.BytesIO(rendering.placeholder(200, 100, "no page image")))
    assert placeholder.size == (600, 300)
    assert rendering.data_uri(rendering.placeholder(10, 10, "x")).startswith("data:image/png;base64,")


def _png(size: tuple[int, int], colour: str = "red") -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, format="PNG")
    return buffer.getvalue()


def test_image_files_load_through_pillow():
    rendered = rendering.render_page(_png((3000, 1500)), "page.png")
    assert (rendered.width, rendered.height) == (3000, 1500)
    assert Image.open(io.BytesIO(rendered.jpeg)).size == (rendering.MAX_SIDE, rendering.MAX_SIDE // 2)
    assert rendering.data_uri(rendered.jpeg).startswith("data:image/jpeg;base64,")
    with pytest.raises(rendering.PageImageError, match="^page.png is not a readable image$"):
        rendering.render_page(b"\x89PNG but not really", "page.png")


def test_images_beyond_the_pixel_limit_are_not_decoded(monkeypatch):
    monkeypatch.setattr(rendering, "MAX_PIXELS", 99)
    with pytest.raises(rendering.PageImageError, match="^page.png has 10 x 10 pixels, more than the 99 drawn$"):
        rendering.render_page(_png((10, 10)), "page.png")
