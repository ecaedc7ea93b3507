"""Aggregation (tore_engine.omnidocbench.aggregation), exactly the official page tables and means."""

from __future__ import annotations

import numpy as np
import pytest
from tests.omnidocbench.helpers import TOLERANCE, official

from tore_engine.omnidocbench.aggregation import (
    breakdown_by_attribute,
    character_weighted_page_edit,
    mean_over_pages,
    overall,
    page_mean,
)
from tore_engine.omnidocbench.categories import PAGE_ATTRIBUTES


def test_aggregates_from_the_official_per_element_files():
    text = character_weighted_page_edit((r["image_name"], r["Edit_num"], r["upper_len"]) for r in official("text_block_result"))
    assert text == official("text_block_per_page_edit")
    assert len(text) == 18 and mean_over_pages(text) == pytest.approx(0.3356214754013134, abs=TOLERANCE)
    tables = official("table_result")
    table_teds = page_mean((r["image_name"], r["metric"]["TEDS"]) for r in tables)
    assert len(table_teds) == 9 and mean_over_pages(table_teds) == pytest.approx(0.8144908741318889, abs=TOLERANCE)
    assert np.mean([r["metric"]["TEDS"] for r in tables]) == pytest.approx(0.7967474695389661, abs=TOLERANCE)
    teds_s = page_mean((r["image_name"], r["metric"]["TEDS_structure_only"]) for r in tables)
    assert mean_over_pages(teds_s) == pytest.approx(0.9145518147659233, abs=TOLERANCE)
    table_edit = character_weighted_page_edit((r["image_name"], r["Edit_num"], r["upper_len"]) for r in tables)
    assert mean_over_pages(table_edit) == pytest.approx(0.1905124455615901, abs=TOLERANCE)
    formula = character_weighted_page_edit(
        (r["image_name"], r["Edit_num"], r["upper_len"]) for r in official("display_formula_result"))
    assert len(formula) == 2 and mean_over_pages(formula) == pytest.approx(0.23663476303352862, abs=TOLERANCE)
    order = {r["image_name"]: r["edit"] for r in official("reading_order_result")}
    assert order == official("reading_order_per_page_edit")
    assert mean_over_pages(order) == pytest.approx(0.22430037417144588, abs=TOLERANCE)


def test_page_attribute_breakdowns_equal_the_official_page_tables(reference):
    attributes = {page.id: page.attributes for page in reference.pages}
    metrics = official("metric_result")
    per_page = {
        ("text_block", "Edit_dist"): official("text_block_per_page_edit"),
        ("reading_order", "Edit_dist"): official("reading_order_per_page_edit"),
        ("table", "TEDS"): page_mean((r["image_name"], r["metric"]["TEDS"]) for r in official("table_result")),
    }
    for (group, metric), values in per_page.items():
        ours = breakdown_by_attribute(values, attributes, PAGE_ATTRIBUTES)
        flat = {"ALL": mean_over_pages(values)}
        for attribute, groups in ours.items():
            for value, mean in groups.items():
                flat[value if attribute == "special_issue" else f"{attribute}: {value}"] = mean
        assert flat == pytest.approx(metrics[group]["page"][metric], abs=TOLERANCE)


def test_overall_formula_and_its_absence_without_cdm():
    assert overall(0.157, 0.8524, 0.6577) == pytest.approx(78.44, abs=0.005)  # Marker, v1.6 leaderboard
    assert overall(0.157, None, 0.6577) is None
