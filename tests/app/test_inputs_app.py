"""The app reads users' own formats (issue 11 item 4): a format picker for every input, two COCO
results lists read against one images + categories file, docling-eval datasets giving both
sides, page images uploaded (files or a zip, extracted safely) or in a server folder, and images
stored inside Parquet files drawn under the overlays."""

from __future__ import annotations

import base64
import io
import json
import stat
import zipfile
from pathlib import Path

import pytest
from PIL import Image
from streamlit.testing.v1 import AppTest
from tests.app.test_pages import APP, _charts, _no_exception

from tore_engine.dataset import evaluate_dataset
from tore_engine.errors import InputError
from tore_engine.formats import load, load_pair
from tore_engine.studio import uploads
from tore_engine.studio.data_root import DATA_ROOT_VARIABLE
from tore_engine.studio.messages import gui_text

PAGES = [{"id": "p1", "width": 40, "height": 20, "image": "img/p1.png",
          "boxes": [{"label": "Text", "bbox": [2, 2, 20, 10]}, {"label": "Table", "bbox": [22, 2, 38, 18]}]},
         {"id": "p2", "width": 40, "height": 20, "image": "img/p2.png", "boxes": [{"label": "Text", "bbox": [0, 0, 40, 5]}]}]
PREDICTED = [{**page, "boxes": [{"label": "Table", "bbox": [2, 2, 20, 10]}]} for page in PAGES]


def _png(colour: str) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (40, 20), colour).save(buffer, format="PNG")
    return buffer.getvalue()


def _native(name: str, pages: list[dict]) -> bytes:
    return json.dumps({"name": name, "pages": pages}).encode()


def _app(timeout: float = 60, **query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=timeout)
    for key, value in query.items():
        at.query_params[key] = value
    return at.run()


def _image_source(chart: dict) -> str:
    return chart["layout"]["images"][0]["source"]


def _decoded(uri: str) -> Image.Image:
    return Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1])))


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.setenv(DATA_ROOT_VARIABLE, str(tmp_path))
    return tmp_path


def test_images_stored_in_a_parquet_file_are_drawn(root):
    from tore_engine.formats import parquet

    (root / "img").mkdir()
    for page, colour in (("p1", "red"), ("p2", "blue")):
        (root / "img" / f"{page}.png").write_bytes(_png(colour))
    (root / "gt.json").write_bytes(_native("gt", PAGES))
    layout = load(root / "gt.json")
    (root / "stored").mkdir()
    parquet.write(layout, root / "stored" / "gt.parquet", image_bytes=True)
    (root / "img" / "p1.png").unlink()  # only the copy inside the Parquet file is left
    (root / "model.json").write_bytes(_native("model", PREDICTED))
    at = _app(src="path", ref="stored/gt.parquet", fmt="parquet", a="model.json", fmt_a="tore")
    at.switch_page("app_pages/overlays.py").run()
    _no_exception(at)
    source = _image_source(_charts(at)[0])
    assert source.startswith("data:image/jpeg;base64,")  # the page, not the placeholder (a PNG)
    assert _decoded(source).getpixel((20, 10))[0] > 200  # red: p1's stored image


def test_page_images_from_a_folder_on_the_server(root):
    (root / "layouts").mkdir()
    (root / "pictures" / "img").mkdir(parents=True)
    (root / "pictures" / "img" / "p1.png").write_bytes(_png("red"))
    (root / "layouts" / "gt.json").write_bytes(_native("gt", PAGES))
    (root / "layouts" / "model.json").write_bytes(_native("model", PREDICTED))
    at = _app(src="path", ref="layouts/gt.json", a="layouts/model.json")
    at.switch_page("app_pages/overlays.py").run()
    assert _image_source(_charts(at)[0]).startswith("data:image/png;base64,")  # beside the layouts there is none: the placeholder
    at.text_input(key="imgdir").set_value("pictures").run()
    _no_exception(at)
    assert _decoded(_image_source(_charts(at)[0])).getpixel((20, 10))[0] > 200  # red: p1, from the chosen folder
    assert at.query_params["imgdir"] == "pictures"


def _coco(root: Path) -> None:
    images = {"images": [{"id": k + 1, "file_name": page["id"], "width": 40, "height": 20} for k, page in enumerate(PAGES)],
              "categories": [{"id": 1, "name": "Text"}, {"id": 2, "name": "Table"}]}
    (root / "images.json").write_text(json.dumps(images), encoding="utf-8")
    model_a = [{"image_id": 1, "category_id": 1, "bbox": [2, 2, 18, 8], "score": 0.9}]
    model_b = [{"image_id": 1, "category_id": 2, "bbox": [2, 2, 18, 8], "score": 0.8}, {"image_id": 2, "category_id": 1, "bbox": [0, 0, 40, 5]}]
    (root / "a.results.json").write_text(json.dumps(model_a), encoding="utf-8")
    (root / "b.results.json").write_text(json.dumps(model_b), encoding="utf-8")


def test_two_coco_results_lists_are_compared_against_one_images_file(root):
    _coco(root)
    at = _app(src="path", a="a.results.json", b="b.results.json", coco="images.json")
    at.switch_page("app_pages/compare.py").run()
    _no_exception(at)
    assert any("only model B read against model A is shown" in info.value for info in at.info)
    recall = next(chart for chart in _charts(at) if chart["layout"]["title"]["text"] == "recall (zero-trimmed), B against A")
    engine = evaluate_dataset(*load_pair(root / "a.results.json", root / "b.results.json", coco_images=root / "images.json"), taxonomy="dual")
    assert recall["layout"]["yaxis"]["ticktext"] == engine.matrices.trimmed.rows


def test_without_the_images_file_the_message_names_the_sidebar_not_a_flag(root):
    _coco(root)
    (root / "gt.json").write_bytes(_native("gt", PAGES))
    at = _app(src="path", ref="gt.json", a="a.results.json")
    messages = [error.value for error in at.error]
    assert any("COCO images + categories file \\(in the sidebar\\)" in message for message in messages), messages
    assert not any("--images" in message for message in messages)


def test_each_input_has_its_own_format(root):
    (root / "gt.json").write_bytes(_native("gt", PAGES))
    (root / "model.jsonl").write_text("\n".join(json.dumps(page) for page in PREDICTED) + "\n", encoding="utf-8")
    at = _app(src="path", ref="gt.json", fmt="tore", a="model.jsonl", fmt_a="jsonl")
    _no_exception(at)
    assert [at.selectbox(key=key).value for key in ("fmt", "fmt_a", "fmt_b")] == ["tore", "jsonl", "auto"]
    assert (at.query_params["fmt"], at.query_params["fmt_a"]) == ("tore", "jsonl")
    assert _charts(at)[0]["layout"]["yaxis"]["ticktext"] == ["Background", "Table", "Text"]


def test_a_docling_eval_dataset_gives_the_reference_and_model_a(root):
    from tests.formats.test_docling_eval import rows, write_dataset

    write_dataset(root / "dataset", rows())
    at = _app(src="path", ref="dataset", timeout=120)
    _no_exception(at)
    assert any("predictions stored in this docling-eval dataset" in caption.value for caption in at.sidebar.caption)
    engine = evaluate_dataset(*load_pair(root / "dataset", format="docling-eval"))
    heatmap = _charts(at)[0]
    assert heatmap["layout"]["yaxis"]["ticktext"] == (engine.matrices.full.rows if engine.matrices.mode == "single" else engine.matrices.trimmed.rows)
    at.switch_page("app_pages/overlays.py").run()
    _no_exception(at)
    assert _image_source(_charts(at)[0]).startswith("data:image/jpeg;base64,")  # the dataset's own page image


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


@pytest.mark.parametrize(("engine", "shown"), [
    ("a COCO results list needs the images + categories file it was made for: pass it with --images IMAGES.json (or use ...)",
     "a COCO results list needs the images + categories file it was made for: choose it as the COCO images + categories file "
     "(in the sidebar) (or use ...)"),
    ("give only the dataset (tore evaluate DATASET --format docling-eval)", "give only the dataset"),
    ("use --taxonomy dual or --label-map", 'choose the taxonomy "dual" (in the sidebar) or a label map (in the sidebar)'),
    ("reading this format needs pyarrow, which is not installed: pip install 'tore-studio[parquet]'",
     "reading this format needs pyarrow, which is not installed: the server's operator can install tore-studio[parquet]"),
])
def test_engine_messages_are_reworded_for_the_app(engine, shown):
    assert gui_text(engine) == shown


def test_messages_name_files_without_their_server_folders(root):
    assert gui_text(f"file {root}/data/gt.json: no such file") == "file data/gt.json: no such file"
    assert gui_text("file gt.json: no such file") == "file gt.json: no such file"  # a name alone stays as it is


def test_two_long_or_namesake_files_have_different_labels():
    from tore_engine.studio.sidebar import Dataset

    long = "layout_predictions_of_the_detector_trained_on_the_whole_benchmark_run_"
    uploaded = Dataset("upload", None, {"A": Path(f"/s/a/{long}1.json"), "B": Path(f"/s/b/{long}2.json")}, Path("/s"))
    labels = [uploaded.model_label(model) for model in ("A", "B")]
    assert labels == ["model A (layout_predictions_…hole_benchmark_run_1)", "model B (layout_predictions_…hole_benchmark_run_2)"]
    on_the_server = Dataset("path", None, {"A": Path("/data/heron/preds.json"), "B": Path("/data/egret/preds.json")}, Path("/data"))
    assert [on_the_server.model_label(model) for model in ("A", "B")] == ["model A (heron/preds)", "model B (egret/preds)"]
