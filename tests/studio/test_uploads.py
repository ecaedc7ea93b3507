"""Uploads (tore_engine.studio.uploads): private to the session, deleted on Forget and at exit, within
the session's limits; zipped page images extracted with checked names, or refused whole."""

from __future__ import annotations

import io
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from tests.helpers import DEMO
from tests.studio.helpers import PAGES, PREDICTED, _app, _charts, _decoded, _image_source, _native, _no_exception, _png, _upload

from tore_engine.errors import InputError
from tore_engine.studio import uploads
from tore_engine.studio.plain_text import plain_for_markdown


def test_uploads_are_private_to_the_session_and_deleted_on_forget():
    at = _app(src="upload")
    _upload(at, "ref", "../../reference.json", (DEMO / "reference.json").read_bytes())
    _upload(at, "a", "model.json", (DEMO / "model_a.json").read_bytes())
    _no_exception(at)
    folder = at.session_state["_upload_folder"].path
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700 and folder.name.startswith(uploads.FOLDER_PREFIX)
    assert sorted(path.relative_to(folder).as_posix() for path in folder.rglob("*.json")) == ["a/model.json", "ref/reference.json"]
    assert at.session_state["_dataset"].reference == folder / "ref" / "reference.json"
    next(button for button in at.sidebar.button if button.label == "Forget the uploaded files").click().run()
    _no_exception(at)
    assert not folder.exists()
    assert at.session_state["_dataset"].reference is None and any("Choose a reference" in info.value for info in at.info)


def test_upload_folders_still_open_are_deleted_when_the_process_exits():
    script = "from tore_engine.studio.uploads import UploadFolder; kept = UploadFolder(); print(kept.path)"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    folder = Path(done.stdout.strip())
    assert folder.name.startswith(uploads.FOLDER_PREFIX) and not folder.exists()


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL and process ids are POSIX's")
def test_the_folders_of_a_killed_server_go_with_the_next_session():
    script = ("import os, signal; from tore_engine.studio.uploads import UploadFolder; kept = UploadFolder(); "
              "print(kept.path, flush=True); os.kill(os.getpid(), signal.SIGKILL)")
    killed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    folder = Path(killed.stdout.strip())
    assert killed.returncode == -9 and folder.is_dir()  # no finaliser ran
    live = uploads.UploadFolder()
    assert not folder.exists() and live.path.is_dir()
    assert uploads.UploadFolder().path.is_dir() and live.path.is_dir()  # a live server's folders stay


def test_a_session_holds_at_most_its_upload_limit(monkeypatch):
    monkeypatch.setattr(uploads, "MAX_SESSION_UPLOAD_MB", 1)
    at = _app(src="upload")
    assert any("at most 200 MB each and 1 MB in all" in caption.value for caption in at.sidebar.caption)
    _upload(at, "ref", "reference.json", b" " * 700_000)
    _upload(at, "a", "model.json", b" " * 700_000)
    _no_exception(at)
    assert any(plain_for_markdown("file model.json: this session already holds uploads near its limit of 1 MB") in error.value
               for error in at.sidebar.error)
    assert "A" not in at.session_state["_dataset"].models


def test_a_deeply_nested_upload_is_a_clear_message():
    at = _app(src="upload")
    _upload(at, "ref", "deep.json", b'{"name": "deep", "pages": ' + b"[" * 30_000 + b"]" * 30_000 + b"}")
    _upload(at, "a", "model.json", (DEMO / "model_a.json").read_bytes())
    _no_exception(at)
    (message,) = [error.value for error in at.error]
    assert message.startswith(f"**{plain_for_markdown('model A (model)')}**: {plain_for_markdown('file deep.json: is nested more than 64 levels deep')}")


# --- zipped page images -------------------------------------------------------------------------


def _zip(members: dict[str, bytes], modes: dict[str, int] | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (modes or {}).get(name, stat.S_IFREG | 0o644) << 16
            archive.writestr(info, data)
    return buffer.getvalue()


def test_uploaded_page_images_in_a_zip_are_drawn():
    at = _app(src="upload")
    at.file_uploader(key="upload_ref_0").set_value(("gt.json", _native("gt", PAGES), "application/json")).run()
    at.file_uploader(key="upload_a_0").set_value(("model.json", _native("model", PREDICTED), "application/json")).run()
    archive = _zip({"img/p1.png": _png("red"), "img/p2.png": _png("blue")})
    at.file_uploader(key="upload_pages_0").set_value([("pages.zip", archive, "application/zip")]).run()
    at.switch_page("app_pages/overlays.py").run()
    _no_exception(at)
    assert _decoded(_image_source(_charts(at)[0])).getpixel((20, 10))[0] > 200  # red: p1, from the zip


@pytest.mark.parametrize(("members", "modes", "problem"), [
    ({"/etc/passwd": b"x"}, None, "absolute or unsafe name"),
    ({"../outside.png": b"x"}, None, "absolute or unsafe name"),
    ({"img/a\x01.png": b"x"}, None, "absolute or unsafe name"),
    ({"link.png": b"/etc/passwd"}, {"link.png": stat.S_IFLNK | 0o777}, "a link or a special file"),
])
def test_a_zip_with_an_unsafe_member_is_refused_whole(members, modes, problem):
    folder = uploads.UploadFolder()
    try:
        with pytest.raises(InputError, match=problem):
            folder.save_files("pages", [("ok.png", b"fine"), ("pages.zip", _zip(members, modes))])
        assert not (folder.path / "pages").exists()  # nothing written, not even the good file
    finally:
        folder.delete()


def test_a_zip_beyond_the_caps_is_refused(monkeypatch):
    folder = uploads.UploadFolder()
    try:
        monkeypatch.setattr(uploads, "MAX_ARCHIVE_FILES", 2)
        with pytest.raises(InputError, match="holds 3 files, more than the 2 extracted"):
            folder.save_files("pages", [("pages.zip", _zip({f"{k}.png": b"x" for k in range(3)}))])
        monkeypatch.setattr(uploads, "MAX_SESSION_UPLOAD_MB", 1)
        with pytest.raises(InputError, match="more than this session's limit of 1 MB once extracted"):
            folder.save_files("pages", [("big.zip", _zip({"big.png": bytes(2 * 2**20)}))])  # compresses to a few kB
        kept = folder.save_files("pages", [("pages.zip", _zip({"img/p1.png": b"one"})), ("p2.png", b"two")])
        assert sorted(str(path.relative_to(kept)) for path in kept.rglob("*") if path.is_file()) == ["img/p1.png", "p2.png"]
    finally:
        folder.delete()
