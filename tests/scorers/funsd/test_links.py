"""Entity linking given the gold entities (tore_engine.scorers.funsd.links) against the vectors."""

from __future__ import annotations

import functools
import operator

import pytest

from tests.scorers.funsd.helpers import (
    assert_panel_equal,
    case_params,
    cases,
    corpus_params,
    gt_document,
    vectors,
)
from tore_engine.scorers.funsd import links_given_gt_entities


@pytest.mark.parametrize("index", case_params("link_cases"))
def test_links_given_gt_entities_case(index):
    case = vectors()["link_cases"][index]
    assert_panel_equal(links_given_gt_entities(gt_document(case["doc"]), case["pred_links"]).panel(), case["expected"])


@pytest.mark.parametrize("variant", corpus_params("links"))
def test_links_given_gt_entities_corpus(variant):
    counts = [links_given_gt_entities(gt_document(c["doc"]), c["pred_links"]) for c in cases("link_cases", variant=variant)]
    total = functools.reduce(operator.add, counts)
    assert_panel_equal(total.panel(with_counts=False), vectors()["corpus_public"]["links"][variant])
