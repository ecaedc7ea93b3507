"""`--format auto` on hostile layouts of the text: a byte-order mark first, and keys that tell the
format only after the first window (`detect.PEEK_BYTES`)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree

import pytest

import tore_engine.formats.detect as detect
from tests.helpers import shared_path, write_json
from tore_engine.api import detect_format, load, load_pair
from tore_engine.core.errors import InputError, ToreWarning
from tore_engine.io.files import BOM

PAGE = {"id": "p", "width": 10, "height": 10, "boxes": [{"label": "class-1", "bbox": [0, 0, 1, 1]}]}
NAMES = [f"class-{k}" for k in range(10_000)]  # a 138 KB taxonomy: past the first 64 KiB


def lines(*objects) -> bytes:
    return "".join(json.dumps(item) + "\n" for item in objects).encode()


CASES = {
    "a native file after a byte-order mark": (BOM + json.dumps({"pages": [PAGE]}).encode(), "tore"),
    "JSON Lines after a byte-order mark": (BOM + lines(PAGE, PAGE | {"id": "q"}), "jsonl"),
    "'pages' after a long taxonomy": (json.dumps({"name": "m", "taxonomy": NAMES, "pages": [PAGE]}).encode(), "tore"),
    "'pages' after a long taxonomy, pretty-printed": (json.dumps({"taxonomy": NAMES, "pages": [PAGE]}, indent=2).encode(), "tore"),
    "'pages' as a class name before the key": (json.dumps({"taxonomy": ["pages", *NAMES], "pages": [PAGE]}).encode(), "tore"),
    "a JSON Lines header longer than the window": (lines({"taxonomy": NAMES}, PAGE), "jsonl"),
    "a JSON Lines page longer than the window": (lines(PAGE | {"boxes": PAGE["boxes"] * 5000}, PAGE | {"id": "q"}), "jsonl"),
    "COCO's 'images' after a long 'info'": (json.dumps({"info": {"names": NAMES}, "images": [], "categories": []}).encode(), "coco"),
}


@pytest.mark.parametrize("text, expected", CASES.values(), ids=CASES)
def test_the_format_is_told_whatever_comes_first(tmp_path, text, expected):
    path = tmp_path / "input"
    path.write_bytes(text)
    assert detect_format(path) == expected


UNTOLD = {
    "an object without a telling key": json.dumps({"info": {"names": NAMES}}).encode(),
    "a line without a telling key": lines({"info": NAMES}),
    "an HTML page (not DocTags)": b"<!DOCTYPE html>\n<html><body><p>page</p></body></html>",
}


@pytest.mark.parametrize("text", UNTOLD.values(), ids=UNTOLD)
def test_an_input_of_no_known_format_is_refused(tmp_path, text):
    path = tmp_path / "input.json"
    path.write_bytes(text)
    with pytest.raises(InputError, match="cannot tell its format from its content"):
        detect_format(path)


def test_windows_past_the_first_are_read_only_until_the_keys_tell(tmp_path, monkeypatch):
    """A file with 'pages' late and gigabytes of pages after it is not read to its end: detection
    stops at the key (here: 1 KiB windows over a 10 MB file, counted)."""
    monkeypatch.setattr(detect, "PEEK_BYTES", 1024)
    monkeypatch.setattr(detect, "WINDOW_BYTES", 1024)
    path = tmp_path / "large.json"
    path.write_bytes(json.dumps({"taxonomy": NAMES[:300], "pages": [PAGE] * 100_000}).encode())
    windows = []
    original = detect._windows

    def counted(*args):
        for structure in original(*args):
            windows.append(len(structure.data))
            yield structure

    monkeypatch.setattr(detect, "_windows", counted)
    assert detect_format(path) == "tore"
    assert path.stat().st_size > 9_000_000 and sum(windows) < 8 * 1024


def test_a_late_pages_key_reads_like_an_early_one(tmp_path):
    late = tmp_path / "late.json"
    late.write_bytes(json.dumps({"name": "m", "taxonomy": NAMES, "pages": [PAGE]}).encode())
    layout = load(late)
    assert (layout.name, layout.taxonomy, layout.page_ids(), layout.pages[0].labels) == ("m", NAMES, ["p"], ["class-1"])


CVAT_BOX = b"<box label='text' xtl='1' ytl='1' xbr='5' ybr='5'><attribute name='a'>x</attribute></box>"
KINDS = {
    "an empty file": (b"", "the file is empty"),
    "a byte-order mark alone": (BOM, "the file is empty"),
    "blank space alone": (b" \n\t\r\n", "the file holds only blank space"),
    "CVAT's XML after a declaration": (b"<?xml version='1.0' encoding='utf-8'?>\n<annotations>\n<image id='1'>" + CVAT_BOX + b"</image>",
                                       detect.CVAT_NOT_READ),
    "CVAT's XML without a declaration (once read as DocTags)": (b"<annotations><version>1.1</version><image id='1'>" + CVAT_BOX + b"</image>",
                                                                 detect.CVAT_NOT_READ),
    "a report.json's first keys": (json.dumps({"mode": "single", "classes": ["Background"], "pages": 3, "pixels": 9}, indent=1).encode(),
                                   detect.RESULT_FILE_IS),
    "an HTML page": (b"<!DOCTYPE html>\n<html><body></body></html>", "(markup whose first element is <html>)"),
    "a misspelt 'pages'": (json.dumps({"name": "m", "page": [PAGE]}).encode(), "(its key 'page' resembles 'pages')"),
    "a misspelt 'images'": (json.dumps({"info": {}, "imgaes": []}).encode(), "(its key 'imgaes' resembles 'images')"),
}


@pytest.mark.parametrize("text, message", KINDS.values(), ids=KINDS)
def test_a_file_of_no_layout_format_is_refused_with_what_it_is(tmp_path, text, message):
    path = tmp_path / "input.json"
    path.write_bytes(text)
    with pytest.raises(InputError) as caught:
        detect_format(path)
    assert caught.value.file == str(path) and message in caught.value.problem


def test_a_real_cvat_export_is_refused_and_the_export_it_names_reads(tmp_path):
    """case_03's "CVAT for images 1.1" XML is refused naming CVAT's "COCO 1.0" export; that export
    (annotations/instances_default.json: CVAT's image and annotation fields, boxes as [x, y, w, h],
    attributes kept), built here from the XML, reads with every box at the XML's coordinates."""
    xml = shared_path("data", "layouts", "docling_eval_cvat_human_annotations", "case_03_annotations.xml")
    with pytest.raises(InputError) as caught:
        load(xml)
    assert caught.value.problem == detect.CVAT_NOT_READ and "annotations/instances_default.json" in caught.value.problem
    root = ElementTree.parse(xml).getroot()
    labels = sorted({box.get("label") for box in root.iter("box")})
    categories = [{"id": k, "name": label, "supercategory": ""} for k, label in enumerate(labels, start=1)]
    images, annotations, expected = [], [], {}
    for number, image in enumerate(root.iter("image"), start=1):
        images.append({"id": number, "width": int(image.get("width")), "height": int(image.get("height")), "file_name": image.get("name"),
                       "license": 0, "flickr_url": "", "coco_url": "", "date_captured": 0})
        for box in image.iter("box"):
            x1, y1, x2, y2 = (float(box.get(key)) for key in ("xtl", "ytl", "xbr", "ybr"))
            annotations.append({"id": len(annotations) + 1, "image_id": number, "category_id": labels.index(box.get("label")) + 1,
                                "segmentation": [], "area": (x2 - x1) * (y2 - y1), "bbox": [x1, y1, x2 - x1, y2 - y1], "iscrowd": 0,
                                "attributes": {"occluded": False, **{a.get("name"): a.text or "" for a in box.iter("attribute")}}})
            expected.setdefault(image.get("name"), []).append((box.get("label"), [x1, y1, x2, y2]))
    (tmp_path / "annotations").mkdir()
    export = write_json(tmp_path / "annotations" / "instances_default.json",
                        {"licenses": [{"name": "", "id": 0, "url": ""}], "info": {}, "categories": categories, "images": images, "annotations": annotations})
    layout = load(export)
    read = {page.id: [(label, pytest.approx(bbox)) for label, bbox in zip(page.labels, page.bboxes.tolist())] for page in layout.pages}
    assert read == expected and sum(map(len, read.values())) == len(list(root.iter("box")))


LAYOUT_AND_COCO = {
    "pages": [PAGE],
    "images": [{"id": 1, "file_name": "p", "width": 10, "height": 10}],
    "categories": [{"id": 1, "name": "class-1"}],
    "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [5, 5, 2, 2]}],
}
AMBIGUOUS = "is both a layout JSON (key 'pages') and a COCO file (keys 'annotations', 'categories', 'images')"


@pytest.mark.parametrize("first", ["pages", "images"])
def test_a_file_that_is_a_layout_and_coco_at_once_is_ambiguous_unless_a_format_is_given(tmp_path, first):
    order = ["pages", "images", "categories", "annotations"] if first == "pages" else ["images", "categories", "annotations", "pages"]
    path = write_json(tmp_path / "both.json", {key: LAYOUT_AND_COCO[key] for key in order})
    for format in ("auto", "tore"):
        with pytest.raises(InputError) as caught:
            load(path, format)
        assert caught.value.file == str(path) and caught.value.problem.startswith(AMBIGUOUS)
        assert "pass --format coco to read it as COCO" in caught.value.problem and "(--format tore)" in caught.value.problem
    with pytest.raises(InputError, match="ambiguous"):
        load_pair(path, path)
    with pytest.warns(ToreWarning):
        as_coco = load(path, "coco")  # as asked, with a word on what is left out
    assert as_coco.pages[0].bboxes.tolist() == [[5, 5, 7, 7]]
    assert [warning.message for warning in as_coco.warnings] == [
        "the file's top-level 'pages' (a layout JSON's) is not read: --format coco reads its COCO images and annotations"]
    without_coco = write_json(tmp_path / "layout.json", {"pages": [PAGE]})
    assert load(without_coco).pages[0].bboxes.tolist() == [[0, 0, 1, 1]]  # the other reading the message offers
