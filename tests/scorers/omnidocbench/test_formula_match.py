"""Display-formula matching (tore_engine.scorers.omnidocbench.formula_match), issue 23 cause 1: a multi-line
ground-truth formula is split into rows, and rows can be matched to inline formulas. Expected values
derived by hand and checked against the official evaluator on the same page."""

from __future__ import annotations

from tests.scorers.omnidocbench.helpers import one_page, score_one
from tore_engine.scorers.omnidocbench.page_match import match_page

ALIGNED = {"category_type": "equation_isolated", "order": 1, "latex": "\\begin{aligned} a &= b \\\\ c &= d \\end{aligned}"}


def test_rows_of_a_display_formula_match_inline_formulas(tmp_path):
    _, page = one_page(tmp_path, [ALIGNED])
    rows = match_page(page, "We have $a=b$ and also $c=d$ here.").formula
    # rows a=b and c=d (orders 1.001 and 1.002), each matched exactly to an inline formula
    assert [(row["gt_position"], row["norm_gt"], row["norm_pred"], row["pred_category_type"]) for row in rows] == [
        ([1.001], "a=b", "a=b", "equation_inline"), ([1.002], "c=d", "c=d", "equation_inline")]
    (tmp_path / "scored").mkdir()
    assert score_one(tmp_path / "scored", [ALIGNED], "We have $a=b$ and also $c=d$ here.")["formula_edit"] == 0.0


def test_two_predicted_formulas_can_be_joined_for_one_row(tmp_path):
    formula = {"category_type": "equation_isolated", "order": 1, "latex": "x+y=z"}
    scores = score_one(tmp_path, [formula], "$$x+y$$\n\ntext between\n\n$$=z$$")
    # The quick matcher merges the two predictions ("x+y =z": 1 edit of 6 while matching) and wins
    # (equal total edit, lower weighted edit); the row's normalised prediction joins them without a
    # space, so the scored edit is 0.
    assert scores["formula_edit"] == 0.0
