"""Per-document roll-ups of an evaluation whose page ids are `<document>/<page>` (Docling and
docling-eval name their pages so, and the demo too).

A document's scores come from its pages' integer reduced matrices summed, so they are exact
ratios of pixel counts, never averages of the pages' ratios. `subset_evaluation` narrows an
evaluation to some of its pages (one document's): an `Evaluation` like any other, whose matrices
are made from the exact counts of just those pages, so every view of the app shows the document
as a separate evaluation of its pages would.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tore_engine.core.offsets import offsets_of
from tore_engine.metrics.algorithm1 import ExactCounts
from tore_engine.metrics.map_report import PAGE_SUBSET
from tore_engine.metrics.matrices import ToreMatrices, page_foreground_rows
from tore_engine.results.evaluation import Evaluation

if TYPE_CHECKING:
    import pandas as pd

SEPARATOR = "/"
DOCUMENT_COLUMNS = ["document", "pages", "pixels", "foreground_recall", "foreground_precision", "foreground_f1"]


def document_of(page_id: str) -> str | None:
    """The document of a `<document>/<page>` page id (everything before the last `/`), or None
    for an id without both parts."""
    document, separator, page = page_id.rpartition(SEPARATOR)
    return document if separator and document and page else None


@dataclass(frozen=True)
class Documents:
    """The documents of a list of pages: their names in the order of their first page, and each
    page's document as an index into `names` (-1: the page belongs to no document)."""

    names: list[str]
    codes: np.ndarray  # (pages,) int64

    def pages(self, document: str) -> np.ndarray:
        """The positions of the document's pages, in page order (none for an unknown name)."""
        if document not in self.names:
            return np.zeros(0, dtype=np.int64)
        return np.flatnonzero(self.codes == self.names.index(document))


def page_documents(page_ids: list[str]) -> Documents:
    """Group page ids by document."""
    index: dict[str, int] = {}
    codes = np.array([-1 if (document := document_of(page_id)) is None else index.setdefault(document, len(index))
                      for page_id in page_ids], dtype=np.int64)
    return Documents(list(index), codes)


def _summed(values: np.ndarray, codes: np.ndarray, count: int) -> np.ndarray:
    """Per document, the sum of its pages' integer values (int64, or Python integers when the
    pages' values already are: the evaluation chose so where int64 could overflow)."""
    sums = np.zeros((count, *values.shape[1:]), dtype=object if values.dtype == object else np.int64)
    kept = codes >= 0
    np.add.at(sums, codes[kept], values[kept])
    return sums


def document_table(evaluation: Evaluation) -> pd.DataFrame:
    """One row a document, in the order of its first page: its pages, their pixels summed, and the
    Foreground recall, precision and F1 of their summed reduced matrices (`DOCUMENT_COLUMNS`).
    Pages without a document are left out; no row when no page has one."""
    import pandas as pd

    documents = page_documents(evaluation.page_ids)
    count = len(documents.names)
    pages = np.bincount(documents.codes[documents.codes >= 0], minlength=count)
    rows = page_foreground_rows(documents.names, _summed(evaluation.page_pixels, documents.codes, count),
                                _summed(evaluation.page_reduced, documents.codes, count))
    table = pd.DataFrame(rows, columns=["document", "pixels", *DOCUMENT_COLUMNS[3:]])
    table.insert(1, "pages", pages)
    return table


def subset_evaluation(evaluation: Evaluation, pages: np.ndarray, counts: ExactCounts) -> Evaluation:
    """The evaluation of just the pages at positions `pages` (in page order), in the same taxonomy.
    `counts` are those pages' exact counts (the engine's, `run.runner.evaluate_batch`): the
    evaluation keeps each page's contributions only as floats, whose sum is not exact. Everything
    else is the evaluation's own per-page state, taken as it is; warnings of other pages are left
    out, those of the whole evaluation kept."""
    pages = np.asarray(pages, dtype=np.int64)
    position = np.full(len(evaluation.page_ids), -1, dtype=np.int64)
    position[pages] = np.arange(len(pages))
    contribution_pages = position[evaluation.contribution_pages()]
    kept = contribution_pages >= 0
    page_ids = [evaluation.page_ids[k] for k in pages.tolist()]
    page_reduced = evaluation.page_reduced[pages]
    shown = set(page_ids)
    taxonomy = evaluation.taxonomy
    return Evaluation(
        taxonomy=taxonomy,
        page_ids=page_ids,
        page_pixels=evaluation.page_pixels[pages],
        page_reduced=page_reduced,
        contribution_offsets=offsets_of(np.bincount(contribution_pages[kept], minlength=len(pages))),
        contribution_cell=evaluation.contribution_cell[kept],
        contribution_value=evaluation.contribution_value[kept],
        counts=counts,
        matrices=ToreMatrices.from_counts(taxonomy.mode, taxonomy.classes, counts, page_reduced.sum(axis=0)),
        input_warnings=[warning for warning in evaluation.input_warnings if warning.page is None or warning.page in shown],
        map_reason=PAGE_SUBSET,
        page_scored=None if evaluation.page_scored is None else evaluation.page_scored[pages],
        page_paired=None if evaluation.page_paired is None else evaluation.page_paired[pages],
    )
