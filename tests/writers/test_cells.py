"""The page x cell contributions (`tore_engine.writers.cells`), read back: summed per cell they give the
confusion matrix, per page the page matrix; the order is fixed; a name that looks like a formula is
written as text; Parquet holds the same rows."""

from __future__ import annotations

import csv
import math
import sys
from collections import defaultdict

import numpy as np
import pytest

from tests import report_data
from tore_engine.core.errors import InputError
from tore_engine.writers.cells import CELL_COLUMNS, cell_rows, write_cells


def as_written(names: list[str]) -> list[str]:
    return [report_data.in_csv(name) for name in names]


EVALUATIONS = {"public": report_data.public, "paper-dual": lambda: report_data.paper("dual"), "hostile": report_data.hostile}


@pytest.fixture(scope="module", params=list(EVALUATIONS))
def written(request, tmp_path_factory):
    evaluation = EVALUATIONS[request.param]()
    path = tmp_path_factory.mktemp("cells") / "cells.csv"
    write_cells(evaluation.report_content(), path)
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    return evaluation, rows, path


def test_header_and_exact_numbers(written):
    evaluation, rows, _ = written
    assert tuple(rows[0]) == CELL_COLUMNS
    expected = [[*as_written([page, row, column]), repr(pixels), repr(share)] for page, row, column, pixels, share in cell_rows(evaluation.report_content())]
    assert rows[1:] == expected and len(expected) == len(evaluation.contribution_value)


def test_summed_per_cell_the_rows_give_the_confusion_matrix(written):
    evaluation, rows, _ = written
    classes = as_written(evaluation.matrices.classes)
    sums = defaultdict(list)
    for _, row, column, pixels, _ in rows[1:]:
        sums[classes.index(row), classes.index(column)].append(float(pixels))
    confusion = evaluation.matrices.full.confusion
    for (i, j), value in np.ndenumerate(confusion):
        assert report_data.close(math.fsum(sums.get((i, j), [])), float(value)), (classes[i], classes[j])


def test_per_page_the_rows_give_the_page_matrix_exactly(written):
    evaluation, rows, _ = written
    classes = as_written(evaluation.matrices.classes)
    by_page = defaultdict(dict)
    for page, row, column, pixels, _ in rows[1:]:
        by_page[page][classes.index(row), classes.index(column)] = float(pixels)
    for index, page_id in enumerate(as_written(evaluation.page_ids)):
        matrix = evaluation.page_matrix(index)
        written_cells = by_page.get(page_id, {})
        assert {cell: matrix[cell] for cell in written_cells} == written_cells
        assert math.fsum(written_cells.values()) == math.fsum(matrix.ravel())  # no page cell left out


def test_rows_come_in_page_order_then_cell_order(written):
    evaluation, rows, _ = written
    classes = as_written(evaluation.matrices.classes)
    pages = {page_id: index for index, page_id in enumerate(as_written(evaluation.page_ids))}
    keys = [(pages[page], classes.index(row), classes.index(column)) for page, row, column, _, _ in rows[1:]]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)


def test_share_of_cell_is_the_drill_down_share(written):
    evaluation, rows, _ = written
    classes = as_written(evaluation.matrices.classes)
    for _page, row, column, pixels, share in rows[1:]:
        total = evaluation.matrices.full.confusion[classes.index(row), classes.index(column)]
        assert float(share) == float(pixels) / float(total)


def test_same_bytes_twice(written, tmp_path):
    evaluation, _, path = written
    write_cells(evaluation.report_content(), tmp_path / "again.csv")
    assert (tmp_path / "again.csv").read_bytes() == path.read_bytes()


def test_hostile_page_ids_round_trip():
    pages = {page for page, *_ in cell_rows(report_data.hostile().report_content())}
    assert pages == set(report_data.HOSTILE_PAGES)


def test_parquet_holds_the_same_rows(tmp_path):
    parquet = pytest.importorskip("pyarrow.parquet", reason="pyarrow is not installed (the parquet extra)")
    evaluation = report_data.hostile()
    write_cells(evaluation.report_content(), tmp_path / "cells.parquet")
    table = parquet.read_table(tmp_path / "cells.parquet")
    assert table.column_names == list(CELL_COLUMNS)
    assert [tuple(row.values()) for row in table.to_pylist()] == list(cell_rows(evaluation.report_content()))


def test_parquet_without_pyarrow_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(InputError, match="pyarrow.*parquet"):
        write_cells(report_data.hostile().report_content(), tmp_path / "cells.parquet")
    assert not (tmp_path / "cells.parquet").exists()


def test_rows_made_a_chunk_at_a_time_are_the_rows_of_the_whole_table(written, monkeypatch):
    """`cell_rows` makes Python objects of a few rows at a time (millions at 100,000 pages): chunks
    of 7 give the rows the whole table gives at once."""
    from tore_engine.writers import cells

    evaluation, _, _ = written
    content = evaluation.report_content()
    table = cells.cell_table(content)
    whole = [(content.page_ids[page], content.matrices.classes[row], content.matrices.classes[column], pixels, share)
             for page, row, column, pixels, share in zip(table.page.tolist(), table.row.tolist(), table.column.tolist(),
                                                         table.pixels.tolist(), table.share.tolist())]
    monkeypatch.setattr(cells, "ROWS_AT_ONCE", 7)
    assert list(cells.cell_rows(content)) == whole and len(whole) > 7
