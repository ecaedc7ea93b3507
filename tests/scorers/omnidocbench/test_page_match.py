"""One page matched the official way (tore_engine.scorers.omnidocbench.page_match), issue 23 cause 4: a table
matched to the page's first predicted table has no predicted position in the official code (index
0 read as "none"), so it leaves the predicted reading order; the corrected value is given beside.
Expected values derived by hand and checked against the official evaluator on the same page."""

from __future__ import annotations

from tests.scorers.omnidocbench.helpers import one_page, score_one
from tore_engine.scorers.omnidocbench.page_match import match_page

TABLE = "<table><tr><td>a</td><td>b</td></tr><tr><td>1</td><td>2</td></tr></table>"
BLOCKS = [{"category_type": "text_block", "order": 1, "text": "alpha beta gamma"},
          {"category_type": "table", "order": 2, "html": TABLE},
          {"category_type": "text_block", "order": 3, "text": "delta epsilon zeta"}]
MARKDOWN = TABLE + "\n\nalpha beta gamma\n\ndelta epsilon zeta"


def test_a_table_matched_to_the_first_predicted_table_leaves_the_predicted_order(tmp_path):
    _, page = one_page(tmp_path, BLOCKS)
    match = match_page(page, MARKDOWN)
    assert (match.reading_order["gt"], match.reading_order["pred"]) == ([1, 2, 3], [1, 3])
    assert (match.reading_order_corrected["gt"], match.reading_order_corrected["pred"]) == ([1, 2, 3], [2, 1, 3])
    (tmp_path / "scored").mkdir()
    scores = score_one(tmp_path / "scored", BLOCKS, MARKDOWN)
    assert scores["reading_order_edit"] == 1 / 3  # one deletion
    assert scores["reading_order_edit_corrected"] == 2 / 3  # the table, first in the prediction, is out of place
    assert scores["table_teds"] == 1.0 and scores["text_edit"] == 0.0
