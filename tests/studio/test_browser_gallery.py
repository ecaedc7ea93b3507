"""The gallery, the documents and the report downloads in a real browser (Playwright driving Debian's
Chromium, as tests/studio/test_browser.py): a clicked cell's pages as thumbnails, byte for byte the
engine's lit regions drawn by `studio.gallery`, paged, one opened in Overlays; a document chosen
narrowing the matrices and the navigator (the demo, and the real Docling documents); the three
reports downloaded, equal to what `tore evaluate` writes. Timings go with test_browser.py's to
tests/_artifacts/browser_timings.json. Skips, saying why, without Chromium or playwright.
"""

from __future__ import annotations

import html
import io
import re
import time
import urllib.parse

import pytest

from tests.helpers import DEMO, REPOSITORY, ranked_pages
from tests.studio import test_browser
from tests.studio.helpers import app_server
from tests.studio.test_browser import (
    FIGURES,
    TIMINGS,
    _click_cell,
    _drawn_page,
    _heatmap_labels,
    _select_rows,
    _shot,
    _wait_for_plot,
    _wait_for_rows,
    _wait_idle,
)
from tore_engine.plots import page_overlays

THUMBNAILS = "img[alt^='page ']"
browser, page = test_browser.browser, test_browser.page  # its fixtures: Chromium, a tab


@pytest.fixture(scope="module")
def server():
    """The app with the folder beside the repository as its data root (the shared samples)."""
    with app_server(REPOSITORY.parent) as url:
        yield url


def _wait_for_thumbnails(page, pages: list[str], timeout: float = 60_000) -> None:
    """Until the thumbnails shown are those of `pages`, in this order, every one of them loaded (a
    gallery page's thumbnails replace the previous page's one by one)."""
    page.wait_for_function(
        """([selector, alts]) => {
            const images = [...document.querySelectorAll(selector)];
            return images.length === alts.length && images.every((image, k) => image.alt === alts[k] && image.complete && image.naturalWidth > 0);
        }""",
        arg=[THUMBNAILS, [f"page {page_id}" for page_id in pages]], timeout=timeout)


def _thumbnail_bytes(page, index: int) -> bytes:
    source = page.eval_on_selector_all(THUMBNAILS, "(images, i) => images[i].src", index)
    return page.request.get(source).body()


@pytest.fixture(scope="module")
def demo_evaluated():
    from tore_engine.api import evaluate_pair
    from tore_engine.studio.evaluations import Evaluated

    pair = evaluate_pair(DEMO / "reference.json", DEMO / "model_a.json")
    return Evaluated("model A (simulated)", pair.reference, pair.prediction, pair.evaluation)


def test_a_cells_pages_as_a_gallery_lit_as_the_engine_says(server, page, demo_evaluated):
    from tore_engine.studio.gallery import thumbnail

    expected = [page_id for page_id, _, _ in ranked_pages(demo_evaluated.evaluation, "full", "Text", "Table")]
    page.goto(server)
    _wait_for_plot(page)
    _wait_idle(page)
    _click_cell(page, "Text", "Table")
    _wait_idle(page)
    start = time.monotonic()
    page.get_by_text("Show these pages as a gallery").click()
    _wait_for_thumbnails(page, expected)
    TIMINGS["demo_gallery_first_shown_s"] = round(time.monotonic() - start, 2)
    _wait_idle(page)
    assert "gallery=1" in page.url
    for index in (0, len(expected) - 1):  # the first and the last, byte for byte what the app's builder makes
        assert _thumbnail_bytes(page, index) == thumbnail(demo_evaluated, expected[index], "full", ("Text", "Table"), DEMO)
    _shot(page, "g01_gallery_text_as_table")
    page.get_by_text("Show these pages as a gallery").click()  # off, and on again: drawn from the cache
    page.wait_for_function(f"() => document.querySelectorAll(\"{THUMBNAILS}\").length === 0")
    _wait_idle(page)
    start = time.monotonic()
    page.get_by_text("Show these pages as a gallery").click()
    _wait_for_thumbnails(page, expected)
    TIMINGS["demo_gallery_shown_again_cached_s"] = round(time.monotonic() - start, 2)


def test_the_gallery_pages_through_a_cell_and_opens_a_page_in_overlays(server, page, demo_evaluated):
    from tore_engine.engine.cell_regions import page_regions

    evaluation = demo_evaluated.evaluation
    ranking = [page_id for page_id, _, _ in ranked_pages(evaluation, "reduced", "Foreground", "Foreground")]
    query = urllib.parse.urlencode({"view": "reduced", "cell": "Foreground|Foreground", "gallery": "1"})
    page.goto(f"{server}/?{query}")
    _wait_for_thumbnails(page, ranking[:12])
    _wait_idle(page)
    start = time.monotonic()
    page.locator(".st-key-gallery-next-A-reduced button").click()
    _wait_for_thumbnails(page, ranking[12:24])
    TIMINGS["demo_gallery_next_page_s"] = round(time.monotonic() - start, 2)
    _wait_idle(page)
    assert "gpage=2" in page.url
    _shot(page, "g02_gallery_second_page")
    chosen = ranking[13]
    start = time.monotonic()
    page.locator(".st-key-gallery-open-A-reduced-13 button").click()
    page.wait_for_url("**/overlays**", timeout=30_000)
    _wait_for_plot(page)
    _wait_idle(page)
    TIMINGS["demo_gallery_thumbnail_to_overlays_s"] = round(time.monotonic() - start, 2)
    url = urllib.parse.unquote(page.url)
    assert f"page={chosen}" in url and "cell=Foreground|Foreground" in url and "view=reduced" in url
    reference = demo_evaluated.reference_page(chosen)
    regions = page_regions(reference, demo_evaluated.prediction_page(chosen), evaluation.taxonomy, "reduced", "Foreground", "Foreground")
    veil = page_overlays.data_uri(page_overlays.veil_png(regions, reference.width, reference.height))  # the cell's exact pixels
    assert [(image["pane"], image["source"]) for image in _drawn_page(page)["images"] if image["kind"] == "picture"] == [(0, veil), (1, veil)]
    _shot(page, "g03_gallery_page_in_overlays")


def _choose_document(page, name: str) -> None:
    picker = page.locator(".st-key-doc input")
    picker.click()
    picker.fill(name)
    page.keyboard.press("Enter")
    _wait_idle(page)


def _to_overlays(page) -> None:
    page.get_by_role("link", name="Overlays").click()
    page.wait_for_url("**/overlays**")
    _wait_for_plot(page)
    _wait_idle(page)


def _navigator(page) -> str:
    """What the Overlays navigator says of the current page ("Page id: 1 of 6 in file order ...")."""
    return page.locator("[data-testid=stMarkdownContainer]", has_text="in file order").first.inner_text()


MATRIX_PIXELS = f"""() => {{
    const figure = ({FIGURES})('heatmap')[0], meta = figure.layout.meta, cells = [];
    for (const trace of figure._fullData.slice(1)) {{
        for (let k = 0; k < trace.x.length; k++) cells.push([meta.rows[trace.y[k]], meta.columns[trace.x[k]], trace.customdata[k][1]]);
    }}
    return cells;
}}"""


def _matrix(page) -> dict[tuple[str, str], float]:
    """The first heatmap's cells by their classes: the pixel counts its hover says, as drawn in the browser."""
    return {(row, column): pixels for row, column, pixels in page.evaluate(MATRIX_PIXELS)}


def _separately(reference, prediction, document: str, taxonomy: str):
    """A separate evaluation of the document's pages."""
    from tore_engine.core.layout import LayoutSet
    from tore_engine.run.runner import evaluate_dataset

    return evaluate_dataset(*(LayoutSet(side.name, [p for p in side.pages if p.id.startswith(f"{document}/")], side.taxonomy)
                              for side in (reference, prediction)), taxonomy=taxonomy)


def _equals_confusion(shown: dict[tuple[str, str], float], evaluation) -> bool:
    classes = evaluation.matrices.classes
    confusion = evaluation.matrices.full.confusion
    return len(shown) > len(classes) and all(value == confusion[classes.index(row), classes.index(column)] for (row, column), value in shown.items())


def test_a_document_narrows_the_matrices_and_the_navigator(server, page, demo_evaluated):
    page.goto(f"{server}/?metric=confusion")
    _wait_for_plot(page)
    _wait_idle(page)
    start = time.monotonic()
    _choose_document(page, "manual-c")
    page.wait_for_url("**doc=manual-c**")
    _wait_for_plot(page)
    TIMINGS["demo_document_chosen_to_matrix_s"] = round(time.monotonic() - start, 2)
    alone = _separately(demo_evaluated.reference, demo_evaluated.prediction, "manual-c", "single")
    assert _equals_confusion(_matrix(page), alone)
    _shot(page, "g04_document_manual_c")
    _to_overlays(page)
    assert "doc=manual-c" in page.url
    assert _navigator(page).startswith("Page manual-c/p1: 1 of 6 in file order")


def test_the_document_table_opens_on_a_click_and_a_row_chooses_its_document(server, page, demo_evaluated):
    page.goto(f"{server}/?metric=confusion")
    _wait_for_plot(page)
    _wait_idle(page)
    assert page.locator(".st-key-documents-A").count() == 0  # its section closed: not sent to the browser
    page.get_by_text("Documents: 4").click()
    page.wait_for_url("**documents_open=1**")
    page.locator(".st-key-documents-A [data-testid=stDataFrameResizable]").wait_for(timeout=30_000)
    _wait_idle(page)  # the run that drew the table over: a click during it can be lost (seen once in CI)
    _select_rows(page, "documents-A", [1])  # the demo's documents in file order: report-a, paper-b, ...
    page.wait_for_url("**doc=paper-b**", timeout=30_000)
    _wait_for_plot(page)
    _wait_idle(page)
    alone = _separately(demo_evaluated.reference, demo_evaluated.prediction, "paper-b", "single")
    assert _equals_confusion(_matrix(page), alone)
    _shot(page, "g04b_document_table")


def test_the_docling_documents_one_document_at_a_time(server, page):
    shared = REPOSITORY.parent / "shared" / "data" / "layouts" / "docling_documents"
    if not shared.exists():
        pytest.skip(f"the Docling documents are not at {shared}")
    pytest.importorskip("docling_core", reason="reading DoclingDocuments needs docling-core (pip install 'tore-studio[docling]')")
    from tore_engine.api import load_pair
    from tore_engine.run.runner import evaluate_dataset

    reference, prediction = load_pair(shared / "pre_heron", shared / "heron")
    alone = _separately(reference, prediction, "picture_classification", evaluate_dataset(reference, prediction).matrices.mode)
    query = urllib.parse.urlencode({"src": "path", "ref": "shared/data/layouts/docling_documents/pre_heron",
                                    "a": "shared/data/layouts/docling_documents/heron", "view": "trimmed", "metric": "confusion"})
    page.goto(f"{server}/?{query}")
    _wait_for_plot(page, timeout=120_000)
    _wait_idle(page)
    _choose_document(page, "picture_classification")
    page.wait_for_url("**doc=picture_classification**")
    trimmed = alone.matrices.trimmed
    _wait_for_rows(page, len(trimmed.rows))
    assert list(_heatmap_labels(page)) == [trimmed.rows, trimmed.columns]
    assert _equals_confusion(_matrix(page), alone)
    _shot(page, "g05_docling_document")
    _to_overlays(page)
    assert _navigator(page).startswith("Page picture_classification/1: 1 of 2 in file order")


def test_the_reports_download_as_tore_evaluate_writes_them(server, page, demo_evaluated, tmp_path):
    from openpyxl import load_workbook

    from tore_engine.studio.downloads import REPORTS, file_name, report_bytes
    from tore_engine.writers.html import DEFAULT_TITLE

    page.goto(server)
    _wait_for_plot(page)
    _wait_idle(page)
    content = demo_evaluated.evaluation.report_content()
    assert page.get_by_role("button", name=REPORTS["xlsx"][0]).count() == 0  # drawn once its section is opened
    page.get_by_text("Reports: the files").click()
    page.wait_for_url("**reports_open=1**")
    saved = {}
    for report, (label, _, _) in REPORTS.items():
        button = page.get_by_role("button", name=label)
        button.scroll_into_view_if_needed()
        start = time.monotonic()
        with page.expect_download(timeout=60_000) as event:
            button.click()
        saved[report] = tmp_path / event.value.suggested_filename
        event.value.save_as(saved[report])
        TIMINGS[f"demo_download_{report}_s"] = round(time.monotonic() - start, 2)
    text = saved["html"].read_text(encoding="utf-8")
    title = html.unescape(re.search("<title>(.*?)</title>", text).group(1)).removeprefix(f"{DEFAULT_TITLE}: ")
    assert title.startswith("model A")  # the model shown, by its name
    assert [path.name for path in saved.values()] == [file_name(title, report) for report in REPORTS]
    assert saved["html"].read_bytes() == report_bytes(content, "html", title)
    assert saved["cells"].read_bytes() == report_bytes(content, "cells", title)
    workbook, expected = load_workbook(saved["xlsx"]), load_workbook(io.BytesIO(report_bytes(content, "xlsx", title)))
    assert workbook.sheetnames == expected.sheetnames  # a workbook holds the time it was written: compare its cells
    assert all([[cell.value for cell in row] for row in workbook[name].iter_rows()] == [[cell.value for cell in row] for row in expected[name].iter_rows()]
               for name in workbook.sheetnames)
