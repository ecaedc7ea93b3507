"""Where the page images named inside a layout file are found, and their bytes.

A name inside a file is untrusted: it is looked up relative to the file (or to a page-images
folder the user chose), and a name that would leave that folder, through `..`, an absolute path
or a symbolic link, gives no image and a warning, never a file outside it.

Some images are stored inside a data file rather than beside it (`PageImage.parquet_cell`): a
Parquet cell (`image_bytes`, a docling-eval dataset's page-image lists), or the page image a
DoclingDocument embeds as a data URI. `read_image_bytes` reads any of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tore_engine.errors import InputError, InputWarning
from tore_engine.formats.detect import PARQUET_MAGIC
from tore_engine.inputs import confine, peek_bytes, read_bytes
from tore_engine.layout import PageImage

PDF_RENDER_DPI = 144  # PDF pages written as image bytes: the resolution of the shared page renders


@dataclass(frozen=True)
class ImageFolder:
    """Names are taken relative to `base` (the layout file's folder, or the folder the user chose
    for page images) and must stay inside it."""

    base: Path

    @classmethod
    def beside(cls, layout_file: Path, chosen: Path | None = None) -> "ImageFolder":
        return cls(Path(chosen) if chosen is not None else Path(layout_file).parent)

    def locate(self, name: str, page_id: str, side: str, warnings: list[InputWarning], pdf_page: int | None = None) -> PageImage | None:
        """The image `name` names, or None (with a warning) when it would leave the folder."""
        try:
            path = confine(name, self.base, what="page image")
        except InputError:
            warnings.append(InputWarning(page_id, None, side, "the page image it names is outside the layout's folder; not drawn"))
            return None
        return PageImage(path, pdf_page)


def read_image_bytes(image: PageImage) -> bytes:
    """The PNG/JPEG bytes of an image stored inside a data file (`image.parquet_cell` set): the
    one Parquet cell (only its row group and column are read), or the page image embedded in a
    DoclingDocument (`("pages", page_no, None)`)."""
    if image.parquet_cell is None:
        raise InputError("this page image is a file of its own, not stored in a data file", file=str(image.path))
    column, row, item = image.parquet_cell
    if peek_bytes(image.path, len(PARQUET_MAGIC)) == PARQUET_MAGIC:
        from tore_engine.formats.parquet import read_cell

        return read_cell(image.path, column, row, item)
    from tore_engine.formats.docling import embedded_page_image

    return embedded_page_image(image.path, row)


def _render_pdf_page(data: bytes, page: int, source: str) -> bytes:
    from tore_engine.formats import optional_module

    pymupdf = optional_module("pymupdf", "app")
    try:
        with pymupdf.open(stream=data, filetype="pdf") as document:
            return document[page].get_pixmap(dpi=PDF_RENDER_DPI).tobytes("png")
    except (RuntimeError, ValueError, IndexError) as error:
        raise InputError(f"cannot render page {page + 1} of this PDF ({error})", file=source) from None


def page_image_bytes(image: PageImage) -> bytes:
    """A page image's encoded bytes, for a writer that stores them: a stored image as it is, an
    image file's content, or a PDF page rendered to PNG."""
    if image.parquet_cell is not None:
        return read_image_bytes(image)
    data = read_bytes(image.path)
    if image.pdf_page is not None or image.path.suffix.lower() == ".pdf":
        return _render_pdf_page(data, image.pdf_page or 0, str(image.path))
    return data


def image_name(image: PageImage, folder: Path) -> str | None:
    """How a layout file written into `folder` names a page image: relative to the folder when the
    image lies inside it (the file and its images move together), else its absolute path (read
    back with `--page-images` set to a folder that holds it); None for a stored image."""
    if image.parquet_cell is not None:
        return None
    path = Path(image.path)
    return path.relative_to(folder).as_posix() if path.is_relative_to(folder) else str(path)
