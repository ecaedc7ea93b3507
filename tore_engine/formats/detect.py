"""`--format auto`: which reader a path needs, decided from its first bytes and keys.

Detection never parses a whole file: it reads the first `PEEK_BYTES` (after a byte-order mark),
finds the top-level keys (or the first item's keys) in them, and looks at a folder's file names.
When the keys of a top-level object read so far do not tell (a long `taxonomy` before `pages`, a
JSON Lines header or first page longer than the window), the object is read on, window after
window, only until a key or the end of the first object tells: a window ends after its last
structural character, where no string is open, so memory stays a window's whatever the file's size.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import numpy as np

from tore_engine.core.errors import InputError
from tore_engine.io.files import open_regular, read_bytes, regular_files, skip_bom
from tore_engine.io.json import JsonStructure, first_char, structure_of

PEEK_BYTES = 64 * 1024
WINDOW_BYTES = 2**20  # read at a time past the first window, while the keys do not tell
PARQUET_MAGIC = b"PAR1"
DOCTAGS_SUFFIXES = (".dt", ".doctags.txt", ".doctags")
DOCLING_SCHEMA = "DoclingDocument"
FOLDER_FORMATS = ("docling", "funsd")  # formats whose folders hold one JSON file a document
COCO_KEYS = {"images", "categories", "annotations"}


def detect_file(path: Path) -> str:
    """The format of one file."""
    with os.fdopen(open_regular(Path(path)), "rb") as handle:
        skip_bom(handle)
        prefix = handle.read(PEEK_BYTES)
        found = _format_of(prefix, handle, path)
    if found is None:
        raise InputError(
            "cannot tell its format from its content: expected a layout JSON (an object with 'pages'), JSON "
            "Lines of pages, a COCO instances file or results list, a DoclingDocument, DocTags, or Parquet",
            file=str(path),
        )
    return found


def _format_of(prefix: bytes, handle: BinaryIO, path: Path) -> str | None:
    """The format of a file whose first bytes are `prefix` (`handle` stands after them), or None."""
    if prefix.startswith(PARQUET_MAGIC):
        from tore_engine.formats.parquet_files import is_docling_eval_shard

        return "docling-eval" if is_docling_eval_shard(path) else "parquet"
    text = prefix.lstrip()
    if text.startswith(b"<") and not text.startswith((b"<?", b"<!")):  # an XML declaration or a doctype: CVAT's XML, HTML
        return "doctags"
    if text.startswith(b"["):
        first_item = structure_of(prefix).keys_at(2)
        if "layout_dets" in first_item:
            return "omnidocbench"
        if "image_id" in first_item or text[1:].lstrip().startswith(b"]"):
            return "coco"
    if text.startswith(b"{"):
        return _object_format(prefix, handle)
    return None


def _keyed_format(first_key: str | None, keys: set[str], prefix: bytes) -> str | None:
    """The format that the top-level keys found so far tell, if any."""
    if first_key == "schema_name" or DOCLING_SCHEMA.encode() in prefix[:200] and "body" in keys:
        return "docling"
    if keys & COCO_KEYS:
        return "coco"
    if "form" in keys:
        return "funsd"
    return None


def _object_format(prefix: bytes, handle: BinaryIO) -> str | None:
    """The format of a file whose text starts with an object: its keys, read window after window
    until they tell; a layout JSON when its `pages` is a list; JSON Lines when the first object,
    on one line, is followed by more lines."""
    first_key: str | None = None
    keys: set[str] = set()
    pages_pending = False  # the last window ended just after the colon of "pages"
    one_line, object_start = True, len(prefix) - len(prefix.lstrip())
    for structure in _windows(prefix, handle):
        data = structure.data
        if pages_pending and first_char(data) == b"[":
            return "tore"
        found_keys = structure.keys_at(1)
        first_key = first_key if first_key is not None or not found_keys else found_keys[0]
        keys.update(found_keys)
        if (found := _keyed_format(first_key, keys, prefix)) is not None:
            return found
        start = structure.value_start("pages")
        if start is not None and first_char(data, start) == b"[":
            return "tore"
        pages_pending = start == len(data)
        closed = np.flatnonzero(structure.depth == 0)
        end = int(structure.positions[closed[0]]) if len(closed) else len(data)  # where the first object ends
        one_line = one_line and b"\n" not in data[object_start:end]
        if len(closed):
            return "jsonl" if one_line and "pages" not in keys and _more_lines(data[end + 1 :], handle) else None
        object_start = 0
    return None


def _windows(text: bytes, handle: BinaryIO) -> Iterator[JsonStructure]:
    """A JSON text, `text` and then what `handle` reads, window after window: each window's
    structure with the depths it has in the whole text. A window ends after its last structural
    character (outside strings, so the next starts outside one too); a window without any grows."""
    depth = 0
    while True:
        scanned = structure_of(text)
        depths = scanned.depth + depth
        yield JsonStructure(text, scanned.positions, depths, scanned.quotes)
        cut = int(scanned.positions[-1]) + 1 if len(scanned.positions) else 0
        depth = int(depths[-1]) if len(depths) else depth
        block = handle.read(WINDOW_BYTES)
        if not block:
            return
        text = text[cut:] + block


def _more_lines(rest: bytes, handle: BinaryIO) -> bool:
    """Whether, after the first object, its line holds nothing more and a later line holds
    something: a second JSON Lines item. `rest`: the bytes after the object, then `handle`'s."""
    line_ended = False
    while rest:
        if not line_ended:
            head, newline, rest = rest.partition(b"\n")
            if head.strip():
                return False
            line_ended = bool(newline)
        if line_ended and rest.strip():
            return True
        rest = handle.read(WINDOW_BYTES)
    return False


def detect_folder(folder: Path) -> str:
    """The format of a folder: a benchmark's layout, a docling-eval dataset, or files of one format."""
    if (folder / "annotations").is_dir() and (folder / "ocr").is_dir():
        return "docile"
    files = regular_files(folder)
    if any(name.endswith(DOCTAGS_SUFFIXES) for name in (f.name for f in files)):
        return "doctags"
    shards = sorted(folder.glob("*/*.parquet")) + [f for f in files if f.suffix == ".parquet"]
    if shards:
        return detect_file(shards[0])
    documents = [f for f in files if f.suffix == ".json"]
    if documents and (kind := detect_file(documents[0])) in FOLDER_FORMATS:
        return kind
    raise InputError("cannot tell the format of this folder: no DocTags, Parquet or JSON files in it", file=str(folder))


def detect_format(path: Path) -> str:
    """The format of a reference or prediction path."""
    path = Path(path)
    if path.is_dir():
        return detect_folder(path)
    if not path.exists():
        read_bytes(path)  # raises the usual "no such file"
    return detect_file(path)
