"""Page images' bytes for writers that store them (tore_engine.formats.stored_images): a PDF page
is rendered at 144 dpi, unless the page's size (the file's word) would make more pixels than a page
image may have; then an error names the file and the page, and nothing is allocated."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from tore_engine.core.errors import InputError
from tore_engine.core.layout import MAX_IMAGE_PIXELS, PageImage
from tore_engine.formats.stored_images import PDF_RENDER_DPI, page_image_bytes

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
    assert str(raised.value) == (f"file {pdf}: page 2 of this PDF would be 28,800 x 28,800 pixels at 144 dpi, more than the "
                                 f"{MAX_IMAGE_PIXELS:,} a page image may have")
