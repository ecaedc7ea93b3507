"""Markdown predictions (tore_engine.omnidocbench.markdown): the parser's elements, and entries that are
no file."""

from __future__ import annotations

import pytest

from tore_engine.errors import InputError
from tore_engine.omnidocbench.markdown import load_markdown_predictions, parse_markdown


def test_markdown_parser_finds_tables_formulas_and_paragraphs():
    text = ("```markdown\n# Title\n\nSome *text* ![img](a.png)\nsecond line\n\n$$\nx^2\n$$\n\n"
            "| a | b |\n|---|---|\n| 1 | 2 |\n\n<table><tr><td>c</td></tr></table>\n\n\\[ y \\]\n```")
    elements = parse_markdown(text)
    assert [e.kind for e in elements] == ["text", "text", "formula", "table", "table", "formula"]
    assert elements[1].content == "Some *text* \nsecond line"
    assert elements[3].content == "<table><tr><td>a</td><td>b</td></tr><tr><td>1</td><td>2</td></tr></table>"
    assert [e.position for e in elements] == list(range(6))


def test_a_markdown_entry_that_is_a_folder_is_an_input_error(tmp_path, reference):
    (tmp_path / f"{reference.pages[0].stem}.md").mkdir()
    with pytest.raises(InputError, match="is a folder; expected a file") as error:
        load_markdown_predictions(tmp_path, reference)
    assert error.value.file == str(tmp_path / f"{reference.pages[0].stem}.md")
