"""Build the demo corpus and write it: one PDF per document, the ground truth and the two
simulated models' predictions as layout JSON (docs/formats.md#layout-json).

Coordinates: one pixel of the layout frame is one PDF point (72 dpi), origin at the page's top
left, so each page's `width`/`height` are its size in points (612 x 792 Letter, 595 x 842 A4).
Every run with the same code gives byte-identical JSON and PDFs: all randomness is seeded by
page id and the PDFs carry fixed metadata and no generated file id.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path

import pymupdf

from tore_engine.demo.compose import (
    BlockMaker,
    ComposedPage,
    DocumentStyle,
    PageComposer,
    PageRecipe,
)
from tore_engine.demo.documents import DOCUMENTS
from tore_engine.demo.models import MODEL_B_TAXONOMY, Prediction, model_a, model_b

REFERENCE_TAXONOMY = [
    "Caption", "Footnote", "Formula", "List-item", "Page-footer", "Page-header",
    "Picture", "Section-header", "Table", "Text", "Title",
]
PDF_METADATA = {
    "title": "", "author": "TORE Studio demo generator", "subject": "Synthetic document for the TORE Studio demo",
    "keywords": "", "creator": "tore_engine.demo", "producer": "PyMuPDF",
    "creationDate": "", "modDate": "",
}


def compose_document(
    style: DocumentStyle, recipes: list[PageRecipe]
) -> tuple[pymupdf.Document, list[ComposedPage]]:
    """Draw every page of one document and return it with its ground truth."""
    document = pymupdf.open()
    maker = BlockMaker(style)
    pages = []
    for page_no, recipe in enumerate(recipes):
        page_id = f"{style.name}/p{page_no + 1}"
        pdf_page = document.new_page(width=style.paper[0], height=style.paper[1])
        composer = PageComposer(style, maker, pdf_page, random.Random(page_id))
        elements = composer.compose(recipe, page_no + 1)
        pages.append(ComposedPage(page_id, style.paper[0], style.paper[1], page_no, recipe.columns, elements))
    document.set_metadata({**PDF_METADATA, "title": style.name})
    return document, pages


def build_corpus() -> list[tuple[str, pymupdf.Document, list[ComposedPage]]]:
    """Every demo document as (PDF file name, PyMuPDF document, composed pages)."""
    corpus = []
    for style, recipes in DOCUMENTS:
        document, pages = compose_document(style, recipes)
        corpus.append((f"{style.name}.pdf", document, pages))
    return corpus


def _box_json(label: str, bbox: tuple, score: float | None = None) -> dict:
    box: dict[str, object] = {"label": label, "bbox": [round(v, 2) for v in bbox]}
    if score is not None:
        box["score"] = score
    return box


def layout_json(
    name: str,
    taxonomy: list[str],
    corpus: list[tuple[str, pymupdf.Document, list[ComposedPage]]],
    predict: Callable[[ComposedPage], list[Prediction]] | None = None,
) -> dict:
    """The layout set of the ground truth (`predict` None) or of one simulated model."""
    pages = []
    for pdf_name, _, composed in corpus:
        for page in composed:
            if predict is None:
                boxes = [_box_json(e.label, e.bbox) for e in page.elements]
            else:
                boxes = [_box_json(p.label, p.bbox, p.score) for p in predict(page)]
            pages.append({"id": page.id, "width": page.width, "height": page.height,
                          "pdf": pdf_name, "page_no": page.page_no, "boxes": boxes})
    return {"name": name, "taxonomy": taxonomy, "pages": pages}


def generate(out_dir: Path) -> list[Path]:
    """Write the PDFs, reference.json, model_a.json and model_b.json into `out_dir`."""
    out_dir.mkdir(parents=True, exist_ok=True)
    corpus = build_corpus()
    written = []
    for pdf_name, document, _ in corpus:
        path = out_dir / pdf_name
        path.write_bytes(document.tobytes(garbage=4, deflate=True, no_new_id=True))
        written.append(path)
    layouts = {
        "reference.json": layout_json("ground-truth", REFERENCE_TAXONOMY, corpus),
        "model_a.json": layout_json("model-a", REFERENCE_TAXONOMY, corpus, model_a),
        "model_b.json": layout_json("model-b", MODEL_B_TAXONOMY, corpus, model_b),
    }
    for file_name, layout in layouts.items():
        path = out_dir / file_name
        path.write_text(json.dumps(layout, indent=1) + "\n", encoding="utf-8")
        written.append(path)
    return written
