"""JSON Lines of pages (formats.md section 6): one native page object a line, with an optional first
line `{"name": ..., "taxonomy": [...]}`.

The file is read in chunks of whole lines, each chunk scanned and decoded as one batch, so memory
stays bounded by the chunk size and the columns, whatever the file's size.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import msgspec
import numpy as np

from tore_engine.errors import InputError, InputWarning
from tore_engine.formats.columns import ColumnsBuilder
from tore_engine.formats.images import ImageFolder
from tore_engine.formats.progress import advance
from tore_engine.formats import native_kernel
from tore_engine.formats.native import NativePage, add_pages, header_document, page_document, page_image, parsed, parsed_images
from tore_engine.inputs import MAX_INPUT_BYTES, SchemaError, compiled_scan_wanted, decode_json, open_regular, scan_json
from tore_engine.layout import LayoutSet
from tore_engine.memory import give_back_free_memory

CHUNK_BYTES = 8 * 2**20
MAX_LINE_BYTES = 256 * 2**20  # one page on one line; beyond this it is not a page


class JsonlHeader(msgspec.Struct, forbid_unknown_fields=True):
    name: str | None = None
    taxonomy: list[str] | None = None


def _chunks(path: Path) -> Iterator[tuple[int, int, bytes]]:
    """Runs of whole lines, each with the number of its first line and its offset in the file."""
    descriptor = open_regular(path)
    line, carry, total, offset = 1, b"", 0, 0
    with os.fdopen(descriptor, "rb") as handle:
        while block := handle.read(CHUNK_BYTES):
            total += len(block)
            if total > MAX_INPUT_BYTES:
                raise InputError(f"is more than the {MAX_INPUT_BYTES:,} bytes allowed", file=str(path))
            text = carry + block
            cut = text.rfind(b"\n") + 1
            if not cut and len(text) > MAX_LINE_BYTES:
                raise InputError(f"line {line} is longer than {MAX_LINE_BYTES:,} bytes", file=str(path))
            if cut:
                yield line, offset, text[:cut]
                line += text.count(b"\n", 0, cut)
                offset += cut
            carry = text[cut:]
    if carry.strip():
        yield line, offset, carry


def _is_header(line: bytes) -> bool:
    keys = msgspec.json.decode(line, type=dict[str, msgspec.Raw]) if line.lstrip().startswith(b"{") else {}
    return bool(keys) and "id" not in keys


def _lines(first_line: int, offset: int, chunk: bytes) -> tuple[list[int], list[tuple[int, int]], list[bytes]]:
    """The chunk's non-blank lines: their numbers, byte spans in the file, and bytes."""
    numbers, spans, lines, start = [], [], [], 0
    for number, line in enumerate(chunk.split(b"\n"), start=first_line):
        if line.strip():
            numbers.append(number)
            spans.append((offset + start, offset + start + len(line)))
            lines.append(line)
        start += len(line) + 1
    return numbers, spans, lines


def read(path: Path, *, page_images: Path | None = None) -> LayoutSet:
    """A JSON Lines file of pages; a large one as an index whose pages workers read (`formats.lazy`)."""
    from tore_engine.formats.lazy import LAZY_BYTES, IndexBuilder, PageIndex

    source = str(path)
    size = Path(path).stat().st_size
    indexed = size >= LAZY_BYTES
    compiled_scan = compiled_scan_wanted(size)  # decided for the whole file: its chunks are each just under the threshold
    compiled_parse = native_kernel.wanted(size)
    images = ImageFolder.beside(path, page_images)
    warnings: list[InputWarning] = []
    builder = IndexBuilder() if indexed else ColumnsBuilder()
    header = JsonlHeader()
    all_lines: list[int] = []
    for first_line, offset, chunk in _chunks(path):
        advance(len(chunk))
        numbers, spans, lines = _lines(first_line, offset, chunk)
        if first_line == 1 and lines and _first_is_header(scanned(lines[0], source), source):
            header = decode_json(lines[0], source, JsonlHeader)
            numbers, spans, lines = numbers[1:], spans[1:], lines[1:]
        if not lines:
            continue
        if indexed:
            all_lines += numbers
        if (pages_in_columns := parsed(chunk, np.asarray(spans, dtype=np.int64) - offset, compiled_parse)) is not None:
            page_images = parsed_images(pages_in_columns, images, warnings)
            if indexed:
                builder.extend(pages_in_columns, page_images, offset)  # spans in the file, not the chunk
            else:
                builder.extend(pages_in_columns, page_images)
            continue  # the parser read every line as a flat page object: nothing deep, no key twice
        scan_json(chunk, source, compiled=compiled_scan)
        try:
            pages = decode_json(b"[" + b",".join(lines) + b"]", source, list[PageIndex] if indexed else list[NativePage])
        except SchemaError as error:
            raise _located(error, numbers, source) from None
        if indexed:
            builder.add(pages, spans, lambda page, page_id: page_image(page, images, page_id, warnings))
        else:
            add_pages(builder, pages, images, warnings)
    pages = builder.build(Path(path), lines=all_lines) if indexed else builder.build()
    give_back_free_memory()  # the chunks and their parsed pages
    return LayoutSet(header.name or Path(path).stem, pages, header.taxonomy, source, warnings)


def scanned(line: bytes, source: str) -> bytes:
    """The line, once scanned for its depth and keys (before msgspec reads anything of it)."""
    scan_json(line, source)
    return line


def _first_is_header(line: bytes, source: str) -> bool:
    try:
        return _is_header(line)
    except (msgspec.DecodeError, msgspec.ValidationError):
        decode_json(line, source)  # raises the syntax error with its place
        raise InputError("line 1 must be a page object or a header object {name, taxonomy}", file=source) from None


def _located(error: SchemaError, numbers: list[int], source: str) -> InputError:
    """A schema error inside a chunk, named by its line (and box)."""
    index, box, problem = error.in_item("boxes")
    return error if index is None else InputError(f"line {numbers[index]}: {problem}", file=source, box=box)


def write(layout: LayoutSet, path: Path) -> None:
    """The layout as JSON Lines: the header line, then one page a line, written as they come."""
    path = Path(path)
    folder = path.parent.resolve()
    with path.open("wb") as handle:
        handle.write(msgspec.json.encode(header_document(layout)) + b"\n")
        for page in layout.pages:
            handle.write(msgspec.json.encode(page_document(page, folder)) + b"\n")
