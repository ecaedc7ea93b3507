"""The result of an evaluation, and what a user asks of it.

`Evaluation` holds exact state (integer counts, per-page integer reduced matrices, each
page's contribution to each cell) and the matrices made from it. Its properties give the same
numbers as pandas DataFrames for notebooks (formats.md section 7); pandas and Plotly are imported
only when asked for, so `tore evaluate` never pays for them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tore_engine.algorithm1 import ExactCounts
from tore_engine.errors import InputWarning
from tore_engine.matrices import MatrixSet, ToreMatrices
from tore_engine.scores import rates
from tore_engine.taxonomy import Taxonomy


EXACT_FLOAT_INTEGERS = 2**53  # integers below this are exact as float64


def _foreground_rates(reduced: np.ndarray) -> tuple[float, float, float]:
    scores = rates(int(reduced[1, 1]), int(reduced[:, 1].sum()), int(reduced[1].sum()))  # an empty side scores 0
    return scores.recall, scores.precision, scores.f1


@dataclass(repr=False)
class Evaluation:
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
    input_warnings: list[InputWarning]  # as the engine made them; `warnings` gives report.json's records

    @property
    def pixels(self) -> int:
        return int(self.page_pixels.sum())

    def cell_pages(self, row: int, column: int, limit: int | None = None) -> list[tuple[str, float, float]]:
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
        return [{"page": page_id, "pixels": pixels, "recall": recall, "precision": precision, "f1": f1}
                for page_id, pixels, recall, precision, f1 in self.page_foreground_rows()]

    def page_foreground_rows(self) -> list[tuple[str, int, float, float, float]]:
        """`page_foreground_scores` as tuples (page, pixels, recall, precision, F1): what pages.csv holds.

        Computed over all pages at once when every count is below 2^53, where a float64 division of
        the two counts is the same correctly rounded number as Python's integer division (`rates`);
        page by page with `rates` otherwise."""
        reduced = self.page_reduced
        if reduced.dtype == object or (len(reduced) and int(reduced.max()) >= EXACT_FLOAT_INTEGERS):
            return [(page_id, pixels, *_foreground_rates(page))
                    for page_id, pixels, page in zip(self.page_ids, self.page_pixels.tolist(), reduced)]
        hits = reduced[:, 1, 1].astype(np.float64)
        predicted, actual = reduced[:, :, 1].sum(axis=1).astype(np.float64), reduced[:, 1, :].sum(axis=1).astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            precision = np.where(predicted > 0, hits / predicted, 0.0)  # an empty side scores 0, as `rates`
            recall = np.where(actual > 0, hits / actual, 0.0)
            f1 = np.where(precision + recall > 0, 2 * precision * recall / (precision + recall), 0.0)
        return list(zip(self.page_ids, self.page_pixels.tolist(), recall.tolist(), precision.tolist(), f1.tolist()))

    # --- what a notebook user reads (formats.md section 7) -------------------------------------------

    def __repr__(self) -> str:
        recall, precision = self.matrices.foreground
        return (f"Evaluation({self.matrices.mode} taxonomy, {len(self.matrices.classes)} classes, "
                f"{len(self.page_ids):,} pages, Foreground recall {recall:.4f}, precision {precision:.4f})")

    @property
    def warnings(self) -> list[dict]:
        """What was clipped, skipped or defaulted, as report.json lists it: {page, box, side, message}."""
        return [warning.to_json() for warning in self.input_warnings]

    @property
    def classes(self) -> list[str]:
        """The matrix classes, Background first."""
        return list(self.matrices.classes)

    @property
    def confusion(self):
        """The confusion matrix (pixels) as a DataFrame: rows = reference, columns = prediction."""
        return frames(self.matrices.full).confusion

    @property
    def recall(self):
        """The row-normalised matrix as a DataFrame."""
        return frames(self.matrices.full).recall

    @property
    def precision(self):
        """The column-normalised matrix as a DataFrame."""
        return frames(self.matrices.full).precision

    @property
    def trimmed(self) -> "MatrixFrames":
        """The matrices without their all-zero rows and columns."""
        return frames(self.matrices.trimmed)

    @property
    def reduced(self) -> "MatrixFrames":
        """The 2x2 Background/Foreground matrices."""
        return frames(self.matrices.reduced)

    @property
    def per_class(self):
        """Recall, precision, F1 and support (reference pixels) of each class, single mode only
        (None in dual mode, where the diagonal means nothing)."""
        import pandas as pd

        from tore_engine.report_tables import PER_CLASS_COLUMNS, per_class_rows

        if self.matrices.per_class is None:
            return None
        return pd.DataFrame(per_class_rows(self), columns=PER_CLASS_COLUMNS).set_index("class")

    @property
    def pages(self):
        """One row a page, in reference order: pixels and the reduced Foreground recall, precision, F1."""
        import pandas as pd

        from tore_engine.report_tables import PAGE_COLUMNS

        return pd.DataFrame(self.page_foreground_rows(), columns=PAGE_COLUMNS).set_index("page")

    def pages_for_cell(self, row: str, column: str, *, view: str = "full", limit: int | None = None):
        """The pages behind cell (reference class `row`, predicted class `column`) of a view (full,
        trimmed or reduced), largest contribution first, as a DataFrame."""
        import pandas as pd

        from tore_engine.drilldown import pages_for_view_cell

        rows = pages_for_view_cell(self, view, row, column, limit)
        return pd.DataFrame(rows, columns=["page", "pixels", "share_of_cell"])

    def plot(self, metric: str = "recall", view: str | None = None, **options):
        """A Plotly heatmap of one matrix (needs the app extra's plotly); `view` defaults to full in
        single mode and trimmed in dual mode, as the app shows them."""
        from tore_engine.drilldown import view_matrices

        try:
            from tore_engine.studio import figures
        except ImportError:
            raise ImportError("plotting needs Plotly: pip install 'tore-studio[app]'") from None
        view = view or ("full" if self.matrices.mode == "single" else "trimmed")
        return figures.matrix_heatmap(view_matrices(self.matrices, view), metric, **options)

    def to_json(self, path: str | Path | None = None) -> dict:
        """report.json's content (formats.md section 4); written to `path` when given, the same bytes
        as `tore evaluate` writes."""
        from tore_engine.report import build_report, write_report_json

        report = build_report(self)
        if path is not None:
            write_report_json(report, Path(path))
        return report

    def to_excel(self, path: str | Path) -> None:
        """A workbook of coloured matrices, per page, per class and warnings."""
        from tore_engine.excel import write_excel

        write_excel(self, Path(path))

    def to_html(self, path: str | Path, title: str = "TORE report") -> None:
        """One self-contained HTML file with the interactive heatmaps and tables (needs plotly)."""
        from tore_engine.html_report import write_html

        write_html(self, Path(path), title=title)


@dataclass(frozen=True)
class MatrixFrames:
    """A view's three matrices as DataFrames (rows = reference classes, columns = predicted)."""

    confusion: object
    recall: object
    precision: object


def frames(matrices: MatrixSet) -> MatrixFrames:
    import pandas as pd

    def frame(values: np.ndarray):
        table = pd.DataFrame(values, index=list(matrices.rows), columns=list(matrices.columns))
        table.index.name, table.columns.name = "reference", "prediction"
        return table

    return MatrixFrames(frame(matrices.confusion), frame(matrices.recall), frame(matrices.precision))
