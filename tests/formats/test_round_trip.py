"""Converter-free round trips: the public vectors written in each format by its module's `write`,
read back by `load` (format detected from the content), evaluated, and compared with the report of
the same pages read from a native file, bit for bit.

Formats that cannot hold everything of the native file are compared against the native file of
what they can hold, made here independently of the writers: docling needs docling item labels,
`<document>/<page_no>` ids and boxes inside the page (docling-core clamps the others while
loading); DocTags needs tag names and boxes on its 500 x 500 grid.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from tests.helpers import load_vector, write_json
from tore_engine.api import detect_format, load
from tore_engine.core.errors import InputError
from tore_engine.formats import coco, docling, doctags, jsonl, native, parquet
from tore_engine.formats.progress import reading
from tore_engine.io.files import BOM
from tore_engine.run.runner import evaluate_dataset

GRID = 500
WRITERS = {  # format: (module's writer, file suffix or "" for a folder)
    "tore": (native.write, ".json"),
    "jsonl": (jsonl.write, ".jsonl"),
    "coco": (coco.write, ".json"),
    "parquet": (parquet.write, ".parquet"),
    "docling": (docling.write, ""),
    "doctags": (doctags.write, ""),
}


def vectors() -> tuple[dict, dict]:
    document = load_vector("tore_public_pages.json")
    return document["reference"], document["prediction"]


def report(reference, prediction, min_score: float | None = None) -> str:
    return json.dumps(evaluate_dataset(reference, prediction, min_score=min_score).to_json(), sort_keys=True)


def tag_name(label: str) -> str:
    """'Key-Value Region' -> 'key_value_region': a docling item label, and a DocTags tag name."""
    return label.lower().replace("-", "_").replace(" ", "_")


def as_docling(document: dict, page_numbers: dict[str, int]) -> dict:
    def box(box: dict, width: float, height: float) -> dict:
        x1, y1, x2, y2 = box["bbox"]
        inside = [min(max(x1, 0), width), min(max(y1, 0), height), min(max(x2, 0), width), min(max(y2, 0), height)]
        return {"label": tag_name(box["label"]), "bbox": inside}

    pages = [{"id": f"vectors/{page_numbers[page['id']]}", "width": page["width"], "height": page["height"],
              "boxes": [box(b, page["width"], page["height"]) for b in page["boxes"]]} for page in document["pages"]]
    return {"name": document["name"], "pages": pages}


def as_doctags(document: dict) -> dict:
    def box(box: dict, width: float, height: float) -> dict:
        frame = (width, height, width, height)
        cells = [min(max(round(value * GRID / side), 0), GRID) for value, side in zip(box["bbox"], frame)]
        return {"label": tag_name(box["label"]), "bbox": cells}

    pages = [{"id": page["id"], "width": GRID, "height": GRID, "boxes": [box(b, page["width"], page["height"]) for b in page["boxes"]]}
             for page in document["pages"]]
    return {"name": document["name"], "pages": pages}


def expressible(format_name: str, reference: dict, prediction: dict) -> tuple[dict, dict]:
    """What of the two documents the format can hold."""
    if format_name == "docling":
        numbers = {page_id: k for k, page_id in enumerate(dict.fromkeys(p["id"] for d in (reference, prediction) for p in d["pages"]), 1)}
        return as_docling(reference, numbers), as_docling(prediction, numbers)
    if format_name == "doctags":
        return as_doctags(reference), as_doctags(prediction)
    return reference, prediction


@pytest.mark.parametrize("format_name", list(WRITERS))
def test_a_round_trip_gives_the_native_report_bit_for_bit(tmp_path, format_name):
    documents = expressible(format_name, *vectors())
    natives = [native.read(write_json(tmp_path / f"{document['name']}.native.json", document)) for document in documents]
    writer, suffix = WRITERS[format_name]
    written = []
    for layout in natives:
        target = tmp_path / format_name / f"{layout.name}{suffix}"
        target.parent.mkdir(exist_ok=True)
        writer(layout, target)
        assert detect_format(target) == format_name
        written.append(load(target))
    assert [layout.name for layout in written] == [layout.name for layout in natives]
    # a reader that declares its format's vocabulary (docling, doctags) orders the classes by it
    declared = [dataclasses.replace(layout, vocabulary=read.vocabulary) for layout, read in zip(natives, written)]
    assert report(*written) == report(*declared)


def test_the_adapted_vectors_keep_most_of_the_original():
    """The adaptations change what the format cannot hold, not the pages: same boxes, labels renamed."""
    reference, prediction = vectors()
    for original, adapted in zip((reference, prediction), expressible("docling", reference, prediction)):
        assert [len(p["boxes"]) for p in original["pages"]] == [len(p["boxes"]) for p in adapted["pages"]]
        assert {tag_name(b["label"]) for p in original["pages"] for b in p["boxes"]} == {b["label"] for p in adapted["pages"] for b in p["boxes"]}


SCORED = ("tore", "jsonl", "coco", "parquet")  # the formats that hold a score per box


def scored(document: dict) -> dict:
    """The document with a score on every other box (the rest have none), spread over [0, 1)."""
    def box(box: dict, k: int) -> dict:
        return box | {"score": (k * 37 % 100) / 100} if k % 2 else box

    counter = iter(range(10**9))
    return document | {"pages": [page | {"boxes": [box(b, next(counter)) for b in page["boxes"]]} for page in document["pages"]]}


@pytest.mark.parametrize("format_name", SCORED)
def test_scores_survive_a_round_trip(tmp_path, format_name):
    """With --min-score the report depends on every score, and on which boxes have none."""
    reference, prediction = vectors()
    natives = [native.read(write_json(tmp_path / f"{d['name']}.native.json", d)) for d in (reference, scored(prediction))]
    writer, suffix = WRITERS[format_name]
    for layout in natives:
        writer(layout, tmp_path / f"{layout.name}{suffix}")
    written = [load(tmp_path / f"{layout.name}{suffix}") for layout in natives]
    dropped = evaluate_dataset(*natives, min_score=0.5).to_json()["warnings"]
    below = {page["id"]: sum(box.get("score", 1) < 0.5 for box in page["boxes"]) for page in scored(prediction)["pages"]}
    drops = {warning["page"]: int(warning["message"].split()[0]) for warning in dropped if warning["message"].endswith("(minimum score)")}
    assert drops == {page: count for page, count in below.items() if count}  # each page's boxes scored below 0.5, counted
    assert report(*written, min_score=0.5) == report(*natives, min_score=0.5)


def test_doctags_writes_boxes_on_the_grid(tmp_path):
    """Boxes of another frame are scaled into the 500 grid and rounded, as plain arithmetic says."""
    reference, _ = vectors()
    renamed = {"name": "gt", "pages": [page | {"boxes": [box | {"label": tag_name(box["label"])} for box in page["boxes"]]}
                                       for page in reference["pages"]]}
    doctags.write(native.from_document(renamed), tmp_path / "dt")
    back = doctags.read(tmp_path / "dt")
    expected = as_doctags(reference)
    assert back.page_ids() == [page["id"] for page in reference["pages"]]
    for page, want in zip(back.pages, expected["pages"]):
        assert (page.width, page.height, page.labels) == (GRID, GRID, [b["label"] for b in want["boxes"]])
        assert page.bboxes.tolist() == [b["bbox"] for b in want["boxes"]]


@pytest.mark.parametrize("format_name", ["parquet", "docling", "doctags"])
def test_readers_report_the_bytes_they_read(tmp_path, format_name):
    documents = expressible(format_name, *vectors())
    layout = native.read(write_json(tmp_path / "gt.native.json", documents[0]))
    writer, suffix = WRITERS[format_name]
    target = tmp_path / format_name / f"gt{suffix}"
    target.parent.mkdir()
    writer(layout, target)
    done: list[int] = []
    with reading(done.append):
        load(target)
    files = [target] if target.is_file() else [f for f in target.iterdir() if f.is_file()]
    assert sum(done) == sum(f.stat().st_size for f in files)


READERS = {  # how a JSON file is read: (io.json.KERNEL_MIN_BYTES, lazy.LAZY_BYTES) from which the compiled parser, the index take it
    "msgspec": (2**62, 2**62),
    "compiled": (0, 2**62),
    "index": (2**62, 0),
    "compiled index": (0, 0),
}


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("format_name", ["tore", "jsonl", "coco"])
def test_a_byte_order_mark_changes_nothing(tmp_path, monkeypatch, format_name, reader):
    """A UTF-8 byte-order mark before a JSON file (some editors write one) is skipped where the file
    is read: the same format is told, the same pages read by each reader (the index's byte spans
    still the file's), the same report; `--format` named outright too."""
    import tore_engine.formats.lazy as lazy
    import tore_engine.io.json as json_rules

    writer, suffix = WRITERS[format_name]
    natives = [native.read(write_json(tmp_path / f"{document['name']}.native.json", document)) for document in vectors()]
    marked = []
    for layout in natives:
        target = tmp_path / f"{layout.name}{suffix}"
        writer(layout, target)
        target.write_bytes(BOM + target.read_bytes())
        marked.append(target)
    monkeypatch.setattr(json_rules, "KERNEL_MIN_BYTES", READERS[reader][0])
    monkeypatch.setattr(lazy, "LAZY_BYTES", READERS[reader][1])
    assert [detect_format(path) for path in marked] == [format_name] * 2
    reference = load(marked[0]) if format_name == "coco" else load(marked[0], format_name)
    prediction = load(marked[1], coco_images=marked[0]) if format_name == "coco" else load(marked[1], format_name)
    assert report(reference, prediction) == report(*natives)


def test_a_byte_order_mark_leaves_error_places_as_an_editor_shows_them(tmp_path):
    """An editor does not show the mark: line 1, column 12 is the same character with or without it."""
    plain, marked = tmp_path / "plain" / "bad.json", tmp_path / "marked" / "bad.json"
    for path, start in ((plain, b""), (marked, BOM)):
        path.parent.mkdir()
        path.write_bytes(start + b'{"pages": [}')
    errors = []
    for path in (plain, marked):
        with pytest.raises(InputError) as caught:
            load(path, "tore")
        errors.append(caught.value.problem)
    assert errors[0] == errors[1] and "(line 1, column 12)" in errors[0]
