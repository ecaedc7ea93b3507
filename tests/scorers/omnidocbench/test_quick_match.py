"""The official page matcher (tore_engine.scorers.omnidocbench.quick_match), issue 23 cause 1: its last pass
pairs the leftovers with no cost limit, and a predicted paragraph holding two ground-truth blocks
is not split (the blocks are joined instead). Expected values derived by hand from the matcher's
steps (module docstring) and checked against the official evaluator on the same pages."""

from __future__ import annotations

from tests.scorers.omnidocbench.helpers import score_one

A = {"category_type": "text_block", "order": 1, "text": "alpha beta gamma"}  # normalised: 14 characters


def test_leftovers_are_paired_whatever_their_distance(tmp_path):
    # B (10 characters) against "abxyzuvwqr": 8 edits, 0.8 > 0.7, so the Hungarian pair is undone;
    # no substring match; the last pass pairs the two leftovers: B scores 8 edits, not 10 (unmatched).
    b = {"category_type": "text_block", "order": 2, "text": "abcdefghij"}
    scores = score_one(tmp_path, [A, b], "alpha beta gamma\n\nabxyzuvwqr")
    assert scores["text_edit"] == (0 + 8) / (14 + 10)
    assert scores["reading_order_edit"] == 0.0


def test_a_paragraph_holding_two_blocks_is_matched_to_both_joined(tmp_path):
    # "deltaepsilonzeta" is the nearer block (14 edits of 30): the Hungarian pair; the other block
    # is found inside the paragraph (substring distance 0) and joined to it: 0 edits in all.
    b = {"category_type": "text_block", "order": 2, "text": "delta epsilon zeta"}
    scores = score_one(tmp_path, [A, b], "alpha beta gamma delta epsilon zeta")
    assert scores["text_edit"] == 0.0
    assert scores["per_page"][0]["matched_elements"] == 1  # one row for both blocks
    assert scores["reading_order_edit"] == 0.0


def test_captions_and_headers_are_matched_but_not_scored(tmp_path):
    header = {"category_type": "header", "order": 2, "text": "Journal of Things"}
    scores = score_one(tmp_path, [A, header], "Journal of Things\n\nalpha beta gamma")
    assert scores["text_edit"] == 0.0 and scores["page_counts"]["text_edit"] == 1
