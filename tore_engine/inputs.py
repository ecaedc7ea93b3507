"""Everything read from outside passes through here: one path policy, bounded files, bounded JSON.

What is trusted and what is not (README, "Threat model"): server configuration, the environment and
command-line flags are trusted; every path, string and number *inside* an input file is not. So:

- **Paths named inside inputs** (page images, PDFs, DocILE docids, Markdown files) are resolved after
  symbolic links and must stay inside an allowed folder (`confine`); only regular files are opened,
  checked on the open descriptor, so a FIFO, a device or a folder is refused before any read can
  block (`read_bytes`). A refusal never says whether anything exists outside the folder.
- **Files** are read whole, up to a size limit, and parsed once.
- **JSON** is first scanned for its structure (`scan_json`): nesting deeper than `MAX_JSON_DEPTH`
  and duplicate keys are errors, so no parser ever sees a hostile depth and no value silently
  replaces another. Then msgspec decodes it against the reader's strict schema (`decode_json`):
  unknown keys, missing keys and wrong types become errors that name where they are.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import msgspec
import numpy as np

from tore_engine.errors import InputError

MAX_JSON_DEPTH = 64  # the deepest real input we know nests 17 levels
MAX_INPUT_BYTES = 8 * 2**30  # one input file; the app sets a lower limit for uploads
_QUOTE, _BACKSLASH, _COLON, _COMMA = 34, 92, 58, 44
_OPEN_OBJECT, _CLOSE_OBJECT, _OPEN_ARRAY, _CLOSE_ARRAY = 123, 125, 91, 93
_STRUCTURAL = np.zeros(256, dtype=bool)
_STRUCTURAL[[_OPEN_OBJECT, _CLOSE_OBJECT, _OPEN_ARRAY, _CLOSE_ARRAY, _COLON, _COMMA]] = True
_FIRST_NON_BLANK = re.compile(rb"[^ \t\r\n]")
BOM = b"\xef\xbb\xbf"  # UTF-8's byte-order mark
_KEY_PREFIX_BYTES = 8  # bytes of a key's start and end compared before its whole text
# (device, inode) -> path of each result that the running `tore evaluate` replaces (`tore_engine.output`
# fills it while the run holds --out): never read as an input, however the path reaches it.
OUTPUTS: dict[tuple[int, int], str] = {}


# --- paths --------------------------------------------------------------------------------------


def _text(path: str | Path) -> str:
    text = os.fspath(path)
    if "\x00" in text:
        raise InputError("a path contains a NUL byte")
    return text


def confine(path: str | Path, root: str | Path, *, what: str = "path") -> Path:
    """The real path of `path` (relative paths are taken from `root`), if it lies inside `root`
    after every `..` and symbolic link is resolved. The refusal is the same whether or not the
    target exists, so it tells nothing about the world outside `root`."""
    text = _text(path)
    try:
        real_root = Path(_text(root)).resolve()
        real = (real_root / Path(text).expanduser()).resolve()
    except (OSError, RuntimeError):  # a symbolic-link loop, or a name the system refuses
        raise InputError(f"{what} {text!r} cannot be resolved (a symbolic-link loop, or an invalid name)") from None
    if not real.is_relative_to(real_root):
        raise InputError(f"{what} {text!r} is outside the folder it must stay in")
    return real


def image_size(path: Path) -> tuple[int, int]:
    """(width, height) of the page image at `path`, read through the bounded reader (so a FIFO or
    a folder is refused, never waited on) and decoded only as far as its header."""
    import io

    from PIL import Image

    data = read_bytes(path)
    try:
        with Image.open(io.BytesIO(data)) as image:
            return image.size
    except Exception:  # Pillow raises many types for damaged files (and for decompression bombs)
        raise InputError("cannot be read as an image", file=str(path)) from None


def inside(name: str | Path, folder: Path, *, what: str) -> Path:
    """`folder / name`, refused (`tore_engine.inputs.confine`) when it would leave `folder`
    after `..` and symbolic links. The path is returned as written, not resolved, because it is
    shown to the user and printed in results."""
    confine(name, folder, what=what)
    return folder / name


def open_regular(path: Path) -> int:
    """An open descriptor on `path`, which must be a regular file. Opened non-blocking so that a FIFO
    cannot hang us, and checked on the descriptor itself (no race between check and open)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        raise _os_error(error, path) from None
    status = os.fstat(descriptor)
    if (output := OUTPUTS.get((status.st_dev, status.st_ino))) is not None:
        os.close(descriptor)
        raise InputError(f"is the same file as {output}, which this run replaces with its results; move it out of --out, "
                         "or choose another --out", file=str(path))
    if not stat.S_ISREG(status.st_mode):
        os.close(descriptor)
        kind = "a folder" if path.is_dir() else "not a regular file (a device, pipe or socket)"
        raise InputError(f"is {kind}; expected a file", file=str(path))
    return descriptor


def _os_error(error: OSError, path: Path) -> InputError:
    reasons = {
        errno.ENOENT: "no such file",
        errno.EACCES: "cannot be read (permission denied)",
        errno.ELOOP: "cannot be opened (a symbolic-link loop)",
        errno.ENAMETOOLONG: "cannot be opened (the name is too long)",
        errno.EISDIR: "is a folder; expected a file",
        errno.ENOTDIR: "cannot be opened (a part of the path is not a folder)",
    }
    return InputError(reasons.get(error.errno, f"cannot be read ({error.strerror})"), file=str(path))


def is_regular_file(path: Path) -> bool:
    """Whether `path` is a regular file (after symbolic links), without opening it."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def peek_bytes(path: str | Path, size: int) -> bytes:
    """The first `size` bytes of a regular file (to recognise its format without reading it all)."""
    path = Path(_text(path))
    descriptor = open_regular(path)
    try:
        return os.pread(descriptor, size, 0)
    except OSError as error:
        raise _os_error(error, path) from None
    finally:
        os.close(descriptor)


def changed_while_read(path: str | Path) -> InputError:
    """A file that was rewritten, replaced, grown or cut while we read it: its bytes mix two versions."""
    return InputError("changed while it was being read; run again once it is complete", file=str(path))


@dataclass(frozen=True)
class FileStamp:
    """One version of a file: its inode (a file replaced by a rename is another), size, and the times
    of its last write and of its last change (a write that keeps the size and puts the write time
    back still moves the change time). Taken on an open descriptor, so it is the version read; a
    worker re-reading spans of an indexed file compares it (`check`) before and after its reads.
    No device number: a cluster's hosts may mount the same file system under other numbers."""

    inode: int
    size: int
    modified_ns: int
    changed_ns: int

    @classmethod
    def of(cls, descriptor: int) -> "FileStamp":
        status = os.fstat(descriptor)
        return cls(status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)

    def check(self, descriptor: int, path: str | Path) -> None:
        """An error naming `path` unless the file open at `descriptor` is still this version."""
        if FileStamp.of(descriptor) != self:
            raise changed_while_read(path)


def read_to_end(handle: BinaryIO, path: str | Path, *, max_bytes: int = MAX_INPUT_BYTES, stamp: FileStamp | None = None) -> bytes:
    """The rest of an open regular file, from where `handle` stands, read by the file's size on the
    descriptor and not by `max_bytes`: a buffer of the limit's size would be allocated first (8 GiB,
    which a memory cap or a small host refuses). One byte more is asked for, to see growth, and the
    file must still be the version `stamp` describes (by default the one found here) at the end."""
    stamp = stamp or FileStamp.of(handle.fileno())
    if stamp.size > max_bytes:
        raise InputError(f"is {stamp.size:,} bytes, more than the {max_bytes:,} allowed", file=str(path))
    expected = max(stamp.size - handle.tell(), 0)
    data = handle.read(expected)
    if len(data) != expected or handle.read(1):
        raise changed_while_read(path)
    stamp.check(handle.fileno(), path)
    return data


def skip_bom(handle: BinaryIO) -> int:
    """Leave `handle`, open at a file's start, after a UTF-8 byte-order mark if the file has one
    (some editors write one before JSON, which RFC 8259 lets a parser ignore), and say how many
    bytes that is. Skipped where the file is read, so every parser (msgspec, the NumPy and
    compiled scans, the compiled page parser) sees the same text, with no copy; an offset in that
    text plus the bytes skipped is one in the file (the index of `formats.lazy` adds them), and a
    line and column in it are where an editor, which hides the mark, shows them."""
    skipped = len(BOM) if handle.read(len(BOM)) == BOM else 0
    handle.seek(skipped)
    return skipped


def read_stamped(path: str | Path, *, max_bytes: int = MAX_INPUT_BYTES, json_text: bool = False) -> tuple[bytes, FileStamp, int]:
    """The content of a regular file of at most `max_bytes`, the version it is, and where that
    content starts in the file: after a byte-order mark for a JSON text (`json_text`), else at 0."""
    path = Path(_text(path))
    descriptor = open_regular(path)
    try:
        stamp = FileStamp.of(descriptor)
        with os.fdopen(descriptor, "rb", closefd=False) as handle:
            start = skip_bom(handle) if json_text else 0
            return read_to_end(handle, path, max_bytes=max_bytes, stamp=stamp), stamp, start
    except OSError as error:
        raise _os_error(error, path) from None
    finally:
        os.close(descriptor)


def read_bytes(path: str | Path, *, max_bytes: int = MAX_INPUT_BYTES) -> bytes:
    """The whole content of a regular file of at most `max_bytes`."""
    return read_stamped(path, max_bytes=max_bytes)[0]


def read_json_bytes(path: str | Path, *, max_bytes: int = MAX_INPUT_BYTES) -> bytes:
    """A JSON file's text (of at most `max_bytes`), without the byte-order mark it may start with."""
    return read_stamped(path, max_bytes=max_bytes, json_text=True)[0]


def read_text(path: str | Path, *, max_bytes: int = MAX_INPUT_BYTES) -> str:
    """A regular file's content as UTF-8 text."""
    data = read_bytes(path, max_bytes=max_bytes)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"is not UTF-8 text (byte {error.start})", file=str(path)) from None


# --- the structure of a JSON text -----------------------------------------------------------------


def _line_and_column(data: bytes, offset: int) -> str:
    line = data.count(b"\n", 0, offset) + 1
    column = offset - data.rfind(b"\n", 0, offset)
    return f"line {line}, column {column}"


def _string_quotes(chars: np.ndarray) -> np.ndarray:
    """Positions of the quotes that open or close a string (not the escaped ones)."""
    quotes = np.flatnonzero(chars == _QUOTE)
    after_backslash = quotes[(quotes > 0) & (chars[np.maximum(quotes - 1, 0)] == _BACKSLASH)]
    if not len(after_backslash):
        return quotes
    backslash = chars == _BACKSLASH
    run_starts = np.flatnonzero(backslash & ~np.r_[False, backslash[:-1]])
    run_lengths = after_backslash - run_starts[np.searchsorted(run_starts, after_backslash - 1, side="right") - 1]
    return np.setdiff1d(quotes, after_backslash[run_lengths % 2 == 1], assume_unique=True)


@dataclass(frozen=True)
class JsonStructure:
    """Where a JSON text's structural characters are (outside strings), with the nesting depth after
    each: enough to find a top-level value's bytes, or an array's items, without parsing them."""

    data: bytes
    positions: np.ndarray  # (m,) int64: byte offsets of { } [ ] : , outside strings
    depth: np.ndarray  # (m,) int64: the depth after each (an opener counts itself)
    quotes: np.ndarray  # the quotes that delimit strings

    def top_level_values(self) -> dict[str, tuple[int, int]]:
        """The byte span of each value of the top-level object, by key."""
        at_top = self.depth == 1
        colons = np.flatnonzero(at_top & (self._chars() == _COLON))
        ends = np.flatnonzero((at_top & (self._chars() == _COMMA)) | ((self.depth == 0) & (self._chars() == _CLOSE_OBJECT)))
        spans = {}
        for colon in colons.tolist():
            key = self._key_before(int(self.positions[colon]))
            end = ends[np.searchsorted(ends, colon)] if len(ends) else len(self.positions) - 1
            spans[key] = (int(self.positions[colon]) + 1, int(self.positions[end]))
        return spans

    def array_items(self, start: int, end: int) -> list[tuple[int, int]]:
        """The byte spans of the items of the array that occupies `data[start:end]`."""
        first = int(np.searchsorted(self.positions, start))
        if first >= len(self.positions) or self._chars()[first] != _OPEN_ARRAY:
            return []
        level = int(self.depth[first])
        last = int(np.searchsorted(self.positions, end)) - 1
        inside = slice(first + 1, last)
        commas = self.positions[inside][(self.depth[inside] == level) & (self._chars()[inside] == _COMMA)]
        bounds = [int(self.positions[first]) + 1, *(int(c) + 1 for c in commas), int(self.positions[last]) + 1]
        items = [(bounds[k], bounds[k + 1] - 1) for k in range(len(bounds) - 1)]
        return [] if len(items) == 1 and not self.data[items[0][0] : items[0][1]].strip() else items

    def keys_at(self, depth: int) -> list[str]:
        """The keys of the objects at `depth` (1: the top-level object), in file order. Works on a
        truncated text too, which is how format detection reads a file's first bytes."""
        colons = np.flatnonzero((self.depth == depth) & (self._chars() == _COLON))
        return [self._key_before(int(self.positions[colon])) for colon in colons.tolist()]

    def value_start(self, key: str) -> int | None:
        """Where the value of the top-level object's first `key` starts, or None (a text cut
        short may end before it)."""
        colons = np.flatnonzero((self.depth == 1) & (self._chars() == _COLON))
        for colon in self.positions[colons].tolist():
            if self._key_before(colon) == key:
                start = colon + 1
                while start < len(self.data) and self.data[start] in b" \t\r\n":
                    start += 1
                return start
        return None

    def _chars(self) -> np.ndarray:
        return np.frombuffer(self.data, dtype=np.uint8)[self.positions]

    def _key_before(self, colon: int) -> str:
        close = int(np.searchsorted(self.quotes, colon)) - 1
        if close < 1:
            return ""
        try:
            return msgspec.json.decode(self.data[self.quotes[close - 1] : self.quotes[close] + 1])
        except msgspec.DecodeError:
            return ""


def _keys(data: bytes, chars: np.ndarray, quotes: np.ndarray, positions: np.ndarray, depth: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every object key as (opening quote, closing quote, position of its object's `{`)."""
    colons = positions[chars[positions] == _COLON]
    close_index = np.searchsorted(quotes, colons) - 1
    well_formed = (close_index >= 1) & (close_index % 2 == 1)
    colons, close_index = colons[well_formed], close_index[well_formed]
    key_open, key_close = quotes[close_index - 1], quotes[close_index]
    level = depth[np.searchsorted(positions, key_open) - 1]  # the depth the key sits at
    opener = chars[positions] == _OPEN_OBJECT
    object_level, object_position = depth[opener], positions[opener]
    span = len(data) + 1
    order = np.argsort(object_level * span + object_position, kind="stable")
    combined = (object_level * span + object_position)[order]
    owner = np.searchsorted(combined, level * span + key_open) - 1
    return key_open, key_close, object_position[order][np.maximum(owner, 0)]


def _key_fingerprints(data: bytes, chars: np.ndarray, key_open: np.ndarray, key_close: np.ndarray) -> np.ndarray:
    """(keys, 3) int64: a key's length and its first and last bytes packed, to sort candidates."""
    start, length = key_open + 1, key_close - key_open - 1
    head = np.zeros(len(start), dtype=np.uint64)
    tail = np.zeros(len(start), dtype=np.uint64)
    last = len(chars) - 1
    for k in range(_KEY_PREFIX_BYTES):
        present = k < length
        head |= np.where(present, chars[np.minimum(start + k, last)], 0).astype(np.uint64) << np.uint64(8 * k)
        tail |= np.where(present, chars[np.maximum(key_close - 1 - k, 0)], 0).astype(np.uint64) << np.uint64(8 * k)
    return np.stack([length, head.view(np.int64), tail.view(np.int64)], axis=1)


def _first_repeat(keys: list[tuple[int, str | bytes]]) -> int | None:
    """The offset of the first key (in file order) that repeats an earlier one of the list."""
    seen: set = set()
    for offset, key in sorted(keys):
        if key in seen:
            return offset
        seen.add(key)
    return None


def _duplicate_key(data: bytes, chars: np.ndarray, quotes: np.ndarray, positions: np.ndarray, depth: np.ndarray) -> tuple[int, str] | None:
    """The first key (in file order) that repeats an earlier key of its object, or None.

    Keys are grouped by object and by a fingerprint (length, first and last bytes); only keys that
    share both are compared in full. Keys written with escapes are compared by their decoded text
    with every key of their object (rare)."""
    key_open, key_close, owner = _keys(data, chars, quotes, positions, depth)
    if len(key_open) < 2:
        return None
    escaped = np.zeros(len(key_open), dtype=bool)
    if b"\\" in data:
        backslashes = np.flatnonzero(chars == _BACKSLASH)
        escaped = np.searchsorted(backslashes, key_close) > np.searchsorted(backslashes, key_open)
    repeats: list[int] = []
    fingerprints = _key_fingerprints(data, chars, key_open, key_close)
    plain = np.flatnonzero(~escaped[:])
    columns = fingerprints[plain]
    order = plain[np.lexsort((columns[:, 2], columns[:, 1], columns[:, 0], owner[plain]))]
    same = (owner[order][1:] == owner[order][:-1]) & (fingerprints[order][1:] == fingerprints[order][:-1]).all(axis=1)
    group_starts = np.flatnonzero(np.r_[True, ~same])
    for start, end in zip(group_starts.tolist(), [*group_starts[1:].tolist(), len(order)]):
        if end - start > 1:
            members = order[start:end].tolist()
            found = _first_repeat([(int(key_open[k]), data[key_open[k] + 1 : key_close[k]]) for k in members])
            repeats += [found] if found is not None else []
    for container in np.unique(owner[escaped]).tolist():
        members = np.flatnonzero(owner == container).tolist()
        found = _first_repeat([(int(key_open[k]), msgspec.json.decode(data[key_open[k] : key_close[k] + 1])) for k in members])
        repeats += [found] if found is not None else []
    if not repeats:
        return None
    offset = min(repeats)
    close = int(quotes[np.searchsorted(quotes, offset) + 1])
    return offset, msgspec.json.decode(data[offset : close + 1])


def structure_of(data: bytes) -> JsonStructure:
    """Where a JSON text's structural characters are, unchecked (the text may be cut short)."""
    chars = np.frombuffer(data, dtype=np.uint8)
    quotes = _string_quotes(chars)
    positions = np.flatnonzero(_STRUCTURAL[chars])
    positions = positions[np.searchsorted(quotes, positions) % 2 == 0]  # outside strings
    symbols = chars[positions]
    step = (symbols == _OPEN_OBJECT).astype(np.int64) + (symbols == _OPEN_ARRAY) - (symbols == _CLOSE_OBJECT) - (symbols == _CLOSE_ARRAY)
    return JsonStructure(data, positions, np.cumsum(step), quotes)


KERNEL_MIN_BYTES = 8 * 2**20  # from here the compiled scan's bounded memory pays for loading it


@dataclass(frozen=True)
class ScannedJson:
    """The compiled scan's findings (`tore_engine.json_kernel`), answering as `JsonStructure` does
    for the spans a reader asks for."""

    data: bytes
    top_level: np.ndarray  # rows (key start, key end, value start, value end)
    items: np.ndarray  # rows (array's opening bracket, item start, item end)

    def top_level_values(self) -> dict[str, tuple[int, int]]:
        return {msgspec.json.decode(self.data[k0 : k1 + 1]): (int(v0), int(v1)) for k0, k1, v0, v1 in self.top_level.tolist()}

    def array_items(self, start: int, end: int) -> list[tuple[int, int]]:
        bracket = start
        while bracket < end and self.data[bracket] in b" \t\r\n":
            bracket += 1
        rows = self.items[self.items[:, 0] == bracket]
        return [(int(a), int(b)) for a, b in rows[:, 1:].tolist()]


def _string_at(data: bytes, start: int) -> str:
    """The decoded JSON string whose opening quote is at `start`."""
    end = start + 1
    while True:
        end = data.index(b'"', end)
        backslashes = 0
        while data[end - 1 - backslashes] == _BACKSLASH:
            backslashes += 1
        if backslashes % 2 == 0:
            return msgspec.json.decode(data[start : end + 1])
        end += 1


def _error_at(data: bytes, source: str, status: int, offset: int, max_depth: int) -> InputError:
    from tore_engine import json_kernel

    where = _line_and_column(data, offset)
    if status == json_kernel.TOO_DEEP:
        return InputError(f"is nested more than {max_depth} levels deep ({where}); no layout format nests so deep", file=source)
    key = _string_at(data, offset)
    return InputError(f"repeats the key {key!r} in one object ({where}); a JSON key may appear once", file=source)


def _escaped_repeat(data: bytes, objects: np.ndarray) -> int | None:
    """In objects whose keys are written with escapes, the first key repeating another by decoded
    text (the NumPy scan compares those), as an offset in `data`; None if there is none (rare)."""
    found = []
    for start, end in objects.tolist():
        part = data[start : end + 1]
        structure = structure_of(part)
        duplicate = _duplicate_key(part, np.frombuffer(part, dtype=np.uint8), structure.quotes, structure.positions, structure.depth)
        if duplicate is not None:
            found.append(start + duplicate[0])
    return min(found, default=None)


def _scan_compiled(data: bytes, source: str, max_depth: int) -> ScannedJson | None:
    """The compiled scan, or None when the text is malformed (the NumPy scan then applies the
    rules and the decoder names the syntax error)."""
    from tore_engine import json_kernel

    status, offset, top, items, escaped = json_kernel.kernels.load()(np.frombuffer(data, dtype=np.uint8), max_depth)
    if status == json_kernel.TOO_DEEP:
        raise _error_at(data, source, status, int(offset), max_depth)
    if status == json_kernel.MALFORMED:
        return None
    repeats = [int(offset)] if status == json_kernel.REPEATED_KEY else []
    if len(escaped) and (other := _escaped_repeat(data, escaped)) is not None:
        repeats.append(other)
    if repeats:
        raise _error_at(data, source, json_kernel.REPEATED_KEY, min(repeats), max_depth)
    return ScannedJson(data, top, items)


def compiled_scan_wanted(size: int) -> bool:
    """Whether a JSON text of `size` bytes is scanned by the compiled kernel (see `scan_json`)."""
    from tore_engine.jit import numba_available

    if size < KERNEL_MIN_BYTES or not numba_available():
        return False
    from tore_engine import json_kernel

    return json_kernel.prepared(size)


def scan_json(data: bytes, source: str, *, max_depth: int = MAX_JSON_DEPTH, compiled: bool | None = None) -> JsonStructure | ScannedJson:
    """The structure of a JSON text; an `InputError` when it nests deeper than `max_depth` or an
    object repeats a key. (Syntax errors are left to the decoder, which names them better.)

    Large texts are scanned by the compiled kernel (`json_kernel`, memory bounded by the open
    objects' keys), small ones with NumPy; both apply the same rules (`compiled` forces one)."""
    if compiled if compiled is not None else compiled_scan_wanted(len(data)):
        scanned = _scan_compiled(data, source, max_depth)
        if scanned is not None:
            return scanned  # else malformed: the NumPy scan applies the rules, the decoder names the error
    structure = structure_of(data)
    chars, quotes, positions, depth = np.frombuffer(data, dtype=np.uint8), structure.quotes, structure.positions, structure.depth
    too_deep = np.flatnonzero(depth > max_depth)
    if len(too_deep):
        where = _line_and_column(data, int(positions[too_deep[0]]))
        raise InputError(f"is nested more than {max_depth} levels deep ({where}); no layout format nests so deep", file=source)
    duplicate = _duplicate_key(data, chars, quotes, positions, depth)
    if duplicate is not None:
        offset, key = duplicate
        raise InputError(f"repeats the key {key!r} in one object ({_line_and_column(data, offset)}); a JSON key may appear once", file=source)
    return structure


# --- decoding against a schema --------------------------------------------------------------------

_LOCATION = re.compile(r"^(?P<detail>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.DOTALL)
_STEP = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\[\.\.\.\]")


def path_text(steps: tuple[str | int, ...]) -> str:
    """A JSON path as `pages[3].boxes[2].bbox`."""
    return "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in steps).lstrip(".")


class SchemaError(InputError):
    """Input that does not match its format's schema, with where it happened as a path of keys
    and indices (`location`), so a reader can name the page and box instead."""

    def __init__(self, detail: str, location: tuple[str | int, ...], *, file: str | None = None) -> None:
        self.detail = detail
        self.location = location
        where = path_text(location)
        super().__init__(f"{detail} (at {where})" if where else detail, file=file)

    def in_item(self, item_key: str | None = None) -> tuple[int | None, int | None, str]:
        """For an error inside a list of items (pages, lines, annotations) that hold a list
        `item_key` (boxes): the item's index, the sub-item's index and the problem, with the
        rest of the path."""
        steps = self.location
        index = steps[0] if steps and isinstance(steps[0], int) else None
        rest = steps[1:] if index is not None else steps
        box = rest[1] if item_key and len(rest) >= 2 and rest[0] == item_key and isinstance(rest[1], int) else None
        where = path_text(rest[2:] if box is not None else rest)
        return index, box, f"{self.detail} (at {where})" if where else self.detail

    def __reduce__(self):
        return SchemaError, (self.detail, self.location), {"file": self.file}

    def __setstate__(self, state: dict) -> None:
        self.__init__(self.detail, self.location, **state)


def _readable(detail: str) -> str:
    """msgspec's messages in our words."""
    for pattern, word in ((r"Object contains unknown field `(.*)`", "unknown"), (r"Object missing required field `(.*)`", "missing")):
        if (match := re.fullmatch(pattern, detail, re.DOTALL)) is not None:
            return f"{word} key {match.group(1)!r}"
    replacements = (
        (r"Expected `array` of length (\d+), got (\d+)", r"expected a list of \1 numbers, got \2 values"),
        (r"Expected `array` of length (\d+)$", r"expected a list of \1 numbers"),
        (r"Expected `(.*?)`, got `(.*?)`", r"expected \1, got \2"),
        (r"Number out of range", "number out of range"),
    )
    for pattern, replacement in replacements:
        detail = re.sub(pattern, replacement, detail)
    return detail.replace("`", "")


def _location(path: str) -> tuple[str | int, ...]:
    return tuple(name if name else int(index) for name, index in _STEP.findall(path) if name or index)


def schema_error(error: msgspec.ValidationError, source: str, prefix: tuple[str | int, ...] = ()) -> SchemaError:
    match = _LOCATION.match(str(error))
    return SchemaError(_readable(match["detail"]), prefix + _location(match["path"] or ""), file=source)


def decode_json(data: bytes, source: str, schema: Any = Any, *, prefix: tuple[str | int, ...] = ()) -> Any:
    """Decode JSON bytes (already scanned, or a part of a scanned text) against `schema`."""
    try:
        return msgspec.json.decode(data, type=schema)
    except msgspec.ValidationError as error:
        raise schema_error(error, source, prefix) from None
    except msgspec.DecodeError as error:
        raise InputError(f"is not valid JSON: {_decode_problem(data, str(error))}", file=source) from None
    except RecursionError:
        raise InputError("is not valid JSON: nested too deeply", file=source) from None


def _decode_problem(data: bytes, message: str) -> str:
    """msgspec's syntax error with its byte offset as a line and column (and a word on NaN)."""
    match = re.search(r"\(byte (\d+)\)", message)
    text = message.removeprefix("JSON is malformed: ").replace("Invalid UTF-8 encoded string", "the text is not UTF-8")
    if match:
        offset = int(match.group(1))
        text = text.replace(match.group(0), f"({_line_and_column(data, offset)})")
        if data[offset : offset + 9].lstrip(b"-").startswith((b"NaN", b"Infinity")):
            text += ": NaN and Infinity are not JSON numbers (a coordinate must be finite)"
    return text


def parse_json(data: bytes, source: str, schema: Any = Any, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """Scan, then decode, a whole JSON text."""
    scan_json(data, source, max_depth=max_depth)
    return decode_json(data, source, schema)


def read_json(path: str | Path, schema: Any = Any, *, max_bytes: int = MAX_INPUT_BYTES) -> Any:
    """A JSON file, bounded in size and depth, without duplicate keys, decoded against `schema`."""
    return parse_json(read_json_bytes(path, max_bytes=max_bytes), str(path), schema)


def first_char(data: bytes, start: int = 0) -> bytes:
    """The first non-blank byte of `data` at or after `start` (b"" if none), without copying it."""
    match = _FIRST_NON_BLANK.search(data, start)
    return match.group(0) if match else b""


def json_lines(data: bytes) -> Iterator[tuple[int, bytes]]:
    """The non-blank lines of a JSON Lines text, with their 1-based line numbers."""
    for number, line in enumerate(data.split(b"\n"), start=1):
        if line.strip():
            yield number, line
