"""Large files read as an index, their pages read by the workers: the same layout and report as the
whole-file reader, and the same errors."""

from __future__ import annotations

import json

import pytest
from tests.helpers import layout_json, load_shared_json, write_json

import tore_engine.formats.lazy as lazy
from tore_engine.dataset import evaluate_dataset
from tore_engine.errors import InputError
from tore_engine.formats import load, load_pair
from tore_engine.formats.lazy import FilePages
from tore_engine.report import build_report


@pytest.fixture
def vectors(tmp_path):
    pages = load_shared_json("vectors", "tore_public_pages.json")
    return write_json(tmp_path / "gt.json", pages["reference"]), write_json(tmp_path / "model.json", pages["prediction"])


def lazily(monkeypatch, function, *args, **options):
    monkeypatch.setattr(lazy, "LAZY_BYTES", 0)
    try:
        return function(*args, **options)
    finally:
        monkeypatch.undo()


@pytest.mark.parametrize("workers", [1, 2])
def test_reports_equal_the_whole_file_readers(vectors, monkeypatch, workers):
    eager = build_report(evaluate_dataset(*load_pair(*vectors), workers=workers))
    reference, prediction = lazily(monkeypatch, load_pair, *vectors)
    assert isinstance(reference.pages, FilePages) and isinstance(prediction.pages, FilePages)
    lazy_report = build_report(evaluate_dataset(reference, prediction, workers=workers, label_map={"Text": "Body"}))
    assert json.dumps(lazy_report) == json.dumps(build_report(evaluate_dataset(*load_pair(*vectors), workers=workers, label_map={"Text": "Body"})))
    assert json.dumps(build_report(evaluate_dataset(reference, prediction, workers=workers))) == json.dumps(eager)


def test_pages_are_read_on_access(vectors, monkeypatch):
    eager, indexed = load(vectors[0]), lazily(monkeypatch, load, vectors[0])
    assert indexed.page_ids() == eager.page_ids() and indexed.labels_in_use() == eager.labels_in_use()
    assert indexed.box_count() == eager.box_count()
    for k in (0, 17, len(eager.pages) - 1):
        a, b = eager.pages[k], indexed.pages[k]
        assert (a.id, a.width, a.height, a.labels, a.bboxes.tolist()) == (b.id, b.width, b.height, b.labels, b.bboxes.tolist())


def good_page(page_id, **changes):
    return {"id": page_id, "width": 10, "height": 10, "boxes": [{"label": "a", "bbox": [0, 0, 5, 5]}]} | changes


@pytest.mark.parametrize(
    "pages, taxonomy",
    [
        ([good_page("p"), good_page("q", boxes=[{"label": "a", "bbox": [0, 0, "x", 5]}])], None),
        ([good_page("p"), good_page("q", boxes=[{"label": "a", "bbx": [0, 0, 1, 5]}])], None),
        ([good_page("p"), good_page("q", width=-2)], None),
        ([good_page("p"), good_page("p")], None),
        ([good_page("p"), good_page("q", boxes=[{"label": "z", "bbox": [0, 0, 1, 1]}])], ["a"]),
        ([good_page("p", boxes=[{"label": "", "bbox": [0, 0, 1, 1]}])], None),
    ],
)
def test_errors_are_the_whole_file_readers(tmp_path, monkeypatch, pages, taxonomy):
    path = write_json(tmp_path / "bad.json", layout_json("m", pages, taxonomy))
    other = write_json(tmp_path / "ok.json", layout_json("n", [good_page("p"), good_page("q")]))

    def first_error():
        with pytest.raises(InputError) as caught:
            evaluate_dataset(*load_pair(path, other))
        return caught.value.paragraph()

    assert lazily(monkeypatch, first_error) == first_error()


def test_json_lines_read_lazily_equal_the_whole_file(tmp_path, monkeypatch):
    document = load_shared_json("vectors", "tore_public_pages.json")
    paths = []
    for side in ("reference", "prediction"):
        lines = [json.dumps({"name": document[side]["name"]})] + [json.dumps(page) for page in document[side]["pages"]]
        paths.append(tmp_path / f"{side}.jsonl")
        paths[-1].write_text("\n".join(lines) + "\n")
    eager = build_report(evaluate_dataset(*load_pair(*paths), workers=2))
    reference, prediction = lazily(monkeypatch, load_pair, *paths)
    assert isinstance(reference.pages, FilePages)
    assert json.dumps(build_report(evaluate_dataset(reference, prediction, workers=2))) == json.dumps(eager)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(good_page("p")) + "\n\n" + json.dumps(good_page("q", boxes=[{"label": "a", "bbox": [0, 0, 1]}])) + "\n")

    def error():
        with pytest.raises(InputError) as caught:
            evaluate_dataset(*load_pair(bad, bad))
        return caught.value.paragraph()

    assert lazily(monkeypatch, error) == error() and "line 3" in error()
