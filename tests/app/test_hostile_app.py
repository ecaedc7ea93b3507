"""The app is safe to serve (issue 10): hostile links, uploads, paths and names, through AppTest.

The scheduler-address case is in test_dask_app.py, and in a real browser in test_browser.py.
"""

from __future__ import annotations

import base64
import io
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image
from tests.app.test_pages import DEMO, _app, _charts, _no_exception

from tore_engine.layout import Page, PageImage
from tore_engine.studio import evaluations, figures, page_images, uploads
from tore_engine.studio.data_root import DATA_ROOT_VARIABLE
from tore_engine.studio.plain_text import plain_for_markdown, plain_for_plotly

NOTICE = "Some parameters of this link were ignored, their values kept as default: "
MODEL = "<img src=x onerror=alert(1)>"  # a file name
HOSTILE_NAMES = ['<a href="https://example.org">link</a>', '<span style="font-size:120px">huge</span>', "![t](http://x.invalid/t.png)"]


def _notice(at) -> str | None:
    notices = [warning.value for warning in at.warning if warning.value.startswith(NOTICE)]
    assert len(notices) <= 1, notices
    return notices[0] if notices else None


def _layout(pages: list[dict], name: str = "layout") -> bytes:
    return json.dumps({"name": name, "pages": pages}).encode()


def _page(page_id: str, labels: list[str], **image: object) -> dict:
    boxes = [{"label": label, "bbox": [10 + 20 * k, 10, 25 + 20 * k, 40]} for k, label in enumerate(labels)]
    return {"id": page_id, "width": 100, "height": 50, "boxes": boxes, **image}


def _upload(at, slot: str, name: str, data: bytes):
    generation = at.session_state["_upload_generation"] if "_upload_generation" in at.session_state else 0
    return at.file_uploader(key=f"upload_{slot}_{generation}").set_value((name, data, "application/json")).run()


def _shown_text(at) -> str:
    """Every text element of the page, as sent to the browser."""
    return " ".join(element.value for kind in ("markdown", "caption", "error", "warning", "info", "exception", "text", "code")
                    for element in getattr(at, kind) if isinstance(element.value, str))


def _png(colour: str) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (100, 50), colour).save(buffer, format="PNG")
    return buffer.getvalue()


# --- the URL ------------------------------------------------------------------------------------


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="two worker processes need two CPUs")
def test_a_valid_whole_number_in_the_url_is_taken():
    at = _app(workers="2")
    _no_exception(at)
    assert at.number_input(key="workers").value == 2 and at.session_state["_dataset"].workers == 2
    assert _notice(at) is None


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ({"workers": "abc"}, "`workers` (expected a whole number)"),
        ({"workers": "0"}, f"`workers` (expected a whole number from 1 to {os.cpu_count() or 1})"),
        ({"src": "path", "ref": "a\x00b"}, "`ref` (contains a NUL byte)"),
        ({"tax": "bogus"}, "`tax` (not one of the choices)"),
        ({"hide": "yes"}, "`hide` (expected 0 or 1)"),
        ({"cell": "Nothing|Such"}, "`cell` (not a cell of this matrix)"),
    ],
)
def test_a_bad_url_parameter_is_ignored_with_one_notice(query, named):
    at = _app(**query)
    _no_exception(at)
    assert _notice(at) == f"{NOTICE}{named}."
    assert at.session_state["_dataset"].taxonomy == "auto" and at.session_state["_dataset"].workers == 1


def test_every_ignored_parameter_is_listed_in_the_same_notice_without_its_value(tmp_path, monkeypatch):
    monkeypatch.setenv(DATA_ROOT_VARIABLE, str(tmp_path))
    at = _app(tax="bogus", workers="abc", hide="2", view="<script>")
    _no_exception(at)
    assert _notice(at) == (f"{NOTICE}`tax` (not one of the choices); `workers` (expected a whole number); "
                           "`view` (not one of the choices); `hide` (expected 0 or 1).")
    assert not at.exception and "<script>" not in _notice(at) and str(tmp_path) not in _notice(at)


# --- page images ----------------------------------------------------------------------------------


def _image_source(at) -> str:
    return _charts(at)[0]["layout"]["images"][0]["source"]


def _placeholder_uri(text: str = page_images.NO_PAGE_IMAGE) -> str:
    from tore_engine.studio import rendering

    return rendering.data_uri(rendering.placeholder(100, 50, text))


@pytest.fixture
def reads(monkeypatch):
    """The files the page-image layer opens."""
    opened = []
    original = page_images.read_bytes

    def spy(path, **options):
        opened.append(str(path))
        return original(path, **options)

    monkeypatch.setattr(page_images, "read_bytes", spy)
    return opened


def test_page_images_outside_their_root_are_never_read_and_look_missing(tmp_path, reads):
    root, secret = tmp_path / "root", tmp_path / "secret.png"
    root.mkdir()
    secret.write_bytes(_png("red"))
    (root / "inside.png").write_bytes(_png("blue"))
    os.mkfifo(root / "pipe.png")
    (root / "link.png").symlink_to(secret)
    page = Page("p", 100, 50, [], [])
    outside = [PageImage(secret), PageImage(root / ".." / "secret.png"), PageImage(root / "link.png")]
    not_files = [PageImage(root / "missing.png"), PageImage(root / "pipe.png"), PageImage(root), None]
    for image in outside + not_files:
        page.image = image
        assert page_images.page_image_uri(page, root) == _placeholder_uri(), image
    assert reads == []
    page.image = PageImage(root / "inside.png")
    assert page_images.page_image_uri(page, root).startswith("data:image/jpeg;base64,")
    assert reads == [str(root / "inside.png")]


def test_an_uploaded_layout_cannot_show_a_server_file(tmp_path, reads):
    secret = tmp_path / "secret.png"
    secret.write_bytes(_png("red"))
    pages = [_page("absolute", ["Text"], image=str(secret)), _page("climbing", ["Text"], pdf="../../secret.pdf", page_no=0),
             _page("missing", ["Text"], image="missing.png")]
    at = _app(src="upload")
    _upload(at, "ref", "reference.json", _layout(pages))
    _upload(at, "a", "model.json", _layout(pages))
    at.switch_page("app_pages/overlays.py").run()
    _no_exception(at)
    sources = {}
    for page_id in ("absolute", "climbing", "missing"):
        at.selectbox(key="page").set_value(page_id).run()
        _no_exception(at)
        sources[page_id] = _image_source(at)
    assert set(sources.values()) == {_placeholder_uri()}  # the same placeholder for outside and missing
    assert reads == []
    assert str(tmp_path) not in _shown_text(at)


def test_a_page_image_path_in_a_server_layout_stays_in_the_data_root(tmp_path, monkeypatch, reads):
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "secret.png").write_bytes(_png("red"))
    (root / "page.png").write_bytes(_png("blue"))
    pages = [_page("escape", ["Text"], image="../secret.png"), _page("inside", ["Text"], image="page.png")]
    (root / "reference.json").write_bytes(_layout(pages))
    (root / "model.json").write_bytes(_layout(pages))
    monkeypatch.setenv(DATA_ROOT_VARIABLE, str(root))
    at = _app(src="path", ref="reference.json", a="model.json", page="escape")
    at.switch_page("app_pages/overlays.py").run()
    _no_exception(at)
    assert _image_source(at) == _placeholder_uri()
    at.selectbox(key="page").set_value("inside").run()
    assert _image_source(at).startswith("data:image/jpeg;base64,")
    assert reads == [str(root / "page.png")]


# --- names shown as plain text ----------------------------------------------------------------


def test_markup_in_class_names_is_shown_as_text(tmp_path, monkeypatch):
    reference, swapped = [_page("p1", HOSTILE_NAMES), _page("p2", HOSTILE_NAMES[::-1])], [_page("p1", HOSTILE_NAMES[::-1]), _page("p2", HOSTILE_NAMES)]
    (tmp_path / "reference.json").write_bytes(_layout(reference, "gt"))
    (tmp_path / f"{MODEL}.json").write_bytes(_layout(swapped, "m"))  # the first and last classes swapped on every page
    monkeypatch.setenv(DATA_ROOT_VARIABLE, str(tmp_path))
    at = _app(src="path", ref="reference.json", a=f"{MODEL}.json", tax="single")
    _no_exception(at)
    heatmap, bars = _charts(at)[:2]
    escaped = [plain_for_plotly(name) for name in HOSTILE_NAMES]
    assert set(escaped) <= set(heatmap["layout"]["yaxis"]["ticktext"]) and set(escaped) <= set(heatmap["layout"]["xaxis"]["ticktext"])
    assert escaped[0] == '&lt;a href="https://example.org"&gt;link&lt;/a&gt;'
    assert all(f"{name}<br>prediction: " in " ".join(heatmap["data"][1]["text"]) for name in escaped)
    assert heatmap["layout"]["title"]["text"].endswith(f"model A ({plain_for_plotly(MODEL)})")
    assert set(escaped) <= set(bars["data"][0]["x"])
    spec = json.dumps(_charts(at))
    assert "<a href" not in spec and "<span style" not in spec and "<img" not in spec
    assert at.radio(key="model").options == [plain_for_markdown(f"model A ({MODEL})")]

    at.selectbox(key="cell_ref").set_value(HOSTILE_NAMES[0]).run()
    at.selectbox(key="cell_pred").set_value(HOSTILE_NAMES[2]).run()
    _no_exception(at)
    heading = next(markdown.value for markdown in at.markdown if markdown.value.startswith("**Contributing pages"))
    assert f"for reference **{plain_for_markdown(HOSTILE_NAMES[0])}** → prediction **{plain_for_markdown(HOSTILE_NAMES[2])}**" in heading
    assert "\\!\\[t\\]\\(http:\u2060//x.invalid/t.png\\)" in heading and "](" not in heading

    at.switch_page("app_pages/overlays.py").run()
    _no_exception(at)
    overlay = _charts(at)[0]
    assert [annotation["text"] for annotation in overlay["layout"]["annotations"]] == ["reference", f"model A ({plain_for_plotly(MODEL)})"]
    legend = {trace["name"] for trace in overlay["data"] if trace.get("showlegend", True)}
    assert legend == {*escaped, f"boxes behind {escaped[0]} → {escaped[2]}"}  # the chosen cell travels to the page, escaped
    assert all("<a href" not in text for trace in overlay["data"] for text in trace.get("text") or [] if text)


# --- uploads --------------------------------------------------------------------------------------


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


# --- paths and errors ---------------------------------------------------------------------------


def test_a_fifo_typed_as_a_path_is_refused_without_hanging(tmp_path, monkeypatch):
    os.mkfifo(tmp_path / "pipe.json")
    (tmp_path / "model.json").write_bytes((DEMO / "model_a.json").read_bytes())
    monkeypatch.setenv(DATA_ROOT_VARIABLE, str(tmp_path))
    at = _app(timeout=20, src="path", ref="pipe.json", a="model.json")  # a read of the FIFO would block past the timeout
    _no_exception(at)
    assert [error.value for error in at.sidebar.error] == [
        plain_for_markdown("file pipe.json: is not a regular file or a folder (a device, pipe or socket); it is not opened")
    ]


@pytest.mark.parametrize("where", ["page", "fragment"])
def test_an_unexpected_error_is_a_short_message_without_a_traceback(monkeypatch, where):
    def broken(*_args, **_kwargs):
        raise RuntimeError("/very/secret/server/path exploded")

    store = evaluations.EvaluationStore()
    monkeypatch.setattr(evaluations, "evaluation_store", lambda: store)
    if where == "page":  # loading fails: the page's own guard
        monkeypatch.setattr(evaluations, "load_pair", broken)
    else:  # drawing the matrix fails: the guard of the matrix fragment
        monkeypatch.setattr(figures, "matrix_heatmap", broken)
    at = _app()
    _no_exception(at)
    assert [error.value for error in at.error] == [
        "This view stopped on an unexpected error (RuntimeError); the server's log has the details. Other pages still work."
    ]
    assert "secret" not in _shown_text(at)


def test_the_placeholder_never_names_a_folder(tmp_path):
    uri = page_images.page_image_uri(Page("p", 100, 50, [], [], image=PageImage(tmp_path / "nope.pdf", 0)), tmp_path)
    assert uri == _placeholder_uri() and base64.b64decode(uri.split(",", 1)[1]).startswith(b"\x89PNG")
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"not a pdf")
    uri = page_images.page_image_uri(Page("p", 100, 50, [], [], image=PageImage(broken, 0)), tmp_path)
    assert uri == _placeholder_uri("broken.pdf is not a readable PDF")
