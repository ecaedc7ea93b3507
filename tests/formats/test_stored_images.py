"""Page images' bytes for writers that store them (tore_engine.formats.stored_images): a PDF page
is rendered at 144 dpi, unless the page's size (the file's word) would make more pixels than a page
image may have; then an error names the file and the page, and nothing is allocated."""

from __future__ import annotations

import io
import time

import pytest
from PIL import Image

from tests.helpers import nested_forms_pdf
from tore_engine.core.errors import InputError
from tore_engine.core.layout import MAX_IMAGE_PIXELS, PageImage
from tore_engine.formats.stored_images import PDF_RENDER_DPI, page_image_bytes
from tore_engine.io import rendering

pymupdf = pytest.importorskip("pymupdf")


def _pdf(path, *sizes: tuple[float, float]):
    document = pymupdf.open()
    for width, height in sizes:
        document.new_page(width=width, height=height)
    document.save(path)
    return path


def test_a_pdf_page_is_rendered_at_144_dpi(tmp_path):
    pdf = _pdf(tmp_path / "a4.pdf", (595, 842), (300, 200))
    picture = Image.open(io.BytesIO(page_image_bytes(PageImage(pdf, 1))))
    assert picture.format == "PNG" and picture.size == (round(300 * PDF_RENDER_DPI / 72), round(200 * PDF_RENDER_DPI / 72))


def test_a_page_too_large_to_render_is_an_error_naming_the_file_and_page(tmp_path):
    pdf = _pdf(tmp_path / "poster.pdf", (595, 842), (14_400, 14_400))  # PDF's largest page: 200 x 200 inches
    with pytest.raises(InputError) as raised:
        page_image_bytes(PageImage(pdf, 1))
    assert str(raised.value) == (f"file {pdf}: page 2 of poster.pdf would be 28,800 x 28,800 pixels at 144 dpi, more than the "
                                 f"{MAX_IMAGE_PIXELS:,} a page image may have")


def test_a_pdf_page_that_draws_forever_is_an_error_in_time(tmp_path, monkeypatch):
    """Drawn in a drawing process (tore_engine.io.rendering) that is killed at its time limit:
    the Parquet writer storing image bytes (`formats.parquet.write(..., image_bytes=True)`) never
    hangs on a crafted PDF."""
    monkeypatch.setattr(rendering, "_POOL", rendering.RenderPool(workers=1, seconds=3))
    bomb = tmp_path / "bomb.pdf"
    bomb.write_bytes(nested_forms_pdf())
    start = time.monotonic()
    with pytest.raises(InputError) as raised:
        page_image_bytes(PageImage(bomb, 0))
    assert time.monotonic() - start < 15
    assert str(raised.value) in (f"file {bomb}: bomb.pdf could not be drawn in time (within 3 s)",
                                 f"file {bomb}: bomb.pdf could not be drawn within memory (1,024 MB)")


def test_an_unreadable_pdf_is_an_error_naming_it(tmp_path):
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.7 but nothing else")
    with pytest.raises(InputError, match=rf"^file {broken}: broken.pdf is not a readable PDF$"):
        page_image_bytes(PageImage(broken, 0))
