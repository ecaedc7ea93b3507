"""What the writers write, as computed data.

The result (`Evaluation.report_content`) builds a `ReportContent` and hands it down, as
scikit-learn's `Evaluation -> ConfusionMatrixDisplay`: no writer or plot depends on the result type,
so the result can call every writer without an import circle.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tore_engine.core.errors import InputWarning
from tore_engine.metrics.matrices import PageRow, ToreMatrices, page_foreground_rows


@dataclass(frozen=True)
class ReportContent:
    """An evaluation's matrices, pages, warnings and per-page cell contributions."""

    matrices: ToreMatrices
    page_ids: list[str]
    page_pixels: np.ndarray  # (pages,)
    page_reduced: np.ndarray  # (pages, 2, 2) integer Background/Foreground matrices
    warnings: list[InputWarning]
    contribution_page: np.ndarray  # (entries,) page index of each contribution
    contribution_cell: np.ndarray  # (entries,) row * K + column
    contribution_value: np.ndarray  # (entries,) pixels

    @property
    def pixels(self) -> int:
        return int(self.page_pixels.sum())

    def page_rows(self) -> list[PageRow]:
        """pages.csv's rows: id, pixels, Foreground recall, precision, F1."""
        return page_foreground_rows(self.page_ids, self.page_pixels, self.page_reduced)
