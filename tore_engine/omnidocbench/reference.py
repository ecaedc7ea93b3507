"""Reading an `OmniDocBench.json` ground truth (omnidocbench.md section 1).

A page's id is its `page_info.image_path` (an image file name such as `report.pdf_3.jpg`): the
official results, the Markdown predictions (`<stem>.md`) and the layout predictions are all keyed
by it. The page frame is taken from the image when it lies next to the JSON (`images/<name>`),
because `page_info.width`/`height` are swapped on 10 of the 18 demo pages; without the image, the
swap is detected from the polygon extents.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tore_engine.errors import InputError
from tore_engine.loaders import read_json

# A polygon may overhang the declared frame by this fraction before the frame is called wrong.
FRAME_TOLERANCE = 0.02


@dataclass(frozen=True)
class Block:
    """One block-level element of a page (`layout_dets[i]`)."""

    category: str
    bbox: tuple[float, float, float, float]  # x1, y1, x2, y2 in image pixels
    ignore: bool
    order: int | None
    anno_id: Any
    text: str
    latex: str
    html: str
    attribute: dict


@dataclass(frozen=True)
class Relation:
    source: Any  # anno_id
    target: Any
    kind: str  # "parent_son" or "truncated"


@dataclass
class ReferencePage:
    """One ground-truth page, with its frame corrected (see `frame_source`)."""

    id: str  # image file name, e.g. "report.pdf_3.jpg"
    width: float
    height: float
    frame_source: str  # "image", "page_info" or "page_info_swapped"
    declared_size: tuple[float, float]  # page_info (width, height), possibly swapped
    attributes: dict
    blocks: list[Block]
    relations: list[Relation]
    image_path: Path | None  # the page image when it exists next to the JSON

    @property
    def stem(self) -> str:
        """The image name without its extension: the key of Markdown and layout predictions."""
        return Path(self.id).stem

    @property
    def size_was_swapped(self) -> bool:
        """Whether page_info gives width and height the wrong way round."""
        return self.width != self.height and self.declared_size == (self.height, self.width)


@dataclass
class Reference:
    """All pages of an `OmniDocBench.json`, in file order."""

    source: str
    pages: list[ReferencePage]

    @property
    def swapped_pages(self) -> list[str]:
        """Ids of the pages whose page_info width and height are swapped."""
        return [page.id for page in self.pages if page.size_was_swapped]

    def page_index(self) -> dict[str, int]:
        """Page position by id and by stem, so predictions match with or without the extension."""
        index: dict[str, int] = {}
        for position, page in enumerate(self.pages):
            index[page.id] = position
            index.setdefault(page.stem, position)
        return index


def load_reference(path: str | Path) -> Reference:
    """Read an `OmniDocBench.json`; every malformed field becomes an `InputError`."""
    path = Path(path)
    source = str(path)
    data = read_json(path)
    if not isinstance(data, list):
        raise InputError("not an OmniDocBench.json: expected a list of pages", file=source)
    pages = [_page(raw, position, path.parent, source) for position, raw in enumerate(data)]
    _check_unique_ids(pages, source)
    return Reference(source, pages)


def _page(raw: Any, position: int, folder: Path, source: str) -> ReferencePage:
    if not isinstance(raw, dict) or not isinstance(raw.get("page_info"), dict):
        raise InputError(f"entry {position} is not a page: expected an object with 'page_info'", file=source)
    info = raw["page_info"]
    page_id = info.get("image_path")
    if not isinstance(page_id, str) or not page_id:
        raise InputError(f"entry {position}: page_info.image_path must be a file name", file=source)
    blocks_raw = raw.get("layout_dets")
    if not isinstance(blocks_raw, list):
        raise InputError("'layout_dets' must be a list", file=source, page=page_id)
    blocks = [_block(block, index, source, page_id) for index, block in enumerate(blocks_raw)]
    declared = (_size(info.get("width"), "width", source, page_id), _size(info.get("height"), "height", source, page_id))
    image_path = folder / "images" / page_id
    image_path = image_path if image_path.is_file() else None
    width, height, frame_source = _frame(declared, blocks, image_path, source, page_id)
    attributes = info.get("page_attribute") if isinstance(info.get("page_attribute"), dict) else {}
    relations = _relations(raw.get("extra"), source, page_id)
    return ReferencePage(page_id, width, height, frame_source, declared, attributes, blocks, relations, image_path)


def _size(value: Any, key: str, source: str, page_id: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise InputError(f"page_info.{key} must be a positive number, got {value!r}", file=source, page=page_id)
    return float(value)


def _frame(
    declared: tuple[float, float], blocks: list[Block], image_path: Path | None, source: str, page_id: str
) -> tuple[float, float, str]:
    """The page frame: the image size when the image exists, else page_info with a swap check."""
    if image_path is not None:
        from PIL import Image, UnidentifiedImageError

        try:
            with Image.open(image_path) as image:
                return float(image.width), float(image.height), "image"
        except (OSError, UnidentifiedImageError):
            raise InputError(f"page image {image_path} cannot be read", file=source, page=page_id) from None
    width, height = declared
    if not blocks:
        return width, height, "page_info"
    extent_x = max(block.bbox[2] for block in blocks)
    extent_y = max(block.bbox[3] for block in blocks)

    def fits(w: float, h: float) -> bool:
        return extent_x <= w * (1 + FRAME_TOLERANCE) and extent_y <= h * (1 + FRAME_TOLERANCE)

    if not fits(width, height) and fits(height, width):
        return height, width, "page_info_swapped"
    return width, height, "page_info"


def _block(raw: Any, index: int, source: str, page_id: str) -> Block:
    if not isinstance(raw, dict):
        raise InputError("layout_dets entry must be an object", file=source, page=page_id, box=index)
    category = raw.get("category_type")
    if not isinstance(category, str):
        raise InputError("block has no 'category_type' string", file=source, page=page_id, box=index)
    poly = raw.get("poly")
    if (
        not isinstance(poly, list)
        or len(poly) < 8
        or len(poly) % 2
        or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in poly)
    ):
        raise InputError(f"'poly' must be a list of 8 finite numbers, got {poly!r}", file=source, page=page_id, box=index)
    order = raw.get("order")
    if order is not None and (isinstance(order, bool) or not isinstance(order, (int, float))):
        raise InputError(f"'order' must be an integer or null, got {order!r}", file=source, page=page_id, box=index)
    return Block(
        category=category,
        bbox=poly_to_bbox(poly),
        ignore=bool(raw.get("ignore", False)),
        order=int(order) if order is not None else None,
        anno_id=raw.get("anno_id", index),
        text=_string(raw.get("text")),
        latex=_string(raw.get("latex")),
        html=_string(raw.get("html")),
        attribute=raw.get("attribute") if isinstance(raw.get("attribute"), dict) else {},
    )


def poly_to_bbox(poly: list[float]) -> tuple[float, float, float, float]:
    """The official box of a polygon: x from points 0 and 1, y from points 0 and 2 (not the hull)."""
    return (
        float(min(poly[0], poly[2])),
        float(min(poly[1], poly[5])),
        float(max(poly[0], poly[2])),
        float(max(poly[1], poly[5])),
    )


def _string(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _relations(extra: Any, source: str, page_id: str) -> list[Relation]:
    raw = extra.get("relation", []) if isinstance(extra, dict) else []
    if not isinstance(raw, list):
        raise InputError("'extra.relation' must be a list", file=source, page=page_id)
    relations = []
    for item in raw:
        if not isinstance(item, dict) or "source_anno_id" not in item or "target_anno_id" not in item:
            raise InputError(f"relation {item!r} lacks source_anno_id/target_anno_id", file=source, page=page_id)
        relations.append(Relation(item["source_anno_id"], item["target_anno_id"], str(item.get("relation_type", ""))))
    return relations


def _check_unique_ids(pages: list[ReferencePage], source: str) -> None:
    seen: set[str] = set()
    for page in pages:
        if page.id in seen:
            raise InputError("page_info.image_path occurs twice", file=source, page=page.id)
        seen.add(page.id)


def block_boxes(blocks: list[Block]) -> np.ndarray:
    """The blocks' boxes as an (n, 4) array `[x1, y1, x2, y2]`."""
    return np.array([block.bbox for block in blocks], dtype=np.float64).reshape(-1, 4)
