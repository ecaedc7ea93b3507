"""`--format auto` on hostile layouts of the text: a byte-order mark first, and keys that tell the
format only after the first window (`detect.PEEK_BYTES`)."""

from __future__ import annotations

import json

import pytest

import tore_engine.formats.detect as detect
from tore_engine.api import detect_format, load
from tore_engine.core.errors import InputError
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
    "CVAT's XML annotations (not DocTags)": b"<?xml version='1.0' encoding='utf-8'?>\n<annotations>\n<image id='1'>"
                                             b"<box label='text' xtl='1' ytl='1' xbr='5' ybr='5'><attribute name='a'>x</attribute></box></image>",
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
