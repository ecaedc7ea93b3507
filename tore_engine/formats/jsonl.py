"""JSON Lines of pages (docs/formats.md#your-data): one native page object a line, with an optional first
line `{"name": ..., "taxonomy": [...]}`.

The file is read in chunks of whole lines, each chunk's pages parsed by the compiled page parser
(`page_parser`) from 512 KiB on, else (and wherever the parser leaves a chunk to msgspec) scanned
and decoded as one batch; so memory stays bounded by the chunk size and the columns (or, from
64 MiB, the index of `formats.lazy`), whatever the file's size.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import msgspec
import numpy as np

from tore_engine.core.errors import InputError, InputWarning
from tore_engine.core.layout import LayoutSet
from tore_engine.core.memory import give_back_free_memory
from tore_engine.formats import page_parser
from tore_engine.formats.columns import ColumnsBuilder
from tore_engine.formats.image_refs import ImageFolder
from tore_engine.formats.native import header_document, page_document, parsed
from tore_engine.formats.native_pages import (
    NativePage,
    add_pages,
    page_image,
    parsed_images,
)
from tore_engine.formats.progress import advance
from tore_engine.io.files import MAX_INPUT_BYTES, FileStamp, open_regular, skip_bom
from tore_engine.io.json import (
    SchemaError,
    compiled_scan_wanted,
    decode_json,
    scan_json,
)

CHUNK_BYTES = 4 * 2**20  # read at a time: a few thousand lines
MAX_LINE_BYTES = 256 * 2**20  # one page on one line; beyond this it is not a page


_NEWLINE = 10
_BLANK = np.zeros(256, dtype=bool)
_BLANK[list(b" \t\r\x0b\x0c")] = True  # what `bytes.strip` strips, besides the newline


class JsonlHeader(msgspec.Struct, forbid_unknown_fields=True):
    name: str | None = None
    taxonomy: list[str] | None = None


def _chunks(handle: BinaryIO, path: Path) -> Iterator[tuple[int, int, bytes, int, np.ndarray]]:
    """Runs of whole lines read from `handle`: the number of the first, its offset in the file, a
    text whose first `size` bytes they are (not copied out of what was read), and where its
    newlines are (found with NumPy, which lets the other side's reading thread run). A byte-order
    mark at the file's start is skipped."""
    line, carry, total, offset = 1, b"", 0, skip_bom(handle, path)
    while block := handle.read(CHUNK_BYTES):
        total += len(block)
        if total > MAX_INPUT_BYTES:
            raise InputError(f"is more than the {MAX_INPUT_BYTES:,} bytes allowed", file=str(path))
        text = carry + block
        newlines = np.flatnonzero(np.frombuffer(text, dtype=np.uint8) == _NEWLINE)
        cut = int(newlines[-1]) + 1 if len(newlines) else 0
        if not cut and len(text) > MAX_LINE_BYTES:
            raise InputError(f"line {line} is longer than {MAX_LINE_BYTES:,} bytes", file=str(path))
        if cut:
            yield line, offset, text, cut, newlines
            line += len(newlines)
            offset += cut
        carry = text[cut:]
    if carry.strip():
        yield line, offset, carry, len(carry), np.zeros(0, dtype=np.int64)


def _is_header(line: bytes) -> bool:
    keys = msgspec.json.decode(line, type=dict[str, msgspec.Raw]) if line.lstrip().startswith(b"{") else {}
    return bool(keys) and "id" not in keys


def _lines(first_line: int, offset: int, text: bytes, size: int, newlines: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The non-blank lines of the first `size` bytes of `text`: their numbers, and their byte spans
    in the file (rows). Found with NumPy, which lets the other side's reading thread run meanwhile;
    only a line that starts with a blank is looked at in Python."""
    chars = np.frombuffer(text, dtype=np.uint8, count=size)
    starts, ends = np.concatenate([[0], newlines + 1]), np.concatenate([newlines, [size]])
    kept = ends > starts
    doubtful = np.flatnonzero(kept & _BLANK[chars[np.minimum(starts, max(size - 1, 0))]] if size else kept)
    kept[doubtful] = [bool(text[starts[k] : ends[k]].strip()) for k in doubtful.tolist()]
    lines = np.flatnonzero(kept)
    return first_line + lines, offset + np.column_stack([starts[lines], ends[lines]])


def read(path: Path, *, page_images: Path | None = None) -> LayoutSet:
    """A JSON Lines file of pages; a large one as an index whose pages workers read (`formats.lazy`)."""
    path = Path(path)
    with os.fdopen(open_regular(path), "rb") as handle:
        stamp = FileStamp.of(handle.fileno())
        layout = _read_lines(handle, path, stamp, ImageFolder.beside(path, page_images))
        stamp.check(handle.fileno(), path)  # a file rewritten while read would give lines of two versions
    return layout


def _read_lines(handle: BinaryIO, path: Path, stamp: FileStamp, images: ImageFolder) -> LayoutSet:
    """The pages of the open file, which is the version `stamp` describes."""
    from tore_engine.formats.lazy import LAZY_BYTES, IndexBuilder, PageIndex

    source, size = str(path), stamp.size
    indexed = size >= LAZY_BYTES
    compiled_parse = page_parser.wanted(size)
    warnings: list[InputWarning] = []
    builder = IndexBuilder() if indexed else ColumnsBuilder()
    header = JsonlHeader()
    all_lines: list[np.ndarray] = []
    for first_line, offset, text, length, newlines in _chunks(handle, path):
        advance(length)
        numbers, spans = _lines(first_line, offset, text, length, newlines)
        if first_line == 1 and len(numbers) and _first_is_header(_scanned(first := text[spans[0, 0] - offset : spans[0, 1] - offset], source), source):
            header = decode_json(first, source, JsonlHeader)
            numbers, spans = numbers[1:], spans[1:]
        if not len(numbers):
            continue
        if indexed:
            all_lines.append(numbers)
        if (pages_in_columns := parsed(text, spans - offset, compiled_parse)) is not None:
            builder.extend(pages_in_columns.shifted(offset), parsed_images(pages_in_columns, images, warnings))  # spans in the file
            continue  # the parser read every line as a flat page object: nothing deep, no key twice
        scan_json(text[:length], source, compiled=compiled_scan_wanted(size))  # the file's size decides: its chunks are small
        lines = [text[start:end] for start, end in (spans - offset).tolist()]
        try:
            pages = decode_json(b"[" + b",".join(lines) + b"]", source, list[PageIndex] if indexed else list[NativePage])
        except SchemaError as error:
            raise _located(error, numbers, source) from None
        if isinstance(builder, IndexBuilder):
            builder.add(pages, spans, lambda page, page_id: page_image(page, images, page_id, warnings))
        else:
            add_pages(builder, pages, images, warnings, source)
    if isinstance(builder, IndexBuilder):
        pages = builder.build(path, stamp, lines=np.concatenate(all_lines or [np.zeros(0, np.int64)]))
    else:
        pages = builder.build()
    give_back_free_memory()  # the chunks and their parsed pages
    return LayoutSet(header.name or path.stem, pages, header.taxonomy, source, warnings)


def _scanned(line: bytes, source: str) -> bytes:
    """The line, once scanned for its depth and keys (before msgspec reads anything of it)."""
    scan_json(line, source)
    return line


def _first_is_header(line: bytes, source: str) -> bool:
    try:
        return _is_header(line)
    except (msgspec.DecodeError, msgspec.ValidationError):
        decode_json(line, source)  # raises the syntax error with its place
        raise InputError("line 1 must be a page object or a header object {name, taxonomy}", file=source) from None


def _located(error: SchemaError, numbers: np.ndarray, source: str) -> InputError:
    """A schema error inside a chunk, named by its line (and box)."""
    index, box, problem = error.in_item("boxes")
    return error if index is None else InputError(f"line {int(numbers[index])}: {problem}", file=source, box=box)


def write(layout: LayoutSet, path: Path) -> None:
    """The layout as JSON Lines: the header line, then one page a line, written as they come."""
    path = Path(path)
    folder = path.parent.resolve()
    with path.open("wb") as handle:
        handle.write(msgspec.json.encode(header_document(layout)) + b"\n")
        for page in layout.pages:
            handle.write(msgspec.json.encode(page_document(page, folder)) + b"\n")
