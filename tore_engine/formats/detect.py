"""`--format auto`: which reader a path needs, decided from its first bytes and keys.

Detection never parses or scans a whole file: it reads the first `PEEK_BYTES`, finds the
top-level keys (or the first item's keys) in that prefix, and looks at a folder's file names.
"""

from __future__ import annotations

from pathlib import Path

from tore_engine.errors import InputError
from tore_engine.inputs import is_regular_file, peek_bytes, read_bytes, structure_of

PEEK_BYTES = 64 * 1024
PARQUET_MAGIC = b"PAR1"
DOCTAGS_SUFFIXES = (".dt", ".doctags.txt", ".doctags")
DOCLING_SCHEMA = "DoclingDocument"
FOLDER_FORMATS = ("docling", "funsd")  # formats whose folders hold one JSON file a document


def _value_starts_with(prefix: bytes, key: str, char: bytes) -> bool:
    marker = f'"{key}"'.encode()
    at = prefix.find(marker)
    if at < 0:
        return False
    rest = prefix[at + len(marker) :].lstrip()
    return rest.startswith(b":") and rest[1:].lstrip().startswith(char)


def detect_file(path: Path) -> str:
    """The format of one file."""
    prefix = peek_bytes(path, PEEK_BYTES)
    if prefix.startswith(PARQUET_MAGIC):
        from tore_engine.formats.parquet import is_docling_eval_shard

        return "docling-eval" if is_docling_eval_shard(path) else "parquet"
    text = prefix.lstrip()
    if text.startswith(b"<"):
        return "doctags"
    if text.startswith(b"["):
        first_item = structure_of(prefix).keys_at(2)
        if "layout_dets" in first_item:
            return "omnidocbench"
        if "image_id" in first_item or text[1:].lstrip().startswith(b"]"):
            return "coco"
    if text.startswith(b"{"):
        keys = structure_of(prefix).keys_at(1)
        if keys[:1] == ["schema_name"] or DOCLING_SCHEMA.encode() in prefix[:200] and "body" in keys:
            return "docling"
        if "images" in keys or "categories" in keys or "annotations" in keys:
            return "coco"
        if "form" in keys:
            return "funsd"
        first_line = text.split(b"\n", 1)[0]
        if "pages" in keys and _value_starts_with(prefix, "pages", b"["):
            return "tore"
        if b"\n" in text.rstrip() and first_line.rstrip().endswith(b"}") and "pages" not in structure_of(first_line).keys_at(1):
            return "jsonl"
    raise InputError(
        "cannot tell its format from its content: expected a layout JSON (an object with 'pages'), JSON "
        "Lines of pages, a COCO instances file or results list, a DoclingDocument, DocTags, or Parquet",
        file=str(path),
    )


def _files(folder: Path) -> list[Path]:
    try:
        return sorted(child for child in folder.iterdir() if is_regular_file(child))
    except OSError as error:
        raise InputError(f"cannot list the folder ({error.strerror})", file=str(folder)) from None


def detect_folder(folder: Path) -> str:
    """The format of a folder: a benchmark's layout, a docling-eval dataset, or files of one format."""
    if (folder / "annotations").is_dir() and (folder / "ocr").is_dir():
        return "docile"
    files = _files(folder)
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
