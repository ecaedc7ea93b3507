"""The result of an evaluation, and what a user asks of it.

`DatasetEvaluation` holds exact state (integer counts, per-page integer reduced matrices, each
page's contribution to each cell) and the matrices made from it. Its properties give the same
numbers as pandas DataFrames for notebooks (formats.md section 7); pandas and Plotly are imported
only when asked for, so `tore evaluate` never pays for them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tore_engine.algorithm1 import ExactCounts
from tore_engine.errors import InputWarning
from tore_engine.matrices import ToreMatrices, f1_score
from tore_engine.taxonomy import Taxonomy


@dataclass
class DatasetEvaluation:
    """The result of evaluating a prediction against a reference over a whole dataset."""

    taxonomy: Taxonomy
    page_ids: list[str]
    page_pixels: np.ndarray  # (pages,) int64, or Python integers where int64 could overflow
    page_reduced: np.ndarray  # (pages, 2, 2) likewise
    contribution_page: np.ndarray  # (entries,) int32: page index of each contribution
    contribution_cell: np.ndarray  # (entries,) int32: row * K + column
    contribution_value: np.ndarray  # (entries,) float64
    counts: ExactCounts
    matrices: ToreMatrices
    warnings: list[InputWarning]

    @property
    def pixels(self) -> int:
        return int(self.page_pixels.sum())

    def pages_for_cell(self, row: int, column: int, limit: int | None = None) -> list[tuple[str, float, float]]:
        """The pages that make up cell (row, column), largest contribution first (ties in page
        order): (page id, contribution in pixels, share of the cell)."""
        hits = np.flatnonzero(self.contribution_cell == row * self.taxonomy.size + column)
        values = self.contribution_value[hits]
        order = np.lexsort((self.contribution_page[hits], -values))[:limit]
        total = float(self.matrices.full.confusion[row, column])
        return [
            (self.page_ids[self.contribution_page[hits[k]]], float(values[k]), float(values[k]) / total if total else 0.0)
            for k in order
        ]

    def page_matrix(self, page_index: int) -> np.ndarray:
        """One page's confusion matrix (float), from its kept contributions."""
        k = self.taxonomy.size
        matrix = np.zeros(k * k)
        hits = self.contribution_page == page_index
        matrix[self.contribution_cell[hits]] = self.contribution_value[hits]
        return matrix.reshape(k, k)

    def page_foreground_scores(self) -> list[dict]:
        """Per page: pixels and the reduced matrix's Foreground recall, precision and F1."""
        rows = []
        for page_id, pixels, reduced in zip(self.page_ids, self.page_pixels.tolist(), self.page_reduced):
            fg_fg = int(reduced[1, 1])
            recall = fg_fg / int(reduced[1].sum()) if reduced[1].sum() else 0.0
            precision = fg_fg / int(reduced[:, 1].sum()) if reduced[:, 1].sum() else 0.0
            rows.append({"page": page_id, "pixels": pixels, "recall": recall, "precision": precision, "f1": f1_score(precision, recall)})
        return rows
