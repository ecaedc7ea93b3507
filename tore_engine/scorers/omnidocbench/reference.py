"""Reading an `OmniDocBench.json` ground truth (docs/benchmarks.md#omnidocbench-ground-truth).

A page's id is its `page_info.image_path` (an image file name such as `report.pdf_3.jpg`): the
official results, the Markdown predictions (`<stem>.md`) and the layout predictions are all keyed
by it. The page frame is taken from the image when it lies next to the JSON (`images/<name>`),
because `page_info.width`/`height` are swapped on 10 of the 18 demo pages; without the image, the
swap is detected from the polygon extents.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import msgspec
import numpy as np

from tore_engine.core.errors import InputError
from tore_engine.io.files import image_size, is_regular_file
from tore_engine.io.json import SchemaError, decode_json, read_json
from tore_engine.io.paths import inside

# A polygon may overhang the declared frame by this fraction before the frame is called wrong.
FRAME_TOLERANCE = 0.02
IMAGE_FOLDER = "images"  # page images lie in images/ beside the JSON
MAX_ORDER = 2**53  # reading-order values are read as numbers (some files could write 3.0) and kept as ints
_Side = Annotated[float, msgspec.Meta(gt=0)]
_Order = Annotated[float, msgspec.Meta(ge=-MAX_ORDER, le=MAX_ORDER)]


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
    poly: tuple[float, ...] = ()  # the `poly` as given: x1, y1, x2, y2, ...

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


class _PageInfo(msgspec.Struct):
    image_path: Annotated[str, msgspec.Meta(min_length=1)]
    width: _Side
    height: _Side
    page_attribute: dict[str, Any] | None = None


class _Block(msgspec.Struct):
    category_type: str
    poly: Annotated[list[float], msgspec.Meta(min_length=8)]
    ignore: bool = False
    order: _Order | None = None
    anno_id: int | str | None = None  # None: the block's index
    text: str | None = None
    latex: str | None = None
    html: str | None = None
    attribute: dict[str, Any] | None = None


class _Relation(msgspec.Struct):
    source_anno_id: int | str
    target_anno_id: int | str
    relation_type: str = ""


class _Extra(msgspec.Struct):
    relation: list[_Relation] = []


class _Page(msgspec.Struct):
    """One entry of `OmniDocBench.json`; keys scoring does not read (`page_no`, `line_with_spans`,
    `merge_list`, ...) are skipped, as the official evaluator skips them."""

    page_info: _PageInfo
    layout_dets: list[_Block]
    extra: _Extra | None = None


def load_reference(path: str | Path) -> Reference:
    """Read an `OmniDocBench.json`; every malformed field becomes an `InputError` that names the
    page (its image name) and the block."""
    path = Path(path)
    source = str(path)
    pages = [_page(_decode_page(raw, position, source), path.parent, source)
             for position, raw in enumerate(read_json(path, list[msgspec.Raw]))]
    _check_unique_ids(pages, source)
    return Reference(source, pages)


def _decode_page(raw: msgspec.Raw, position: int, source: str) -> _Page:
    try:
        return decode_json(raw, source, _Page, prefix=(position,))
    except SchemaError as error:
        location = error.location  # (position, "layout_dets", block, ...) for a block
        box = location[2] if len(location) > 2 and location[1] == "layout_dets" and isinstance(location[2], int) else None
        raise InputError(error.problem, file=source, page=_page_id_of(raw), box=box) from None


def _page_id_of(raw: msgspec.Raw) -> str | None:
    """The image name of a page that failed its schema, if it has one, to name it in the error."""
    page = msgspec.json.decode(raw)
    info = page.get("page_info") if isinstance(page, dict) else None
    name = info.get("image_path") if isinstance(info, dict) else None
    return name if isinstance(name, str) else None


def _page(raw: _Page, folder: Path, source: str) -> ReferencePage:
    info = raw.page_info
    page_id = info.image_path
    blocks = [_block(block, index, source, page_id) for index, block in enumerate(raw.layout_dets)]
    declared = (info.width, info.height)
    candidate = inside(page_id, folder / IMAGE_FOLDER, what="page image (page_info.image_path)")
    image_path = candidate if is_regular_file(candidate) else None
    width, height, frame_source = _frame(declared, blocks, image_path, page_id)
    relations = [Relation(r.source_anno_id, r.target_anno_id, r.relation_type) for r in (raw.extra.relation if raw.extra else [])]
    return ReferencePage(page_id, width, height, frame_source, declared, info.page_attribute or {}, blocks, relations, image_path)


def _frame(declared: tuple[float, float], blocks: list[Block], image_path: Path | None, page_id: str) -> tuple[float, float, str]:
    """The page frame: the image size when the image exists, else page_info with a swap check."""
    if image_path is not None:
        try:
            image_width, image_height = image_size(image_path)
        except InputError as error:
            raise error.located(page=page_id) from None
        return float(image_width), float(image_height), "image"
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


def _block(raw: _Block, index: int, source: str, page_id: str) -> Block:
    if len(raw.poly) % 2:
        raise InputError(f"'poly' must hold x, y pairs, got {len(raw.poly)} numbers", file=source, page=page_id, box=index)
    return Block(
        category=raw.category_type,
        bbox=poly_to_bbox(raw.poly),
        ignore=raw.ignore,
        order=int(raw.order) if raw.order is not None else None,
        anno_id=index if raw.anno_id is None else raw.anno_id,
        text=raw.text or "",
        latex=raw.latex or "",
        html=raw.html or "",
        attribute=raw.attribute or {},
        poly=tuple(float(value) for value in raw.poly),
    )


def poly_to_bbox(poly: list[float]) -> tuple[float, float, float, float]:
    """The official box of a polygon: x from points 0 and 1, y from points 0 and 2 (not the hull)."""
    return (
        float(min(poly[0], poly[2])),
        float(min(poly[1], poly[5])),
        float(max(poly[0], poly[2])),
        float(max(poly[1], poly[5])),
    )


def _check_unique_ids(pages: list[ReferencePage], source: str) -> None:
    seen: set[str] = set()
    for page in pages:
        if page.id in seen:
            raise InputError("page_info.image_path occurs twice", file=source, page=page.id)
        seen.add(page.id)


def block_boxes(blocks: list[Block]) -> np.ndarray:
    """The blocks' boxes as an (n, 4) array `[x1, y1, x2, y2]`."""
    return np.array([block.bbox for block in blocks], dtype=np.float64).reshape(-1, 4)
