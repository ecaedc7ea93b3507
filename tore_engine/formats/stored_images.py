"""A page image's bytes, wherever it is stored: a file of its own, a PDF page (rendered), or inside
a data file (`PageImage.parquet_cell`): a Parquet cell (`image_bytes`, a docling-eval dataset's
page-image lists), or the page image a DoclingDocument embeds as a data URI.

This sits above the readers: it asks the Parquet and Docling modules for their stored images;
writers that store images (Parquet's `image_bytes=True`) and the app (`image_source`: a page's image
found inside the one folder it may come from) ask it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from tore_engine.core.errors import InputError
from tore_engine.core.extras import require_installed
from tore_engine.core.layout import PageImage
from tore_engine.formats.detect import PARQUET_MAGIC
from tore_engine.io import rendering
from tore_engine.io.files import is_regular_file, peek_bytes, read_bytes
from tore_engine.io.paths import confine

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


@dataclass(frozen=True)
class ImageSource:
    """A page image found inside its root: the real path of its file (or of the data file that
    stores it), the file's stamp (modification time, size: what a cache keys on) and how to read it."""

    path: Path
    stamp: tuple[int, int]
    pdf_page: int | None
    parquet_cell: tuple[str, int, int | None] | None

    def read(self, max_bytes: int) -> bytes:
        """The image file's bytes (at most `max_bytes`), or the one image stored in the data file;
        an `InputError` when the file went, became a FIFO or grew since it was found."""
        if self.parquet_cell is None:
            return read_bytes(self.path, max_bytes=max_bytes)
        return read_image_bytes(PageImage(self.path, self.pdf_page, self.parquet_cell))


def image_source(image: PageImage | None, root: Path) -> ImageSource | None:
    """Where the page's image is, if it can be drawn: its path, named inside an untrusted input,
    must resolve inside `root` (`io.paths.confine`) to a regular file; None otherwise, whatever
    the reason (outside the root, missing, not a file), so that a caller cannot tell them apart."""
    if image is None:
        return None
    try:
        path = confine(image.path, root, what="page image")
        if not is_regular_file(path):
            return None
        info = os.stat(path)
    except (InputError, OSError):
        return None
    return ImageSource(path, (info.st_mtime_ns, info.st_size), image.pdf_page, image.parquet_cell)
