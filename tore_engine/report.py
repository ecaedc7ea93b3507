"""Writing an evaluation out: `report.json` (formats.md section 4), a CSV per matrix, a per-page
CSV, and the short human summary `tore evaluate` prints. Every CSV goes through
`text_safety.write_csv` (no name is read as a formula), every name in the summary through
`text_safety.terminal_text`."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from itertools import chain
from pathlib import Path

import numpy as np

from tore_engine.dataset import Evaluation
from tore_engine.report_tables import PAGE_COLUMNS
from tore_engine.text_safety import terminal_text, write_csv


def build_report(evaluation: Evaluation) -> dict:
    matrices = evaluation.matrices
    trimmed = matrices.trimmed
    return {
        "mode": matrices.mode,
        "classes": matrices.classes,
        "pages": len(evaluation.page_ids),
        "pixels": evaluation.pixels,
        "matrices": matrices.full.to_json(),
        "trimmed": {"rows": trimmed.rows, "columns": trimmed.columns, **trimmed.to_json()},
        "reduced": {"classes": matrices.reduced.rows, **matrices.reduced.to_json()},
        "per_class": matrices.per_class,
        "means": matrices.means,
        "warnings": evaluation.warnings,
    }


MATRIX_VIEWS = {"": "full", "trimmed_": "trimmed", "reduced_": "reduced"}  # CSV prefix -> view
MATRIX_KINDS = ("confusion", "recall", "precision")
OUTPUT_FILES = ("report.json", *(f"{prefix}{kind}.csv" for prefix in MATRIX_VIEWS for kind in MATRIX_KINDS), "pages.csv")
REPORT_FILES = {"xlsx": "report.xlsx", "html": "report.html", "cells": "cells.csv"}  # the reports written on request


def output_files(reports: Sequence[str] = ()) -> tuple[str, ...]:
    """The files a run writes: `OUTPUT_FILES` and those of the `reports` asked for (`REPORT_FILES` keys)."""
    return (*OUTPUT_FILES, *(REPORT_FILES[report] for report in reports))


def _write_report(report: str, evaluation: Evaluation, path: Path) -> None:
    """One requested report; its module (openpyxl's, Plotly's) is imported only then."""
    if report == "xlsx":
        from tore_engine.excel import write_excel

        write_excel(evaluation, path)
    elif report == "html":
        from tore_engine.html_report import write_html

        write_html(evaluation, path)
    else:
        from tore_engine.cells import write_cells

        write_cells(evaluation, path)


MATRIX_CORNER = "reference \\ prediction"  # a matrix CSV's first header cell


def matrix_rows(rows: list[str], columns: list[str], values: np.ndarray) -> Iterator[list[str | int | float]]:
    """A matrix as CSV rows: the predicted classes across, then each reference class and its values."""
    yield [MATRIX_CORNER, *columns]
    for name, row in zip(rows, values.tolist()):
        yield [name, *row]


def _write_matrix_csv(path: Path, rows: list[str], columns: list[str], values: np.ndarray) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        write_csv(handle, matrix_rows(rows, columns, values))


def _write_pages_csv(path: Path, evaluation: Evaluation) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        write_csv(handle, chain([PAGE_COLUMNS], evaluation.page_foreground_rows()))


def write_report_json(report: dict, path: Path) -> None:
    """report.json from `build_report`'s content; ASCII only (non-ASCII characters escaped), so any
    label is safe. Written as it is encoded: the whole text is never held (at 100,000 pages its
    pieces take about 100 MB)."""
    with Path(path).open("w", encoding="ascii") as handle:
        json.dump(report, handle, indent=1, ensure_ascii=True)
        handle.write("\n")


def write_outputs(evaluation: Evaluation, folder: Path, reports: Sequence[str] = ()) -> None:
    """Write `output_files(reports)` into `folder`: report.json, the matrix CSVs, pages.csv and the
    `reports` asked for. The CLI passes a staging folder (`output.staged_output`), so that a
    failure halfway leaves the previous results whole."""
    write_report_json(build_report(evaluation), folder / "report.json")
    for prefix, view in MATRIX_VIEWS.items():
        matrices = getattr(evaluation.matrices, view)
        for kind in MATRIX_KINDS:
            _write_matrix_csv(folder / f"{prefix}{kind}.csv", matrices.rows, matrices.columns, getattr(matrices, kind))
    _write_pages_csv(folder / "pages.csv", evaluation)
    for report in reports:
        _write_report(report, evaluation, folder / REPORT_FILES[report])


def _mean_line(means: dict) -> str:
    present, every = means["present_classes"], means["all_classes"]

    def scores(mean: dict) -> str:
        return f"recall {mean['recall']:.4f}, precision {mean['precision']:.4f}, F1 {mean['f1']:.4f}"

    first = f"over the {present['classes']} present on either side {scores(present)}" if present["classes"] else "no class present on either side"
    return f"Class means: {first}; over all {every['classes']}, Background and absent classes included (as docling-metrics-layout) {scores(every)}"


def summary(evaluation: Evaluation, out: Path | None = None) -> str:
    """A few lines for the terminal: what was compared, the reduced view, the weakest classes of
    those that occur, and both means, each saying over which classes it averages. Names are
    escaped (`terminal_text`): a class name cannot rewrite the lines printed around it."""
    matrices = evaluation.matrices
    reduced = matrices.reduced
    foreground_recall, foreground_precision = matrices.foreground
    lines = [
        f"TORE, {matrices.mode} taxonomy: {len(matrices.classes)} classes (Background included), "
        f"{len(evaluation.page_ids)} pages, {evaluation.pixels:,} pixels",
        f"Foreground recall {foreground_recall:.4f}, precision {foreground_precision:.4f}; "
        f"Background recall {reduced.recall[0, 0]:.4f}, precision {reduced.precision[0, 0]:.4f}",
    ]
    if matrices.per_class:
        present = set(matrices.present_classes())
        ranked = sorted(((name, scores) for name, scores in matrices.per_class.items() if name in present), key=lambda item: item[1]["f1"])
        if ranked:
            lines.append("Lowest F1: " + ", ".join(f"{terminal_text(name)} {scores['f1']:.3f}" for name, scores in ranked[:5]))
        lines.append(_mean_line(matrices.means))
    if evaluation.input_warnings:
        lines.append(f"{len(evaluation.input_warnings)} warnings (listed in report.json)")
    if out is not None:
        lines.append(f"Wrote {terminal_text(str(out / 'report.json'))} and CSVs")
    return "\n".join(lines)
