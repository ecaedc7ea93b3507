"""This project's end-to-end matcher (tore_engine.omnidocbench.matching) on merged and split paragraphs."""

from __future__ import annotations

from tore_engine.omnidocbench.markdown import parse_markdown


def test_matcher_splits_merged_paragraphs_and_merges_split_ones():
    from tore_engine.omnidocbench.matching import GroundTruthElement, match_page

    gt = [GroundTruthElement("text", "title", "Human Factors", 1, {}),
          GroundTruthElement("text", "text_block", "the process molds to the people", 2, {}),
          GroundTruthElement("text", "text_block", "first half of a paragraph second half of it", 3, {}),
          GroundTruthElement("text", "text_block", "nothing like this was predicted at all", 4, {})]
    markdown = ("- **Human Factors**\n  - the process molds to the people\n\n"
                "first half of a paragraph\n\nsecond half of it")
    matches = match_page(gt, parse_markdown(markdown))
    assert [m.prediction.content if m.prediction else None for m in matches] == [
        "- **Human Factors**", "  - the process molds to the people",
        "first half of a paragraph\n\nsecond half of it", None]
    assert [m.prediction.position for m in matches[:3]] == [(0, 0), (0, 1), (1, 0)]
