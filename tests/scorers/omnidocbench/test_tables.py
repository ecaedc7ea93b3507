"""Table normalisation and Markdown tables (tore_engine.scorers.omnidocbench.tables), issue 23 causes 2 and 3:
LaTeX in cells becomes symbols before TEDS, and a pipe table scored against HTML counts the
`colspan="1" rowspan="1"` the official conversion writes on every cell. Expected values derived by
hand and checked against the official evaluator on the same pages."""

from __future__ import annotations

from tests.scorers.omnidocbench.helpers import score_one
from tore_engine.scorers.omnidocbench.tables import (
    markdown_tables_to_html,
    normalize_cell_text,
    normalize_table_html,
)

TABLE = "<table><tr><td>a</td><td>b</td></tr><tr><td>1</td><td>2</td></tr></table>"
NORMALIZED = '<html><body><table border="1" ><tr><td>a</td><td>b</td></tr><tr><td>1</td><td>2</td></tr></table></body></html>'
SPANS = ' colspan="1" rowspan="1"'


def test_cell_latex_becomes_symbols(tmp_path):
    assert normalize_cell_text("$\\pm$") == "±" and normalize_cell_text(" \\alpha ") == "α"
    assert normalize_cell_text("–") == "—" and normalize_cell_text("a\xa0 b") == "a b"
    gt = {"category_type": "table", "order": 1, "html": "<table><tr><td>±</td><td>α</td></tr></table>"}
    scores = score_one(tmp_path, [gt], "<table><tr><td>$\\pm$</td><td>\\alpha</td></tr></table>")
    assert (scores["table_teds"], scores["table_edit"]) == (1.0, 0.0)


def test_html_normalisation_sorts_attributes_and_drops_layout():
    html = '<table style="x"><thead><tr><th rowspan="2" colspan="1" class="c">a &amp; b</th></tr></thead></table>'
    assert normalize_table_html(html) == '<html><body><table border="1" ><tr><td colspan="1" rowspan="2">a & b</td></tr></table></body></html>'
    assert normalize_table_html("no table") == ""
    assert normalize_table_html(TABLE) == NORMALIZED


def test_pipe_tables_get_a_span_on_every_cell_and_the_table_edit_counts_it(tmp_path):
    html = markdown_tables_to_html("| a | b |\n|---|---|\n| 1 | 2 |\n")
    assert html.count('<td colspan="1" rowspan="1">') == 4 and "<th" not in html
    gt = {"category_type": "table", "order": 1, "html": TABLE}
    scores = score_one(tmp_path, [gt], "| a | b |\n|---|---|\n| 1 | 2 |\n")
    # four cells, each with 24 more characters: 96 insertions over the longer string; TEDS ignores it
    assert scores["table_edit"] == 4 * len(SPANS) / (len(NORMALIZED) + 4 * len(SPANS))
    assert scores["table_teds"] == 1.0 and scores["table_teds_s"] == 1.0
