"""Uploaded files, private to the session that uploaded them and gone when it ends.

The readers take paths, so an upload is written to a file: in a fresh folder per session made by
`tempfile.mkdtemp` (mode 0700, a random name), never a folder shared by the host's sessions. The
folder is a session-scoped resource, deleted by "Forget the uploaded files" and when the session's
browser disconnects (Streamlit releases session resources then; after a reconnect the uploads the
widgets still hold are written again), and, for sessions still open, when the process exits (the
folder object's finalizer). A server that was killed cannot remove its sessions' folders: the
next session made on the host removes them (`tore_engine.io.leftovers`, only folders of this user
whose server has ended).

Every byte written is counted as it is written (the sizes a zip declares only refuse early, never
admit): a session holds at most `MAX_SESSION_UPLOAD_MB` at once, and all sessions of the server
together at most `$TORE_STUDIO_UPLOAD_BUDGET` MB (`DEFAULT_UPLOAD_BUDGET_MB` by default). A slot's
files are written into a staging folder that replaces the slot's folder only once all are in, so a
refused upload leaves the previous one as it was.

Page images come as image or PDF files, or as zips of them. A zip's entries are counted from its
end-of-central-directory record, and its central directory's headers walked (at most
`MAX_ARCHIVE_FILES` + 1 of them), before `zipfile` parses it into one object an entry. It is refused
whole when a member is not a regular file by its Unix file type (a link, a device, a FIFO; mode
bits without a type, as `zipfile.writestr` writes them, are a regular file) or has an absolute or
unsafe name (`..`, control characters). A member whose name is empty or `.`, too long for a file
system, or collides with an earlier file (the same name up to case, a file where an earlier file's
folder is, or the reverse) is skipped, and listed to the user. Files and members are copied
streaming, from the uploaded file itself (never a copy of it held whole).
"""

from __future__ import annotations

import io
import re
import shutil
import stat
import struct
import tempfile
import threading
import weakref
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, BinaryIO

import streamlit as st

from tore_engine.core.errors import InputError
from tore_engine.io import leftovers
from tore_engine.plots.plain_text import plain_for_markdown, shortened
from tore_engine.studio import state
from tore_engine.studio.server_settings import megabytes

MAX_UPLOAD_MB = 200  # one file; larger datasets: paths on the server
MAX_SESSION_UPLOAD_MB = 400  # every file a session holds at once
UPLOAD_BUDGET_VARIABLE = "TORE_STUDIO_UPLOAD_BUDGET"  # MB that all sessions' uploads may hold together
DEFAULT_UPLOAD_BUDGET_MB = 2048
FOLDER_PREFIX = "tore_studio_upload_"
FALLBACK_NAME = "upload.json"
MAX_NAME_LENGTH = 120
MAX_ARCHIVE_FILES = 10_000  # entries of one zip of page images
MAX_COMPONENT_BYTES = 255  # one name of a member's path, in UTF-8: the common file systems' limit
MAX_PATH_BYTES = 1024  # a member's relative path, in UTF-8: well within PATH_MAX after the upload folder's
MAX_DEPTH = 32  # folders above a member
LAYOUT_TYPES = ("json", "jsonl", "parquet")
LAYOUT_SET_TYPES = (*LAYOUT_TYPES, "dt", "doctags", "txt")  # DocTags pages: .dt, .doctags, .doctags.txt
PAGE_IMAGE_TYPES = ("png", "jpg", "jpeg", "pdf", "zip")
SHOWN_SKIPS = 5  # skipped members named in the sidebar's warning
_UNSAFE_NAME = re.compile(r"[\x00-\x1f\x7f/\\]")
_CHUNK = 2**20
_STAGING = ".staging"  # a slot's files being written; the slot's folder once complete
# The zip format's end records (APPNOTE 4.3.14-4.3.16) and central directory header (4.3.12).
_END = struct.Struct("<4s4H2LH")  # signature, disk numbers, entries on this disk, entries, directory size, offset, comment length
_END_SIGNATURE = b"PK\x05\x06"
_ZIP64_END = struct.Struct("<4sQ2H2L4Q")  # signature, record size, versions, disk numbers, entries on this disk, entries, size, offset
_ZIP64_END_SIGNATURE = b"PK\x06\x06"
_ZIP64_LOCATOR = struct.Struct("<4sLQL")
_ZIP64_LOCATOR_SIGNATURE = b"PK\x06\x07"
_DIRECTORY_HEADER = struct.Struct("<4s24x3H12x")  # signature, then the name, extra field and comment lengths
_DIRECTORY_SIGNATURE = b"PK\x01\x02"
_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, RuntimeError, EOFError, OSError, ValueError, zlib.error)


def _safe_name(name: str) -> str:
    """The uploaded file's own name, usable as a file name (no folders, no control characters)."""
    cleaned = _UNSAFE_NAME.sub("_", Path(name.replace("\\", "/")).name)[-MAX_NAME_LENGTH:]
    return cleaned if cleaned.strip(". ") else FALLBACK_NAME


def upload_budget_bytes() -> int:
    """What every session's uploads may hold together: the operator's `$TORE_STUDIO_UPLOAD_BUDGET` MB."""
    return megabytes(UPLOAD_BUDGET_VARIABLE, DEFAULT_UPLOAD_BUDGET_MB)


class _ServerBudget:
    """The bytes that all sessions' upload folders of this process hold on disk."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.held = 0

    def take(self, size: int, cap: int) -> bool:
        """Count `size` more bytes if they fit under `cap`; whether they did."""
        with self._lock:
            if self.held + size > cap:
                return False
            self.held += size
            return True

    def give_back(self, size: int) -> None:
        with self._lock:
            self.held -= size


_SERVER = _ServerBudget()


def _remove_folder(path: Path, held: dict[str, int]) -> None:
    """Delete a session's folder and give its bytes back to the server's budget."""
    shutil.rmtree(path, ignore_errors=True)
    _SERVER.give_back(sum(held.values()))
    held.clear()


@dataclass(frozen=True)
class Saved:
    """A slot's folder as saved, and the members skipped on the way (each with why), as plain text."""

    folder: Path
    skipped: list[str] = field(default_factory=list)


class UploadFolder:
    """One session's private folder of uploads, one subfolder a slot (reference, model A, ...)."""

    def __init__(self) -> None:
        leftovers.sweep(Path(tempfile.gettempdir()), FOLDER_PREFIX)  # the folders of a server that was killed
        self.path = Path(tempfile.mkdtemp(prefix=leftovers.owned_prefix(FOLDER_PREFIX)))
        self._held: dict[str, int] = {}  # bytes written, by slot (and the staging folder)
        self._remove = weakref.finalize(self, _remove_folder, self.path, self._held)

    def used_bytes(self) -> int:
        return sum(self._held.values())

    def _room(self, slot: str, name: str, size: int) -> int:
        """The bytes the slot may hold (the files it replaces do not count); an `InputError` when
        `size` of them would not fit, in the session or on the server."""
        room = MAX_SESSION_UPLOAD_MB * 2**20 - sum(held for key, held in self._held.items() if key not in (slot, _STAGING))
        if size > room:
            raise InputError(f"this session already holds uploads near its limit of {MAX_SESSION_UPLOAD_MB} MB in all; "
                             "forget the uploaded files first, or use paths on the server", file=_safe_name(name))
        if _SERVER.held + size > upload_budget_bytes():
            raise _server_full(name)
        return room

    def _charge(self, size: int, room: int, name: str) -> None:
        """Count `size` more bytes written into the staging folder, or refuse them."""
        if self._held.get(_STAGING, 0) + size > room:
            raise InputError(f"would take more than this session's limit of {MAX_SESSION_UPLOAD_MB} MB once written", file=_safe_name(name))
        if not _SERVER.take(size, upload_budget_bytes()):
            raise _server_full(name)
        self._held[_STAGING] = self._held.get(_STAGING, 0) + size

    def _clear(self, key: str) -> None:
        shutil.rmtree(self.path / key, ignore_errors=True)
        _SERVER.give_back(self._held.pop(key, 0))

    def _store(self, source: IO[bytes], relative: PurePosixPath, room: int, name: str) -> None:
        """Copy `source` (from where it stands) into the staging folder at `relative`, counting
        every byte."""
        target = self.path.joinpath(_STAGING, *relative.parts)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            out = open(target, "xb")
        except OSError as error:
            raise _not_stored(name, error) from None
        with out:
            while chunk := source.read(_CHUNK):
                self._charge(len(chunk), room, name)
                try:
                    out.write(chunk)
                except OSError as error:
                    raise _not_stored(name, error) from None

    def _staged(self, slot: str, write: Callable[[], None]) -> Path:
        """The slot's folder, replaced by what `write` puts in a fresh staging folder; on any
        error the staging folder goes and the slot stays as it was."""
        self._clear(_STAGING)
        (self.path / _STAGING).mkdir()
        try:
            write()
        except BaseException:
            self._clear(_STAGING)
            raise
        self._clear(slot)
        (self.path / _STAGING).rename(self.path / slot)
        self._held[slot] = self._held.pop(_STAGING, 0)
        return self.path / slot

    def save(self, slot: str, name: str, upload: BinaryIO) -> Path:
        """Keep the uploaded file as the slot's file (replacing the slot's previous one), under its
        own name; an `InputError` when the session or the server would hold more than its limit."""
        room = self._room(slot, name, _size(upload))
        relative = PurePosixPath(_safe_name(name))
        upload.seek(0)
        return self._staged(slot, lambda: self._store(upload, relative, room, name)) / relative

    def save_files(self, slot: str, files: list[tuple[str, BinaryIO]]) -> Saved:
        """Keep these uploaded files as the slot's folder (replacing its previous content), a zip's
        members extracted in it with their relative folders. Nothing is kept when a file or member
        is refused (an `InputError`); the members skipped are listed."""
        room = self._room(slot, "page images", sum(_size(upload) for name, upload in files if not name.lower().endswith(".zip")))
        names, skipped = _Names(), []

        def write() -> None:
            for name, upload in files:
                if name.lower().endswith(".zip"):
                    skipped.extend(self._extract(name, upload, names, room))
                elif (problem := names.claim(PurePosixPath(_safe_name(name)))) is not None:
                    skipped.append(f"{_safe_name(name)}: {problem}")
                else:
                    upload.seek(0)
                    self._store(upload, PurePosixPath(_safe_name(name)), room, name)

        return Saved(self._staged(slot, write), skipped)

    def save_set(self, slot: str, folder: str, files: list[tuple[str, BinaryIO]]) -> Path:
        """Keep these uploaded files together as the folder `folder` of the slot (replacing its
        previous content): one layout set of several files, as a Docling folder holds its
        documents. Two files of one name (up to case) are an `InputError`."""
        room = self._room(slot, folder, sum(_size(upload) for _, upload in files))
        names = _Names()

        def write() -> None:
            for name, upload in files:
                if (problem := names.claim(PurePosixPath(_safe_name(name)))) is not None:
                    raise InputError(f"cannot be kept beside the other files of this input: {problem}", file=_safe_name(name))
                upload.seek(0)
                self._store(upload, PurePosixPath(folder, _safe_name(name)), room, name)

        return self._staged(slot, write) / folder

    def _extract(self, name: str, upload: BinaryIO, names: _Names, room: int) -> list[str]:
        """Extract a zip's usable members into the staging folder; the skipped ones."""
        _check_entry_count(name, upload)
        try:
            with zipfile.ZipFile(upload) as archive:
                members, skipped = _usable_members(name, archive.infolist(), names)
                if sum(info.file_size for info, _ in members) > room - self._held.get(_STAGING, 0):
                    raise InputError(f"would take more than this session's limit of {MAX_SESSION_UPLOAD_MB} MB once extracted",
                                     file=_safe_name(name))
                for info, path in members:
                    with archive.open(info) as member:
                        self._store(member, path, room, name)
        except InputError:  # a ValueError too: the reason is already said
            raise
        except _ZIP_ERRORS:
            raise InputError("is not a readable zip file", file=_safe_name(name)) from None
        return skipped

    def delete(self) -> None:
        self._remove()

    def hide_in(self, text: str) -> str:
        """`text` with this folder's paths cut down to the uploaded files' names."""
        return re.sub(re.escape(str(self.path)) + r"/[^/]+/", "", text)


def _server_full(name: str) -> InputError:
    return InputError(f"the server holds uploads near its limit of {upload_budget_bytes() // 2**20:,} MB for all sessions; "
                      "try again later, or use paths on the server", file=_safe_name(name))


def _not_stored(name: str, error: OSError) -> InputError:
    return InputError(f"could not be stored on the server ({error.strerror or type(error).__name__})", file=_safe_name(name))


def _size(upload: BinaryIO) -> int:
    return upload.seek(0, io.SEEK_END)


def _directory_entries(archive: BinaryIO, start: int, size: int, limit: int) -> int:
    """The headers in the central directory at `start` (as `zipfile` walks it, each making one
    object), counted up to `limit` + 1."""
    count, at = 0, start
    while at < start + size and count <= limit:
        archive.seek(at)
        header = archive.read(_DIRECTORY_HEADER.size)
        if len(header) < _DIRECTORY_HEADER.size:
            break
        signature, name, extra, comment = _DIRECTORY_HEADER.unpack(header)
        if signature != _DIRECTORY_SIGNATURE:
            break  # zipfile refuses it there
        at += _DIRECTORY_HEADER.size + name + extra + comment
        count += 1
    return count


def _check_entry_count(name: str, archive: BinaryIO) -> None:
    """Refuse a zip of more than `MAX_ARCHIVE_FILES` entries before `zipfile` parses them: the
    count its end record declares, then the headers its central directory really holds (found
    as `zipfile` finds them: the end record at the very end, or before a comment of at most 64
    KiB; a ZIP64 end record just before its locator)."""
    size = _size(archive)
    base = max(0, size - _END.size - (1 << 16) - _ZIP64_LOCATOR.size - _ZIP64_END.size)
    archive.seek(base)
    tail = archive.read()
    at = len(tail) - _END.size
    if at < 0:
        return  # too short for an end record: zipfile refuses it
    if tail[at:at + 4] != _END_SIGNATURE or tail[-2:] != b"\0\0":
        at = tail.rfind(_END_SIGNATURE, max(0, size - _END.size - (1 << 16)) - base)
    if at < 0 or at + _END.size > len(tail):
        return
    *_, declared, directory_size, _, _ = _END.unpack_from(tail, at)
    directory_end = at
    locator = at - _ZIP64_LOCATOR.size
    zip64 = locator - _ZIP64_END.size
    if zip64 >= 0 and tail[locator:locator + 4] == _ZIP64_LOCATOR_SIGNATURE and tail[zip64:zip64 + 4] == _ZIP64_END_SIGNATURE:
        *_, declared, directory_size, _ = _ZIP64_END.unpack_from(tail, zip64)
        directory_end = zip64
    if declared > MAX_ARCHIVE_FILES:
        raise InputError(f"holds {declared:,} entries, more than the {MAX_ARCHIVE_FILES:,} extracted", file=_safe_name(name))
    start = base + directory_end - directory_size
    if start >= 0 and _directory_entries(archive, start, directory_size, MAX_ARCHIVE_FILES) > MAX_ARCHIVE_FILES:
        raise InputError(f"holds more than the {MAX_ARCHIVE_FILES:,} entries extracted (its end record says {declared:,})",
                         file=_safe_name(name))


class _Names:
    """The files kept so far and their folders, compared without case, so that no two of them
    share a path on any file system."""

    def __init__(self) -> None:
        self.files: set[str] = set()
        self.folders: set[str] = set()

    def claim(self, path: PurePosixPath) -> str | None:
        """Keep `path` if it is usable beside the earlier ones; else why not."""
        if not path.parts:
            return "it has no file name"
        if len(path.parts) > MAX_DEPTH + 1:
            return f"it is more than {MAX_DEPTH} folders deep"
        if max(len(part.encode("utf-8", "surrogateescape")) for part in path.parts) > MAX_COMPONENT_BYTES:
            return f"a name in its path is longer than {MAX_COMPONENT_BYTES} bytes"
        if len(path.as_posix().encode("utf-8", "surrogateescape")) > MAX_PATH_BYTES:
            return f"its path is longer than {MAX_PATH_BYTES} bytes"
        key = path.as_posix().casefold()
        folders = [folder.as_posix().casefold() for folder in path.parents][:-1]  # without "."
        if key in self.files:
            return "an earlier file has the same name (up to case)"
        if key in self.folders:
            return "it has the name of an earlier file's folder"
        if any(folder in self.files for folder in folders):
            return "a folder in its path has the name of an earlier file"
        self.files.add(key)
        self.folders.update(folders)
        return None


def _member_path(archive: str, info: zipfile.ZipInfo) -> PurePosixPath:
    """A zip member's relative path, if it is a regular file (by its Unix file type) with a safe name."""
    kind = stat.S_IFMT(info.external_attr >> 16)
    if kind not in (0, stat.S_IFREG):
        raise InputError(f"member {info.filename!r} is a link or a special file; only regular files are extracted", file=_safe_name(archive))
    path = PurePosixPath(info.filename.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or any(_UNSAFE_NAME.search(part) or ":" in part for part in path.parts):
        raise InputError(f"member {info.filename!r} has an absolute or unsafe name; nothing was extracted", file=_safe_name(archive))
    return path


def _usable_members(archive: str, infos: list[zipfile.ZipInfo], names: _Names) -> tuple[list[tuple[zipfile.ZipInfo, PurePosixPath]], list[str]]:
    """The members to extract with their paths, and the skipped ones (each with why); an
    `InputError` when any member is unsafe, before anything of this zip is written."""
    members, skipped = [], []
    for info in infos:
        if info.filename.endswith("/") or stat.S_ISDIR(info.external_attr >> 16):  # not is_dir(): it fails on an empty name
            continue  # folders are made as their files need them
        path = _member_path(archive, info)
        problem = names.claim(path)
        if problem is None:
            members.append((info, path))
        else:
            skipped.append(f"{_safe_name(archive)}: {shortened(repr(info.filename), 80)}: {problem}")
    return members, skipped


@st.cache_resource(scope="session", on_release=UploadFolder.delete, show_spinner=False)
def _session_folder() -> UploadFolder:
    return UploadFolder()


def _folder() -> UploadFolder:
    """This session's folder, made on first use."""
    folder = st.session_state[state.UPLOAD_FOLDER] = _session_folder()
    return folder


def session_root() -> Path:
    """The folder inside which this session's uploads (and anything they name) must be."""
    return _folder().path


def hide_private_paths(text: str) -> str:
    """`text` as it may be shown: without the path of this session's upload folder."""
    folder = st.session_state.get(state.UPLOAD_FOLDER)
    return folder.hide_in(text) if folder is not None else text


def _types_text(types: tuple[str, ...]) -> str:
    return ", ".join(f".{kind}" for kind in types)


def uploader(label: str, slot: str, help_text: str, types: tuple[str, ...] = LAYOUT_TYPES) -> Path | None:
    """A file uploader in the sidebar whose last upload survives page switches (its path is kept
    in the session state); a new upload replaces the slot's file."""
    generation = st.session_state.get(state.UPLOAD_GENERATION, 0)
    upload = st.sidebar.file_uploader(
        label, type=list(types), key=state.UPLOAD(slot, generation), max_upload_size=MAX_UPLOAD_MB,
        help=f"{help_text}; {_types_text(types)}, at most {MAX_UPLOAD_MB} MB, read as data and never executed",
    )
    kept = st.session_state.get(state.UPLOADED(slot))
    if upload is not None and (kept is None or kept[0] != upload.file_id or not Path(kept[1]).is_file()):  # new, or released
        try:
            kept = st.session_state[state.UPLOADED(slot)] = (upload.file_id, str(_folder().save(slot, upload.name, upload)))
        except InputError as error:
            st.sidebar.error(plain_for_markdown(error.paragraph()))
            return None
    return Path(kept[1]) if kept else None


def _cleared(slot: str, key: str) -> None:
    """Uploader callback: the user removed the slot's files (a page switch, which may hand the
    widget back empty, calls no callback), so the slot keeps nothing."""
    if not st.session_state.get(key):
        st.session_state.pop(state.UPLOADED(slot), None)


def _files_uploader(label: str, slot: str, help_text: str, types: tuple[str, ...]) -> list:
    """A sidebar uploader of several files (its widget is new after "Forget the uploaded files")."""
    key = state.UPLOAD(slot, st.session_state.get(state.UPLOAD_GENERATION, 0))
    return st.sidebar.file_uploader(
        label, type=list(types), key=key, max_upload_size=MAX_UPLOAD_MB, accept_multiple_files=True, on_change=_cleared, args=(slot, key),
        help=f"{help_text}; {_types_text(types)}, at most {MAX_UPLOAD_MB} MB each, read as data and never executed",
    ) or []


def _kept(slot: str, files: list, present: Callable[[Path], bool], save: Callable[[], tuple]) -> tuple | None:
    """What the slot keeps of these uploaded files: (their ids, the path `save` wrote, and what else
    it returned), saved again when the files are new or their copy was released (`present` fails);
    the files kept when the uploader comes back empty from a page switch (`_cleared` forgets them
    when the user removes them); None when there are none, or when `save` refused them (its error
    shown in the sidebar)."""
    ids = tuple(upload.file_id for upload in files)
    kept = st.session_state.get(state.UPLOADED(slot))
    if not ids:
        return kept if kept is not None and present(Path(kept[1])) else None
    if kept is None or kept[0] != ids or not present(Path(kept[1])):
        try:
            kept = st.session_state[state.UPLOADED(slot)] = (ids, *save())
        except InputError as error:
            st.sidebar.error(plain_for_markdown(error.paragraph()))
            return None
    return kept


def layouts_uploader(label: str, slot: str, help_text: str, set_name: str) -> Path | None:
    """An uploader of one input's layout: one file is kept as that file; several are kept together
    as one folder named `set_name` (the layout set's name where the format names a set after its
    folder: Docling, DocTags). Survives page switches as `uploader` does."""
    files = _files_uploader(label, slot, help_text, LAYOUT_SET_TYPES)

    def save() -> tuple[str]:
        folder = _folder()
        if len(files) == 1:
            return (str(folder.save(slot, files[0].name, files[0])),)
        return (str(folder.save_set(slot, set_name, [(upload.name, upload) for upload in files])),)

    kept = _kept(slot, files, Path.exists, save)
    return Path(kept[1]) if kept else None


def pages_uploader(label: str, slot: str, help_text: str) -> Path | None:
    """An uploader of page images (image or PDF files, or zips of them) kept as one folder of the
    session's; the folder, or None before any upload."""
    files = _files_uploader(label, slot, help_text, PAGE_IMAGE_TYPES)

    def save() -> tuple[str, list[str]]:
        saved = _folder().save_files(slot, [(upload.name, upload) for upload in files])
        return str(saved.folder), saved.skipped

    kept = _kept(slot, files, Path.is_dir, save)
    if kept and kept[2]:
        st.sidebar.warning(plain_for_markdown(skipped_text(kept[2])))
    return Path(kept[1]) if kept else None


def skipped_text(skipped: list[str]) -> str:
    """The files left out of an upload, the first `SHOWN_SKIPS` of them named with why."""
    more = f"; and {len(skipped) - SHOWN_SKIPS:,} more" if len(skipped) > SHOWN_SKIPS else ""
    return f"{len(skipped):,} uploaded file(s) skipped: " + "; ".join(skipped[:SHOWN_SKIPS]) + more


def forget() -> None:
    """Button callback: delete this session's uploaded files and empty the uploaders (new keys
    make new, empty widgets)."""
    _session_folder.clear()  # releases this session's folder, which deletes it
    st.session_state.pop(state.UPLOAD_FOLDER, None)
    for key in [key for key in st.session_state if state.UPLOADED.owns(str(key))]:
        del st.session_state[key]
    st.session_state[state.UPLOAD_GENERATION] = st.session_state.get(state.UPLOAD_GENERATION, 0) + 1
