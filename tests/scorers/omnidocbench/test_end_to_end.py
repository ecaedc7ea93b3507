"""End-to-end scores (tore_engine.scorers.omnidocbench.end_to_end) on the demo, page by page and element by
element against the official v1.6 evaluator's shipped results (reference_results/
v1.6_official_rerun_noCDM, upstream commit 9dc1decf, configs/end2end.yaml without CDM), and what a
missing page and a missing folder give."""

from __future__ import annotations

import pytest

from tests.helpers import shared_path
from tests.scorers.omnidocbench.helpers import DEMO, assert_close, official
from tore_engine.core.errors import InputError
from tore_engine.scorers.omnidocbench.end_to_end import score_end_to_end, score_matches
from tore_engine.scorers.omnidocbench.markdown import load_markdown_predictions
from tore_engine.scorers.omnidocbench.page_match import match_page

CDM_ONLY = ("gt_cdm", "pred_cdm", "pred_cdm_alt")  # surrogates for CDM, which is not computed
ELEMENTS = {"text_block": "text", "display_formula": "formula", "table": "table"}


@pytest.fixture(scope="module")
def demo(reference):
    predictions = load_markdown_predictions(shared_path(*DEMO, "pred_end2end_markdown"), reference)
    matches = [match_page(page, text) for page, text in zip(reference.pages, predictions.texts)]
    return matches, score_matches(matches, reference), score_end_to_end(reference, predictions)


@pytest.mark.parametrize("element", list(ELEMENTS))
def test_every_element_row_equals_the_official(demo, element):
    matches, _, _ = demo
    ours = [row for match in matches for row in getattr(match, ELEMENTS[element])]
    theirs = official(f"{element}_result")
    assert len(ours) == len(theirs)
    for mine, row in zip(ours, theirs):
        assert_close({key: mine[key] for key in row if key not in CDM_ONLY}, {k: v for k, v in row.items() if k not in CDM_ONLY})


def test_every_reading_order_equals_the_official(demo):
    matches, _, _ = demo
    ours = [match.reading_order for match in matches if match.reading_order]
    assert_close([{key: row[key] for key in ("gt", "pred", "img_id", "Edit_num", "upper_len")} for row in ours],
                 [{key: row[key] for key in ("gt", "pred", "img_id", "Edit_num", "upper_len")} for row in official("reading_order_result")])


def test_the_metric_result_and_every_page_equal_the_official(demo):
    _, scored, end_to_end = demo
    metrics = official("metric_result")
    for element in (*ELEMENTS, "reading_order"):
        assert_close(scored["official"][element], {key: metrics[element][key] for key in ("all", "group", "page")})
    pages = {row["page"]: row for row in end_to_end["per_page"]}
    for element, key in (("text_block", "text_edit"), ("display_formula", "formula_edit"), ("table", "table_edit"),
                         ("reading_order", "reading_order_edit")):
        assert_close({page: row[key] for page, row in pages.items() if row[key] is not None}, official(f"{element}_per_page_edit"))
    per_table = official("table_per_table_TEDS")
    assert len(per_table) == 10 and end_to_end["page_counts"]["table_teds"] == 9


def test_headline_numbers_are_the_leaderboards(demo):
    _, _, end_to_end = demo
    expected = {"text_edit": 0.3356214754013134, "formula_edit": 0.23663476303352862, "table_teds": 0.8144908741318889,
                "table_teds_s": 0.9145518147659233, "table_edit": 0.1905124455615901,
                "reading_order_edit": 0.22430037417144588, "table_teds_all": 0.7967474695389661}
    assert_close({key: end_to_end[key] for key in expected}, expected)
    assert end_to_end["leaderboard_comparable"] is True and end_to_end["overall"] is None
    # The first-table quirk corrected (issue 23: 0.176): 9 of the 10 tables come back into the predicted order.
    assert end_to_end["reading_order_edit_corrected"] == pytest.approx(0.1761776635487353, abs=1e-12)


def test_missing_pages_are_empty_predictions_and_a_missing_folder_is_an_error(reference, tmp_path):
    empty = score_end_to_end(reference, load_markdown_predictions(tmp_path, reference))
    assert empty["text_edit"] == 1.0 and empty["table_teds"] == 0.0 and empty["formula_edit"] == 1.0
    assert len(empty["missing_pages"]) == 18 and empty["reading_order_edit"] == 1.0
    with pytest.raises(InputError, match="not a folder"):
        load_markdown_predictions(tmp_path / "absent", reference)
