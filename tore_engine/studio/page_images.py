"""The page images the app draws, from the one folder each may come from.

A path named inside an input file is untrusted. Before anything is read it must resolve inside its
root (`tore_engine.io.paths.confine`): the data root for files on the server, the session's private
upload folder for uploads, the package's demo folder for the demo. It must be a regular file, and
is read through `read_bytes`, which refuses a FIFO or a device on the open descriptor without
blocking. A page without a drawable image gets a placeholder; the placeholder says the same thing
whether the path is outside the root, missing or not a file, and never shows a folder, so it tells
nothing about the server's files.

Some images are stored inside a data file (`PageImage.parquet_cell`: a Parquet or docling-eval
shard's image cell, a DoclingDocument's embedded page): the data file is confined like any image
file, then `tore_engine.formats.stored_images.read_image_bytes` reads only that image from it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from tore_engine.core.errors import InputError
from tore_engine.core.layout import Page, PageImage
from tore_engine.formats.stored_images import read_image_bytes
from tore_engine.io import rendering
from tore_engine.io.files import is_regular_file, read_bytes
from tore_engine.io.paths import confine
from tore_engine.plots import page_overlays

NO_PAGE_IMAGE = "No page image available for this page."
MAX_PAGE_FILE_BYTES = 256 * 2**20  # one image or PDF file


def drawable_path(image: PageImage, root: Path) -> Path | None:
    """The real path of the page's image if it lies inside `root` and is a regular file, else None."""
    try:
        path = confine(image.path, root, what="page image")
    except InputError:
        return None
    return path if is_regular_file(path) else None


def _image_bytes(path: str, pdf_page: int | None, stored: tuple[str, int, int | None] | None) -> bytes:
    """The bytes of the image file, or of the one image stored in the data file at `path`."""
    if stored is None:
        return read_bytes(path, max_bytes=MAX_PAGE_FILE_BYTES)
    return read_image_bytes(PageImage(Path(path), pdf_page, stored))


@st.cache_data(max_entries=128, show_spinner=False)
def _rendered(path: str, stamp: tuple[int, int], pdf_page: int | None,
              stored: tuple[str, int, int | None] | None, max_side: int = rendering.MAX_SIDE) -> rendering.RenderedPage | str:
    """The page drawn from a confined regular file, or from the image stored in it at `stored`
    (cached by path, modification time, size, page number, cell and drawn size), or the reason it
    cannot be drawn. A busy server (`rendering.DrawingBusy`) is raised, so that it is not cached:
    the next look draws the page; a page over the drawing limits is remembered, not drawn again."""
    try:
        data = _image_bytes(path, pdf_page, stored)
    except InputError:  # removed, swapped for a FIFO or grown since the check, no image there: as if missing
        return NO_PAGE_IMAGE
    try:
        return rendering.render_page(data, Path(path).name, None if stored else pdf_page, max_side)
    except rendering.DrawingBusy:
        raise
    except rendering.PageImageError as error:
        return str(error)


def rendered(image: PageImage | None, root: Path, max_side: int = rendering.MAX_SIDE) -> rendering.RenderedPage | str:
    """The page image drawn (`max_side` pixels long at most: smaller for thumbnails), or the text
    its placeholder shows."""
    if image is None or (path := drawable_path(image, root)) is None:
        return NO_PAGE_IMAGE
    try:
        info = os.stat(path)
    except OSError:
        return NO_PAGE_IMAGE
    try:
        return _rendered(str(path), (info.st_mtime_ns, info.st_size), image.pdf_page, image.parquet_cell, max_side)
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
