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
    """A box: its `bbox`, or its `polygon` (x1, y1, x2, y2, ...) and optionally that polygon's
    bounding box as `bbox`."""

    label: str
    bbox: tuple[float, float, float, float] | None = None
    score: float | None = None
    polygon: list[float] | None = None


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
              warnings: list[InputWarning] | None = None, source: str | None = None) -> None:
    """Append decoded pages to the columns (with their page images, when `images` and the list of
    `warnings` to add to are given); `source` names the file in errors."""
    for page in pages:
        page_id = str(page.id)
        boxes = page.boxes
        polygons = [box.polygon for box in boxes]
        has_polygons = any(polygon is not None for polygon in polygons)
        builder.add(
            page_id,
            page.width,
            page.height,
            [box.label for box in boxes],
            [value for k, box in enumerate(boxes) for value in _bbox(box, page_id, k, source)] if has_polygons or any(box.bbox is None for box in boxes)
            else [value for box in boxes for value in box.bbox],  # type: ignore[union-attr]  # none is None
            [box.score for box in boxes],
            page_image(page, images, page_id, warnings) if images is not None and warnings is not None else None,
            polygons if has_polygons else None,
        )


MISSING_BBOX = "missing key 'bbox' (a box gives its 'bbox', its 'polygon', or both)"


def _bbox(box: Box, page_id: str, index: int, source: str | None) -> tuple[float, float, float, float]:
    """A box's `bbox`; for a polygon without one, its bounding box."""
    if box.bbox is not None:
        return box.bbox
    if box.polygon is None:
        raise InputError(MISSING_BBOX, file=source, page=page_id, box=index)
    if len(box.polygon) < 6 or len(box.polygon) % 2:
        raise InputError(f"a polygon is x1, y1, x2, y2, ... for at least 3 points, got {len(box.polygon)} numbers", file=source,
                         page=page_id, box=index)
    xs, ys = box.polygon[0::2], box.polygon[1::2]
    return min(xs), min(ys), max(xs), max(ys)

