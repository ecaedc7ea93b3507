"""`--format auto`: which reader a path needs, decided from its first bytes and keys.

Detection never parses a whole file: it reads the first `PEEK_BYTES` (after a byte-order mark),
finds the top-level keys (or the first item's keys) in them, and looks at a folder's file names.
When the keys of a top-level object read so far do not tell (a long `taxonomy` before `pages`, a
JSON Lines header or first page longer than the window), the object is read on, window after
window, only until a key or the end of the first object tells: a window ends after its last
structural character, where no string is open, so memory stays a window's whatever the file's size.

A file of no format TORE reads is refused with what it is, where that can be told: empty, UTF-16
or UTF-32 text (`io.files.skip_bom`), CVAT's XML, a TORE result, an object whose keys resemble
a format's. A file with the keys of two formats is refused as ambiguous by the reader that sees
all its keys (`ambiguous_keys`): detection stops at the first key that tells.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import BinaryIO

import numpy as np

from tore_engine.core.errors import InputError
from tore_engine.formats import docbank, yolo
from tore_engine.io.files import blank_problem, is_regular_file, open_regular, read_bytes, regular_files, skip_bom
from tore_engine.io.json import JsonStructure, first_char, resembling, structure_of

PEEK_BYTES = 64 * 1024
WINDOW_BYTES = 2**20  # read at a time past the first window, while the keys do not tell
PARQUET_MAGIC = b"PAR1"
DOCTAGS_SUFFIXES = (".dt", ".doctags.txt", ".doctags")
DOCLING_SCHEMA = "DoclingDocument"
FOLDER_FORMATS = ("docling", "funsd", "labelme")  # formats whose folders hold one JSON file a document
COCO_KEYS = {"images", "categories", "annotations"}
TELLING_KEYS = ("pages", *sorted(COCO_KEYS))  # the top-level keys a misspelt key is compared with
RESULT_KEYS = {"mode", "classes", "pixels"}  # report.json's (docs/cli.md#reportjson), none a layout's
RESULT_FILE = "report.json"
# What a TORE result is and what to do with it, in one place, said of its report.json and of its folder:
# `tore evaluate` saves its evaluation beside report.json (`results.saved`), which these open.
RESULT_NOT_LAYOUT = ("{this} a TORE result (report.json of `tore evaluate`), not a layout: open {folder} with `tore.open(DIR)` "
                     "or the app's sidebar (Saved evaluations)")
RESULT_FILE_IS = RESULT_NOT_LAYOUT.format(this="this is", folder="its folder")
RESULT_FOLDER_IS = RESULT_NOT_LAYOUT.format(this="this folder is", folder="it")
CVAT_ROOT = "annotations"  # the root element of CVAT's "CVAT for images" XML export
CVAT_NOT_READ = ("not read: CVAT XML (\"CVAT for images\"); export the task from CVAT as \"COCO 1.0\" and pass "
                 "its annotations/instances_default.json, which TORE reads as COCO")
EXPECTED = ("expected a layout JSON (an object with 'pages'), JSON Lines of pages, a COCO instances file or results "
            "list, a DoclingDocument, DocTags, DocBank token text, or Parquet")
_XML_ROOT = re.compile(rb"<(?![?!/])([A-Za-z_][\w.:-]{0,63})")  # the first element's name, past a declaration or doctype
# Kinds of file that are no layout, told by their content: what `_format_of` says for them.
RESULT, CVAT = "a TORE result", "CVAT XML"
NOT_LAYOUTS = {RESULT: RESULT_FILE_IS, CVAT: CVAT_NOT_READ}


def detect_file(path: Path) -> str:
    """The format of one file; an error saying what the file is when it is none that TORE reads."""
    with os.fdopen(open_regular(Path(path)), "rb") as handle:
        skip_bom(handle, path)
        prefix = handle.read(PEEK_BYTES)
        found = _format_of(prefix, handle, path)
        problem = blank_problem(prefix) if found is None and not handle.read(1) else None
    if found in NOT_LAYOUTS:
        raise InputError(NOT_LAYOUTS[found], file=str(path))
    if found is None:
        raise InputError(problem or f"cannot tell its format from its content{_seen(prefix)}: {EXPECTED}", file=str(path))
    return found


def _seen(prefix: bytes) -> str:
    """What the first bytes show of a file of no known format: an XML root, or a top-level key that
    resembles one of a format's (", its key 'page' resembles 'pages'"); "" if nothing tells."""
    text = prefix.lstrip()
    if text.startswith(b"<") and (root := _XML_ROOT.search(text)) is not None:
        return f" (markup whose first element is <{root.group(1).decode('utf-8', 'replace')}>)"
    if text.startswith(b"{"):
        for key in structure_of(text).keys_at(1):
            if (known := resembling(key, TELLING_KEYS)) is not None:
                return f" (its key {key!r} resembles {known!r})"
    return ""


def result_keys(keys: Collection[str], source: str) -> InputError | None:
    """The error for a top-level object with report.json's keys (a TORE result), else None: what
    a reader told to read it as a layout says, rather than "unknown key 'mode'"."""
    return InputError(RESULT_FILE_IS, file=source) if RESULT_KEYS <= set(keys) else None


def ambiguous_keys(keys: Collection[str], source: str) -> InputError | None:
    """The error for a top-level object with both a layout JSON's `pages` and COCO's keys, which
    `--format auto` cannot read as one without dropping the other (None for any other keys): named
    with the keys and the `--format` that reads each."""
    coco = sorted(COCO_KEYS & set(keys))
    if "pages" not in keys or not coco:
        return None
    listed = ", ".join(map(repr, coco))
    return InputError(f"is both a layout JSON (key 'pages') and a COCO file (keys {listed}), so its format is "
                      f"ambiguous: pass --format coco to read it as COCO (its 'pages' left out), or remove {listed} "
                      "to read its pages as a layout JSON (--format tore)", file=source)


def _format_of(prefix: bytes, handle: BinaryIO, path: Path) -> str | None:
    """The format of a file whose first bytes are `prefix` (`handle` stands after them), or None."""
    if prefix.startswith(PARQUET_MAGIC):
        from tore_engine.formats.parquet_files import is_docling_eval_shard

        return "docling-eval" if is_docling_eval_shard(path) else "parquet"
    if docbank.looks_like(prefix):  # before JSON and markup: a first token may be "{", "[" or "<b>"
        return "docbank"
    text = prefix.lstrip()
    if text.startswith(b"<"):
        root = _XML_ROOT.search(text)
        if root is not None and root.group(1).decode("utf-8", "replace") == CVAT_ROOT:
            return CVAT
        if root is not None and root.group(1).split(b":")[-1] == b"PcGts":
            return "page-xml"
        if not text.startswith((b"<?", b"<!")):  # an XML declaration or a doctype: XML, HTML
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
    if first_key == "mode" and RESULT_KEYS <= keys:
        return RESULT
    if "shapes" in keys and keys & {"imagePath", "imageWidth", "imageHeight"}:
        return "labelme"
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
    """The format of a folder: a benchmark's layout, a docling-eval dataset, or files of one format;
    a folder of `tore evaluate`'s results is refused as such."""
    if (folder / "annotations").is_dir() and (folder / "ocr").is_dir():
        return "docile"
    if is_regular_file(folder / RESULT_FILE) and _is_result(folder / RESULT_FILE):
        raise InputError(RESULT_FOLDER_IS, file=str(folder))
    files = regular_files(folder)
    if any(name.endswith(DOCTAGS_SUFFIXES) for name in (f.name for f in files)):
        return "doctags"
    if yolo.looks_like(files):
        return "yolo"
    if docbank.folder_looks_like(files):
        return "docbank"
    if (pages := [f for f in files if f.suffix == ".xml"]) and detect_file(sorted(pages)[0]) == "page-xml":
        return "page-xml"
    shards = sorted(folder.glob("*/*.parquet")) + [f for f in files if f.suffix == ".parquet"]
    if shards:
        return detect_file(shards[0])
    documents = [f for f in files if f.suffix == ".json"]
    if documents and (kind := detect_file(documents[0])) in FOLDER_FORMATS:
        return kind
    raise InputError("cannot tell the format of this folder: no DocTags, Parquet or JSON files in it", file=str(folder))


def _is_result(path: Path) -> bool:
    try:
        detect_file(path)
    except InputError as error:
        return error.problem == RESULT_FILE_IS
    return False


def detect_format(path: Path) -> str:
    """The format of a reference or prediction path."""
    path = Path(path)
    if path.is_dir():
        return detect_folder(path)
    if not path.exists():
        read_bytes(path)  # raises the usual "no such file"
    return detect_file(path)
