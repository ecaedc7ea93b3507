"""An evaluation as one Excel workbook to send (`tore evaluate --xlsx`), like the workbook that
docling-eval users get from docling-metrics-layout.

Sheets: the matrices (confusion, recall, precision side by side, rows = reference classes, columns =
predicted classes, and the reduced 2x2 view below them); the same matrices with every all-zero row
and column of the confusion matrix hidden, not removed, so the full matrix stays in the file
(beyond `matrix_form.DENSE_CLASS_LIMIT` classes, instead, the non-zero cells one a row); per
page; per class (single taxonomy); warnings. Numbers are stored as the engine computed them (exact
floats) and only displayed with 3 decimals, where the reference rounds the stored values. Cells are
coloured by a power norm with exponent 0.2, as the reference colours them; openpyxl's
`ColorScaleRule` has no power norm, so the fills are computed here, on the app's Blues scale (the
reference uses a rainbow hue), so that the workbook and the app's heatmaps read alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
from openpyxl import Workbook
from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE, Cell
from openpyxl.styles import Border, Font, PatternFill, Side
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.worksheet import Worksheet

from tore_engine.metrics.map_report import MapReport
from tore_engine.metrics.matrices import REDUCED_CLASSES, MatrixSet
from tore_engine.metrics.mean_average_precision import FIELDS as MAP_FIELDS
from tore_engine.metrics.sweep import SWEEP_COLUMNS, SweepReport
from tore_engine.writers.content import ReportContent
from tore_engine.writers.matrix_form import DENSE, DENSE_CLASS_LIMIT, SPARSE_COLUMNS, SparseCells, matrix_form
from tore_engine.writers.tables import MATRIX_CORNER as CORNER
from tore_engine.writers.tables import (
    MATRIX_KINDS,
    SUPPORT_NOTE,
    UNDEFINED_NOTE,
    WARNING_COLUMNS,
    map_notes,
    warning_rows,
)

POWER = 0.2  # docling-metrics-layout's Excel colouring (docs/algorithm.md#the-reference-implementation, docs/app.md#colour-scale)
# ColorBrewer Blues, the scale of the app's heatmaps (plotly's "Blues"), from 0 to 1
BLUES = ((247, 251, 255), (222, 235, 247), (198, 219, 239), (158, 202, 225), (107, 174, 214), (66, 146, 198), (33, 113, 181), (8, 81, 156), (8, 48, 107))
DARK_FROM = 0.6  # cells coloured beyond this share of the scale get white text
FILL_DIGITS = 3  # shares are rounded to this before picking a fill: finer than the eye, few styles
PIXELS_FORMAT = "#,##0.000"  # 3 decimals shown, as the reference rounds; the stored value is exact
RATIO_FORMAT = "0.000"
COUNT_FORMAT = "#,##0"
KIND_TITLES = {"confusion": "Confusion (pixels)", "recall": "Recall (row-normalised)", "precision": "Precision (column-normalised)"}
KIND_FORMATS = {"confusion": PIXELS_FORMAT, "recall": RATIO_FORMAT, "precision": RATIO_FORMAT}
DIAGONAL_SIDE = Side(style="thick", color="D6336C")  # the reference frames the diagonal in pink too
DIAGONAL_BORDER = Border(left=DIAGONAL_SIDE, right=DIAGONAL_SIDE, top=DIAGONAL_SIDE, bottom=DIAGONAL_SIDE)
BOLD = Font(bold=True)
DIAGONAL_FONTS = {False: Font(bold=True), True: Font(bold=True, color="FFFFFF")}  # by "dark cell"
PLAIN_FONTS = {False: Font(), True: Font(color="FFFFFF")}
TITLE_FONT = Font(bold=True, size=12)
BAND_HEADER_ROWS = 2  # a band of blocks: the blocks' titles, then the predicted classes
MEANS_NOTE = ("means: unweighted, of each class's scores; 'present' counts the classes with reference pixels (Background excluded), "
              "each score over those where it is defined (blank: undefined, never 0); 'all' every matrix class, Background and "
              "absent classes included, undefined as 0, as docling-metrics-layout averages")
MAX_CELL_TEXT = 32_767  # Excel's limit for one cell
MAX_SHEET_ROWS = 1_048_576  # Excel's limit for one sheet
MIN_WIDTH, MAX_WIDTH, WIDTH_MARGIN = 6, 60, 2  # column widths, in characters


def excel_text(value: str) -> str:
    """A string Excel can hold: control characters that XML 1.0 forbids (valid in a page id or a
    class name) written as backslash escapes, cut at Excel's cell limit."""
    value = ILLEGAL_CHARACTERS_RE.sub(lambda match: match.group().encode("unicode_escape").decode("ascii"), value)
    return value if len(value) <= MAX_CELL_TEXT else value[: MAX_CELL_TEXT - 1] + "…"


def power_norm(values: np.ndarray) -> np.ndarray:
    """(v / max) ** 0.2 over a block (its minimum is 0: contributions are non-negative), 0 for an
    all-zero block."""
    top = float(values.max(initial=0.0))
    return (values / top) ** POWER if top > 0 else np.zeros(values.shape)


def _fill(share: float) -> PatternFill:
    """The fill of a cell at `share` of the scale (shares rounded, so few distinct fills are made)."""
    return _fill_at(round(share, FILL_DIGITS))


@lru_cache(maxsize=None)
def _fill_at(share: float) -> PatternFill:
    position = min(max(share, 0.0), 1.0) * (len(BLUES) - 1)
    low = min(int(position), len(BLUES) - 2)
    fraction = position - low
    red, green, blue = (round(a + (b - a) * fraction) for a, b in zip(BLUES[low], BLUES[low + 1]))
    colour = f"{red:02X}{green:02X}{blue:02X}"
    return PatternFill(fill_type="solid", start_color=colour, end_color=colour)


@dataclass
class SheetWriter:
    """One worksheet being written: strings always as text (a class name or page id starting with
    '=' is never a formula), numbers as numbers, and the widest content of every column."""

    sheet: Worksheet
    widths: dict[int, int] = field(default_factory=dict)

    def text(self, row: int, column: int, value: str, *, font: Font | None = None, measured: bool = True) -> None:
        value = excel_text(value)
        cell = self.sheet.cell(row=row, column=column)
        cell.value = value
        cell.data_type = "s"
        if font is not None:
            cell.font = font
        if measured:
            self._measure(column, len(value))

    def number(self, row: int, column: int, value: float | int, number_format: str) -> Cell:
        """A number cell whose stored text is `repr` of the value. openpyxl would write "%.16g",
        one digit short of what some float64 values need to read back exactly."""
        cell = self.sheet.cell(row=row, column=column)
        cell.value = repr(float(value)) if isinstance(value, float) else repr(int(value))
        cell.data_type = "n"
        cell.number_format = number_format
        shown = f"{value:,.0f}" if number_format == COUNT_FORMAT else f"{value:,.3f}"
        self._measure(column, len(shown))
        return cell

    def _measure(self, column: int, length: int) -> None:
        self.widths[column] = max(self.widths.get(column, 0), length)

    def fit_columns(self) -> None:
        for column, length in self.widths.items():
            self.sheet.column_dimensions[get_column_letter(column)].width = min(max(length + WIDTH_MARGIN, MIN_WIDTH), MAX_WIDTH)


def _block_left(block: int, columns: int) -> int:
    """First column of block `block` of a band: column A holds the reference classes, and one
    empty column separates the blocks."""
    return 2 + block * (columns + 1)


def _write_band(writer: SheetWriter, top: int, matrices: MatrixSet, caption: str, *, mark_diagonal: bool, block_width: int) -> None:
    """Confusion, recall and precision of `matrices` side by side from row `top`, each block
    `block_width` columns wide: titles, the predicted classes, then one row per reference class;
    with `mark_diagonal`, the cells that pair a class with itself bold and framed (by name: the
    dual taxonomy's classes differ by side)."""
    first = top + BAND_HEADER_ROWS
    writer.text(top + 1, 1, CORNER, font=BOLD)
    for i, name in enumerate(matrices.rows):
        writer.text(first + i, 1, name, font=BOLD)
    diagonal = np.array([[mark_diagonal and row == column for column in matrices.columns] for row in matrices.rows], dtype=bool)
    for block, kind in enumerate(MATRIX_KINDS):
        left = _block_left(block, block_width)
        writer.text(top, left, f"{KIND_TITLES[kind]}, {caption}", font=TITLE_FONT, measured=False)
        for j, name in enumerate(matrices.columns):
            writer.text(top + 1, left + j, name, font=BOLD)
        values = np.asarray(getattr(matrices, kind), dtype=float)
        shares = power_norm(values)
        for (i, j), value in np.ndenumerate(values):
            cell = writer.number(first + i, left + j, float(value), KIND_FORMATS[kind])
            dark = bool(shares[i, j] > DARK_FROM)
            if value > 0:
                cell.fill = _fill(float(shares[i, j]))
            cell.font = (DIAGONAL_FONTS if diagonal[i, j] else PLAIN_FONTS)[dark]
            if diagonal[i, j]:
                cell.border = DIAGONAL_BORDER


def _hide_empty(writer: SheetWriter, matrices: MatrixSet, top: int) -> None:
    """Hide every all-zero row and column of the confusion matrix in each block of the band."""
    confusion = matrices.confusion
    for i in np.flatnonzero(~confusion.any(axis=1)):
        writer.sheet.row_dimensions[top + BAND_HEADER_ROWS + int(i)].hidden = True
    for block in range(len(MATRIX_KINDS)):
        left = _block_left(block, len(matrices.columns))
        for j in np.flatnonzero(~confusion.any(axis=0)):
            writer.sheet.column_dimensions[get_column_letter(left + int(j))].hidden = True


def _matrix_sheet(workbook: Workbook, title: str, content: ReportContent, *, trimmed: bool) -> None:
    writer = SheetWriter(workbook.create_sheet(title))
    matrices = content.matrices
    caption = f"{matrices.mode} taxonomy" + (", all-zero rows and columns hidden" if trimmed else "")
    width = len(matrices.classes)
    _write_band(writer, 1, matrices.full, caption, mark_diagonal=matrices.mode == "single", block_width=width)
    if trimmed:
        _hide_empty(writer, matrices.full, 1)
    else:  # each reduced block below its full block
        reduced_top = 1 + BAND_HEADER_ROWS + width + 1
        _write_band(writer, reduced_top, matrices.reduced, "reduced 2x2 (Background / Foreground)", mark_diagonal=True, block_width=width)
    writer.sheet.freeze_panes = writer.sheet.cell(row=1 + BAND_HEADER_ROWS, column=2)
    writer.fit_columns()


def _table_sheet(workbook: Workbook, title: str, headers: tuple[str, ...], rows: list[tuple], formats: tuple[str | None, ...], notes: tuple[str, ...] = ()) -> None:
    """A header row (frozen) and one row per entry; text where `formats` says None. Beyond
    Excel's row limit, the first rows and a note saying how many were left out."""
    writer = SheetWriter(workbook.create_sheet(title))
    for column, header in enumerate(headers, start=1):
        writer.text(1, column, header, font=BOLD)
    room = MAX_SHEET_ROWS - len(notes) - 3  # the header, a blank row, the notes and one more note if cut
    for r, row in enumerate(rows[:room], start=2):
        for column, (value, number_format) in enumerate(zip(row, formats), start=1):
            if value is None:
                continue
            if number_format is None:
                writer.text(r, column, str(value))
            else:
                writer.number(r, column, value, number_format)
    if len(rows) > room:
        notes = (f"{len(rows) - room:,} more rows left out (Excel's sheet limit); report.json and the CSVs have them all", *notes)
    for r, note in enumerate(notes, start=min(len(rows), room) + 3):
        writer.text(r, 1, note, measured=False)
    writer.sheet.freeze_panes = "B2"
    writer.fit_columns()


def _per_class_sheet(workbook: Workbook, content: ReportContent, means: dict) -> None:
    rows: list[tuple] = content.per_class_rows()
    present, every = means["present_classes"], means["all_classes"]
    rows += [
        (f"mean over the {present['classes']} classes present in the reference", present["recall"], present["precision"], present["f1"], None),
        (f"mean over all {every['classes']} classes", every["recall"], every["precision"], every["f1"], None),
    ]
    columns = content.per_class_columns()
    formats = (None, RATIO_FORMAT, RATIO_FORMAT, RATIO_FORMAT, PIXELS_FORMAT, *(RATIO_FORMAT,) * (len(columns) - 5))
    _table_sheet(workbook, "Per class", columns, rows, formats, (SUPPORT_NOTE, UNDEFINED_NOTE, MEANS_NOTE, *map_notes(content.map)))


def _sparse_matrix_sheets(workbook: Workbook, content: ReportContent) -> None:
    """Beyond `DENSE_CLASS_LIMIT` classes: sheet Matrices lists the non-zero cells of the confusion
    matrix (the zero-trimmed view has the same cells, so there is no Trimmed sheet), sheet Reduced
    the 2x2 view."""
    full = content.matrices.full
    cells = SparseCells.of(full)
    rows = [(full.rows[i], full.columns[j], *values) for i, j, *values in
            zip(cells.row.tolist(), cells.column.tolist(), *(cells.values[kind].tolist() for kind in MATRIX_KINDS))]
    note = (f"{len(full.rows):,} classes, more than {DENSE_CLASS_LIMIT}: one row a non-zero cell of the confusion matrix "
            "(every other cell is 0; the zero-trimmed view has the same cells), as in report.json and the CSVs")
    _table_sheet(workbook, "Matrices", (*SPARSE_COLUMNS, *MATRIX_KINDS), rows, (None, None, *(KIND_FORMATS[kind] for kind in MATRIX_KINDS)), (note,))
    writer = SheetWriter(workbook.create_sheet("Reduced"))
    _write_band(writer, 1, content.matrices.reduced, "reduced 2x2 (Background / Foreground)", mark_diagonal=True, block_width=len(REDUCED_CLASSES))
    writer.fit_columns()


def _map_sheet(workbook: Workbook, report: MapReport) -> None:
    """mAP's twelve figures (per class: the Per class sheet; per page: the Pages sheet)."""
    rows = [(field, report.figures[field]) for field in MAP_FIELDS]
    _table_sheet(workbook, "mAP", ("figure", f"value ({report.convention})"), rows, (None, RATIO_FORMAT), map_notes(report))


def _sweep_sheet(workbook: Workbook, sweep: SweepReport) -> None:
    formats = (RATIO_FORMAT, None, None, *(RATIO_FORMAT,) * 3, None, *(RATIO_FORMAT,) * 4, None)
    _table_sheet(workbook, "Sweep", SWEEP_COLUMNS, sweep.rows(), formats)


def write_excel(content: ReportContent, path: Path) -> None:
    """Write the workbook to `path` (the caller stages and moves it into place)."""
    workbook = Workbook()
    workbook.remove(workbook.active)
    if matrix_form(len(content.matrices.classes)) == DENSE:
        _matrix_sheet(workbook, "Matrices", content, trimmed=False)
        _matrix_sheet(workbook, "Trimmed", content, trimmed=True)
    else:
        _sparse_matrix_sheets(workbook, content)
    page_columns = content.page_columns()
    _table_sheet(workbook, "Pages", page_columns, content.page_rows(), (None, COUNT_FORMAT, *(RATIO_FORMAT,) * (len(page_columns) - 2)))
    means = content.matrices.means  # None in dual mode, as per_class
    if means is not None:
        _per_class_sheet(workbook, content, means)
    if content.map is not None:
        _map_sheet(workbook, content.map)
    if content.sweep is not None:
        _sweep_sheet(workbook, content.sweep)
    _table_sheet(workbook, "Warnings", WARNING_COLUMNS, warning_rows(content.warnings), (None, COUNT_FORMAT, None, None))
    workbook.save(path)
