"""A page image's bytes, wherever it is stored: a file of its own, a PDF page (rendered), or inside
a data file (`PageImage.parquet_cell`): a Parquet cell (`image_bytes`, a docling-eval dataset's
page-image lists), or the page image a DoclingDocument embeds as a data URI.

This sits above the readers: it asks the Parquet and Docling modules for their stored images,
and only writers that store images (Parquet's `image_bytes=True`) ask it.
"""

from __future__ import annotations

from pathlib import Path

from tore_engine.core.errors import InputError
from tore_engine.core.extras import require_installed
from tore_engine.core.layout import PageImage
from tore_engine.formats.detect import PARQUET_MAGIC
from tore_engine.io import rendering
from tore_engine.io.files import peek_bytes, read_bytes

PDF_RENDER_DPI = 144  # PDF pages written as image bytes: the resolution of the shared page renders


def read_image_bytes(image: PageImage) -> bytes:
    """The PNG/JPEG bytes of an image stored inside a data file (`image.parquet_cell` set): the
    one Parquet cell (only its row group and column are read), or the page image embedded in a
    DoclingDocument (`("pages", page_no, None)`)."""
    if image.parquet_cell is None:
        raise InputError("this page image is a file of its own, not stored in a data file", file=str(image.path))
    column, row, item = image.parquet_cell
    if peek_bytes(image.path, len(PARQUET_MAGIC)) == PARQUET_MAGIC:
        from tore_engine.formats.parquet_files import read_cell

        return read_cell(image.path, column, row, item)
    from tore_engine.formats.docling import embedded_page_image

    return embedded_page_image(image.path, row)


def _render_pdf_page(data: bytes, page: int, source: str) -> bytes:
    """Page `page` of a PDF as PNG at `PDF_RENDER_DPI`, drawn in a drawing process within its time
    and memory limits (`io.rendering`: a crafted PDF can draw for hours); refused when the page is
    larger than `MAX_IMAGE_PIXELS` would be at that resolution (its size is the file's word)."""
    require_installed("pymupdf", "app", "PyMuPDF")  # the drawing process needs it: say how to install it
    try:
        return rendering.pdf_page_png(data, Path(source).name, page, PDF_RENDER_DPI)
    except rendering.PageImageError as error:
        raise InputError(str(error), file=source) from None


def page_image_bytes(image: PageImage) -> bytes:
    """A page image's encoded bytes, for a writer that stores them: a stored image as it is, an
    image file's content, or a PDF page rendered to PNG."""
    if image.parquet_cell is not None:
        return read_image_bytes(image)
    data = read_bytes(image.path)
    if image.pdf_page is not None or image.path.suffix.lower() == ".pdf":
        return _render_pdf_page(data, image.pdf_page or 0, str(image.path))
    return data
