"""Page rendering (tore_engine.studio.rendering), without Streamlit: PDF pages and image files drawn from
bytes, placeholders, and images beyond the pixel limit never decoded."""

from __future__ import annotations

import io

import pymupdf
import pytest
from PIL import Image

from tore_engine.studio import rendering


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
