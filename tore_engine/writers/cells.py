"""The page x cell contributions behind the app's drill-down, written out (`tore evaluate --cells`),
so that "which pages make up this cell" can be answered without the app.

One row per page and non-zero matrix cell, in reference-file page order and then cell order (row
by row): `page, reference_class, predicted_class, pixels, share_of_cell`. Summed over pages, a
cell's `pixels` give the confusion matrix up to the rounding of each page's value (docs/algorithm.md#exactness-and-determinism).
The CSV is written as the other CSVs (`text_safety.write_csv`): numbers as their exact repr,
no page id or class name read as a formula. A path ending in `.parquet` gets the same table as
Parquet (needs pyarrow), names as they are.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import chain
from pathlib import Path

import numpy as np

from tore_engine.core.errors import InputError
from tore_engine.core.extras import install_command
from tore_engine.core.offsets import run_of_items, runs_at
from tore_engine.core.text_safety import write_csv
from tore_engine.writers.content import ReportContent

CELL_COLUMNS = ("page", "reference_class", "predicted_class", "pixels", "share_of_cell")
PARQUET_SUFFIX = ".parquet"


@dataclass(frozen=True)
class CellTable:
    """The contributions in output order, as index arrays (a table of millions of rows stays small)."""

    page: np.ndarray  # index into `content.page_ids`
    row: np.ndarray  # reference class index
    column: np.ndarray  # predicted class index
    pixels: np.ndarray
    share: np.ndarray  # pixels / the cell's dataset total


def output_order(content: ReportContent) -> np.ndarray:
    """The contributions' positions sorted by page and then cell."""
    return np.lexsort((content.contribution_cell, run_of_items(content.contribution_offsets)))


def cell_table(content: ReportContent, positions: np.ndarray | None = None) -> CellTable:
    """The contributions at `positions` of `output_order` (every one when None), with each one's
    share of its cell (as `cell_pages` computes it: 0 for a cell whose total is 0)."""
    positions = output_order(content) if positions is None else positions
    cell = content.contribution_cell[positions].astype(np.int64)
    pixels = content.contribution_value[positions]
    totals = content.matrices.full.confusion.ravel()[cell]
    share = np.divide(pixels, totals, out=np.zeros(len(pixels)), where=totals != 0)
    row, column = np.divmod(cell, len(content.matrices.classes))
    return CellTable(runs_at(content.contribution_offsets, positions), row, column, pixels, share)


ROWS_AT_ONCE = 65_536  # rows made at a time: all 5 million of 100,000 pages at once took 900 MB as Python objects


def cell_rows(content: ReportContent) -> Iterator[tuple[str, str, str, float, float]]:
    """(page id, reference class, predicted class, pixels, share of the cell), in output order."""
    order = output_order(content)
    page_ids, classes = content.page_ids, content.matrices.classes
    for start in range(0, len(order), ROWS_AT_ONCE):
        table = cell_table(content, order[start:start + ROWS_AT_ONCE])
        for page, row, column, pixels, share in zip(table.page.tolist(), table.row.tolist(), table.column.tolist(),
                                                    table.pixels.tolist(), table.share.tolist()):
            yield page_ids[page], classes[row], classes[column], pixels, share


def _write_csv(content: ReportContent, path: Path) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        write_csv(handle, chain([CELL_COLUMNS], cell_rows(content)))  # row by row: millions of rows stay small


def _write_parquet(content: ReportContent, path: Path) -> None:
    """Class and page columns dictionary-encoded: each name is stored once."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError(f"writing {path.name} needs pyarrow (the 'parquet' extra: {install_command('parquet')}); "
                         "or write the cells as CSV") from None
    table = cell_table(content)

    def names(indices: np.ndarray, dictionary: list[str]) -> pa.DictionaryArray:
        return pa.DictionaryArray.from_arrays(pa.array(indices, pa.int32()), pa.array(dictionary, pa.string()))

    columns = [names(table.page, content.page_ids), names(table.row, content.matrices.classes),
               names(table.column, content.matrices.classes), pa.array(table.pixels), pa.array(table.share)]
    pq.write_table(pa.Table.from_arrays(columns, names=list(CELL_COLUMNS)), path)


def write_cells(content: ReportContent, path: Path) -> None:
    """Write the contributions to `path`: Parquet when it ends in `.parquet`, else CSV (the caller
    stages and moves the file into place)."""
    if path.suffix.lower() == PARQUET_SUFFIX:
        _write_parquet(content, path)
    else:
        _write_csv(content, path)
