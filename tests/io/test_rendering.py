"""Page rendering (tore_engine.io.rendering): PDF pages and image files drawn from bytes in drawing
processes, placeholders, images beyond the pixel limit never decoded; a page that would draw for
hours or take gigabytes ends as a placeholder within the time and memory limits, while other pages
draw (the app server answering meanwhile: tests/studio/test_page_images.py)."""

from __future__ import annotations

import io
import struct
import subprocess
import sys
import threading
import time
import zlib

import pymupdf
import pytest
from PIL import Image

from tests.helpers import DEMO, nested_forms_pdf
from tore_engine.io import rendering
from tore_engine.plots import page_overlays


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
    assert page_overlays.data_uri(rendering.placeholder(10, 10, "x")).startswith("data:image/png;base64,")


def _png(size: tuple[int, int], colour: str = "red") -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, format="PNG")
    return buffer.getvalue()


def test_image_files_load_through_pillow():
    rendered = rendering.render_page(_png((3000, 1500)), "page.png")
    assert (rendered.width, rendered.height) == (3000, 1500)
    assert Image.open(io.BytesIO(rendered.jpeg)).size == (rendering.MAX_SIDE, rendering.MAX_SIDE // 2)
    assert page_overlays.data_uri(rendered.jpeg).startswith("data:image/jpeg;base64,")
    with pytest.raises(rendering.PageImageError, match="^page.png is not a readable image$"):
        rendering.render_page(b"\x89PNG but not really", "page.png")


def test_images_beyond_the_pixel_limit_are_not_decoded(monkeypatch):
    monkeypatch.setattr(rendering, "MAX_PIXELS", 99)
    with pytest.raises(rendering.PageImageError, match="^page.png has 10 x 10 pixels, more than the 99 drawn$"):
        rendering.render_page(_png((10, 10)), "page.png")


# --- hostile pages ------------------------------------------------------------------------------


def test_a_page_that_draws_forever_is_a_placeholder_in_time_while_other_pages_draw():
    pool = rendering.RenderPool(workers=2, seconds=5)
    page = (DEMO / "report-a.pdf").read_bytes()
    outcome = {}

    def draw_forever_page() -> None:
        start = time.monotonic()
        with pytest.raises(rendering.PageImageError) as error:
            pool.render(nested_forms_pdf(), "bomb.pdf", 0)
        outcome["bomb"] = (str(error.value), time.monotonic() - start, time.monotonic())

    drawing = threading.Thread(target=draw_forever_page)
    drawing.start()
    time.sleep(0.5)
    meanwhile = pool.render(page, "report-a.pdf", 0)
    drawn_at = time.monotonic()
    drawing.join(timeout=30)
    message, took, ended_at = outcome["bomb"]
    assert message == "bomb.pdf could not be drawn in time (within 5 s)" and 5 <= took < 8
    assert drawn_at < ended_at and (meanwhile.width, meanwhile.height) == (612, 792)
    assert pool.render(page, "report-a.pdf", 1).jpeg.startswith(b"\xff\xd8")  # the killed process was replaced


def test_a_page_beyond_the_memory_limit_is_a_placeholder_and_the_process_goes_on():
    pool = rendering.RenderPool(workers=1, memory=200 * 2**20)
    buffer = io.BytesIO()
    Image.new("RGB", (6000, 5000), "white").save(buffer, format="PNG")  # 120 MB decoded, beside the process's 100 MB of libraries
    with pytest.raises(rendering.PageImageError, match=r"^big.png could not be drawn within memory \(200 MB\)$"):
        pool.render(buffer.getvalue(), "big.png")
    assert Image.open(io.BytesIO(pool.render(_png((300, 200)), "small.png").jpeg)).size == (300, 200)


def test_a_drawing_process_that_ended_while_idle_is_replaced():
    pool = rendering.RenderPool(workers=1)
    pool.render(_png((30, 20)), "one.png")
    (idle,) = pool._idle
    idle.process.kill()
    idle.process.wait()
    assert pool.render(_png((30, 20)), "two.png").width == 30


def _white_png(side: int) -> bytes:
    """A white RGB PNG of side x side pixels, compressed a row at a time (never held decoded here)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    compressor, row = zlib.compressobj(9), b"\x00" + b"\xff" * (3 * side)
    pixels = b"".join(compressor.compress(row) for _ in range(side)) + compressor.flush()
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">2I5B", side, side, 8, 2, 0, 0, 0)) + chunk(b"IDAT", pixels)
            + chunk(b"IEND", b""))


MEASURE_SERVER = """
import re, sys
from tore_engine.io import rendering
drawn = rendering.render_page(open(sys.argv[1], "rb").read(), "huge.png")
with open("/proc/self/status") as status:  # not ru_maxrss, which keeps the peak of the process that started this one
    print(drawn.width, drawn.height, int(re.search(r"VmHWM:\\s*(\\d+) kB", status.read())[1]) // 1024)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the peak memory from /proc")
def test_a_120_megapixel_image_is_decoded_outside_the_server(tmp_path):
    huge = tmp_path / "huge.png"
    huge.write_bytes(_white_png(10_950))  # 119.9 million pixels in about 370 KB: 480 MB once decoded by Pillow
    done = subprocess.run([sys.executable, "-c", MEASURE_SERVER, str(huge)], capture_output=True, text=True, timeout=120, check=True)
    width, height, peak_mb = done.stdout.split()
    assert (width, height) == ("10950.0", "10950.0") and int(peak_mb) < 150  # decoding it here took 934 MB
