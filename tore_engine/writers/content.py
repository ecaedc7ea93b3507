"""What the writers write, as computed data.

The result (`Evaluation.report_content`) builds a `ReportContent` and hands it down, as
scikit-learn's `Evaluation -> ConfusionMatrixDisplay`: no writer or plot depends on the result type,
so the result can call every writer without an import circle.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from tore_engine.core.errors import InputWarning
from tore_engine.metrics.box_outcomes import PAGE_COUNT_COLUMNS
from tore_engine.metrics.box_table import BoxRow
from tore_engine.metrics.map_report import MapReport
from tore_engine.metrics.matrices import ToreMatrices, page_foreground_columns
from tore_engine.metrics.sweep import SweepReport
from tore_engine.writers.tables import MAP_CLASS_COLUMNS, MAP_PAGE_COLUMNS, PAGE_COLUMNS, PER_CLASS_COLUMNS, per_class_rows

PAGE_BLOCK = 8_192  # pages a block of pages.csv's cells


@dataclass(frozen=True)
class ReportContent:
    """An evaluation's matrices, pages, warnings and per-page cell contributions; its mAP (None:
    `map_reason` says why) and its sweep (None unless made)."""

    matrices: ToreMatrices
    page_ids: list[str]
    page_pixels: np.ndarray  # (pages,)
    page_reduced: np.ndarray  # (pages, 2, 2) integer Background/Foreground matrices
    warnings: Sequence[InputWarning]
    contribution_offsets: np.ndarray  # (pages + 1,) page p's contributions at offsets[p]:offsets[p + 1]
    contribution_cell: np.ndarray  # (entries,) row * K + column
    contribution_value: np.ndarray  # (entries,) pixels
    map: MapReport | None = None
    map_reason: str | None = None
    sweep: SweepReport | None = None
    paired_pages: int | None = None  # reference pages with a prediction page (None: not known)
    summarised_errors: Callable[[], dict | None] = lambda: None  # `errors`, waited for where read (made meanwhile in a thread)
    errors_reason: str | None = None
    page_counts: np.ndarray | None = None  # (pages, 9) each page's tp, fp, fn and error counts (PAGE_COUNT_COLUMNS), single taxonomy
    box_rows: Callable[[], Iterator[BoxRow]] | None = None  # boxes.csv's rows, made as they are written

    @property
    def errors(self) -> dict | None:
        """report.json's `errors` (docs/cli.md#box-outcomes-and-tides-error-types); None: `errors_reason` says why."""
        return self.summarised_errors()

    @property
    def pixels(self) -> int:
        return int(self.page_pixels.sum())

    def page_columns(self) -> tuple[str, ...]:
        """pages.csv's header: the page's mAP columns only when there is mAP, its box counts only
        when there are box outcomes (single taxonomy)."""
        return PAGE_COLUMNS + (MAP_PAGE_COLUMNS if self.map is not None else ()) + (PAGE_COUNT_COLUMNS if self.page_counts is not None else ())

    def page_column_values(self, selected: slice = slice(None)) -> list[list]:
        """pages.csv's columns (of the pages `selected` slices): id, pixels, Foreground recall,
        precision, F1 (and map, map_50, map_75, None for a page without reference box; then tp, fp,
        fn and the error counts)."""
        columns = page_foreground_columns(self.page_ids[selected], self.page_pixels[selected], self.page_reduced[selected])
        if self.map is not None:
            columns += self.map.page_columns(selected)
        if self.page_counts is not None:
            columns += self.page_counts[selected].T.tolist()
        return columns

    def page_column_blocks(self, size: int = PAGE_BLOCK) -> Iterator[list[list]]:
        """`page_column_values` of `size` pages at a time: what pages.csv is written from, so that
        it never holds every page's cells as Python objects at once (55 MB at 100,000 pages)."""
        for start in range(0, len(self.page_ids), size):
            yield self.page_column_values(slice(start, start + size))

    def page_rows(self) -> list[tuple]:
        """`page_column_values` a row a page."""
        return list(zip(*self.page_column_values()))  # the rows made once: 0.08 s at 100,000 pages, 0.24-0.34 s joining the parts row by row

    def per_class_columns(self) -> tuple[str, ...]:
        return PER_CLASS_COLUMNS + (MAP_CLASS_COLUMNS if self.map is not None else ())

    def per_class_rows(self) -> list[tuple]:
        """Per class: recall, precision, F1, support (and AP, AR@100, None where mAP has none)."""
        rows = per_class_rows(self.matrices)
        if self.map is None:
            return rows
        return [(*row, *self.map.per_class.get(row[0], (None, None))) for row in rows]
