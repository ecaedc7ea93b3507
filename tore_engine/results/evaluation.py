"""The result of an evaluation, and what a user asks of it.

`Evaluation` holds exact state (integer counts, per-page integer reduced matrices, each
page's contribution to each cell) and the matrices made from it. Its properties give the same
numbers as pandas DataFrames for notebooks (docs/api.md); pandas and Plotly are imported
only when asked for, so `tore evaluate` never pays for them. `shown_matrices` is what a matrix
view shows (a class subset, and the "all" normalisation besides row and column), for `plot` and
the app alike.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from functools import partial
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from tore_engine.core.derived import Derived
from tore_engine.core.errors import InputWarning
from tore_engine.core.extras import install_command
from tore_engine.core.layout import named
from tore_engine.core.memory import give_back_free_memory
from tore_engine.core.offsets import run_of_items, runs_at
from tore_engine.core.packed_warnings import PackedWarnings
from tore_engine.core.taxonomy import Taxonomy
from tore_engine.metrics.algorithm1 import ExactCounts, exact_integers
from tore_engine.metrics.box_confusion import BoxCells, axis_names, box_cell_pages, box_cells, box_confusion
from tore_engine.metrics.box_outcomes import BoxDecision, BoxOutcomes, decided, nothing_to_match, summarise
from tore_engine.metrics.box_table import BOX_COLUMNS, BoxColumns, BoxRow, box_rows
from tore_engine.metrics.map_report import MapReport, MapState, unscored_note
from tore_engine.metrics.matrices import (
    REDUCED_CLASSES,
    MatrixSet,
    ToreMatrices,
    view_matrices,
)
from tore_engine.metrics.sweep import SWEEP_COLUMNS, DetectionView, SweepReport, SweepState
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
    contribution_offsets: np.ndarray  # (pages + 1,) int64: page p's contributions at offsets[p]:offsets[p + 1]
    contribution_cell: np.ndarray  # (entries,) int32: row * K + column
    contribution_value: np.ndarray  # (entries,) float64
    counts: ExactCounts
    matrices: ToreMatrices
    input_warnings: Sequence[InputWarning]  # as the engine made them, packed (`PackedWarnings`, a saved one's too); `warnings` gives report.json's records
    # How many of `input_warnings`, from the first, came before any page was evaluated: the caller's
    # (the label map's), the reference reader's, the prediction reader's, and those of prediction
    # pages without a reference page. The pages' own follow, in page order, then mAP's note
    # (`map_warnings`). `merge` puts two evaluations' warnings together group by group.
    warning_groups: tuple[int, ...] = (0, 0, 0, 0)
    # mAP and the sweep. Evaluations of consecutive runs of pages merge them with `MapState.merged`
    # (the match records joined in page order, `PageMatches.merged`) and `SweepState.merged` (each
    # point's exact counts added); a merged evaluation has no `sweep_source`.
    map_state: MapState | None = None  # None: no mAP, `map_reason` says why
    map_reason: str | None = None
    sweep_state: SweepState | None = None  # None until the sweep is made (`sweep=True`, or `sweep()`)
    sweep_source: Callable[[], SweepState] | None = field(default=None, repr=False, compare=False)  # makes it later
    # (pages,) each page's prediction boxes that have a score, before the minimum score: whether
    # the sweep and mAP's ranking have scores to go by, known without reading the boxes again.
    page_scored: np.ndarray | None = field(default=None, repr=False, compare=False)
    # (pages,) bool: whether each reference page had a prediction page (by id, after the page id map)
    page_paired: np.ndarray | None = field(default=None, repr=False, compare=False)
    # TIDE's decisions on every box (docs/cli.md#box-outcomes-and-tides-error-types), single taxonomy only; `errors_reason` says
    # why there are no figures (dual taxonomy, nothing to match). `box_source` reads the evaluated
    # boxes again, batch by batch, for boxes.csv and `boxes` (None: the inputs are gone).
    box_outcomes: BoxOutcomes | None = None
    errors_reason: str | None = None
    box_source: Callable[..., Iterable[BoxColumns]] | None = field(default=None, repr=False, compare=False)  # (page=None): all pages, or one
    _sweep_report: SweepReport | None = field(default=None, init=False, repr=False, compare=False)
    # Reopened from a saved folder (`results.saved`) with mAP's summary but not its records, which
    # a merge needs: such an evaluation cannot be merged.
    map_records_dropped: bool = field(default=False, init=False, repr=False, compare=False)
    saved_page_counts: np.ndarray | None = field(default=None, init=False, repr=False, compare=False)  # reopened: TIDE's counts without its decisions
    # mAP's summary, made once: the app's page index (a thread) and its script may ask at once
    _derived: Derived = field(default_factory=Derived, init=False, repr=False, compare=False)

    @property
    def pixels(self) -> int:
        """Every page's pixels, summed."""
        return int(self.page_pixels.sum())

    @property
    def scored_boxes(self) -> int | None:
        """The evaluated pages' prediction boxes that have a score (before the minimum score), or
        None when the evaluation was not told."""
        return None if self.page_scored is None else int(self.page_scored.sum())

    @property
    def paired_pages(self) -> int | None:
        """How many reference pages had a prediction page, or None when the evaluation was not told."""
        return None if self.page_paired is None else int(self.page_paired.sum())

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
        pages = runs_at(self.contribution_offsets, hits)
        ranked = np.lexsort((pages, -contributions))[:limit]
        cell_total = float(self.matrices.full.confusion[i, j])
        return [(self.page_ids[pages[k]], float(contributions[k]),
                 float(contributions[k]) / cell_total if cell_total else 0.0) for k in ranked]

    def page_matrix(self, page_index: int) -> np.ndarray:
        """One page's confusion matrix (float), from its kept contributions."""
        k = self.taxonomy.size
        matrix = np.zeros(k * k)
        hits = slice(int(self.contribution_offsets[page_index]), int(self.contribution_offsets[page_index + 1]))
        matrix[self.contribution_cell[hits]] = self.contribution_value[hits]
        return matrix.reshape(k, k)

    def page_sums(self, selected: np.ndarray) -> np.ndarray:
        """Every page's sum of the contributions a boolean mask selects (float), in page order:
        a cell's or an outcome's pixels page by page."""
        values = np.zeros(len(self.page_ids))
        np.add.at(values, runs_at(self.contribution_offsets, np.flatnonzero(selected)), self.contribution_value[selected])
        return values

    def contribution_pages(self) -> np.ndarray:
        """Each contribution's page (int32), made when asked: the evaluation holds their offsets
        (5 million contributions at 100,000 pages: 20 MB that a page's matrix never needs)."""
        return run_of_items(self.contribution_offsets, np.int32)

    def report_content(self) -> ReportContent:
        """What the writers write, handed down to them (they never see this type). TIDE's summary,
        when still to make, is made in a thread meanwhile (`_errors_meanwhile`), and read where a
        writer reads it: mAP's summary and the CSVs, which need neither, are made beside it. The
        pages' box counts come first, their temporaries (32 MiB at 100,000 pages) given back before
        TIDE's summary makes its own."""
        page_counts = self.page_counts()
        give_back_free_memory()
        errors = self._errors_meanwhile()
        return ReportContent(self.matrices, self.page_ids, self.page_pixels, self.page_reduced, self.input_warnings,
                             self.contribution_offsets, self.contribution_cell, self.contribution_value,
                             self.map, self.map_reason, self._made_sweep(), self.paired_pages, summarised_errors=errors,
                             errors_reason=self.errors_reason, page_counts=page_counts,
                             box_rows=self._box_rows if self.box_outcomes is not None and self.box_source is not None else None)

    def _errors_meanwhile(self) -> Callable[[], dict | None]:
        """`errors`, started in a thread when still to make, and how to wait for it. Most of TIDE's
        summary and of mAP's is a compiled sort or accumulation that lets go of the GIL (100,000
        pages: both in 1.54 s side by side, against 2.26-2.80 s one after the other; the driver's
        peak 50 MB higher, both temporaries at once); the CSVs are written meanwhile too."""
        if self.box_outcomes is None or self.errors_reason is not None or self._derived.has("errors"):
            return lambda: self.errors
        summary: Future[dict | None] = Future()

        def summarise() -> None:
            try:
                summary.set_result(self.errors)
            except BaseException as error:  # noqa: BLE001 - raised where it is read
                summary.set_exception(error)

        threading.Thread(target=summarise, name="tore-summary", daemon=True).start()
        return summary.result

    # --- what a notebook user reads (docs/api.md) -------------------------------------------

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

        content = self.report_content()
        return pd.DataFrame(content.per_class_rows(), columns=list(content.per_class_columns())).set_index("class")

    @property
    def pages(self) -> pd.DataFrame:
        """One row a page, in reference order: pixels and the reduced Foreground recall, precision,
        F1, and with mAP the page's map, map_50 and map_75 (NaN for a page without reference box)."""
        import pandas as pd

        content = self.report_content()
        return pd.DataFrame(content.page_rows(), columns=list(content.page_columns())).set_index("page")

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

    # --- mAP and the operating point ------------------------------------------------------------------

    @property
    def map(self) -> MapReport | None:
        """COCO-style mAP of the same boxes (report.json's `map`), or None: `map_reason` says why.
        Made on first use, once: a second thread asking meanwhile waits for it (1 s at 100,000 pages)."""
        return self._derived.get("map", self._summarised)

    def prefill_map(self, report: MapReport) -> None:
        """Give `map` its summary as saved (`results.saved`), so that it is not made from records."""
        self._derived.get("map", lambda: report)

    def _summarised(self) -> MapReport | None:
        return None if self.map_state is None else self.map_state.report(self.matrices.classes)

    @property
    def errors(self) -> dict | None:
        """TIDE's error types of the same boxes (report.json's `errors`, docs/cli.md#box-outcomes-and-tides-error-types), or None:
        `errors_reason` says why. Made on first use, once."""
        return self._derived.get("errors", self._summarised_errors)

    def prefill_errors(self, errors: dict | None, page_counts: np.ndarray) -> None:
        """Give `errors` and the pages' box counts as saved (`results.saved`), which keeps TIDE's
        summary but not its decisions box by box: such an evaluation cannot be merged."""
        self._derived.get("errors", lambda: errors)
        self.saved_page_counts = page_counts

    def page_counts(self) -> np.ndarray | None:
        """(pages, 9) each page's tp, fp, fn and error counts (pages.csv's), single taxonomy only;
        made once (pages.csv, report.json and the saved folder each read them)."""
        outcomes = self.box_outcomes
        return self._derived.get("page_counts", outcomes.page_counts) if outcomes is not None else self.saved_page_counts

    def _summarised_errors(self) -> dict | None:
        if self.box_outcomes is None or self.errors_reason is not None:
            return None
        summary = summarise(self.box_outcomes, self.taxonomy.size)
        give_back_free_memory()  # its orders of all records (16-32 MB each, from glibc's heap, kept there otherwise)
        return summary.to_json(self.matrices.classes)

    def page_decisions(self, page: int) -> dict[str, list[BoxDecision]] | None:
        """TIDE's decision for each box of page `page` (its position), by side, with its partner and
        IoU, decided again from the page's boxes as evaluated (`box_source`; TIDE decides page by
        page, so these are the evaluation's own decisions); None without box outcomes or inputs."""
        if self.box_outcomes is None or self.box_source is None or not 0 <= page < self.box_outcomes.pages:
            return None
        columns = next(iter(self.box_source(page=page)))
        outcomes, partners = decided(columns.reference, columns.prediction)
        return outcomes.on_page(0, partners)

    def _box_rows(self) -> Iterator[BoxRow]:
        if self.box_outcomes is None or self.box_source is None:
            raise ValueError("this evaluation has no box outcomes to list (dual taxonomy) or no inputs to read the boxes from")
        return box_rows(self.box_source(), self.box_outcomes, self.matrices.classes)

    @property
    def boxes(self) -> pd.DataFrame:
        """Every evaluated box of both sides, one row a box, with what TIDE made of it: boxes.csv's
        columns (page, side, index, class, score, x0, y0, x1, y1, outcome, error, partner, iou).
        The boxes are read again from the inputs."""
        import pandas as pd

        table = pd.DataFrame(list(self._box_rows()), columns=list(BOX_COLUMNS))
        return table.astype({"index": "int64", "partner": "Int64", "score": "float64", "iou": "float64"})  # blank: <NA>, NaN

    @property
    def box_confusion(self) -> pd.DataFrame | None:
        """The box-level confusion matrix at IoU 0.5 (`metrics.box_confusion`): box counts, reference
        class (last row: no reference box) x predicted class (last column: no prediction); None
        without box outcomes (`errors_reason` says why)."""
        import pandas as pd

        cells = self._box_cells()
        if cells is None:
            return None
        size = self.taxonomy.size
        counts = box_confusion(cells, size)
        kept = [k for k, name in enumerate(self.matrices.classes) if name != BACKGROUND] + [size]
        rows, columns = axis_names([name for name in self.matrices.classes if name != BACKGROUND])
        return pd.DataFrame(counts[np.ix_(kept, kept)], index=rows, columns=columns)

    def pages_for_box_cell(self, row: str, column: str) -> pd.DataFrame:
        """The pages with boxes in a cell of `box_confusion` (by its row and column names), the most
        first: page, boxes. A name not in the matrix is a `KeyError` naming them."""
        import pandas as pd

        cells = self._box_cells()
        if cells is None:
            raise ValueError(f"no box outcomes: {self.errors_reason}")
        names = [name for name in self.matrices.classes if name != BACKGROUND]
        rows, columns = axis_names(names)
        if row not in rows or column not in columns:
            raise KeyError(f"no cell ({row!r}, {column!r}); rows: {', '.join(rows)}; columns: {', '.join(columns)}")
        at = {name: self.matrices.classes.index(name) for name in names}
        size = self.taxonomy.size
        pages, counts = box_cell_pages(cells, len(self.page_ids), at.get(row, size), at.get(column, size))
        return pd.DataFrame({"page": [self.page_ids[k] for k in pages.tolist()], "boxes": counts})

    def _box_cells(self) -> BoxCells | None:
        """Where each box lands in the box-level matrix, made once (the matrix and each cell's pages read it)."""
        outcomes = self.box_outcomes
        return None if outcomes is None else self._derived.get("box_cells", lambda: box_cells(outcomes, self.taxonomy.size))

    def _made_sweep(self) -> SweepReport | None:
        """The sweep's report (report.json's `sweep`), once its state is made; `sweep()` makes it."""
        if self._sweep_report is None and self.sweep_state is not None:
            state, classes = self.sweep_state, self.matrices.classes
            detection = None
            if state.detection is not None:  # a minimum score: mAP of all boxes, not the evaluation's
                detection = DetectionView.build(state.detection, state.detection.report(classes), classes)
            elif self.map_state is not None and self.map is not None:
                detection = DetectionView.build(self.map_state, self.map, classes)
            self._sweep_report = SweepReport.build(state, self.matrices.mode, classes, detection, scored=self.scored_boxes != 0)
        return self._sweep_report

    def sweep(self) -> pd.DataFrame:
        """The operating point: at each minimum score 0.05, 0.10, ..., 0.95, TORE's recall, precision
        and F1 exactly as a run with that `min_score` gives them, for the Foreground and (single
        taxonomy) each class, with the best point of each (`best`, the lowest minimum score on a
        tie); beside them mAP's view of the same scores: AP, and the precision, recall and F1 of the
        boxes scored at least that much, matched at IoU 0.50 (`detection_*`). One row a minimum
        score and scope (`foreground`, or `class` with its name). Made with the evaluation when
        it was asked for (`sweep=True`), else now, from the same inputs, on local workers."""
        import pandas as pd

        if self.sweep_state is None:
            if self.sweep_source is None:
                raise ValueError("this evaluation cannot make its sweep (it has no inputs to go back to); evaluate with sweep=True")
            self.sweep_state = self.sweep_source()
        return pd.DataFrame(self._made_sweep().rows(), columns=list(SWEEP_COLUMNS))  # type: ignore[union-attr]

    def merge(self, other: Evaluation) -> Evaluation:
        """This evaluation and `other`, of other pages of the same reference and prediction (both
        split by the same pages, evaluated alike), as one: bit for bit one evaluation of both page
        sets, this one's pages first. A page in both, another taxonomy or other mAP settings is a
        `ValueError`. The exact state adds up exactly (`ExactCounts.merge`, `MapState.merged`,
        `SweepState.merged`); a merged evaluation cannot make a sweep it was not evaluated with."""
        _check_mergeable(self, other)
        page_reduced = np.concatenate([self.page_reduced, other.page_reduced])
        page_reduced = exact_integers(page_reduced, page_reduced.size)
        counts = ExactCounts.merge([self.counts, other.counts], self.taxonomy.size)
        map_state = None if self.map_state is None or other.map_state is None else MapState.merged([self.map_state, other.map_state])
        outcomes = None if self.box_outcomes is None or other.box_outcomes is None else BoxOutcomes.merged([self.box_outcomes, other.box_outcomes])
        groups, pages = _merged_warnings(self, other)
        return Evaluation(
            taxonomy=self.taxonomy,
            page_ids=self.page_ids + other.page_ids,
            page_pixels=np.concatenate([self.page_pixels, other.page_pixels]),
            page_reduced=page_reduced,
            contribution_offsets=np.concatenate([self.contribution_offsets, other.contribution_offsets[1:] + self.contribution_offsets[-1]]),
            contribution_cell=np.concatenate([self.contribution_cell, other.contribution_cell]),
            contribution_value=np.concatenate([self.contribution_value, other.contribution_value]),
            counts=counts,
            matrices=ToreMatrices.from_counts(self.taxonomy.mode, self.taxonomy.classes, counts, page_reduced.sum(axis=0)),
            input_warnings=PackedWarnings.joined([*groups, pages, map_warnings(map_state)]),
            warning_groups=tuple(len(group) for group in groups),
            map_state=map_state,
            map_reason=self.map_reason,
            sweep_state=None if self.sweep_state is None or other.sweep_state is None else SweepState.merged(
                [self.sweep_state, other.sweep_state], self.taxonomy.size),
            page_scored=None if self.page_scored is None or other.page_scored is None else np.concatenate([self.page_scored, other.page_scored]),
            page_paired=None if self.page_paired is None or other.page_paired is None else np.concatenate([self.page_paired, other.page_paired]),
            box_outcomes=outcomes,
            errors_reason=self.errors_reason if outcomes is None else nothing_to_match(outcomes),
            box_source=None if self.box_source is None or other.box_source is None else partial(_merged_boxes, (self.box_source, other.box_source), len(self.page_ids)),
        )

    def summary(self, out: str | Path | None = None) -> str:
        """The few lines `tore evaluate` prints: what was compared, Foreground and Background scores,
        the weakest classes and the class means."""
        from tore_engine.writers.summary import summary

        return summary(self.report_content(), Path(out) if out is not None else None)

    def to_json(self, path: str | Path | None = None) -> dict[str, Any]:
        """report.json's content (docs/cli.md#reportjson); written to `path` when given, the same bytes
        as `tore evaluate` writes."""
        from tore_engine.writers.report_json import build_report, write_report_json

        report = build_report(self.report_content())
        if path is not None:
            write_report_json(report, Path(path))
        return {**report, "warnings": report["warnings"][:]}  # the records made (`WarningRecords`) into a list

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


def map_warnings(state: MapState | None) -> list[InputWarning]:
    """mAP's note, the last of an evaluation's warnings, when it had to rank boxes without a score."""
    if state is None or not state.unscored:
        return []
    return [InputWarning(None, None, "prediction", unscored_note(state.unscored, state.predicted))]


def _merged_boxes(sources: tuple[Callable[..., Iterable[BoxColumns]], Callable[..., Iterable[BoxColumns]]], first_pages: int, *,
                  page: int | None = None) -> Iterable[BoxColumns]:
    """A merged evaluation's `box_source`: the first's batches then the second's, or one page's."""
    if page is None:
        return chain(*(source() for source in sources))
    return sources[0](page=page) if page < first_pages else sources[1](page=page - first_pages)


def _check_mergeable(a: Evaluation, b: Evaluation) -> None:
    """Why two evaluations cannot be one, as a `ValueError`: a page in both, another taxonomy, other
    mAP settings, or a prediction page evaluated beside the other's reference."""
    if a.map_records_dropped or b.map_records_dropped:
        raise ValueError("an evaluation reopened from a saved folder keeps mAP's summary, not its records, which a merge needs: "
                         "merge the evaluations, then save the merged one")
    if a.saved_page_counts is not None or b.saved_page_counts is not None:
        raise ValueError("an evaluation reopened from a saved folder keeps TIDE's summary, not its decisions box by box, which a "
                         "merge needs: merge the evaluations, then save the merged one")
    if a.taxonomy != b.taxonomy:
        raise ValueError(f"the two evaluations have different taxonomies ({a.taxonomy.mode}: {named(a.taxonomy.classes)}; "
                         f"{b.taxonomy.mode}: {named(b.taxonomy.classes)}); merge evaluations of one reference and one prediction")
    shared = set(b.page_ids)
    if both := [page for page in a.page_ids if page in shared]:
        raise ValueError(f"both evaluations score the pages {named(both)}; merge evaluations of disjoint pages")
    a_map, b_map = (None if e.map_state is None else e.map_state.convention for e in (a, b))
    if (a_map, a.map_reason) != (b_map, b.map_reason):
        raise ValueError(f"the two evaluations have other mAP settings, or one has no box to rank ({a_map or a.map_reason}; "
                         f"{b_map or b.map_reason})")
    crossed = [w.page for w in _warning_parts(a)[3] if w.page in shared] + [w.page for w in _warning_parts(b)[3] if w.page in set(a.page_ids)]
    if crossed:
        raise ValueError(f"the prediction pages {named(crossed)} were evaluated without their reference page, which the other "
                         "evaluation has: split the predictions by the same pages as the reference")


def _warning_parts(evaluation: Evaluation) -> list[list[InputWarning]]:
    """`input_warnings` cut into `warning_groups` and the pages' own; mAP's note left out."""
    warnings, bounds = evaluation.input_warnings, np.cumsum([0, *evaluation.warning_groups]).tolist()
    notes = len(map_warnings(evaluation.map_state))
    return [list(warnings[start:end]) for start, end in zip(bounds, bounds[1:])] + [list(warnings[bounds[-1]:len(warnings) - notes])]


def _merged_warnings(a: Evaluation, b: Evaluation) -> tuple[list[list[InputWarning]], list[InputWarning]]:
    """Two evaluations' warnings as one evaluation of both makes them, group by group: a label-map
    key unused by both (one evaluation of all pages uses it if either half does), each reader's
    and the unscored prediction pages' warnings of both; then the pages' own, in page order."""
    first, second = _warning_parts(a), _warning_parts(b)
    unused_by_both = set(second[0])
    groups = [[warning for warning in first[0] if warning in unused_by_both], *(x + y for x, y in zip(first[1:-1], second[1:-1]))]
    return groups, first[-1] + second[-1]


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
    no value: recall stays over the whole row, precision over the whole column. `row_pixels` and
    `column_pixels` are the whole rows' and columns' totals: where one is 0, the cell's recall
    (precision) is undefined (0/0), which the matrices hold as 0."""

    share: np.ndarray
    row_pixels: np.ndarray | None = None
    column_pixels: np.ndarray | None = None


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
                         whole.recall[pick], whole.precision[pick], share[pick],
                         whole.confusion.sum(axis=1)[rows], whole.confusion.sum(axis=0)[columns])
