"""Evaluations the report tests share: the public vectors, the paper example (single and dual), and
a small dataset whose class names and page ids are hostile strings."""

from __future__ import annotations

from functools import lru_cache

from tests.helpers import load_vector
from tore_engine.formats.native import from_document
from tore_engine.results.evaluation import Evaluation
from tore_engine.run.runner import evaluate_dataset

HOSTILE_IMAGE = "<img src=x onerror=alert(1)>"
HOSTILE_LINK = '<a href="https://example.invalid/x">link</a>'
FORMULA = "=1+1"
BELL = "bell\x07"  # valid Unicode, but not allowed in XML 1.0 (and so in a workbook)
HOSTILE_CLASSES = [FORMULA, HOSTILE_IMAGE, HOSTILE_LINK, BELL]
HOSTILE_PAGES = ['=HYPERLINK("https://example.invalid")', "<script>alert(1)</script>", 'comma, "quoted"\nand a newline']


def in_csv(name: str) -> str:
    """A hostile name as every CSV must hold it: only FORMULA and the first page id start like a
    formula, and get the leading quote that makes a spreadsheet read them as text."""
    return "'" + name if name.startswith("=") else name


def close(actual: float, expected: float) -> bool:
    """Pixel-count tolerance of docs/algorithm.md#exactness-and-determinism."""
    return abs(actual - expected) <= 1e-9 * max(1.0, abs(expected))


@lru_cache(maxsize=None)
def public() -> Evaluation:
    pages = load_vector("tore_public_pages.json")
    return evaluate_dataset(from_document(pages["reference"], "gt.json"), from_document(pages["prediction"], "model.json"))


@lru_cache(maxsize=None)
def paper(mode: str = "single") -> Evaluation:
    """The paper's example: no Background pixel, so its row and column are all zero."""
    data = load_vector("tore_paper_example.json")
    return evaluate_dataset(from_document(data["reference"], "gt.json"), from_document(data["prediction"], "model.json"), taxonomy=mode)


@lru_cache(maxsize=None)
def hostile() -> Evaluation:
    """Three 10 x 10 pages; the last box crosses the page edge (a warning naming a hostile page)."""
    boxes = [
        [(FORMULA, [0, 0, 4, 4]), (HOSTILE_IMAGE, [4, 4, 8, 8])],
        [(HOSTILE_LINK, [0, 0, 10, 5]), (BELL, [0, 5, 5, 10])],
        [(HOSTILE_IMAGE, [6, 6, 12, 12])],
    ]
    predicted = [
        [(FORMULA, [0, 0, 4, 2]), (HOSTILE_LINK, [4, 4, 8, 8])],
        [(HOSTILE_LINK, [0, 0, 10, 4]), (FORMULA, [0, 5, 5, 10])],
        [(BELL, [6, 6, 10, 10])],
    ]

    def document(name: str, pages: list) -> dict:
        return {"name": name, "taxonomy": HOSTILE_CLASSES, "pages": [
            {"id": page_id, "width": 10, "height": 10, "boxes": [{"label": label, "bbox": bbox} for label, bbox in page]}
            for page_id, page in zip(HOSTILE_PAGES, pages)
        ]}

    return evaluate_dataset(from_document(document("gt", boxes), "gt.json"), from_document(document("model", predicted), "model.json"))
