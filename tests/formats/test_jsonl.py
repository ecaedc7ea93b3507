"""JSON Lines of pages: the same layout as the native file, read in chunks."""

from __future__ import annotations

import json

import pytest

from tests.helpers import load_vector, write_json
from tore_engine.api import detect_format, load
from tore_engine.core.errors import InputError
from tore_engine.formats import jsonl
from tore_engine.formats.native import read as read_native


def write_jsonl(path, header, pages):
    lines = ([json.dumps(header)] if header else []) + [json.dumps(page) for page in pages]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_public_vectors_as_json_lines_equal_the_native_file(tmp_path, monkeypatch):
    document = load_vector("tore_public_pages.json")["reference"]
    monkeypatch.setattr(jsonl, "CHUNK_BYTES", 4096)  # many chunks, lines cut across reads
    path = write_jsonl(tmp_path / "gt.jsonl", {"name": document["name"]} | ({"taxonomy": document["taxonomy"]} if "taxonomy" in document else {}), document["pages"])
    assert detect_format(path) == "jsonl"
    from_lines, from_native = load(path), read_native(write_json(tmp_path / "gt.json", document))
    assert from_lines.name == from_native.name and from_lines.taxonomy == from_native.taxonomy
    assert len(from_lines.pages) == len(from_native.pages) == 60
    for a, b in zip(from_lines.pages, from_native.pages):
        assert (a.id, a.width, a.labels, a.bboxes.tolist()) == (b.id, b.width, b.labels, b.bboxes.tolist())


def test_without_a_header_the_name_is_the_file_stem(tmp_path):
    layout = load(write_jsonl(tmp_path / "model.jsonl", None, [{"id": "p", "width": 5, "height": 5, "boxes": []}] * 1 + [{"id": "q", "width": 5, "height": 5}]))
    assert layout.name == "model" and layout.page_ids() == ["p", "q"]


def test_an_error_names_the_line_and_box(tmp_path):
    pages = [{"id": "p", "width": 5, "height": 5}, {"id": "q", "width": 5, "height": 5, "boxes": [{"label": "a", "bbox": [1, 2]}]}]
    with pytest.raises(InputError) as caught:
        load(write_jsonl(tmp_path / "bad.jsonl", {"name": "m"}, pages), format="jsonl")
    assert caught.value.problem == "line 3: expected a list of 4 numbers (at bbox)" and caught.value.box == 0
