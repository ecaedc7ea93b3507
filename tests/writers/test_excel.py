"""The workbook (`tore_engine.writers.excel`), read back with openpyxl: exact values stored as numbers,
hidden rows and columns, the marked diagonal, the tables, hostile strings, and that LibreOffice
opens it (when installed)."""

from __future__ import annotations

import math
import shutil
import subprocess

import numpy as np
import pytest
from openpyxl import load_workbook

from tests import report_data
from tore_engine.metrics.box_outcomes import PAGE_COUNT_COLUMNS
from tore_engine.metrics.matrices import MatrixSet
from tore_engine.writers.excel import (
    BAND_HEADER_ROWS,
    BLUES,
    CORNER,
    MAX_CELL_TEXT,
    excel_text,
    write_excel,
)
from tore_engine.writers.tables import (
    MAP_CLASS_COLUMNS,
    MAP_PAGE_COLUMNS,
    MATRIX_KINDS,
    PAGE_COLUMNS,
    PER_CLASS_COLUMNS,
    WARNING_COLUMNS,
)

EVALUATIONS = {"public": report_data.public, "paper": report_data.paper, "paper-dual": lambda: report_data.paper("dual"),
               "hostile": report_data.hostile}
DARKEST = "{:02X}{:02X}{:02X}".format(*BLUES[-1])


@pytest.fixture(scope="module", params=list(EVALUATIONS))
def written(request, tmp_path_factory):
    evaluation = EVALUATIONS[request.param]()
    path = tmp_path_factory.mktemp("xlsx") / "report.xlsx"
    write_excel(evaluation.report_content(), path)
    return evaluation, load_workbook(path), path


def _block_left(block: int, matrices: MatrixSet) -> int:
    """Blocks are as wide as the full matrix: the reduced ones sit below the full ones."""
    return 2 + block * (len(matrices.columns) + 1)


def _read_block(sheet, top: int, block: int, matrices: MatrixSet, full: MatrixSet) -> list[list]:
    left, first = _block_left(block, full), top + BAND_HEADER_ROWS
    return [[sheet.cell(first + i, left + j).value for j in range(len(matrices.columns))] for i in range(len(matrices.rows))]


def _bands(evaluation) -> list[tuple[str, int, MatrixSet]]:
    matrices = evaluation.matrices
    reduced_top = 1 + BAND_HEADER_ROWS + len(matrices.classes) + 1
    return [("Matrices", 1, matrices.full), ("Matrices", reduced_top, matrices.reduced), ("Trimmed", 1, matrices.full)]


def test_every_matrix_value_is_the_evaluations_float_stored_as_a_number(written):
    evaluation, workbook, _ = written
    for sheet_name, top, matrices in _bands(evaluation):
        sheet = workbook[sheet_name]
        assert sheet.cell(top + 1, 1).value == CORNER
        assert [sheet.cell(top + BAND_HEADER_ROWS + i, 1).value for i in range(len(matrices.rows))] == [excel_text(r) for r in matrices.rows]
        for block, kind in enumerate(MATRIX_KINDS):
            left = _block_left(block, evaluation.matrices.full)
            assert [sheet.cell(top + 1, left + j).value for j in range(len(matrices.columns))] == [excel_text(c) for c in matrices.columns]
            assert _read_block(sheet, top, block, matrices, evaluation.matrices.full) == getattr(matrices, kind).tolist()  # exact floats
            cell = sheet.cell(top + BAND_HEADER_ROWS, left)
            assert cell.data_type == "n" and cell.number_format == ("#,##0.000" if kind == "confusion" else "0.000")


def _hidden_columns(sheet) -> set[int]:
    """openpyxl reads a run of equal columns as one dimension spanning min..max."""
    return {column for dimension in sheet.column_dimensions.values() if dimension.hidden for column in range(dimension.min, dimension.max + 1)}


def _hidden_rows(sheet) -> set[int]:
    return {row for row, dimension in sheet.row_dimensions.items() if dimension.hidden}


def test_trimmed_sheet_hides_exactly_the_all_zero_rows_and_columns(written):
    evaluation, workbook, _ = written
    full = evaluation.matrices.full
    zero_rows = np.flatnonzero(~full.confusion.any(axis=1))
    zero_columns = np.flatnonzero(~full.confusion.any(axis=0))
    sheet = workbook["Trimmed"]
    assert _hidden_rows(sheet) == {1 + BAND_HEADER_ROWS + int(i) for i in zero_rows}
    assert _hidden_columns(sheet) == {_block_left(block, full) + int(j) for block in range(3) for j in zero_columns}
    visible_rows = [sheet.cell(1 + BAND_HEADER_ROWS + i, 1).value for i in range(len(full.rows)) if i not in zero_rows]
    assert visible_rows == [excel_text(r) for r in evaluation.matrices.trimmed.rows]
    assert not _hidden_rows(workbook["Matrices"]) and not _hidden_columns(workbook["Matrices"])


def test_paper_example_hides_background(tmp_path):
    """The paper's example has no Background pixel: its row and column are hidden in each block."""
    path = tmp_path / "report.xlsx"
    write_excel(report_data.paper().report_content(), path)
    sheet = load_workbook(path)["Trimmed"]
    assert _hidden_rows(sheet) == {1 + BAND_HEADER_ROWS} and _hidden_columns(sheet) == {2, 8, 14}
    assert sheet["B3"].value == 0.0  # hidden, not removed


def _diagonal(cell) -> bool:
    return cell.font.bold and cell.border.left.style == "thick" and cell.border.top.style == "thick"


def test_diagonal_is_bold_and_framed_in_single_mode_only(written):
    evaluation, workbook, _ = written
    single = evaluation.matrices.mode == "single"
    for sheet_name, top, matrices in _bands(evaluation):
        mark = single or matrices is evaluation.matrices.reduced
        sheet = workbook[sheet_name]
        for block in range(3):
            left = _block_left(block, evaluation.matrices.full)
            for i, row in enumerate(matrices.rows):
                for j, column in enumerate(matrices.columns):
                    assert _diagonal(sheet.cell(top + BAND_HEADER_ROWS + i, left + j)) == (mark and row == column)


def test_fills_follow_a_power_norm_with_exponent_0_2(written):
    evaluation, workbook, _ = written
    sheet = workbook["Matrices"]
    full = evaluation.matrices.full
    for block, kind in enumerate(MATRIX_KINDS):
        values = getattr(full, kind)
        left = _block_left(block, full)
        i, j = np.unravel_index(np.argmax(values), values.shape)
        assert sheet.cell(1 + BAND_HEADER_ROWS + int(i), left + int(j)).fill.start_color.rgb.endswith(DARKEST)
        for (i, j) in zip(*np.nonzero(values == 0)):
            assert sheet.cell(1 + BAND_HEADER_ROWS + int(i), left + int(j)).fill.fill_type is None  # zero: no colour
    confusion = full.confusion
    positive = np.flatnonzero(confusion.ravel() > 0)
    if len(positive) > 1:  # a cell at 1e-5 of the maximum is still a quarter of the way along the scale
        smallest = positive[np.argmin(confusion.ravel()[positive])]
        i, j = divmod(int(smallest), confusion.shape[1])
        assert (confusion[i, j] / confusion.max()) ** 0.2 > confusion[i, j] / confusion.max()
        assert not sheet.cell(1 + BAND_HEADER_ROWS + i, _block_left(0, full) + j).fill.start_color.rgb.endswith("F7FBFF")


def _table(sheet) -> tuple[list, list[list]]:
    rows = [list(row) for row in sheet.iter_rows(values_only=True)]
    return rows[0], rows[1:]


def test_pages_sheet_equals_the_foreground_scores(written):
    evaluation, workbook, _ = written
    header, rows = _table(workbook["Pages"])
    content = evaluation.report_content()
    assert tuple(header) == PAGE_COLUMNS + (MAP_PAGE_COLUMNS + PAGE_COUNT_COLUMNS if evaluation.matrices.mode == "single" else ())  # mAP, box counts in single taxonomy
    expected = [[excel_text(page), *values] for page, *values in content.page_rows()]  # an undefined mAP: an empty cell
    assert rows == expected
    assert workbook["Pages"].freeze_panes == "B2"


def test_per_class_sheet_in_single_mode(written):
    evaluation, workbook, _ = written
    if evaluation.matrices.mode == "dual":
        assert "Per class" not in workbook.sheetnames
        return
    header, rows = _table(workbook["Per class"])
    assert tuple(header) == PER_CLASS_COLUMNS + MAP_CLASS_COLUMNS
    per_class = evaluation.matrices.per_class
    confusion = evaluation.matrices.full.confusion
    for k, (row, (name, scores)) in enumerate(zip(rows, per_class.items()), start=1):
        assert row[0] == excel_text(name)
        assert row[1:4] == [scores["recall"], scores["precision"], scores["f1"]]
        assert report_data.close(row[4], math.fsum(confusion[k]))
        assert row[5:7] == list(evaluation.map.per_class.get(name, (None, None)))  # AP, AR@100: empty where mAP has none
    means = [row for row in rows[len(per_class):] if row[0] and row[0].startswith("mean over")]
    assert [row[1] for row in means] == [evaluation.matrices.means["present_classes"]["recall"], evaluation.matrices.means["all_classes"]["recall"]]


def test_warnings_sheet_lists_every_warning(written):
    evaluation, workbook, _ = written
    header, rows = _table(workbook["Warnings"])
    assert tuple(header) == WARNING_COLUMNS
    assert rows == [[excel_text(w.page) if w.page else None, w.box, w.side, w.message] for w in evaluation.input_warnings]


def test_headers_are_frozen_and_columns_fit(written):
    evaluation, workbook, _ = written
    for name in ("Matrices", "Trimmed"):
        sheet = workbook[name]
        assert sheet.freeze_panes == f"B{1 + BAND_HEADER_ROWS}"
        labels = max(len(excel_text(c)) for c in evaluation.matrices.classes + [CORNER])
        assert sheet.column_dimensions["A"].width >= min(labels, 58)
    assert workbook.sheetnames[:3] == ["Matrices", "Trimmed", "Pages"] and workbook.sheetnames[-1] == "Warnings"


def test_hostile_strings_stay_text(tmp_path):
    """A class or page named like a formula is text, never a formula; XML-illegal characters are
    escaped instead of failing the save."""
    evaluation = report_data.hostile()
    path_text = [excel_text(name) for name in evaluation.matrices.classes]
    assert excel_text(report_data.BELL) == "bell\\x07"
    long = excel_text("x" * (MAX_CELL_TEXT + 5))
    assert long.endswith("…") and len(long) == MAX_CELL_TEXT
    write_excel(evaluation.report_content(), tmp_path / "report.xlsx")
    workbook = load_workbook(tmp_path / "report.xlsx")
    sheet = workbook["Matrices"]
    formula_row = 1 + BAND_HEADER_ROWS + evaluation.matrices.classes.index(report_data.FORMULA)
    assert sheet.cell(formula_row, 1).value == report_data.FORMULA and sheet.cell(formula_row, 1).data_type == "s"
    assert [sheet.cell(2, 2 + j).value for j in range(len(path_text))] == path_text
    pages = workbook["Pages"]
    assert pages.cell(2, 1).value == report_data.HOSTILE_PAGES[0] and pages.cell(2, 1).data_type == "s"


@pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice is not installed (apt-get install libreoffice-calc); skipping the open-in-LibreOffice check")
def test_libreoffice_opens_the_workbook(tmp_path):
    path = tmp_path / "report.xlsx"
    write_excel(report_data.hostile().report_content(), path)
    result = subprocess.run(["soffice", "--headless", f"-env:UserInstallation=file://{tmp_path}/profile", "--convert-to", "pdf",
                             "--outdir", str(tmp_path), str(path)], capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "report.pdf").read_bytes()[:5] == b"%PDF-"
