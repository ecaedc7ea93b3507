"""Native page objects (docs/formats.md#layout-json), as the native JSON, JSON Lines and the workers'
index hold them: their strict schema, their page images, and how decoded pages become columns."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from tore_engine.core.errors import InputError, InputWarning
from tore_engine.core.layout import PageImage
from tore_engine.formats import page_parser
from tore_engine.formats.columns import ColumnsBuilder
from tore_engine.formats.image_refs import ImageFolder


class Box(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    label: str
    bbox: tuple[float, float, float, float]
    score: float | None = None


class NativePage(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    id: str | int
    width: float
    height: float
    boxes: list[Box] = []
    image: str | None = None
    pdf: str | None = None
    page_no: int | None = None


def page_image(page: NativePage, images: ImageFolder, page_id: str, warnings: list[InputWarning]) -> PageImage | None:
    """The page's `image`, or its `pdf` and 0-based `page_no`, found through `images`."""
    return image_of(page.image, page.pdf, page.page_no, images, page_id, warnings)


def image_of(image: str | None, pdf: str | None, page_no: int | None, images: ImageFolder, page_id: str,
             warnings: list[InputWarning]) -> PageImage | None:
    """A page's image from its `image`, or its `pdf` and 0-based `page_no`."""
    if pdf is not None:
        if page_no is not None and page_no < 0:
            raise InputError(f"page_no must be a 0-based page number, got {page_no}", page=page_id)
        return images.locate(pdf, page_id, "", warnings, page_no or 0)
    if image is not None:
        return images.locate(image, page_id, "", warnings)
    return None


def parsed_images(pages: page_parser.ParsedPages, images: ImageFolder, warnings: list[InputWarning]) -> dict[int, PageImage]:
    """The page images of pages read by the compiled parser, by their position among them."""
    found = {}
    for position, (image, pdf, page_no) in enumerate(pages.images):
        if (image is not None or pdf is not None) and (page := image_of(image, pdf, page_no, images, pages.ids[position], warnings)) is not None:
            found[position] = page
    return found


def add_pages(builder: ColumnsBuilder, pages: Sequence[NativePage], images: ImageFolder | None = None,
              warnings: list[InputWarning] | None = None) -> None:
    """Append decoded pages to the columns (with their page images, when `images` and the list of
    `warnings` to add to are given)."""
    for page in pages:
        page_id = str(page.id)
        boxes = page.boxes
        builder.add(
            page_id,
            page.width,
            page.height,
            [box.label for box in boxes],
            [value for box in boxes for value in box.bbox],
            [box.score for box in boxes],
            page_image(page, images, page_id, warnings) if images is not None and warnings is not None else None,
        )

