"""Aggregation (tore_engine.scorers.omnidocbench.aggregation): the official per-element files of the demo fed
through it give the official metric_result (all, group and page results) and per-page values."""

from __future__ import annotations

import pytest

from tests.scorers.omnidocbench.helpers import TOLERANCE, assert_close, official
from tore_engine.scorers.omnidocbench.aggregation import (
    add_edit,
    add_teds,
    by_element_attribute,
    by_page_attribute,
    edit_summary,
    overall,
    page_labels,
    table_pages,
)

_KEPT = ("gt", "pred", "norm_gt", "norm_pred", "img_id", "gt_attribute")  # what the matcher hands on


def _samples(name: str) -> list[dict]:
    """The official rows as they leave the matcher (the metric fields removed, to be recomputed)."""
    return [{key: row[key] for key in _KEPT if key in row} for row in official(f"{name}_result")]


def _pages(reference) -> dict[str, dict]:
    return {page.id: page.attributes for page in reference.pages}


def _table_pages(reference) -> set[str]:
    return {page.id for page in reference.pages if any(b.category == "table" and not b.ignore for b in page.blocks)}


@pytest.mark.parametrize("name", ["text_block", "display_formula", "table", "reading_order"])
def test_edit_results_and_page_values_equal_the_official(name, reference):
    metrics = official("metric_result")[name]
    samples = _samples(name)
    add_edit(samples)
    result, per_page = edit_summary(samples)
    assert_close(result, metrics["all"]["Edit_dist"])
    assert_close(per_page, official(f"{name}_per_page_edit"))
    for sample, row in zip(samples, official(f"{name}_result")):
        assert (sample["Edit_num"], sample["upper_len"]) == (row["Edit_num"], row["upper_len"])
    if name != "table":
        assert_close(by_element_attribute(samples), metrics["group"])
        assert_close(by_page_attribute(samples, _pages(reference), set(), ["Edit_dist"]), metrics["page"])


def test_table_results_equal_the_official(reference):
    metrics = official("metric_result")["table"]
    samples = _samples("table")
    teds = add_teds(samples)
    add_edit(samples)
    assert_close(teds, {key: metrics["all"][key] for key in ("TEDS", "TEDS_structure_only")})
    assert_close(by_element_attribute(samples), metrics["group"])
    page = by_page_attribute(samples, _pages(reference), _table_pages(reference), ["TEDS", "Edit_dist", "TEDS_structure_only"])
    assert_close(page, metrics["page"])
    pages = table_pages(samples, _table_pages(reference))
    assert len(pages) == 9 and sum(t for t, _ in pages.values()) / 9 == pytest.approx(0.8144908741318889, abs=TOLERANCE)
    assert sum(s for _, s in pages.values()) / 9 == pytest.approx(0.9145518147659233, abs=TOLERANCE)


def test_a_page_with_ground_truth_tables_but_no_scored_table_counts_zero():
    sample = {"gt": "<table></table>", "pred": "", "img_id": "a.jpg", "gt_attribute": [{}],
              "metric": {"TEDS": 0.5}}
    sample["image_name"] = "a.jpg"
    result = by_page_attribute([sample], {"a.jpg": {}, "b.jpg": {"language": "en"}}, {"a.jpg", "b.jpg"}, ["TEDS"])
    # a.jpg: 0.5; b.jpg has tables in the ground truth and no sample: 0 (for ALL and for its own labels).
    assert result == {"TEDS": {"ALL": 0.25, "language: en": 0.0}}


def test_page_labels_leave_out_table_issues():
    assert page_labels({"language": "en", "special_issue": ["fuzzy_scan", "table_horizontal"]}) == [
        "ALL", "language: en", "fuzzy_scan"]


def test_overall_formula_and_its_absence_without_cdm():
    assert overall(0.157, 0.8524, 0.6577) == pytest.approx(78.44, abs=0.005)  # Marker, v1.6 leaderboard
    assert overall(0.157, None, 0.6577) is None
