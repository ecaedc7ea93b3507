"""Page images as JPEG/PNG bytes: PDF pages through PyMuPDF, image files through Pillow.

Both work on bytes already read (`studio.page_images` reads them, confined and from regular files
only), never on a path, so nothing here can open a file it was not meant to. PyMuPDF is not
thread-safe and Streamlit runs each session in its own thread, so every PDF is opened, rendered
and closed under one lock, and no document object outlives a call (app.md section 4). A page that
cannot be drawn gets a placeholder image that says why, never an error.
"""

from __future__ import annotations

import base64
import io
import threading
from dataclasses import dataclass

from PIL import Image, ImageDraw

MAX_SIDE = 1400  # pixels of the longer side: sharp enough to read, small enough to send
MAX_PIXELS = 120_000_000  # of a source image: an A0 poster at 300 dpi; decoding more risks the memory
_PDF_LOCK = threading.Lock()


class PageImageError(Exception):
    """The page image cannot be drawn; the message says why, naming the file but not its folder."""


@dataclass(frozen=True)
class RenderedPage:
    """A page drawn as JPEG, with the size of its source (pixels of an image, points of a PDF)."""

    jpeg: bytes
    width: float
    height: float


def _render_pdf_page(data: bytes, name: str, page_no: int, max_side: int) -> tuple[Image.Image, float, float]:
    import pymupdf

    with _PDF_LOCK:
        try:
            document = pymupdf.open(stream=data, filetype="pdf")
        except Exception:  # PyMuPDF raises its own types for damaged files
            raise PageImageError(f"{name} is not a readable PDF") from None
        try:
            if not 0 <= page_no < document.page_count:
                raise PageImageError(f"{name} has {document.page_count} pages, no page {page_no + 1}")
            page = document[page_no]
            zoom = max_side / max(page.rect.width, page.rect.height)
            pixmap = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), alpha=False)
            return Image.frombytes("RGB", (pixmap.width, pixmap.height), pixmap.samples), page.rect.width, page.rect.height
        finally:
            document.close()


def _load_picture(data: bytes, name: str, max_side: int) -> tuple[Image.Image, float, float]:
    try:
        with Image.open(io.BytesIO(data)) as picture:
            size = picture.size
            if size[0] * size[1] > MAX_PIXELS:
                raise PageImageError(f"{name} has {size[0]} x {size[1]} pixels, more than the {MAX_PIXELS:,} drawn")
            picture = picture.convert("RGB")
    except PageImageError:
        raise
    except Exception:  # Pillow raises several types for unreadable images (and for decompression bombs)
        raise PageImageError(f"{name} is not a readable image") from None
    picture.thumbnail((max_side, max_side))
    return picture, float(size[0]), float(size[1])


def render_page(data: bytes, name: str, pdf_page: int | None = None, max_side: int = MAX_SIDE) -> RenderedPage:
    """The page in `data` (page `pdf_page` of a PDF, or an image file called `name`) as JPEG;
    raises `PageImageError` when it cannot be drawn."""
    if pdf_page is not None or name.lower().endswith(".pdf"):
        picture, width, height = _render_pdf_page(data, name, pdf_page or 0, max_side)
    else:
        picture, width, height = _load_picture(data, name, max_side)
    buffer = io.BytesIO()
    picture.save(buffer, format="JPEG", quality=85)
    return RenderedPage(buffer.getvalue(), width, height)


def placeholder(width: float, height: float, message: str) -> bytes:
    """A light grey PNG of the page's proportions with `message` written on it."""
    scale = 600 / max(width, height)
    size = (max(1, int(width * scale)), max(1, int(height * scale)))
    picture = Image.new("RGB", size, "#f0f0f0")
    ImageDraw.Draw(picture).multiline_text((12, 12), _wrap(message, 60), fill="#555555")
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG")
    return buffer.getvalue()


def _wrap(text: str, width: int) -> str:
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return "\n".join(lines + [line])


def data_uri(data: bytes) -> str:
    """Image bytes as a `data:` URI for a Plotly layout image."""
    kind = "png" if data.startswith(b"\x89PNG") else "jpeg"
    return f"data:image/{kind};base64,{base64.b64encode(data).decode('ascii')}"
