"""The result of an evaluation, and what a user asks of it.

`Evaluation` holds exact state (integer counts, per-page integer reduced matrices, each
page's contribution to each cell) and the matrices made from it. Its properties give the same
numbers as pandas DataFrames for notebooks (formats.md section 7); pandas and Plotly are imported
only when asked for, so `tore evaluate` never pays for them. `shown_matrices` is what a matrix
view shows (a class subset, and the "all" normalisation besides row and column), for `plot` and
the app alike.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from tore_engine.core.errors import InputWarning
from tore_engine.core.extras import install_command
from tore_engine.core.layout import named
from tore_engine.core.taxonomy import Taxonomy
from tore_engine.metrics.algorithm1 import ExactCounts
from tore_engine.metrics.matrices import (
    REDUCED_CLASSES,
    MatrixSet,
    ToreMatrices,
    view_matrices,
)
from tore_engine.writers.content import ReportContent

if TYPE_CHECKING:
    import pandas as pd
    import plotly.graph_objects as go

BACKGROUND = REDUCED_CLASSES[0]
KINDS = ("confusion", "recall", "precision", "share")  # what `plot` draws (`share`: each cell over the view's total)
NORMALIZATIONS: dict[str | None, str] = {None: "confusion", "row": "recall", "column": "precision", "all": "share"}


def class_index(names: list[str], name: str, what: str) -> int:
    """Where class `name` is in `names`; a `KeyError` that names them all (the first few of a long
    list) when it is not there: every lookup of a class the API takes goes through here."""
    try:
        return names.index(name)
    except ValueError:
        raise KeyError(f"{name!r} is no {what}; those are {named(names)}") from None


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
        """Every page's pixels, summed."""
        return int(self.page_pixels.sum())

    def _cell_index(self, view: str, row: str, column: str) -> tuple[int, int]:
        """Where cell (row class, column class) of a view is: in the reduced matrix for the reduced
        view, else in the full one; a `KeyError` naming the view's classes for a class it lacks."""
        shown = view_matrices(self.matrices, view)
        class_index(shown.rows, row, f"reference (row) class of the {view} view")
        class_index(shown.columns, column, f"predicted (column) class of the {view} view")
        classes = REDUCED_CLASSES if view == "reduced" else self.matrices.classes
        return classes.index(row), classes.index(column)

    def _ranked_pages(self, view: str, row: str, column: str, limit: int | None) -> list[tuple[str, float, float]]:
        """The pages behind a cell of a view, largest contribution first (ties in page order):
        (page id, contribution in pixels, share of the cell). Full and trimmed cells are cells of
        the full matrix, whose per-page contributions are kept; a reduced cell sums each page's
        integer 2x2 matrix."""
        i, j = self._cell_index(view, row, column)
        if view == "reduced":
            values = self.page_reduced[:, i, j]
            pages = np.flatnonzero(values)
            order = pages[np.lexsort((pages, -values[pages]))][:limit]
            total = int(values.sum())
            return [(self.page_ids[k], float(values[k]), int(values[k]) / total) for k in order]
        hits = np.flatnonzero(self.contribution_cell == i * self.taxonomy.size + j)
        contributions = self.contribution_value[hits]
        ranked = np.lexsort((self.contribution_page[hits], -contributions))[:limit]
        cell_total = float(self.matrices.full.confusion[i, j])
        return [(self.page_ids[self.contribution_page[hits[k]]], float(contributions[k]),
                 float(contributions[k]) / cell_total if cell_total else 0.0) for k in ranked]

    def page_matrix(self, page_index: int) -> np.ndarray:
        """One page's confusion matrix (float), from its kept contributions."""
        k = self.taxonomy.size
        matrix = np.zeros(k * k)
        hits = self.contribution_page == page_index
        matrix[self.contribution_cell[hits]] = self.contribution_value[hits]
        return matrix.reshape(k, k)

    def report_content(self) -> ReportContent:
        """What the writers write, handed down to them (they never see this type)."""
        return ReportContent(self.matrices, self.page_ids, self.page_pixels, self.page_reduced, self.input_warnings,
                             self.contribution_page, self.contribution_cell, self.contribution_value)

    # --- what a notebook user reads (formats.md section 7) -------------------------------------------

    def __repr__(self) -> str:
        recall, precision = self.matrices.foreground
        return (f"Evaluation({self.matrices.mode} taxonomy, {len(self.matrices.classes)} classes, "
                f"{len(self.page_ids):,} pages, Foreground recall {recall:.4f}, precision {precision:.4f})")

    @property
    def warnings(self) -> list[dict[str, str | int | None]]:
        """What was clipped, skipped or defaulted, as report.json lists it: {page, box, side, message}."""
        return [warning.to_json() for warning in self.input_warnings]

    @property
    def classes(self) -> list[str]:
        """The matrix classes, Background first."""
        return list(self.matrices.classes)

    @property
    def confusion(self) -> pd.DataFrame:
        """The confusion matrix (pixels) as a DataFrame: rows = reference, columns = prediction."""
        return frames(self.matrices.full).confusion

    @property
    def recall(self) -> pd.DataFrame:
        """The row-normalised matrix as a DataFrame."""
        return frames(self.matrices.full).recall

    @property
    def precision(self) -> pd.DataFrame:
        """The column-normalised matrix as a DataFrame."""
        return frames(self.matrices.full).precision

    @property
    def trimmed(self) -> MatrixFrames:
        """The matrices without their all-zero rows and columns."""
        return frames(self.matrices.trimmed)

    @property
    def reduced(self) -> MatrixFrames:
        """The 2x2 Background/Foreground matrices."""
        return frames(self.matrices.reduced)

    @property
    def per_class(self) -> pd.DataFrame:
        """Recall, precision, F1 and support (reference pixels) of each class (index `class`); no
        row in dual mode, where the diagonal pairs no class with itself."""
        import pandas as pd

        from tore_engine.writers.tables import PER_CLASS_COLUMNS, per_class_rows

        return pd.DataFrame(per_class_rows(self.matrices), columns=list(PER_CLASS_COLUMNS)).set_index("class")

    @property
    def pages(self) -> pd.DataFrame:
        """One row a page, in reference order: pixels and the reduced Foreground recall, precision, F1."""
        import pandas as pd

        from tore_engine.writers.tables import PAGE_COLUMNS

        return pd.DataFrame(self.report_content().page_rows(), columns=list(PAGE_COLUMNS)).set_index("page")

    def pages_for_cell(self, row: str, column: str, *, view: str = "full", limit: int | None = None) -> pd.DataFrame:
        """The pages behind cell (reference class `row`, predicted class `column`) of a view (full,
        trimmed or reduced), largest contribution first: page, pixels, share_of_cell. An unknown
        class is a `KeyError` that names the view's classes."""
        import pandas as pd

        return pd.DataFrame(self._ranked_pages(view, row, column, limit), columns=["page", "pixels", "share_of_cell"])

    def plot(self, kind: str = "confusion", view: str | None = None, classes: Collection[str] | None = None,
             normalize: str | None = None, **options: Any) -> go.Figure:
        """A Plotly heatmap of one matrix (needs the app extra's plotly): `kind` confusion, recall,
        precision or share (each cell over the view's total), or the confusion matrix normalised
        by `normalize` ("row", "column", "all"; `plot_kind`). `view` (full, trimmed, reduced)
        defaults to full in single mode and trimmed in dual mode, as the app shows them;
        `classes` keeps those rows and columns (a `KeyError` names the view's classes for one it
        lacks). Other keywords go to `plots.heatmaps.matrix_heatmap` (scale, hide_diagonal, ...)."""
        try:
            from tore_engine.plots import heatmaps as figures
        except ImportError:
            raise ImportError(f"plotting needs Plotly: {install_command('app')}") from None
        metric = plot_kind(kind, normalize)
        view = view or ("full" if self.matrices.mode == "single" else "trimmed")
        whole = view_matrices(self.matrices, view)
        if classes is not None:
            if isinstance(classes, str):
                raise TypeError(f"classes= takes a list of class names, not the string {classes!r}")
            names = list(dict.fromkeys(whole.rows + whole.columns))
            for name in classes:
                class_index(names, name, f"class of the {view} view")
        options.setdefault("title", f"{metric}, {view} view")
        return figures.matrix_heatmap(shown_matrices(self.matrices, view, classes), metric, **options)

    def summary(self, out: str | Path | None = None) -> str:
        """The few lines `tore evaluate` prints: what was compared, Foreground and Background scores,
        the weakest classes and the class means."""
        from tore_engine.writers.summary import summary

        return summary(self.report_content(), Path(out) if out is not None else None)

    def to_json(self, path: str | Path | None = None) -> dict[str, Any]:
        """report.json's content (formats.md section 4); written to `path` when given, the same bytes
        as `tore evaluate` writes."""
        from tore_engine.writers.report_json import build_report, write_report_json

        report = build_report(self.report_content())
        if path is not None:
            write_report_json(report, Path(path))
        return report

    def to_excel(self, path: str | Path) -> None:
        """A workbook of coloured matrices, per page, per class and warnings."""
        from tore_engine.writers.excel import write_excel

        write_excel(self.report_content(), Path(path))

    def to_html(self, path: str | Path, title: str = "TORE report") -> None:
        """One self-contained HTML file with the interactive heatmaps and tables (needs plotly)."""
        from tore_engine.writers.html import write_html

        write_html(self.report_content(), Path(path), title=title)


@dataclass(frozen=True, repr=False)
class MatrixFrames:
    """A view's three matrices as DataFrames (rows = reference classes, columns = predicted)."""

    confusion: pd.DataFrame
    recall: pd.DataFrame
    precision: pd.DataFrame

    def __repr__(self) -> str:
        rows, columns = self.confusion.shape
        return f"MatrixFrames({rows} reference x {columns} predicted classes: .confusion, .recall, .precision)"


def frames(matrices: MatrixSet) -> MatrixFrames:
    """A matrix set's arrays as DataFrames, rows and columns named by their classes."""
    import pandas as pd

    def frame(values: np.ndarray) -> pd.DataFrame:
        table = pd.DataFrame(values, index=list(matrices.rows), columns=list(matrices.columns))
        table.index.name, table.columns.name = "reference", "prediction"
        return table

    return MatrixFrames(frame(matrices.confusion), frame(matrices.recall), frame(matrices.precision))


def plot_kind(kind: str, normalize: str | None) -> str:
    """The matrix `Evaluation.plot` draws: `kind`, or, for the confusion matrix, its normalisation
    by `normalize` (row: recall, column: precision, all: share). A kind already normalised
    otherwise than `normalize` says (recall with "column") is a `ValueError`, never a silent choice."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; use one of {', '.join(KINDS)}")
    if normalize not in NORMALIZATIONS:
        raise ValueError(f"unknown normalize {normalize!r}; use 'row', 'column', 'all' or None")
    normalized = NORMALIZATIONS[normalize]
    if normalize is None or kind == normalized:
        return kind
    if kind == "confusion":
        return normalized
    raise ValueError(f"kind {kind!r} and normalize={normalize!r} (which gives {normalized}) contradict each other; "
                     f"give kind='confusion' with normalize, or the kind alone")


@dataclass(frozen=True)
class ShownMatrices(MatrixSet):
    """A view's matrices as shown: some of its classes, and one more normalisation, `share`: each
    cell over the whole view's total (before any class is left out). Leaving classes out changes
    no value: recall stays over the whole row, precision over the whole column."""

    share: np.ndarray


def shown_matrices(matrices: ToreMatrices, view: str, classes: Collection[str] | None = None, *, hide_background: bool = False) -> ShownMatrices:
    """The rows and columns of a view whose class is in `classes` (all when None; names the view
    lacks are passed over, as the app offers both models' classes), without Background if
    `hide_background`, in the view's order."""
    whole = view_matrices(matrices, view)
    total = whole.confusion.sum()
    share = whole.confusion / total if total else np.zeros_like(whole.confusion)

    def kept(names: list[str]) -> list[int]:
        return [k for k, name in enumerate(names) if (classes is None or name in classes) and not (hide_background and name == BACKGROUND)]

    rows, columns = kept(whole.rows), kept(whole.columns)
    pick = np.ix_(rows, columns)
    return ShownMatrices([whole.rows[k] for k in rows], [whole.columns[k] for k in columns], whole.confusion[pick],
                         whole.recall[pick], whole.precision[pick], share[pick])
