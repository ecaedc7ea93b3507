"""The gallery of a cell's pages (tore_engine.studio.gallery) through AppTest on the embedded demo:
the thumbnails in the engine's ranking, twelve a page with Previous / Next (and the page in the
URL), each opening in Overlays with the cell; and a thumbnail lit where the engine's regions are."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

from tests.helpers import DEMO, ranked_pages
from tests.studio.helpers import _app, _no_exception
from tore_engine.api import evaluate_pair
from tore_engine.engine.cell_regions import page_regions
from tore_engine.plots.thumbnails import lit_share, thumbnail_size
from tore_engine.studio import gallery
from tore_engine.studio.evaluations import Evaluated

REDUCED = {"view": "reduced", "cell": "Foreground|Foreground", "gallery": "1"}


def _shown(at) -> list[str]:
    """The pages of the gallery's thumbnails, in order (their images' alternative text)."""
    return [image.proto.imgs[0].alt.removeprefix("page ") for image in at.get("image")]


def test_the_gallery_shows_the_cells_pages_in_the_engines_order(demo_evaluation):
    at = _app(cell="Text|Table", gallery="1")
    _no_exception(at)
    expected = ranked_pages(demo_evaluation, "full", "Text", "Table")
    assert 1 < len(expected) <= gallery.PER_PAGE
    assert _shown(at) == [page for page, _, _ in expected]
    captions = [caption.value for caption in at.caption if " of the cell)" in caption.value and caption.value.startswith("**")]
    page, pixels, share = expected[0]
    assert captions[0] == f"**1.** {page}: {pixels:,.0f} px ({share:.1%} of the cell)"
    assert at.query_params["gallery"] == "1"


def test_the_gallery_is_off_until_asked(demo_evaluation):
    at = _app(cell="Text|Table")
    _no_exception(at)
    assert _shown(at) == [] and not at.toggle(key=gallery.GALLERY).value
    at.toggle(key=gallery.GALLERY).set_value(True).run()
    assert len(_shown(at)) == len(ranked_pages(demo_evaluation, "full", "Text", "Table"))


def test_twelve_a_page_with_previous_and_next(demo_evaluation):
    ranking = [page for page, _, _ in ranked_pages(demo_evaluation, "reduced", "Foreground", "Foreground")]
    assert len(ranking) == 26  # every page: three gallery pages
    at = _app(**REDUCED)
    _no_exception(at)
    assert _shown(at) == ranking[:12]
    assert at.button(key="gallery-previous-A-reduced").disabled
    at.button(key="gallery-next-A-reduced").click().run()
    assert _shown(at) == ranking[12:24] and at.query_params["gpage"] == "2"
    at.button(key="gallery-next-A-reduced").click().run()
    assert _shown(at) == ranking[24:] and at.button(key="gallery-next-A-reduced").disabled
    at.button(key="gallery-previous-A-reduced").click().run()
    assert _shown(at) == ranking[12:24]
    at.selectbox(key="cell_pred").set_value("Background").run()  # another cell starts at its first page
    assert _shown(at) == [page for page, _, _ in ranked_pages(demo_evaluation, "reduced", "Foreground", "Background")][:12]
    assert "gpage" not in at.query_params


def test_a_link_opens_its_gallery_page_and_a_page_that_does_not_exist_is_ignored(demo_evaluation):
    ranking = [page for page, _, _ in ranked_pages(demo_evaluation, "reduced", "Foreground", "Foreground")]
    assert _shown(_app(**REDUCED, gpage="3")) == ranking[24:]
    at = _app(**REDUCED, gpage="4")
    assert _shown(at) == ranking[:12]
    assert "`gpage` (expected a whole number from 1 to 3)" in at.warning[0].value


def test_a_thumbnail_opens_its_page_in_overlays_with_the_cell(demo_evaluation):
    at = _app(**REDUCED, gpage="2")
    page = _shown(at)[1]
    at.button(key="gallery-open-A-reduced-13").click().run()
    _no_exception(at)
    assert at.query_params["page"] == page
    assert any(markdown.value.startswith(f"Page **{page}**") for markdown in at.markdown)  # the navigator shows it
    assert at.query_params["cell"] == "Foreground|Foreground" and at.query_params["view"] == "reduced"
    assert any(metric.label.startswith("Foreground → Foreground on this page") for metric in at.metric)


def test_a_thumbnail_is_lit_where_the_cells_pixels_are(demo):
    reference, prediction, evaluation = demo
    pair = evaluate_pair(reference, prediction)
    evaluated = Evaluated("model A", pair.reference, pair.prediction, pair.evaluation)
    page_id = ranked_pages(evaluation, "full", "Text", "Table")[0][0]
    page = evaluated.reference_page(page_id)
    picture = np.asarray(Image.open(io.BytesIO(gallery.thumbnail(evaluated, page_id, "full", ("Text", "Table"), DEMO))).convert("L"), float)
    size = thumbnail_size(page.width, page.height)
    assert picture.shape == (size[1], size[0])
    regions = page_regions(page, evaluated.prediction_page(page_id), evaluation.taxonomy, "full", "Text", "Table")
    share = lit_share(regions, page.width, page.height, size)
    assert picture[share == 1].mean() > 1.5 * picture[share == 0].mean()  # the page shows through where the cell is, veiled elsewhere
