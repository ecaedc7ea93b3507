"""The set of files `tore evaluate` writes: report.json, a CSV per matrix, pages.csv, and the
reports asked for. Beyond `matrix_form.DENSE_CLASS_LIMIT` classes the matrix CSVs hold the
non-zero cells, one a row. Every CSV goes through `text_safety.write_csv` (no name is read as a formula)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import chain
from pathlib import Path

import numpy as np

from tore_engine.core.errors import InputError
from tore_engine.core.text_safety import write_csv, write_csv_columns
from tore_engine.metrics.box_table import BOX_COLUMNS
from tore_engine.metrics.matrices import MatrixSet
from tore_engine.metrics.sweep import SWEEP_COLUMNS
from tore_engine.writers.content import ReportContent
from tore_engine.writers.matrix_form import DENSE, matrix_form, sparse_csv_rows
from tore_engine.writers.report_json import build_report, write_report_json
from tore_engine.writers.tables import MATRIX_CORNER, MATRIX_KINDS

MATRIX_VIEWS = {"": "full", "trimmed_": "trimmed", "reduced_": "reduced"}  # CSV prefix -> view
OUTPUT_FILES = ("report.json", *(f"{prefix}{kind}.csv" for prefix in MATRIX_VIEWS for kind in MATRIX_KINDS), "pages.csv")
REPORT_FILES = {"xlsx": "report.xlsx", "html": "report.html", "cells": "cells.csv", "sweep": "sweep.csv", "boxes": "boxes.csv"}  # the reports written on request


def output_files(reports: Sequence[str] = ()) -> tuple[str, ...]:
    """The files a run writes: `OUTPUT_FILES` and those of the `reports` asked for (`REPORT_FILES` keys)."""
    return (*OUTPUT_FILES, *(REPORT_FILES[report] for report in reports))


def stale_files(reports: Sequence[str] = ()) -> tuple[str, ...]:
    """The reports a run that asks for `reports` does not write: another run's in its `--out` go."""
    return tuple(name for report, name in REPORT_FILES.items() if report not in reports)


def _write_report(report: str, content: ReportContent, path: Path) -> None:
    """One requested report; its module (openpyxl's, Plotly's) is imported only then."""
    if report == "xlsx":
        from tore_engine.writers.excel import write_excel

        write_excel(content, path)
    elif report == "html":
        from tore_engine.writers.html import write_html

        write_html(content, path)
    elif report == "sweep":
        _write_sweep_csv(path, content)
    elif report == "boxes":
        _write_boxes_csv(path, content)
    else:
        from tore_engine.writers.cells import write_cells

        write_cells(content, path)




def matrix_rows(rows: list[str], columns: list[str], values: np.ndarray) -> Iterator[list[str | int | float]]:
    """A matrix as CSV rows: the predicted classes across, then each reference class and its values
    (the dense form; `matrix_form.sparse_csv_rows` the sparse one)."""
    yield [MATRIX_CORNER, *columns]
    for name, row in zip(rows, values.tolist()):
        yield [name, *row]


def _write_matrix_csv(path: Path, matrices: MatrixSet, kind: str, form: str) -> None:
    """One matrix's CSV in the report's form (`matrix_form`): a grid, or its non-zero cells."""
    rows = matrix_rows(matrices.rows, matrices.columns, getattr(matrices, kind)) if form == DENSE else sparse_csv_rows(matrices, kind)
    with path.open("w", newline="", encoding="utf-8") as handle:
        write_csv(handle, rows)


def _write_pages_csv(path: Path, content: ReportContent) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        write_csv_columns(handle, content.page_columns(), content.page_column_blocks())


def _write_sweep_csv(path: Path, content: ReportContent) -> None:
    """sweep.csv: the sweep's rows (`SweepReport.rows`), empty cells where undefined."""
    if content.sweep is None:
        raise ValueError("sweep.csv needs the sweep: evaluate with sweep=True")
    with path.open("w", newline="", encoding="utf-8") as handle:
        write_csv(handle, chain([SWEEP_COLUMNS], content.sweep.rows()))


def _write_boxes_csv(path: Path, content: ReportContent) -> None:
    """boxes.csv (docs/cli.md#box-outcomes-and-tides-error-types): one row a box, written as the boxes are read again."""
    if content.box_rows is None:
        raise InputError("boxes.csv (--boxes) needs box outcomes, which only a single taxonomy has: the two sides have different classes")
    with path.open("w", newline="", encoding="utf-8") as handle:
        write_csv(handle, chain([BOX_COLUMNS], content.box_rows()))


def write_outputs(content: ReportContent, folder: Path, reports: Sequence[str] = ()) -> None:
    """Write `output_files(reports)` into `folder`: report.json, the matrix CSVs, pages.csv and the
    `reports` asked for. The CLI passes a staging folder (`output.staged_output`), so that a
    failure halfway leaves the previous results whole. report.json comes last: it holds TIDE's
    summary, which `Evaluation.report_content` makes in a thread while the CSVs are written."""
    form = matrix_form(len(content.matrices.classes))
    for prefix, view in MATRIX_VIEWS.items():
        matrices = getattr(content.matrices, view)
        for kind in MATRIX_KINDS:
            _write_matrix_csv(folder / f"{prefix}{kind}.csv", matrices, kind, DENSE if view == "reduced" else form)
    _write_pages_csv(folder / "pages.csv", content)
    for report in reports:
        _write_report(report, content, folder / REPORT_FILES[report])
    write_report_json(build_report(content), folder / "report.json")
