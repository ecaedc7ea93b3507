"""DocILE fields as TORE layout sets, so that `tore evaluate --format docile` can draw the TORE
matrices of KILE (or LIR) fields: the fieldtype is the label, and the relative boxes are scaled to
the page size at 200 DPI (`metadata.page_sizes_at_200dpi`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from tore_engine.core.errors import InputError, InputWarning
from tore_engine.core.layout import LayoutSet, Page, PageImage
from tore_engine.scorers.docile.dataset import (
    DocileDocument,
    Field,
    load_dataset,
    load_documents,
    load_predictions,
)
from tore_engine.scorers.docile.validation import (
    tasks_to_evaluate,
    validate_predictions,
)


def page_id(docid: str, page: int) -> str:
    return f"{docid}/p{page}"


def docile_layout_sets(
    dataset_dir: str | Path,
    split: str | None,
    predictions_file: str | Path,
    task: str | None = None,
) -> tuple[LayoutSet, LayoutSet]:
    """(gold, prediction) layout sets of every page of the split's documents.

    `split=None` takes the documents the prediction file names. `task=None` means LIR when a
    prediction has a `line_item_id`, else KILE. The predictions pass the official checks first.
    A prediction on a page the document does not have is left out with a warning.
    """
    predictions = load_predictions(predictions_file)
    if task is None:
        task = "lir" if any(f.line_item_id is not None for fields in predictions.values() for f in fields) else "kile"
    dataset = load_dataset(dataset_dir, split) if split is not None else load_documents(dataset_dir, list(predictions))
    validate_predictions(dataset, tasks_to_evaluate({task: predictions}), {task: str(predictions_file)})

    gold_pages: list[Page] = []
    predicted_pages: list[Page] = []
    warnings: list[InputWarning] = []
    for document in dataset.documents:
        gold_pages += _pages(document, document.golds(task))
        predicted_fields = predictions.get(document.docid, [])
        predicted_pages += _pages(document, predicted_fields, scored=True)
        warnings += [
            InputWarning(
                page_id(document.docid, field.page),
                index,
                "prediction",
                f"prediction on page {field.page}, but document {document.docid} has "
                f"{document.page_count} page(s); left out",
            )
            for index, field in enumerate(predicted_fields)
            if not 0 <= field.page < document.page_count
        ]
    gold = LayoutSet(f"{dataset.name} {task} gold", gold_pages, source=str(dataset_dir))
    predicted = LayoutSet(Path(predictions_file).stem, predicted_pages, source=str(predictions_file), warnings=warnings)
    return gold, predicted


def load_docile_pair(reference: Path, prediction: Path) -> tuple[LayoutSet, LayoutSet]:
    """The pair reader of `tore evaluate DATASET_DIR PREDICTIONS --format docile` (`tore_engine.api.PAIR_FORMATS`)."""
    return docile_layout_sets(reference, None, prediction)


def _pages(document: DocileDocument, fields: Sequence[Field], scored: bool = False) -> list[Page]:
    if document.page_sizes is None or len(document.page_sizes) < document.page_count:
        raise InputError(
            f"document {document.docid}: metadata.page_sizes_at_200dpi is missing or too short; "
            "it gives the page frames of the layout"
        )
    pages = []
    for page, (width, height) in enumerate(document.page_sizes[: document.page_count]):
        on_page = [field for field in fields if field.page == page]
        scale = np.array([width, height, width, height], dtype=np.float64)
        pages.append(
            Page(
                id=page_id(document.docid, page),
                width=float(width),
                height=float(height),
                labels=[str(field.fieldtype) for field in on_page],
                bboxes=np.array([field.bbox for field in on_page], dtype=np.float64).reshape(-1, 4) * scale,
                scores=(np.array([np.nan if f.score is None else f.score for f in on_page], dtype=np.float64) if scored else None),
                image=PageImage(document.pdf, pdf_page=page) if document.pdf is not None else None,
            )
        )
    return pages
