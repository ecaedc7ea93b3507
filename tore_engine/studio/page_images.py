"""The page images the app draws, from the one folder each may come from.

A path named inside an input file is untrusted: `formats.stored_images.image_source`, one call,
finds the image only if its path resolves inside its root (the data root for files on the server,
the session's private upload folder for uploads, the package's demo folder for the demo) to a
regular file, read through `read_bytes`, which refuses a FIFO or a device on the open descriptor
without blocking. A page without a drawable image gets a placeholder; the placeholder says the same thing
whether the path is outside the root, missing or not a file, and never shows a folder, so it tells
nothing about the server's files.

Some images are stored inside a data file (`PageImage.parquet_cell`: a Parquet or docling-eval
shard's image cell, a DoclingDocument's embedded page): the data file is confined like any image
file, then only that image is read from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from tore_engine.core.errors import InputError
from tore_engine.core.layout import Page, PageImage
from tore_engine.formats.stored_images import ImageSource, image_source
from tore_engine.io import rendering
from tore_engine.plots import page_overlays

NO_PAGE_IMAGE = "No page image available for this page."
MAX_PAGE_FILE_BYTES = 256 * 2**20  # one image or PDF file


@st.cache_data(max_entries=128, show_spinner=False)
def _rendered(source: ImageSource, max_side: int = rendering.MAX_SIDE) -> rendering.RenderedPage | str:
    """The page drawn from its source (cached by path, stamp, page number, cell and drawn size),
    or the reason it cannot be drawn. A busy server (`rendering.DrawingBusy`) is raised, so that it
    is not cached: the next look draws the page; a page over the drawing limits is remembered, not
    drawn again."""
    try:
        data = source.read(MAX_PAGE_FILE_BYTES)
    except InputError:  # removed, swapped for a FIFO or grown since the check, no image there: as if missing
        return NO_PAGE_IMAGE
    try:
        return rendering.render_page(data, source.path.name, None if source.parquet_cell else source.pdf_page, max_side)
    except rendering.DrawingBusy:
        raise
    except rendering.PageImageError as error:
        return str(error)


def rendered(image: PageImage | None, root: Path, max_side: int = rendering.MAX_SIDE) -> rendering.RenderedPage | str:
    """The page image drawn (`max_side` pixels long at most: smaller for thumbnails), or the text
    its placeholder shows."""
    if (source := image_source(image, root)) is None:
        return NO_PAGE_IMAGE
    try:
        return _rendered(source, max_side)
    except rendering.DrawingBusy as busy:
        return str(busy)


@dataclass(frozen=True)
class ImageUri:
    """A page image as a data URI, with the size of its source (pixels of an image, points of a
    PDF); for a placeholder, the size it was drawn for."""

    uri: str
    width: float
    height: float


def image_uri(image: PageImage | None, size: tuple[float, float], root: Path) -> ImageUri:
    """`image` as a data URI, or a placeholder of `size` that says why there is none: for drawings
    whose page is not a layout `Page` (the score panels)."""
    picture = rendered(image, root)
    if isinstance(picture, str):
        return ImageUri(page_overlays.data_uri(rendering.placeholder(*size, picture)), *size)
    return ImageUri(page_overlays.data_uri(picture.jpeg), picture.width, picture.height)


def page_image_uri(page: Page, root: Path) -> str:
    """The page's image as a data URI, or a placeholder of the page's proportions that says why
    there is none."""
    return image_uri(page.image, (page.width, page.height), root).uri
