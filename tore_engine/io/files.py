"""Bounded reads of regular files: everything read from outside passes through here.

Only regular files are opened, checked on the open descriptor, so a FIFO, a device or a folder is
refused before any read can block. Files are read by their size (never by the limit, which would be
allocated first), whole, and checked unchanged at the end (`FileStamp`): a file rewritten while
read is an error, not a mix of two versions. Text is UTF-8: a JSON text in UTF-16 or UTF-32 is refused
where its first bytes are read (`skip_bom`), with the command that converts it.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from tore_engine.core.errors import InputError
from tore_engine.io.paths import checked_text

MAX_INPUT_BYTES = 8 * 2**30  # one input file; the app sets a lower limit for uploads
BOM = b"\xef\xbb\xbf"  # UTF-8's byte-order mark
# The other Unicode encodings a text file may be in, by byte-order mark (UTF-32's first: its LE mark
# begins with UTF-16's), and by where the zero bytes of an ASCII first character fall without one.
_MARKED_ENCODINGS = ((b"\xff\xfe\x00\x00", "UTF-32LE"), (b"\x00\x00\xfe\xff", "UTF-32BE"),
                     (b"\xff\xfe", "UTF-16LE"), (b"\xfe\xff", "UTF-16BE"))
_UNMARKED_ENCODINGS = (("UTF-32LE", 4, 0), ("UTF-32BE", 4, 3), ("UTF-16LE", 2, 0), ("UTF-16BE", 2, 1))
_ASCII_START = [32 <= byte < 127 or byte in b"\t\n\r" for byte in range(256)]
ENCODING_HEAD_BYTES = 64  # read to tell UTF-16 or UTF-32 from UTF-8


# (device, inode) -> path of each result that the running `tore evaluate` replaces (`tore_engine.writers.staging`
# fills it while the run holds --out): never read as an input, however the path reaches it.
OUTPUTS: dict[tuple[int, int], str] = {}


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
    reasons: dict[int | None, str] = {
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


def regular_files(folder: Path) -> list[Path]:
    """A folder's regular files (after symbolic links), sorted by name: what a reader of a folder of
    inputs reads, never a subfolder, a FIFO or a device. An InputError naming the folder when it
    cannot be listed."""
    try:
        return sorted(child for child in folder.iterdir() if is_regular_file(child))
    except OSError as error:
        raise InputError(f"cannot list the folder ({error.strerror})", file=str(folder)) from None


def input_files(path: Path, suffixes: tuple[str, ...], holds: str) -> list[Path]:
    """The files a reader of one file or a folder of files reads: `path` itself when it is not a
    folder (opening it says what is wrong with it), else the folder's regular files whose names end
    with one of `suffixes`; an InputError saying it `holds` no such file when there is none."""
    if not path.is_dir():
        return [path]
    files = [file for file in regular_files(path) if file.name.endswith(suffixes)]
    if not files:
        raise InputError(f"holds no {holds}", file=str(path))
    return files


def peek_bytes(path: str | Path, size: int) -> bytes:
    """The first `size` bytes of a regular file (to recognise its format without reading it all)."""
    path = Path(checked_text(path))
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


def other_unicode_encoding(head: bytes) -> str | None:
    """The UTF-16 or UTF-32 encoding (e.g. "UTF-16LE") of a text whose first bytes are `head`, or
    None. Known by its byte-order mark, or without one by the zero bytes around an ASCII first
    character, as RFC 4627 told JSON's encoding (every format TORE reads as text starts with one:
    `{`, `[`, `<`, blank space), and checked by decoding `head`. UTF-8 text holds no zero byte
    there, nor do Parquet, image or PDF files, which start with their magic bytes."""
    found = next((encoding for mark, encoding in _MARKED_ENCODINGS if head.startswith(mark)), None)
    for encoding, width, ascii_at in _UNMARKED_ENCODINGS if found is None else ():
        unit = head[:width]
        if len(unit) == width and _ASCII_START[unit[ascii_at]] and not any(unit[:ascii_at] + unit[ascii_at + 1 :]):
            found = encoding
            break
    if found is None:
        return None
    width = 4 if found.startswith("UTF-32") else 2
    try:
        text = head[: len(head) - len(head) % width].decode(found)
    except UnicodeDecodeError:
        return None
    return found if "\x00" not in text else None


def encoding_error(encoding: str, path: str | Path) -> InputError:
    """A text file in UTF-16 or UTF-32, refused with the command that converts it. RFC 8259 (section
    8.1) requires UTF-8 for JSON exchanged between systems, and TORE reads its files by byte offsets
    (the lazy index, the compiled parser, JSON Lines in chunks), which another encoding would shift."""
    family, order = encoding[:-2], encoding[-2:]
    return InputError(f"the text is {family} ({order}); TORE reads UTF-8: convert it with "
                      f"`iconv -f {encoding} -t UTF-8 {Path(path).name} > {Path(path).stem}.utf8{Path(path).suffix}`",
                      file=str(path))


def skip_bom(handle: BinaryIO, path: str | Path) -> int:
    """Leave `handle`, open at a file's start, after a UTF-8 byte-order mark if the file has one
    (some editors write one before JSON, which RFC 8259 lets a parser ignore), and say how many
    bytes that is; a text in UTF-16 or UTF-32 is an error naming `path` (`encoding_error`). Skipped
    where the file is read, so every parser (msgspec, the NumPy and compiled scans, the compiled
    page parser) sees the same text, with no copy; an offset in that text plus the bytes skipped is
    one in the file (the index of `formats.lazy` adds them), and a line and column in it are where
    an editor, which hides the mark, shows them."""
    head = handle.read(ENCODING_HEAD_BYTES)
    if (encoding := other_unicode_encoding(head)) is not None:
        raise encoding_error(encoding, path)
    skipped = len(BOM) if head.startswith(BOM) else 0
    handle.seek(skipped)
    return skipped


def blank_problem(data: bytes) -> str | None:
    """What is wrong with a text that holds no value at all (nothing, or only blank space), or None."""
    if not data:
        return "the file is empty"
    return "the file holds only blank space" if not data.strip() else None


def read_stamped(path: str | Path, *, max_bytes: int = MAX_INPUT_BYTES, json_text: bool = False) -> tuple[bytes, FileStamp, int]:
    """The content of a regular file of at most `max_bytes`, the version it is, and where that
    content starts in the file: after a byte-order mark for a JSON text (`json_text`), else at 0."""
    path = Path(checked_text(path))
    descriptor = open_regular(path)
    try:
        stamp = FileStamp.of(descriptor)
        with os.fdopen(descriptor, "rb", closefd=False) as handle:
            start = skip_bom(handle, path) if json_text else 0
            return read_to_end(handle, path, max_bytes=max_bytes, stamp=stamp), stamp, start
    except OSError as error:
        raise _os_error(error, path) from None
    finally:
        os.close(descriptor)


def read_bytes(path: str | Path, *, max_bytes: int = MAX_INPUT_BYTES) -> bytes:
    """The whole content of a regular file of at most `max_bytes`."""
    return read_stamped(path, max_bytes=max_bytes)[0]


def read_json_bytes(path: str | Path, *, max_bytes: int = MAX_INPUT_BYTES) -> bytes:
    """A JSON file's text (of at most `max_bytes`), without the byte-order mark it may start with;
    an error naming the file when it holds no JSON value at all."""
    data = read_stamped(path, max_bytes=max_bytes, json_text=True)[0]
    if (problem := blank_problem(data)) is not None:
        raise InputError(f"{problem}; a JSON file holds one value", file=str(path))
    return data


def read_text(path: str | Path, *, max_bytes: int = MAX_INPUT_BYTES) -> str:
    """A regular file's content as UTF-8 text."""
    data = read_bytes(path, max_bytes=max_bytes)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        if (encoding := other_unicode_encoding(data[:ENCODING_HEAD_BYTES])) is not None:
            raise encoding_error(encoding, path) from None
        raise InputError(f"is not UTF-8 text (byte {error.start})", file=str(path)) from None
