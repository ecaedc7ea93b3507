"""Uploads (tore_engine.studio.uploads): private to the session, deleted on Forget and at exit, within
the session's limits and the server's budget for all sessions; zipped page images counted from the
zip's end record before they are parsed, extracted streaming with checked names, unusable names
skipped and listed, unsafe ones refusing the zip whole."""

from __future__ import annotations

import io
import stat
import struct
import subprocess
import sys
import tracemalloc
import warnings
import zipfile
import zlib
from pathlib import Path

import pytest

from tests.helpers import DEMO
from tests.studio.helpers import (
    PAGES,
    PREDICTED,
    _app,
    _decoded,
    _image_source,
    _native,
    _no_exception,
    _page_charts,
    _png,
    _upload,
    open_page,
)
from tore_engine.core.errors import InputError
from tore_engine.plots.plain_text import plain_for_markdown
from tore_engine.studio import state, uploads


def test_uploads_are_private_to_the_session_and_deleted_on_forget():
    at = _app(src="upload")
    _upload(at, "ref", "../../reference.json", (DEMO / "reference.json").read_bytes())
    _upload(at, "a", "model.json", (DEMO / "model_a.json").read_bytes())
    _no_exception(at)
    folder = at.session_state["_upload_folder"].path
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700 and folder.name.startswith(uploads.FOLDER_PREFIX)
    assert sorted(path.relative_to(folder).as_posix() for path in folder.rglob("*.json")) == ["a/model.json", "ref/reference.json"]
    assert at.session_state[state.DATASET].reference == folder / "ref" / "reference.json"
    next(button for button in at.sidebar.button if button.label == "Forget the uploaded files").click().run()
    _no_exception(at)
    assert not folder.exists()
    assert at.session_state[state.DATASET].reference is None and any("Choose a reference" in info.value for info in at.info)


def test_an_upload_survives_a_page_switch_and_goes_when_the_user_removes_it():
    """A page switch may hand the uploader back empty (AppTest does, after `st.switch_page`): the
    slot keeps its file; removing the file in the uploader (its callback) empties the slot."""
    at = _app(src="upload")
    _upload(at, "ref", "reference.json", (DEMO / "reference.json").read_bytes())
    _upload(at, "a", "model.json", (DEMO / "model_a.json").read_bytes())
    open_page(at, "overlays").run()
    _no_exception(at)
    assert at.file_uploader(key="upload_ref_0").value in (None, [])  # handed back empty by the switch ...
    assert at.session_state[state.DATASET].reference is not None  # ... the file kept all the same
    at.file_uploader(key="upload_a_0").set_value(("other.json", (DEMO / "model_b.json").read_bytes(), "application/json")).run()
    at.file_uploader(key="upload_a_0").set_value([]).run()  # the user removes model A's file
    _no_exception(at)
    assert "A" not in at.session_state[state.DATASET].models and at.session_state[state.DATASET].reference is not None


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
    assert "A" not in at.session_state[state.DATASET].models


def test_a_deeply_nested_upload_is_a_clear_message():
    at = _app(src="upload")
    _upload(at, "ref", "deep.json", b'{"name": "deep", "pages": ' + b"[" * 30_000 + b"]" * 30_000 + b"}")
    _upload(at, "a", "model.json", (DEMO / "model_a.json").read_bytes())
    _no_exception(at)
    (message,) = [error.value for error in at.error]
    assert message.startswith(f"**reference**: {plain_for_markdown('file deep.json: is nested more than 64 levels deep')}")  # its own input


# --- zipped page images -------------------------------------------------------------------------


def _zip(members: dict[str, bytes] | list[tuple[str, bytes]], modes: dict[str, int] | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns of a name written twice
        for name, data in dict(members).items() if isinstance(members, dict) else members:
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (modes or {}).get(name, stat.S_IFREG | 0o644) << 16
            archive.writestr(info, data)
    return buffer.getvalue()


def _raw_zip(members: list[tuple[bytes, bytes]], copies: int = 1, declared: int | None = None, zip64: bool = False) -> bytes:
    """A zip of stored members written by hand after APPNOTE 4.3 (names zipfile cannot write, such as
    an empty one), its central directory repeated `copies` times (the copies' entries point at the
    same data), its end record declaring `declared` entries (by default the true count), in a ZIP64
    end record when `zip64`."""
    body, directory = b"", b""
    for name, data in members:
        crc = zlib.crc32(data)
        directory += struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 0, 0, 0, crc, len(data), len(data), len(name), 0, 0, 0, 0,
                                 (stat.S_IFREG | 0o644) << 16, len(body)) + name
        body += struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 0, 0, 0, crc, len(data), len(data), len(name), 0) + name + data
    directory *= copies
    count = len(members) * copies if declared is None else declared
    end = b""
    if zip64:
        end = (struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, count, count, len(directory), len(body))
               + struct.pack("<4sLQL", b"PK\x06\x07", 0, len(body) + len(directory), 1))
        count = 0xFFFF
    count = min(count, 0xFFFF)  # a classic end record's field
    return body + directory + end + struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, count, count, len(directory), len(body), 0)


def _save_pages(folder: uploads.UploadFolder, *files: tuple[str, bytes]) -> uploads.Saved:
    """The files saved as the page images of `folder`'s session, as the uploader passes them."""
    return folder.save_files("pages", [(name, io.BytesIO(data)) for name, data in files])


def _files(folder: Path) -> list[str]:
    return sorted(path.relative_to(folder).as_posix() for path in folder.rglob("*") if path.is_file())


def test_uploaded_page_images_in_a_zip_are_drawn():
    at = _app(src="upload")
    at.file_uploader(key="upload_ref_0").set_value(("gt.json", _native("gt", PAGES), "application/json")).run()
    at.file_uploader(key="upload_a_0").set_value(("model.json", _native("model", PREDICTED), "application/json")).run()
    archive = _zip({"img/p1.png": _png("red"), "img/p2.png": _png("blue")})
    at.file_uploader(key="upload_pages_0").set_value([("pages.zip", archive, "application/zip")]).run()
    open_page(at, "overlays").run()
    _no_exception(at)
    assert _decoded(_image_source(_page_charts(at)[0])).getpixel((20, 10))[0] > 200  # red: p1, from the zip


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
            _save_pages(folder, ("ok.png", b"fine"), ("pages.zip", _zip(members, modes)))
        assert not (folder.path / "pages").exists()  # nothing written, not even the good file
    finally:
        folder.delete()


def test_a_zip_beyond_the_caps_is_refused(monkeypatch):
    folder = uploads.UploadFolder()
    try:
        monkeypatch.setattr(uploads, "MAX_ARCHIVE_FILES", 2)
        with pytest.raises(InputError, match="holds 3 entries, more than the 2 extracted"):
            _save_pages(folder, ("pages.zip", _zip({f"{k}.png": b"x" for k in range(3)})))
        monkeypatch.setattr(uploads, "MAX_SESSION_UPLOAD_MB", 1)
        with pytest.raises(InputError, match="more than this session's limit of 1 MB once extracted"):
            _save_pages(folder, ("big.zip", _zip({"big.png": bytes(2 * 2**20)})))  # compresses to a few kB
        kept = _save_pages(folder, ("pages.zip", _zip({"img/p1.png": b"one"})), ("p2.png", b"two")).folder
        assert sorted(str(path.relative_to(kept)) for path in kept.rglob("*") if path.is_file()) == ["img/p1.png", "p2.png"]
    finally:
        folder.delete()


def test_zips_written_by_zipfile_writestr_are_regular_files():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("img/p1.png", b"one")  # mode 0o600 without a file type
    assert zipfile.ZipFile(io.BytesIO(buffer.getvalue())).getinfo("img/p1.png").external_attr >> 16 == 0o600
    folder = uploads.UploadFolder()
    try:
        saved = _save_pages(folder, ("pages.zip", buffer.getvalue()))
        assert _files(saved.folder) == ["img/p1.png"] and saved.skipped == []
        assert (saved.folder / "img" / "p1.png").read_bytes() == b"one"
    finally:
        folder.delete()


@pytest.mark.parametrize("kind", [stat.S_IFIFO, stat.S_IFCHR, stat.S_IFBLK, stat.S_IFSOCK])
def test_a_zip_with_a_special_file_is_refused_whole(kind):
    folder = uploads.UploadFolder()
    try:
        with pytest.raises(InputError, match="member 'dev.png' is a link or a special file"):
            _save_pages(folder, ("pages.zip", _zip({"dev.png": b"x"}, {"dev.png": kind | 0o644})))
        assert not (folder.path / "pages").exists()
    finally:
        folder.delete()


@pytest.mark.parametrize(("members", "kept", "skipped"), [
    ([("a", b"1"), ("a/b.png", b"2")], ["a"], "'a/b.png': a folder in its path has the name of an earlier file"),
    ([("a/b.png", b"2"), ("a", b"1")], ["a/b.png"], "'a': it has the name of an earlier file's folder"),
    ([("p.png", b"1"), ("p.png", b"2")], ["p.png"], "'p.png': an earlier file has the same name (up to case)"),
    ([("p.png", b"1"), ("P.PNG", b"2")], ["p.png"], "'P.PNG': an earlier file has the same name (up to case)"),
    ([("p.png", b"1"), (".", b"2")], ["p.png"], "'.': it has no file name"),
    ([("p.png", b"1"), ("x" * 252 + ".png", b"2")], ["p.png"], "a name in its path is longer than 255 bytes"),
    ([("p.png", b"1"), ("/".join(["d" * 200] * 6) + "/p.png", b"2")], ["p.png"], "its path is longer than 1024 bytes"),
    ([("p.png", b"1"), ("a/" * 33 + "p.png", b"2")], ["p.png"], "it is more than 32 folders deep"),
])
def test_members_that_cannot_be_files_beside_the_others_are_skipped_and_listed(members, kept, skipped):
    folder = uploads.UploadFolder()
    try:
        saved = _save_pages(folder, ("pages.zip", _zip(members)))
        assert _files(saved.folder) == kept
        assert (saved.folder / kept[0]).read_bytes() == members[0][1]  # the first of two namesakes is kept
        (note,) = saved.skipped
        assert note.startswith("pages.zip: ") and note.endswith(skipped)
    finally:
        folder.delete()


def test_an_empty_member_name_and_a_loose_file_that_collides_are_skipped():
    folder = uploads.UploadFolder()
    try:
        archive = _raw_zip([(b"", b"nameless"), (b"P1.png", b"zipped"), (b"p2.png", b"two")])
        saved = _save_pages(folder, ("p1.png", b"loose"), ("pages.zip", archive))
        assert _files(saved.folder) == ["p1.png", "p2.png"] and (saved.folder / "p1.png").read_bytes() == b"loose"
        assert saved.skipped == ["pages.zip: '': it has no file name", "pages.zip: 'P1.png': an earlier file has the same name (up to case)"]
        assert uploads.skipped_text(saved.skipped * 3) == (
            "6 uploaded file(s) skipped: " + "; ".join((saved.skipped * 3)[:5]) + "; and 1 more")
    finally:
        folder.delete()


def test_a_bad_zip_never_hides_the_rest_of_the_sidebar(monkeypatch):
    at = _app(src="upload")
    archive = _zip([("a", b"1"), ("a/b.png", b"2")])
    at.file_uploader(key="upload_pages_0").set_value([("pages.zip", archive, "application/zip")]).run()
    _no_exception(at)
    assert [warning.value for warning in at.sidebar.warning] == [
        plain_for_markdown("1 uploaded file(s) skipped: pages.zip: 'a/b.png': a folder in its path has the name of an earlier file")]

    def fails(*_):
        raise FileExistsError("an error nobody foresaw")

    monkeypatch.setattr(uploads.UploadFolder, "save_files", fails)
    at.file_uploader(key="upload_pages_0").set_value([("other.zip", archive, "application/zip")]).run()
    _no_exception(at)
    assert any("unexpected error (FileExistsError)" in error.value for error in at.sidebar.error)
    labels = [button.label for button in at.sidebar.button]
    assert labels == ["Forget the uploaded files", "Save this view"]  # the sidebar drawn to its end
    assert [uploader.label for uploader in at.get("file_uploader")][-1] == "Label map (optional)"  # the uploaders after it still drawn


@pytest.mark.parametrize(("end_record", "problem"), [
    ({}, "holds 65,535 entries, more than the 10,000 extracted"),
    ({"zip64": True}, "holds 300,000 entries, more than the 10,000 extracted"),
    ({"declared": 1}, "holds more than the 10,000 entries extracted (its end record says 1)"),
])
def test_zip_entries_are_counted_before_zipfile_parses_them(end_record, problem):
    archive = _raw_zip([(b"p.png", b"x")], copies=300_000, **end_record)
    folder = uploads.UploadFolder()
    try:
        tracemalloc.start()
        with pytest.raises(InputError, match=f"^file pages.zip: {problem.replace('(', '.').replace(')', '.')}$"):
            _save_pages(folder, ("pages.zip", archive))
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak < 2**20  # zipfile would make 300,000 ZipInfo objects, about 150 MB
    finally:
        folder.delete()


def test_entries_pointing_at_the_same_data_count_as_files_of_one_name():
    folder = uploads.UploadFolder()
    try:
        saved = _save_pages(folder, ("pages.zip", _raw_zip([(b"p.png", b"x")], copies=3)))
        assert _files(saved.folder) == ["p.png"] and len(saved.skipped) == 2
    finally:
        folder.delete()


def test_members_are_extracted_streaming_and_their_declared_sizes_are_not_trusted():
    folder = uploads.UploadFolder()
    try:
        big = _zip({"big.png": bytes(64 * 2**20)})
        tracemalloc.start()
        saved = _save_pages(folder, ("big.zip", big))
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert (saved.folder / "big.png").stat().st_size == 64 * 2**20 and peak < 8 * 2**20  # the member was never held whole
        assert folder.used_bytes() == 64 * 2**20
        lying = _raw_zip([(b"p.png", bytes(4096))]).replace(struct.pack("<2L", 4096, 4096), struct.pack("<2L", 10, 10))
        with pytest.raises(InputError, match="^file lying.zip: is not a readable zip file$"):  # only 10 bytes read, then the CRC fails
            _save_pages(folder, ("lying.zip", lying))
        assert _files(saved.folder) == ["big.png"] and folder.used_bytes() == 64 * 2**20  # the earlier upload stays
    finally:
        folder.delete()


def test_all_sessions_together_hold_at_most_the_servers_budget(monkeypatch):
    monkeypatch.setattr(uploads, "_SERVER", uploads._ServerBudget())  # this test's sessions only
    monkeypatch.setenv(uploads.UPLOAD_BUDGET_VARIABLE, "1")
    first, second = uploads.UploadFolder(), uploads.UploadFolder()
    try:
        first.save("ref", "a.json", io.BytesIO(b" " * 700_000))
        with pytest.raises(InputError, match="^file b.json: the server holds uploads near its limit of 1 MB for all sessions"):
            second.save("ref", "b.json", io.BytesIO(b" " * 700_000))
        with pytest.raises(InputError, match="^file b.zip: the server holds uploads near its limit of 1 MB"):  # counted as written
            _save_pages(second, ("b.zip", _zip({"b.png": b" " * 700_000})))
        assert uploads._SERVER.held == 700_000 and not (second.path / "pages").exists() and not (second.path / "ref").exists()
        first.save("ref", "a.json", io.BytesIO(b" " * 100))  # a slot's new file replaces its old one
        assert uploads._SERVER.held == 100
        first.delete()
        assert uploads._SERVER.held == 0
        assert second.save("ref", "b.json", io.BytesIO(b" " * 700_000)).stat().st_size == 700_000
        monkeypatch.setenv(uploads.UPLOAD_BUDGET_VARIABLE, "2GB")
        with pytest.raises(InputError, match="TORE_STUDIO_UPLOAD_BUDGET is not a whole number of megabytes"):
            second.save("map", "map.json", io.BytesIO(b"{}"))
    finally:
        first.delete()
        second.delete()
