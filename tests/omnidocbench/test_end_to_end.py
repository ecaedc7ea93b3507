"""End-to-end scores (tore_engine.omnidocbench.end_to_end) on this project's matcher: the ground truth
as Markdown scores perfectly, the demo predictions are scored, missing pages are empty."""

from __future__ import annotations

import pytest
from tests.helpers import shared_path
from tests.omnidocbench.helpers import DEMO

from tore_engine.errors import InputError
from tore_engine.omnidocbench.end_to_end import score_end_to_end
from tore_engine.omnidocbench.markdown import load_markdown_predictions
from tore_engine.omnidocbench.matching import ground_truth_elements


def _markdown_from_ground_truth(reference, folder):
    """Each page's GT elements in reading order: text as paragraphs, formulas as $$, tables as HTML."""
    folder.mkdir()
    for page in reference.pages:
        parts = []
        for element in sorted(ground_truth_elements(page), key=lambda e: (e.order is None, e.order or 0)):
            if element.kind == "table":
                parts.append(element.content)
            elif element.kind == "formula":
                parts.append(f"$$\n{element.content}\n$$")
            else:
                parts.append(element.content.replace("\n\n", "\n"))
        (folder / f"{page.stem}.md").write_text("\n\n".join(parts), encoding="utf-8")


def test_ground_truth_rendered_as_markdown_scores_perfectly(reference, tmp_path):
    _markdown_from_ground_truth(reference, tmp_path / "md")
    scores = score_end_to_end(reference, load_markdown_predictions(tmp_path / "md", reference))
    assert scores["text_edit"] == 0.0
    assert scores["table_teds"] == 1.0 and scores["table_teds_s"] == 1.0
    assert scores["reading_order_edit"] == 0.0
    assert scores["overall"] is None
    assert scores["page_counts"]["text_edit"] == 18 and scores["page_counts"]["table_teds"] == 9


def test_demo_predictions_are_scored_and_missing_pages_are_empty(reference, tmp_path):
    folder = shared_path(*DEMO, "pred_end2end_markdown")
    scores = score_end_to_end(reference, load_markdown_predictions(folder, reference))
    assert scores["page_counts"] == {"text_edit": 18, "formula_edit": 2, "table_teds": 9, "table_teds_s": 9,
                                     "table_edit": 9, "reading_order_edit": 18}
    for metric, count in scores["page_counts"].items():  # each score is the mean of its pages' scores
        values = [row[metric] for row in scores["per_page"] if row[metric] is not None]
        assert len(values) == count and scores[metric] == pytest.approx(sum(values) / count, abs=1e-12), metric
    assert 0 < scores["text_edit"] < 1 and 0 < scores["table_teds"] < 1
    partial = tmp_path / "partial"
    partial.mkdir()
    empty = score_end_to_end(reference, load_markdown_predictions(partial, reference))
    assert empty["text_edit"] == 1.0 and empty["table_teds"] == 0.0 and len(empty["missing_pages"]) == 18
    with pytest.raises(InputError, match="not a folder"):
        load_markdown_predictions(tmp_path / "absent", reference)
