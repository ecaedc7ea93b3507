"""Uploaded files, private to the session that uploaded them and gone when it ends.

The readers take paths, so an upload is written to a file: in a fresh folder per session made by
`tempfile.mkdtemp` (mode 0700, a random name), never a folder shared by the host's sessions. The
folder is a session-scoped resource, deleted by "Forget the uploaded files" and when the session's
browser disconnects (Streamlit releases session resources then; after a reconnect the uploads the
widgets still hold are written again), and, for sessions still open, when the process exits (the
folder object's finalizer). A server that was killed cannot remove its sessions' folders: the
next session made on the host removes them (`tore_engine.leftovers`, only folders of this user
whose server has ended). A session holds at most `MAX_SESSION_UPLOAD_MB` at once.

Page images come as image or PDF files, or as a zip, extracted into the session's folder only
after every member passed: a relative name without `..` or control characters, a regular file
(no link, no device), at most `MAX_ARCHIVE_FILES` of them, and no more bytes than the session may
still hold (each member's read is bounded by its declared size, so a lying header cannot make it
larger).
"""

from __future__ import annotations

import io
import re
import shutil
import stat
import tempfile
import weakref
import zipfile
from pathlib import Path, PurePosixPath

import streamlit as st

from tore_engine import leftovers
from tore_engine.errors import InputError
from tore_engine.studio.plain_text import plain_for_markdown

MAX_UPLOAD_MB = 200  # one file; larger datasets: paths on the server
MAX_SESSION_UPLOAD_MB = 400  # every file a session holds at once
FOLDER_PREFIX = "tore_studio_upload_"
FALLBACK_NAME = "upload.json"
MAX_NAME_LENGTH = 120
MAX_ARCHIVE_FILES = 10_000  # members of one zip of page images
LAYOUT_TYPES = ("json", "jsonl", "parquet")
PAGE_IMAGE_TYPES = ("png", "jpg", "jpeg", "pdf", "zip")
_FOLDER = "_upload_folder"  # session state: this session's UploadFolder, to find its path without making one
_KEPT = "uploaded_"  # session state prefix: (upload id, path) of each slot
_GENERATION = "_upload_generation"  # bumped to empty the uploaders
_UNSAFE_NAME = re.compile(r"[\x00-\x1f\x7f/\\]")


def _safe_name(name: str) -> str:
    """The uploaded file's own name, usable as a file name (no folders, no control characters)."""
    cleaned = _UNSAFE_NAME.sub("_", Path(name.replace("\\", "/")).name)[-MAX_NAME_LENGTH:]
    return cleaned if cleaned.strip(". ") else FALLBACK_NAME


class UploadFolder:
    """One session's private folder of uploads, one subfolder a slot (reference, model A, ...)."""

    def __init__(self) -> None:
        leftovers.sweep(Path(tempfile.gettempdir()), FOLDER_PREFIX)  # the folders of a server that was killed
        self.path = Path(tempfile.mkdtemp(prefix=leftovers.owned_prefix(FOLDER_PREFIX)))
        self._remove = weakref.finalize(self, shutil.rmtree, self.path, ignore_errors=True)

    def used_bytes(self, excluding: str | None = None) -> int:
        return sum(file.stat().st_size for slot in self.path.iterdir() if slot.name != excluding
                   for file in slot.rglob("*") if file.is_file())

    def _room(self, slot: str, name: str, size: int) -> int:
        """The bytes the slot may still take after `size` more; an `InputError` when none."""
        room = MAX_SESSION_UPLOAD_MB * 2**20 - self.used_bytes(excluding=slot) - size
        if room < 0:
            raise InputError(f"this session already holds uploads near its limit of {MAX_SESSION_UPLOAD_MB} MB in all; "
                             "forget the uploaded files first, or use paths on the server", file=_safe_name(name))
        return room

    def _empty_slot(self, slot: str) -> Path:
        folder = self.path / slot
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        return folder

    def save(self, slot: str, name: str, data: bytes) -> Path:
        """Keep `data` as the slot's file (replacing the slot's previous one), under its own name;
        an `InputError` when the session would hold more than its limit."""
        self._room(slot, name, len(data))
        path = self._empty_slot(slot) / _safe_name(name)
        path.write_bytes(data)
        return path

    def save_files(self, slot: str, files: list[tuple[str, bytes]]) -> Path:
        """Keep these files as the slot's folder (replacing its previous content), a zip's members
        extracted in it with their relative folders; the folder. Nothing is written when any
        file or member is refused (an `InputError`)."""
        room = self._room(slot, "page images", sum(len(data) for _, data in files))
        contents = []
        for name, data in files:
            if name.lower().endswith(".zip"):
                members = _archive_members(name, data, room + len(data))
                room -= sum(len(member) for _, member in members) - len(data)
                contents += members
            else:
                contents.append((PurePosixPath(_safe_name(name)), data))
        folder = self._empty_slot(slot)
        for relative, data in contents:
            target = folder.joinpath(*relative.parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        return folder

    def delete(self) -> None:
        self._remove()

    def hide_in(self, text: str) -> str:
        """`text` with this folder's paths cut down to the uploaded files' names."""
        return re.sub(re.escape(str(self.path)) + r"/[^/]+/", "", text)


def _member_path(archive: str, info: zipfile.ZipInfo) -> PurePosixPath:
    """A zip member's relative path, if it is a regular file with a safe name."""
    mode = info.external_attr >> 16
    if mode and not stat.S_ISREG(mode):
        raise InputError(f"member {info.filename!r} is a link or a special file; only regular files are extracted", file=_safe_name(archive))
    path = PurePosixPath(info.filename.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or any(_UNSAFE_NAME.search(part) or ":" in part for part in path.parts):
        raise InputError(f"member {info.filename!r} has an absolute or unsafe name; nothing was extracted", file=_safe_name(archive))
    return path


def _archive_members(name: str, data: bytes, budget: int) -> list[tuple[PurePosixPath, bytes]]:
    """The regular files of a zip, checked before any is kept, and read within `budget` bytes."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = [info for info in archive.infolist() if not info.is_dir()]
            if len(infos) > MAX_ARCHIVE_FILES:
                raise InputError(f"holds {len(infos):,} files, more than the {MAX_ARCHIVE_FILES:,} extracted", file=_safe_name(name))
            paths = [_member_path(name, info) for info in infos]
            if sum(info.file_size for info in infos) > budget:
                raise InputError(f"would take more than this session's limit of {MAX_SESSION_UPLOAD_MB} MB once extracted", file=_safe_name(name))
            members = []
            for info, path in zip(infos, paths):
                with archive.open(info) as member:
                    content = member.read(info.file_size + 1)
                if len(content) > info.file_size:
                    raise InputError(f"member {info.filename!r} is larger than its header says", file=_safe_name(name))
                members.append((path, content))
            return members
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, RuntimeError, EOFError, OSError):
        raise InputError("is not a readable zip file", file=_safe_name(name)) from None


@st.cache_resource(scope="session", on_release=UploadFolder.delete, show_spinner=False)
def _session_folder() -> UploadFolder:
    return UploadFolder()


def _folder() -> UploadFolder:
    """This session's folder, made on first use."""
    folder = st.session_state[_FOLDER] = _session_folder()
    return folder


def session_root() -> Path:
    """The folder inside which this session's uploads (and anything they name) must be."""
    return _folder().path


def hide_private_paths(text: str) -> str:
    """`text` as it may be shown: without the path of this session's upload folder."""
    folder = st.session_state.get(_FOLDER)
    return folder.hide_in(text) if folder is not None else text


def _types_text(types: tuple[str, ...]) -> str:
    return ", ".join(f".{kind}" for kind in types)


def uploader(label: str, slot: str, help_text: str, types: tuple[str, ...] = LAYOUT_TYPES) -> Path | None:
    """A file uploader in the sidebar whose last upload survives page switches (its path is kept
    in the session state); a new upload replaces the slot's file."""
    generation = st.session_state.get(_GENERATION, 0)
    upload = st.sidebar.file_uploader(
        label, type=list(types), key=f"upload_{slot}_{generation}", max_upload_size=MAX_UPLOAD_MB,
        help=f"{help_text}; {_types_text(types)}, at most {MAX_UPLOAD_MB} MB, read as data and never executed",
    )
    kept = st.session_state.get(f"{_KEPT}{slot}")
    if upload is not None and (kept is None or kept[0] != upload.file_id or not Path(kept[1]).is_file()):  # new, or released
        try:
            kept = st.session_state[f"{_KEPT}{slot}"] = (upload.file_id, str(_folder().save(slot, upload.name, upload.getvalue())))
        except InputError as error:
            st.sidebar.error(plain_for_markdown(error.paragraph()))
            return None
    return Path(kept[1]) if kept else None


def pages_uploader(label: str, slot: str, help_text: str) -> Path | None:
    """An uploader of page images (image or PDF files, or zips of them) kept as one folder of the
    session's; the folder, or None before any upload."""
    generation = st.session_state.get(_GENERATION, 0)
    files = st.sidebar.file_uploader(
        label, type=list(PAGE_IMAGE_TYPES), key=f"upload_{slot}_{generation}", max_upload_size=MAX_UPLOAD_MB, accept_multiple_files=True,
        help=f"{help_text}; {_types_text(PAGE_IMAGE_TYPES)}, at most {MAX_UPLOAD_MB} MB each, read as data and never executed",
    )
    ids = tuple(upload.file_id for upload in files or ())
    kept = st.session_state.get(f"{_KEPT}{slot}")
    if ids and (kept is None or kept[0] != ids or not Path(kept[1]).is_dir()):
        try:
            folder = _folder().save_files(slot, [(upload.name, upload.getvalue()) for upload in files])
        except InputError as error:
            st.sidebar.error(plain_for_markdown(error.paragraph()))
            return None
        kept = st.session_state[f"{_KEPT}{slot}"] = (ids, str(folder))
    return Path(kept[1]) if kept else None


def forget() -> None:
    """Button callback: delete this session's uploaded files and empty the uploaders (new keys
    make new, empty widgets)."""
    _session_folder.clear()  # releases this session's folder, which deletes it
    st.session_state.pop(_FOLDER, None)
    for key in [key for key in st.session_state if str(key).startswith(_KEPT)]:
        del st.session_state[key]
    st.session_state[_GENERATION] = st.session_state.get(_GENERATION, 0) + 1
