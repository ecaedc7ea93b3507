"""Markdown predictions (tore_engine.scorers.omnidocbench.markdown): the official reader's pieces and positions,
its file-name rules, and entries that are no file. Expected values are derived by hand from the
reading rules written in the module docstring."""

from __future__ import annotations

import re
import time

import pytest

from tore_engine.core.errors import InputError
from tore_engine.scorers.omnidocbench.markdown import (
    load_markdown_predictions,
    parse_markdown,
    prediction_names,
)


def _pieces(text: str) -> list[tuple[str, str, int, int, str]]:
    return [(item.category, item.fine, item.start, item.end, item.content)
            for items in parse_markdown(text).values() for item in items]


def test_paragraphs_formulas_and_html_tables_with_their_positions():
    text = "Intro text\n\n$$\nx^2\n$$\n\n<table><tr><td>c</td></tr></table>\n\nEnd"
    pieces = _pieces(text)
    # Paragraph positions add up the paragraphs' lengths without the blank lines between them (upstream).
    assert ("text_all", "text_block", 0, 10, "Intro text") in pieces
    assert ("equation_isolated", "", 12, 21, "\\[ x^2 \\]") in pieces
    assert ("html_table", "", 23, 57, "<table><tr><td>c</td></tr></table>") in pieces
    assert ("text_all", "text_block", 53, 56, "End") in pieces  # 10 + 9 + 34 characters before it
    assert [category for category in parse_markdown(text)] == ["text_all", "equation_isolated", "html_table"]


def test_a_pipe_table_becomes_html_with_a_span_on_every_cell():
    pieces = _pieces("| a | b |\n|---|---|\n| 1 | 2 |\n")
    tables = [piece for piece in pieces if piece[0] == "html_table"]
    assert len(tables) == 1 and tables[0][1] == "md2html_table"
    cells = '<td colspan="1" rowspan="1">'
    assert tables[0][4] == (f'<table border="1" >\n    <tr>\n      {cells}a</td>\n      {cells}b</td>\n    </tr>\n'
                            f'    <tr>\n      {cells}1</td>\n      {cells}2</td>\n    </tr>\n</table>')


def test_inline_formulas_stay_in_the_text_and_become_inline_candidates():
    pieces = _pieces("The value $a+b=c$ holds.")
    assert ("text_all", "text_block", 0, 24, "The value $a+b=c$ holds.") in pieces
    assert ("equation_isolated", "equation_inline", 10, 17, "\\[a+b=c\\]") in pieces
    assert not any(piece[1] == "equation_inline" for piece in _pieces("Point $x$ here."))  # a bare label is dropped


def test_prediction_file_names_in_the_official_order():
    assert prediction_names("doc.pdf_3.jpg") == ["doc.pdf_3.md", "doc_3.mmd", "doc_3.md", "doc.pdf_3.jpg.md"]


@pytest.mark.parametrize("name", ["{stem}.md", "{bare}.mmd", "{bare}.md", "{image}.md"])
def test_each_official_file_name_is_found(tmp_path, reference, name):
    page = reference.pages[0]
    stem = page.id[:-4]
    (tmp_path / name.format(stem=stem, bare=stem.replace(".pdf", ""), image=page.id)).write_text("text")
    predictions = load_markdown_predictions(tmp_path, reference)
    assert predictions.texts[0] == "text" and predictions.missing_pages == list(range(1, 18))


def test_a_markdown_entry_that_is_a_folder_is_an_input_error(tmp_path, reference):
    (tmp_path / f"{reference.pages[0].stem}.md").mkdir()
    with pytest.raises(InputError, match="is a folder; expected a file") as error:
        load_markdown_predictions(tmp_path, reference)
    assert error.value.file == str(tmp_path / f"{reference.pages[0].stem}.md")


# --- the linear scans against the plain definitions they replace, on random short texts -----------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tore_engine.scorers.omnidocbench.markdown import _HTML_TABLE, _TABULAR, _nested_spans  # noqa: E402

texts = st.lists(st.sampled_from(["x", "\n", "<table", ">", "</table>", "\\begin{tabular}", "\\end{tabular}", " "]),
                 max_size=25).map("".join)


def _stack_spans(text: str, opening: str, closing: str, opening_length: int, step: int) -> list[tuple[int, int]]:
    """The scan as stated: regex searches from the cursor, recursing on the rest when openings stay open."""
    spans, stack, cursor = [], [], 0
    while cursor < len(text):
        begin, end = re.search(opening, text[cursor:]), re.search(closing, text[cursor:])
        if not begin and not end:
            break
        if begin and (not end or begin.start() < end.start()):
            stack.append(cursor + begin.start())
            cursor += begin.start() + step
        else:
            if stack:
                start = stack.pop()
                if not stack:
                    spans.append((start, cursor + end.start() + step))
            cursor += end.start() + step
    if stack:
        base = stack[0] + opening_length
        spans += [(a + base, b + base) for a, b in _stack_spans(text[base:], opening, closing, opening_length, step)]
    return spans


@settings(max_examples=400, deadline=None)
@given(texts)
def test_table_scans_equal_their_definition(text):
    assert _nested_spans(text, *_TABULAR) == _stack_spans(text, r"\\begin{tabular}", r"\\end{tabular}", 16, 14)
    assert _nested_spans(text, *_HTML_TABLE) == _stack_spans(text, r"<table(?:[^>]*)>", r"</table>", 16, 8)


@pytest.mark.parametrize("text", ["\\[" * 60000, "<table" * 20000, "\\begin{table}" * 9000, "\\begin{tabular}" * 8000,
                                  "$a^" * 40000, "```python\n" * 10000, "|" * 120000, "![a" * 40000, "\\(" * 60000,
                                  "\\text{" * 20000, "\\title{" * 20000, "The image shows " + "\\(" * 40000])
def test_hostile_pages_are_read_in_bounded_time(text):
    started = time.perf_counter()
    parse_markdown(text)
    assert time.perf_counter() - started < 15  # the evaluator's scans take minutes on the first ones
