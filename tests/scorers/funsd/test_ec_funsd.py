"""EC-FUNSD scoring (tore_engine.scorers.funsd.ec_funsd: `score_ec_document`, `EcFunsdScorer`) against the vectors."""

from __future__ import annotations

import pytest

from tests.scorers.funsd.helpers import (
    assert_panel_equal,
    case_params,
    cases,
    corpus_params,
    ec_gold,
    vectors,
)
from tore_engine.scorers.funsd import EcEntities, EcFunsdScorer, score_ec_document


@pytest.mark.parametrize("index", case_params("ec_cases"))
def test_ec_case(index):
    case = vectors()["ec_cases"][index]
    assert_panel_equal(score_ec_document(ec_gold(case["doc"]), EcEntities.from_json(case["pred"])).panel(), case["expected"])


@pytest.mark.parametrize("perturbation", corpus_params("ec"))
def test_ec_corpus(perturbation):
    scorer = EcFunsdScorer()
    for case in cases("ec_cases", perturbation=perturbation):
        scorer.update(ec_gold(case["doc"]), EcEntities.from_json(case["pred"]))
    assert_panel_equal(scorer.compute(), vectors()["corpus_public"]["ec"][perturbation])
