"""Page images as JPEG/PNG bytes: PDF pages through PyMuPDF, image files through Pillow.

PyMuPDF is not thread-safe and Streamlit runs each session in its own thread, so every PDF is
opened, rendered and closed under one lock, and no document object outlives a call (app.md
section 4). A page that cannot be drawn gets a placeholder image that says why, never an error.
"""

from __future__ import annotations

import base64
import io
import threading
from pathlib import Path

from PIL import Image, ImageDraw

from tore_engine.layout import PageImage

MAX_SIDE = 1400  # pixels of the longer side: sharp enough to read, small enough to send
_PDF_LOCK = threading.Lock()


class PageImageError(Exception):
    """The page image is missing or unreadable; the message says which and why."""


def _render_pdf_page(path: Path, page_no: int, max_side: int) -> Image.Image:
    import pymupdf

    with _PDF_LOCK:
        try:
            document = pymupdf.open(path)
        except Exception as error:  # PyMuPDF raises its own types for damaged files
            raise PageImageError(f"cannot open PDF {path.name}: {error}") from None
        try:
            if not 0 <= page_no < document.page_count:
                raise PageImageError(f"{path.name} has {document.page_count} pages, no page {page_no + 1}")
            page = document[page_no]
            zoom = max_side / max(page.rect.width, page.rect.height)
            pixmap = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), alpha=False)
            return Image.frombytes("RGB", (pixmap.width, pixmap.height), pixmap.samples)
        finally:
            document.close()


def _load_picture(path: Path, max_side: int) -> Image.Image:
    try:
        with Image.open(path) as picture:
            picture = picture.convert("RGB")
    except Exception as error:  # Pillow raises several types for unreadable images
        raise PageImageError(f"cannot read image {path.name}: {error}") from None
    picture.thumbnail((max_side, max_side))
    return picture


def render_page(image: PageImage, max_side: int = MAX_SIDE) -> bytes:
    """The page as JPEG bytes; raises `PageImageError` when it cannot be drawn."""
    path = Path(image.path)
    if not path.is_file():
        raise PageImageError(f"page image not found: {path}")
    if image.pdf_page is not None or path.suffix.lower() == ".pdf":
        picture = _render_pdf_page(path, image.pdf_page or 0, max_side)
    else:
        picture = _load_picture(path, max_side)
    buffer = io.BytesIO()
    picture.save(buffer, format="JPEG", quality=85)
    return buffer.getvalue()


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
