"""What `tore_engine.report` writes for names that attack the reader: in every CSV a name that starts
like a formula is text (a leading quote), text cells are quoted and numbers bare and exact; in the
terminal summary a control character in a class name is shown escaped."""

from __future__ import annotations

import csv
import unicodedata
from pathlib import Path

import pytest

from tests import report_data
from tore_engine.writers.outputs import MATRIX_VIEWS, write_outputs
from tore_engine.writers.summary import summary
from tore_engine.writers.tables import MATRIX_KINDS


def read_csv(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    evaluation = report_data.hostile()
    folder = tmp_path_factory.mktemp("report")
    write_outputs(evaluation.report_content(), folder)
    return evaluation, folder


def test_formula_names_are_text_in_the_matrix_csvs_and_numbers_exact(written):
    evaluation, folder = written
    for prefix, view in MATRIX_VIEWS.items():
        matrices = getattr(evaluation.matrices, view)
        for kind in MATRIX_KINDS:
            header, *body = read_csv(folder / f"{prefix}{kind}.csv")
            assert header == ["reference \\ prediction", *map(report_data.in_csv, matrices.columns)]
            assert [line[0] for line in body] == [report_data.in_csv(name) for name in matrices.rows]
            assert [line[1:] for line in body] == [[repr(value) for value in row] for row in getattr(matrices, kind).tolist()]
    assert "'=1+1" in read_csv(folder / "confusion.csv")[0]  # the hostile class is there, as text


def test_pages_csv_quotes_text_and_writes_numbers_bare(written):
    evaluation, folder = written
    rows = read_csv(folder / "pages.csv")
    assert rows[1:] == [[report_data.in_csv(page), *map(repr, numbers)] for page, *numbers in evaluation.report_content().page_rows()]
    assert rows[1][0] == "'" + report_data.HOSTILE_PAGES[0]
    first_line = (folder / "pages.csv").read_bytes().split(b"\r\n")[1]
    pixels = evaluation.report_content().page_rows()[0][1]
    assert first_line.startswith(b"\"'=HYPERLINK(\"\"https://example.invalid\"\")\"," + str(pixels).encode() + b",")


def test_summary_shows_control_characters_in_class_names_escaped():
    text = summary(report_data.hostile().report_content(), Path("out"))
    lines = text.split("\n")
    # what, reduced view, mAP, its unscored boxes, box errors, lowest F1, a never predicted class, means, warnings, where:
    # no line added by a name
    assert len(lines) == 10 and lines[4].startswith("Box errors (TIDE") and lines[6].startswith("Never predicted ")
    assert not any(unicodedata.category(character) == "Cc" for line in lines for character in line)
    assert report_data.BELL.replace("\x07", "\\x07") in lines[5] and lines[5].startswith("Lowest F1: ")


def test_pages_csv_is_written_from_blocks_of_pages_holding_every_pages_cells_in_order():
    """`page_column_blocks` (pages.csv, 8,192 pages at a time) against the columns of all pages at
    once, in blocks of 1, 2 and 3 of its 3 pages: the same cells, mAP's and the box counts' included."""
    content = report_data.hostile().report_content()
    whole = [[repr(cell) for cell in column] for column in content.page_column_values()]
    assert len(content.page_ids) == 3 and len(whole) == len(content.page_columns()) > 8  # mAP's columns and the box counts are there
    for size in (1, 2, 3):
        blocks = list(content.page_column_blocks(size))
        assert len(blocks) == -(-len(content.page_ids) // size)
        assert [[repr(cell) for block in blocks for cell in block[k]] for k in range(len(whole))] == whole
