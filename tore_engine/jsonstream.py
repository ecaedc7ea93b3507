"""Reading JSON files too large to parse whole.

A 100,000-page layout file parsed with `json` becomes a Python object tree ten times its size. For
files over `LARGE_FILE_BYTES` we let ijson's C parser yield the big arrays (pages, annotations) one
item at a time, so each page is turned into compact arrays as it is read; the small top-level
values (name, taxonomy, images, categories) are read as usual.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

import ijson

from tore_engine.errors import InputError

LARGE_FILE_BYTES = 8 * 2**20  # streaming is as fast as parsing whole from about this size up
_MISSING = object()


@contextmanager
def _parsing(path: Path) -> Iterator[BinaryIO]:
    """Open `path` for ijson and turn its parse errors into an `InputError`."""
    try:
        with path.open("rb") as handle:
            yield handle
    except ijson.JSONError as error:
        raise InputError(f"is not valid JSON: {str(error).strip()}", file=str(path)) from None
    except UnicodeDecodeError as error:
        raise InputError(f"is not UTF-8 text (byte {error.start})", file=str(path)) from None


class LazyArray:
    """A top-level array of a large JSON file, read item by item each time it is iterated."""

    def __init__(self, path: Path, prefix: str) -> None:
        self.path = path
        self.prefix = prefix

    def __iter__(self) -> Iterator[Any]:
        with _parsing(self.path) as handle:
            yield from ijson.items(handle, self.prefix, use_float=True)


def _first(path: Path, prefix: str) -> Any:
    """The first value at `prefix`, or `_MISSING`; stops reading as soon as it is found."""
    with _parsing(path) as handle:
        return next(ijson.items(handle, prefix, use_float=True), _MISSING)


def _first_byte(path: Path) -> bytes:
    with path.open("rb") as handle:
        while (byte := handle.read(1)) and byte.isspace():
            pass
    return byte


def is_large(path: Path) -> bool:
    return path.is_file() and path.stat().st_size > LARGE_FILE_BYTES


def read_large_json(path: Path, arrays: tuple[str, ...], values: tuple[str, ...]) -> Any:
    """A large file's top-level object with its `arrays` as `LazyArray`s and its `values` parsed
    (keys it lacks are left out), or a `LazyArray` when the file is one top-level array."""
    first = _first_byte(path)
    if first == b"[":
        return LazyArray(path, "item")
    if first != b"{":
        raise InputError("is not valid JSON: expected an object or an array", file=str(path))
    document: dict[str, Any] = {}
    for key in arrays:
        if _first(path, f"{key}.item") is not _MISSING or _first(path, key) is not _MISSING:
            document[key] = LazyArray(path, f"{key}.item")
    for key in values:
        if (value := _first(path, key)) is not _MISSING:
            document[key] = value
    return document
