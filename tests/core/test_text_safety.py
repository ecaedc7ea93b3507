"""The two text rules (`tore_engine.core.text_safety`): a CSV text cell that a spreadsheet would read as a
formula gets a leading quote, and nothing a terminal acts on survives `terminal_text`."""

from __future__ import annotations

import csv
import io
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tore_engine.core.text_safety import spreadsheet_text, terminal_text, write_csv, write_csv_columns

# Unicode's Bidi_Control characters (PropList.txt), listed here rather than taken from the module
BIDI_CONTROLS = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
FORMULA_SIGNS = set("=+-@\uff1d\uff0b\uff0d\uff20\x00")  # OWASP's four, their full-width forms, NUL
FORMULA_CONTROLS = set("\t\r\n")  # formula starts too, but white space: only as the first character


def acted_on_by_a_terminal(character: str) -> bool:
    """C0, DEL and C1 (category Cc), line and paragraph separators, and bidi controls."""
    return unicodedata.category(character) in ("Cc", "Zl", "Zp") or character in BIDI_CONTROLS


# text biased towards the characters that matter: controls, bidi, formula signs, white space
hostile_text = st.text(st.one_of(st.characters(), st.sampled_from([*"\x1b\x7f\x85\x9b\u2028\u202e\u2066\n\r\t '", *sorted(FORMULA_SIGNS)])))


@given(hostile_text)
def test_terminal_text_leaves_no_control_character(text):
    assert not any(acted_on_by_a_terminal(character) for character in terminal_text(text))


@given(hostile_text)
def test_terminal_text_changes_only_control_characters(text):
    """Each control character becomes its Python escape (`unicode_escape`), every other one stays."""
    expected = "".join(c.encode("unicode_escape").decode("ascii") if acted_on_by_a_terminal(c) else c for c in text)
    assert terminal_text(text) == expected


@pytest.mark.parametrize("text, shown", [
    ("a\x1b[2Ab", "a\\x1b[2Ab"),
    ("nul\x00", "nul\\x00"),
    ("two\nlines\r\tx", "two\\nlines\\r\\tx"),
    ("del\x7f csi\x9b", "del\\x7f csi\\x9b"),
    ("abc\u202edcba", "abc\\u202edcba"),
    ("iso\u2066late\u2069", "iso\\u2066late\\u2069"),
    ("line\u2028sep", "line\\u2028sep"),
    ("Überschrift – 表", "Überschrift – 表"),  # letters of any script stay as they are
])
def test_terminal_text_escapes_visibly(text, shown):
    assert terminal_text(text) == shown


@given(hostile_text)
def test_spreadsheet_text_leaves_safe_text_unchanged(text):
    formula_like = text[:1] in FORMULA_SIGNS | FORMULA_CONTROLS or text.lstrip()[:1] in FORMULA_SIGNS
    assert spreadsheet_text(text) == ("'" + text if formula_like else text)


@pytest.mark.parametrize("text", ['=HYPERLINK("http://x")', "+1", "-2+3", "@SUM(A1)", "=cmd|' /C calc'!A0", "\t=1", "\r=1",
                                  "  =1+1", "\uff1d1+1", "\x00"])
def test_formula_like_text_gets_a_leading_quote(text):
    assert spreadsheet_text(text) == "'" + text


@pytest.mark.parametrize("text", ["Text", "Page-header", "a=b", "1+1", "", " ", "'=already text"])
def test_other_text_is_unchanged(text):
    assert spreadsheet_text(text) == text


def test_write_csv_quotes_text_and_leaves_numbers_bare():
    handle = io.StringIO()
    write_csv(handle, [["name", "value"], ["-2+3", -2.5], ["a;=1+1", 0.1 + 0.2], ["n", 3]])
    assert handle.getvalue().splitlines() == ['"name","value"', "\"'-2+3\",-2.5", '"a;=1+1",0.30000000000000004', '"n",3']
    rows = list(csv.reader(io.StringIO(handle.getvalue(), newline="")))
    assert rows == [["name", "value"], ["'-2+3", "-2.5"], ["a;=1+1", "0.30000000000000004"], ["n", "3"]]


CELLS = st.one_of(st.text("=+-@\t\r\n\0a;,\"\uff1d", max_size=6), st.integers(), st.floats(allow_nan=False), st.none())


@given(st.lists(st.lists(CELLS, min_size=3, max_size=3), max_size=20), st.lists(st.text(max_size=6), min_size=3, max_size=3))
def test_write_csv_columns_writes_write_csvs_bytes(rows, header):
    """The column-wise writer (pages.csv) against the row-wise one it replaces there: the same
    bytes for any mix of text, numbers and empty cells, formula-like text guarded in any column."""
    by_rows, by_columns = io.StringIO(), io.StringIO()
    write_csv(by_rows, [header, *rows])
    write_csv_columns(by_columns, header, [[[row[k] for row in rows] for k in range(3)]])
    assert by_columns.getvalue() == by_rows.getvalue()
    in_blocks = io.StringIO()  # the same rows cut into blocks, some empty
    write_csv_columns(in_blocks, header, [[[row[k] for row in rows[a:b]] for k in range(3)] for a, b in ((0, 0), (0, 3), (3, 4), (4, None))])
    assert in_blocks.getvalue() == by_rows.getvalue()
