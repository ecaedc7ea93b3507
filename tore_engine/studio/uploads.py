"""Uploaded files, private to the session that uploaded them and gone when it ends.

The readers take paths, so an upload is written to a file: in a fresh folder per session made by
`tempfile.mkdtemp` (mode 0700, a random name), never a folder shared by the host's sessions. The
folder is a session-scoped resource, deleted by "Forget the uploaded files" and when the session's
browser disconnects (Streamlit releases session resources then; after a reconnect the uploads the
widgets still hold are written again), and, for sessions still open, when the process exits (the
folder object's finalizer). A session holds at most `MAX_SESSION_UPLOAD_MB` at once.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import weakref
from pathlib import Path

import streamlit as st

from tore_engine.errors import InputError
from tore_engine.studio.plain_text import plain_for_markdown

MAX_UPLOAD_MB = 200  # one file; larger datasets: paths on the server
MAX_SESSION_UPLOAD_MB = 400  # every file a session holds at once
FOLDER_PREFIX = "tore_studio_upload_"
FALLBACK_NAME = "upload.json"
MAX_NAME_LENGTH = 120
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
        self.path = Path(tempfile.mkdtemp(prefix=FOLDER_PREFIX))
        self._remove = weakref.finalize(self, shutil.rmtree, self.path, ignore_errors=True)

    def used_bytes(self, excluding: str | None = None) -> int:
        return sum(file.stat().st_size for file in self.path.glob("*/*") if file.parent.name != excluding)

    def save(self, slot: str, name: str, data: bytes) -> Path:
        """Keep `data` as the slot's file (replacing the slot's previous one), under its own name;
        an `InputError` when the session would hold more than its limit."""
        if self.used_bytes(excluding=slot) + len(data) > MAX_SESSION_UPLOAD_MB * 2**20:
            raise InputError(f"this session already holds uploads near its limit of {MAX_SESSION_UPLOAD_MB} MB in all; "
                             "forget the uploaded files first, or use paths on the server", file=_safe_name(name))
        folder = self.path / slot
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        path = folder / _safe_name(name)
        path.write_bytes(data)
        return path

    def delete(self) -> None:
        self._remove()

    def hide_in(self, text: str) -> str:
        """`text` with this folder's paths cut down to the uploaded files' names."""
        return re.sub(re.escape(str(self.path)) + r"/[^/]+/", "", text)


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


def uploader(label: str, slot: str, help_text: str) -> Path | None:
    """A JSON file uploader in the sidebar whose last upload survives page switches (its path is
    kept in the session state); a new upload replaces the slot's file."""
    generation = st.session_state.get(_GENERATION, 0)
    upload = st.sidebar.file_uploader(
        label, type=["json"], key=f"upload_{slot}_{generation}", max_upload_size=MAX_UPLOAD_MB,
        help=f"{help_text}; JSON only, at most {MAX_UPLOAD_MB} MB, read as data and never executed",
    )
    kept = st.session_state.get(f"{_KEPT}{slot}")
    if upload is not None and (kept is None or kept[0] != upload.file_id or not Path(kept[1]).is_file()):  # new, or released
        try:
            kept = st.session_state[f"{_KEPT}{slot}"] = (upload.file_id, str(_folder().save(slot, upload.name, upload.getvalue())))
        except InputError as error:
            st.sidebar.error(plain_for_markdown(error.paragraph()))
            return None
    return Path(kept[1]) if kept else None


def forget() -> None:
    """Button callback: delete this session's uploaded files and empty the uploaders (new keys
    make new, empty widgets)."""
    _session_folder.clear()  # releases this session's folder, which deletes it
    st.session_state.pop(_FOLDER, None)
    for key in [key for key in st.session_state if str(key).startswith(_KEPT)]:
        del st.session_state[key]
    st.session_state[_GENERATION] = st.session_state.get(_GENERATION, 0) + 1
