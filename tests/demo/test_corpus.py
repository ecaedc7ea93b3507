"""The embedded demo as tore_engine.demo.corpus generates it: deterministic, committed as generated,
and its ground truth is the exact extent of what the PDFs show (checked against PyMuPDF's own text
extraction, drawings and rendering, independently of the generator's bookkeeping)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pymupdf
import pytest

from tests.helpers import DEMO as ASSETS
from tore_engine.demo import (
    MODEL_B_TAXONOMY,
    REFERENCE_TAXONOMY,
    build_corpus,
    generate,
)
from tore_engine.formats.native import read as load_layout

LAYOUT_FILES = ("reference.json", "model_a.json", "model_b.json")
TEXT_LABELS = {
    "Caption", "Footnote", "List-item", "Page-footer", "Page-header", "Section-header", "Text", "Title",
}


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    generate(out)
    return out


@pytest.fixture(scope="module")
def reference() -> dict:
    return json.loads((ASSETS / "reference.json").read_text())


@pytest.fixture(scope="module")
def corpus():
    return build_corpus()


def test_generation_is_deterministic(fresh: Path, tmp_path: Path) -> None:
    generate(tmp_path)
    names = sorted(p.name for p in fresh.iterdir())
    assert names == sorted(p.name for p in tmp_path.iterdir())
    for name in names:
        assert (fresh / name).read_bytes() == (tmp_path / name).read_bytes(), name


def test_committed_assets_equal_a_fresh_generation(fresh: Path) -> None:
    for name in LAYOUT_FILES:
        assert json.loads((ASSETS / name).read_text()) == json.loads((fresh / name).read_text()), name
    for pdf in fresh.glob("*.pdf"):  # bytes may differ with another MuPDF version; the content may not
        with pymupdf.open(pdf) as new, pymupdf.open(ASSETS / pdf.name) as committed:
            assert [page.get_text("words") for page in new] == [page.get_text("words") for page in committed]
            assert [len(page.get_drawings()) for page in new] == [len(page.get_drawings()) for page in committed]


def test_files_load_with_the_native_loader() -> None:
    layouts = {name: load_layout(ASSETS / name) for name in LAYOUT_FILES}
    assert layouts["reference.json"].class_list() == REFERENCE_TAXONOMY
    assert layouts["model_a.json"].class_list() == REFERENCE_TAXONOMY
    assert layouts["model_b.json"].class_list() == MODEL_B_TAXONOMY
    page = layouts["reference.json"].pages[0]
    assert page.image is not None and page.image.path.suffix == ".pdf" and page.image.pdf_page == 0


def test_pages_taxonomies_and_labels(reference: dict, corpus) -> None:
    ids = [p["id"] for p in reference["pages"]]
    assert ids == [page.id for _, _, composed in corpus for page in composed]  # every composed page, in order
    assert len(set(ids)) == len(ids) and ids[0] == "report-a/p1"
    assert {b["label"] for p in reference["pages"] for b in p["boxes"]} == set(REFERENCE_TAXONOMY)
    model_b = json.loads((ASSETS / "model_b.json").read_text())
    assert {b["label"] for p in model_b["pages"] for b in p["boxes"]} == set(MODEL_B_TAXONOMY)
    for name in ("model_a.json", "model_b.json"):
        predictions = json.loads((ASSETS / name).read_text())
        assert [p["id"] for p in predictions["pages"]] == ids
        scores = [b["score"] for p in predictions["pages"] for b in p["boxes"]]
        assert scores and all(0 < s <= 1 for s in scores)


@pytest.mark.parametrize("name", LAYOUT_FILES)
def test_boxes_lie_inside_their_pages(name: str) -> None:
    for page in json.loads((ASSETS / name).read_text())["pages"]:
        with pymupdf.open(ASSETS / page["pdf"]) as document:
            assert document[page["page_no"]].rect.width == page["width"]
            assert document[page["page_no"]].rect.height == page["height"]
        for box in page["boxes"]:
            x1, y1, x2, y2 = box["bbox"]
            assert 0 <= x1 < x2 <= page["width"] and 0 <= y1 < y2 <= page["height"], (page["id"], box)


def test_every_element_kind_occurs(corpus) -> None:
    pages = [page for _, _, composed in corpus for page in composed]
    assert {page.columns for page in pages} == {1, 2, 3}
    kinds = Counter((e.label, e.kind) for page in pages for e in page.elements)
    for picture in ("bar-chart", "line-chart", "pie-chart", "diagram", "illustration"):
        assert kinds[("Picture", picture)] >= 1, picture
    for style in ("booktabs", "grid", "zebra"):
        assert kinds[("Table", f"table-{style}")] >= 1, style
    for list_kind in ("bullet", "numbered", "reference"):
        assert kinds[("List-item", list_kind)] >= 1, list_kind
    assert {(p.width, p.height) for p in pages} == {(612, 792), (595, 842)}


def _inside(rects: list, box: list[float], slack: float) -> list:
    x1, y1, x2, y2 = box
    return [
        r for r in rects if r[0] >= x1 - slack and r[1] >= y1 - slack and r[2] <= x2 + slack and r[3] <= y2 + slack
    ]


def _drawn_content(pdf_page: pymupdf.Page) -> list[tuple]:
    """What PyMuPDF finds on the page: word boxes and vector path boxes."""
    words = [tuple(w[:4]) for w in pdf_page.get_text("words")]
    return words + [tuple(d["rect"]) for d in pdf_page.get_drawings()]


def test_text_boxes_hold_extractable_text(reference: dict) -> None:
    for page in reference["pages"]:
        with pymupdf.open(ASSETS / page["pdf"]) as document:
            pdf_page = document[page["page_no"]]
            for box in page["boxes"]:
                if box["label"] in TEXT_LABELS:
                    assert pdf_page.get_text("text", clip=pymupdf.Rect(box["bbox"])).strip(), (page["id"], box)


def test_boxes_are_the_tight_extent_of_what_is_drawn(reference: dict) -> None:
    """Each box is the union of the words and vector paths PyMuPDF finds inside it, and every
    word or path on the page lies in some box (except thin decorative rules)."""
    for page in reference["pages"]:
        with pymupdf.open(ASSETS / page["pdf"]) as document:
            drawn = _drawn_content(document[page["page_no"]])
        for box in page["boxes"]:
            inside = np.array(_inside(drawn, box["bbox"], 1.0))
            assert len(inside), (page["id"], box)
            union = [inside[:, 0].min(), inside[:, 1].min(), inside[:, 2].max(), inside[:, 3].max()]
            assert np.allclose(union, box["bbox"], atol=1.0), (page["id"], box, union)
        for rect in drawn:
            rule = rect[3] - rect[1] < 1.5
            assert rule or any(_inside([rect], b["bbox"], 1.0) for b in page["boxes"]), (page["id"], rect)


def test_rendered_pixels_under_every_box_are_not_blank(reference: dict) -> None:
    for page in reference["pages"]:
        with pymupdf.open(ASSETS / page["pdf"]) as document:
            pixmap = document[page["page_no"]].get_pixmap(dpi=72, colorspace=pymupdf.csGRAY)
        image = np.frombuffer(pixmap.samples, dtype=np.uint8).reshape(pixmap.height, pixmap.width)
        for box in page["boxes"]:
            x1, y1, x2, y2 = (int(v) for v in box["bbox"])
            assert image[y1 : y2 + 1, x1 : x2 + 1].min() < 200, (page["id"], box)
        covered = np.zeros_like(image, dtype=bool)
        for box in page["boxes"]:
            x1, y1, x2, y2 = (int(v) for v in box["bbox"])
            covered[max(0, y1 - 1) : y2 + 2, max(0, x1 - 1) : x2 + 2] = True
        assert np.mean(image[~covered] < 128) < 0.002, page["id"]  # ink outside boxes: rules only
