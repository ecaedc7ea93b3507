"""The native layout JSON (docs/formats.md#layout-json): `{"name", "taxonomy", "pages": [...]}`.

A file from 512 KiB on is read in chunks of 4 MiB by the compiled page parser (`page_parser`),
which finds each page and reads it straight into columns, or, at 64 MiB and more, into an index
whose pages the workers read (`formats.lazy`); the top-level object without its pages is then
scanned and decoded as below. Anything the parser leaves to msgspec (escapes, unusual numbers,
errors) makes the file go the msgspec way: the file is scanned once for its structure
(`tore_engine.io.json.scan_json`), which also gives the byte span of every page, and pages are
decoded in batches against a strict schema straight into flat columns, which names any error.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import msgspec
import numpy as np

from tore_engine.core.errors import InputError, InputWarning
from tore_engine.core.layout import LayoutSet, Page
from tore_engine.core.memory import give_back_free_memory
from tore_engine.formats import page_parser
from tore_engine.formats.columns import ColumnsBuilder, non_finite_score
from tore_engine.formats.detect import ambiguous_keys, result_keys
from tore_engine.formats.image_refs import ImageFolder, image_name
from tore_engine.formats.native_pages import (
    NativePage,
    add_pages,
    page_image,
    parsed_images,
)
from tore_engine.formats.progress import advance
from tore_engine.io.files import (
    MAX_INPUT_BYTES,
    FileStamp,
    open_regular,
    read_stamped,
    read_to_end,
    skip_bom,
)
from tore_engine.io.json import (
    JsonSpans,
    SchemaError,
    decode_json,
    first_char,
    scan_json,
    schema_error,
    structure_of,
)

PAGES_PER_BATCH = 2048  # pages decoded by one msgspec call
CHUNK_BYTES = 4 * 2**20  # read at a time by the compiled parser
HEADER_BYTES = 2**20  # the key "pages" is looked for in this many first bytes (else the file is read whole)


class Header(msgspec.Struct, forbid_unknown_fields=True):
    """The top-level object, with its pages left undecoded (their bytes are decoded in batches)."""

    pages: msgspec.Raw
    name: str | None = None
    taxonomy: list[str] | None = None


class PageId(msgspec.Struct):
    """Only a page's id: to name the page of an error found deeper in it."""

    id: str | int | None = None


def located(error: SchemaError, item_spans: list[tuple[int, int]], first: int, data: bytes) -> InputError:
    """A schema error inside the batch of pages starting at page `first`, with its page id and box
    index instead of a JSON path."""
    index, box, problem = error.in_item("boxes")
    if index is None:
        return error
    start, end = item_spans[first + index]
    try:
        page_id = msgspec.json.decode(data[start:end], type=PageId).id
    except (msgspec.DecodeError, msgspec.ValidationError):
        page_id = None
    if page_id is None:
        return InputError(f"{problem} (pages[{first + index}])", file=error.file, box=box)
    return InputError(problem, file=error.file, page=str(page_id), box=box)


def parsed(data: bytes, spans: Sequence[tuple[int, int]] | np.ndarray, compiled: bool) -> page_parser.ParsedPages | None:
    """The pages at `spans` through the compiled parser, when `compiled` and they are its common
    case (else None: msgspec decodes them, and locates any error)."""
    return page_parser.parse_pages(data, np.asarray(spans, dtype=np.int64)) if compiled else None


def _decode_batches(data: bytes, items: list[tuple[int, int]], source: str, images: ImageFolder, warnings: list[InputWarning],
                    builder, batch_schema: object, add_decoded: Callable[[list, list[tuple[int, int]]], None]) -> None:
    """The page objects at `items` in batches: through the compiled parser when it takes a batch,
    else decoded by msgspec against `batch_schema`, a list of page structs (which names any error), and given to
    `add_decoded(pages, batch)`."""
    compiled = page_parser.wanted(len(data))
    for first in range(0, len(items), PAGES_PER_BATCH):
        batch = items[first : first + PAGES_PER_BATCH]
        advance(batch[-1][1] - batch[0][0])
        if (pages_in_columns := parsed(data, batch, compiled)) is not None:
            builder.extend(pages_in_columns, parsed_images(pages_in_columns, images, warnings))
            continue
        try:
            pages = decode_json(b"[" + data[batch[0][0] : batch[-1][1]] + b"]", source, batch_schema)
        except SchemaError as error:
            raise located(error, items, first, data) from None
        add_decoded(pages, batch)


def _header(data: bytes, source: str) -> tuple[Header, JsonSpans, tuple[int, int]]:
    structure = scan_json(data, source)
    if first_char(data) != b"{":
        raise InputError("a layout JSON must be an object with 'pages' (docs/formats.md#layout-json)", file=source)
    try:
        header = decode_json(data, source, Header)
    except SchemaError:
        keys = structure.top_level_values()
        if (kind := ambiguous_keys(keys, source) or result_keys(keys, source)) is not None:
            raise kind from None  # a COCO file too, or a result: said so, rather than "unknown key 'images'"
        raise
    span = structure.top_level_values()["pages"]
    if first_char(data, span[0]) != b"[":
        raise InputError("'pages' must be a list of page objects", file=source)
    return header, structure, span


def parse(data: bytes, source: str, images: ImageFolder) -> LayoutSet:
    """A native layout JSON text."""
    header, structure, span = _header(data, source)
    warnings: list[InputWarning] = []
    builder = ColumnsBuilder()
    _decode_batches(data, structure.array_items(*span), source, images, warnings, builder, list[NativePage],
                    lambda pages, _batch: add_pages(builder, pages, images, warnings, source))
    return LayoutSet(header.name or Path(source).stem, builder.build(), header.taxonomy, source, warnings)


def index(data: bytes, path: Path, images: ImageFolder, stamp: FileStamp, start: int) -> LayoutSet:
    """A large native layout JSON text, read from the version `stamp` of the file at `path` from
    byte `start` on (after a byte-order mark), as an index: its pages stay in the file (`formats.lazy`)."""
    from tore_engine.formats.lazy import IndexBuilder, PageIndex

    source = str(path)
    header, structure, span = _header(data, source)
    warnings: list[InputWarning] = []
    builder = IndexBuilder(start)
    _decode_batches(data, structure.array_items(*span), source, images, warnings, builder, list[PageIndex],
                    lambda pages, batch: builder.add(pages, batch, lambda page, page_id: page_image(page, images, page_id, warnings)))
    return LayoutSet(header.name or path.stem, builder.build(path, stamp), header.taxonomy, source, warnings)


def read(path: Path, *, page_images: Path | None = None) -> LayoutSet:
    """A native layout JSON file; a large one as an index whose pages workers read (`formats.lazy`)."""
    from tore_engine.formats.lazy import LAZY_BYTES

    images = ImageFolder.beside(path, page_images)
    size = _size(Path(path))
    if size is not None and page_parser.wanted(size):
        layout = read_compiled(Path(path), images, lazy=size >= LAZY_BYTES)
        if layout is not None:
            return layout
    data, stamp, start = read_stamped(path, json_text=True)
    return index(data, Path(path), images, stamp, start) if len(data) >= LAZY_BYTES else parse(data, str(path), images)


def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size if path.is_file() else None
    except OSError:
        return None  # `read_bytes` says why


def read_compiled(path: Path, images: ImageFolder, *, lazy: bool) -> LayoutSet | None:
    """The file read in chunks by the compiled parser, never whole: its pages as columns, or as an
    index when `lazy`. None when the file is not the parser's common case: then it is read whole,
    scanned and decoded by msgspec, which also names any error exactly."""
    from tore_engine.formats.lazy import IndexBuilder

    source = str(path)
    warnings: list[InputWarning] = []
    builder = IndexBuilder() if lazy else ColumnsBuilder()
    descriptor = open_regular(path)
    with os.fdopen(descriptor, "rb") as handle:
        stamp = FileStamp.of(descriptor)  # the version read: checked when the rest is read, and by the workers
        bom = skip_bom(handle, path)
        head = handle.read(CHUNK_BYTES)
        start = structure_of(head[:HEADER_BYTES]).value_start("pages") if first_char(head) == b"{" else None
        if start is None or first_char(head, start) != b"[":
            return None
        text, base, position, after_page = head, bom, start + 1, False  # base: the file offset of text[0]
        while True:
            status, offset, pages = page_parser.parse_array(text, position, after_page)
            if pages is None:
                return None
            page_images = parsed_images(pages, images, warnings)
            builder.extend(pages.shifted(base), page_images)
            advance(offset - position)
            after_page = after_page or bool(pages.ids)
            if status == page_parser.DONE:
                break
            block = handle.read(CHUNK_BYTES)
            if not block or len(text) - offset >= CHUNK_BYTES or base + len(text) > MAX_INPUT_BYTES:
                return None  # a page that does not parse, or one longer than a chunk: msgspec's turn
            text, base, position = text[offset:] + block, base + offset, 0
        rest = text[offset:] + read_to_end(handle, path, stamp=stamp)
    try:  # the top-level object without its pages: scanned and decoded as the whole-file reader does
        header, _structure, _span = _header(head[: start + 1] + b"]" + rest, source)
    except InputError:
        return None  # named by the whole-file reader, at the place it has in the file
    pages_read = builder.build(path, stamp) if isinstance(builder, IndexBuilder) else builder.build()
    give_back_free_memory()  # the chunks and their parsed pages
    return LayoutSet(header.name or path.stem, pages_read, header.taxonomy, source, warnings)


class Document(msgspec.Struct, forbid_unknown_fields=True):
    """A whole native document, for one already parsed into Python objects."""

    pages: list[NativePage]
    name: str | None = None
    taxonomy: list[str] | None = None


def from_document(document: object, source: str = "<memory>") -> LayoutSet:
    """A layout set from an already parsed native document (a dict), checked as a file is."""
    try:
        parsed = msgspec.convert(_plain(document), Document)
    except msgspec.ValidationError as error:
        located_error = schema_error(error, source, schema=Document)
        if located_error.location[:1] == ("pages",):
            index, box, problem = SchemaError(located_error.detail, located_error.location[1:]).in_item("boxes")
            page_id = _page_id_of(document, index)
            raise InputError(problem, file=source, page=page_id, box=box) from None
        raise located_error from None
    except RecursionError:
        raise InputError("is nested too deeply", file=source) from None
    for page in parsed.pages:  # Python's floats, unlike JSON, hold NaN and infinity
        for number, item in enumerate(page.boxes):
            if item.score is not None and not math.isfinite(item.score):
                raise InputError(non_finite_score(item.score), file=source, page=str(page.id), box=number)
    warnings: list[InputWarning] = []
    builder = ColumnsBuilder()
    add_pages(builder, parsed.pages, ImageFolder.beside(Path(source)), warnings, source)
    return LayoutSet(parsed.name or Path(source).stem, builder.build(), parsed.taxonomy, source, warnings)


def _plain(value: object) -> object:
    """NumPy scalars and arrays in a document built in Python, as the Python numbers JSON has."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, (np.generic, np.ndarray)):
        return value.tolist()
    return value


def _page_id_of(document: object, index: int | None) -> str | None:
    try:
        page_id = document["pages"][index]["id"]  # type: ignore[index]
    except (KeyError, IndexError, TypeError):
        return None
    return str(page_id) if isinstance(page_id, (str, int)) and not isinstance(page_id, bool) else None


def page_document(page: Page, folder: Path) -> dict:
    """A page as section 1's page object, its image named for a file written into `folder`
    (an image stored inside a data file cannot be named, and is left out)."""
    boxes = [{"label": label, "bbox": bbox} for label, bbox in zip(page.labels, page.bboxes.tolist())]
    if page.scores is not None:
        for box, score in zip(boxes, page.scores.tolist()):
            if not math.isnan(score):  # NaN: the box has no score
                box["score"] = score
    if page.polygons is not None:
        for k, box in enumerate(boxes):
            if (outline := page.polygons.outline(k)) is not None:
                box["polygon"] = outline.reshape(-1).tolist()
    document = {"id": page.id, "width": page.width, "height": page.height, "boxes": boxes}
    image = page.image
    name = image_name(image, folder) if image is not None else None
    if image is not None and name is not None:
        document |= {"pdf": name, "page_no": image.pdf_page} if image.pdf_page is not None else {"image": name}
    return document


def header_document(layout: LayoutSet) -> dict:
    return {"name": layout.name} | ({"taxonomy": layout.taxonomy} if layout.taxonomy is not None else {})


def write(layout: LayoutSet, path: Path) -> None:
    """The layout as a native layout JSON file (floats written to round-trip exactly)."""
    path = Path(path)
    folder = path.parent.resolve()
    document = header_document(layout) | {"pages": [page_document(page, folder) for page in layout.pages]}
    path.write_bytes(msgspec.json.encode(document))
