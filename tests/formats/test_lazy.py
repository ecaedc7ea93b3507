"""Large files read as an index, their pages read by the workers: the same layout and report as the
whole-file reader, and the same errors."""

from __future__ import annotations

import json
import os
import time

import pytest

import tore_engine.formats.lazy as lazy
import tore_engine.io.json as json_rules
from tests.helpers import layout_json, load_vector, write_json
from tore_engine.api import evaluate as api_evaluate
from tore_engine.api import load, load_pair
from tore_engine.core.errors import InputError
from tore_engine.formats.lazy import FilePages
from tore_engine.run.runner import evaluate_dataset


@pytest.fixture
def vectors(tmp_path):
    pages = load_vector("tore_public_pages.json")
    return write_json(tmp_path / "gt.json", pages["reference"]), write_json(tmp_path / "model.json", pages["prediction"])


def lazily(monkeypatch, function, *args, **options):
    monkeypatch.setattr(lazy, "LAZY_BYTES", 0)
    try:
        return function(*args, **options)
    finally:
        monkeypatch.undo()


@pytest.mark.parametrize("workers", [1, 2])
def test_reports_equal_the_whole_file_readers(vectors, monkeypatch, workers):
    eager = evaluate_dataset(*load_pair(*vectors), workers=workers).to_json()
    reference, prediction = lazily(monkeypatch, load_pair, *vectors)
    assert isinstance(reference.pages, FilePages) and isinstance(prediction.pages, FilePages)
    lazy_report = api_evaluate(reference, prediction, workers=workers, label_map={"Text": "Body"}).to_json()
    assert json.dumps(lazy_report) == json.dumps(api_evaluate(*load_pair(*vectors), workers=workers, label_map={"Text": "Body"}).to_json())
    assert json.dumps(evaluate_dataset(reference, prediction, workers=workers).to_json()) == json.dumps(eager)


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
    document = load_vector("tore_public_pages.json")
    paths = []
    for side in ("reference", "prediction"):
        lines = [json.dumps({"name": document[side]["name"]})] + [json.dumps(page) for page in document[side]["pages"]]
        paths.append(tmp_path / f"{side}.jsonl")
        paths[-1].write_text("\n".join(lines) + "\n")
    eager = evaluate_dataset(*load_pair(*paths), workers=2).to_json()
    reference, prediction = lazily(monkeypatch, load_pair, *paths)
    assert isinstance(reference.pages, FilePages)
    assert json.dumps(evaluate_dataset(reference, prediction, workers=2).to_json()) == json.dumps(eager)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(good_page("p")) + "\n\n" + json.dumps(good_page("q", boxes=[{"label": "a", "bbox": [0, 0, 1]}])) + "\n")

    def error():
        with pytest.raises(InputError) as caught:
            evaluate_dataset(*load_pair(bad, bad))
        return caught.value.paragraph()

    assert lazily(monkeypatch, error) == error() and "line 3" in error()


OLD_NS = 10**18  # a write time in 2001: any write the test makes moves it


def _in_place(path):
    """One coordinate rewritten without changing the file's size (5 -> 6)."""
    data = path.read_bytes()
    with path.open("r+b") as handle:
        handle.seek(data.index(b"5"))
        handle.write(b"6")


def _in_place_with_time_put_back(path):
    _in_place(path)
    os.utime(path, ns=(OLD_NS, OLD_NS))  # only the change time can tell


def _replaced(path):
    other = path.with_suffix(".new")
    other.write_bytes(path.read_bytes().replace(b"5", b"6"))
    os.replace(other, path)


def _grown(path):
    with path.open("ab") as handle:
        handle.write(b"\n")


@pytest.mark.parametrize("rewrite", [_in_place, _in_place_with_time_put_back, _replaced, _grown])
@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
@pytest.mark.parametrize("compiled", [False, True], ids=["msgspec-index", "compiled-index"])
def test_a_file_rewritten_after_its_index_is_an_error_not_a_mixed_report(tmp_path, monkeypatch, suffix, rewrite, compiled):
    """The workers re-read the pages' byte spans: from another version of the file they would give
    a report of neither version (exit 0, no word). They check the file is the version indexed."""
    pages = [good_page(f"p{k}") for k in range(6)]
    reference = tmp_path / f"reference{suffix}"
    reference.write_text(json.dumps(layout_json("gt", pages)) if suffix == ".json" else "\n".join(map(json.dumps, pages)) + "\n")
    os.utime(reference, ns=(OLD_NS, OLD_NS))
    prediction = write_json(tmp_path / "model.json", layout_json("m", pages))
    with monkeypatch.context() as patched:
        patched.setattr(json_rules, "KERNEL_MIN_BYTES", 0 if compiled else json_rules.KERNEL_MIN_BYTES)  # the compiled page parser's index
        sides = lazily(monkeypatch, load_pair, reference, prediction)
    assert isinstance(sides[0].pages, FilePages)
    assert evaluate_dataset(*sides, workers=2).matrices.full.confusion[1, 1] == 6 * 25
    time.sleep(0.05)  # past the clock tick of the first change time, which a later change must move
    rewrite(reference)
    with pytest.raises(InputError) as caught:
        evaluate_dataset(*sides, workers=2)
    assert caught.value.paragraph() == f"file {reference}: changed while it was being read; run again once it is complete"
