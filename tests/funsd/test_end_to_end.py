"""FUNSD end-to-end scoring of a form (tore_engine.funsd.end_to_end: `score_document`, `FunsdScorer`)
against every case of ../shared/vectors/funsd_public.json, and its null rules."""

from __future__ import annotations

import pytest
from tests.funsd.helpers import (
    assert_panel_equal, case_params, cases, corpus_params, ec_gold, entity, gt_document, vectors,
)

from tore_engine.funsd import EcEntities, EcFunsdScorer, FunsdDocument, FunsdScorer, score_document


@pytest.mark.parametrize("index", case_params("funsd_cases"))
def test_funsd_case(index):
    case = vectors()["funsd_cases"][index]
    prediction = FunsdDocument.from_json(case["pred"], doc_id=case["doc"])
    assert_panel_equal(score_document(gt_document(case["doc"]), prediction).panel(), case["expected"])


@pytest.mark.parametrize("perturbation", corpus_params("funsd"))
def test_funsd_corpus(perturbation):
    scorer = FunsdScorer()
    for case in reversed(cases("funsd_cases", perturbation=perturbation)):  # order must not matter
        scorer.update(gt_document(case["doc"]), FunsdDocument.from_json(case["pred"], doc_id=case["doc"]))
    assert_panel_equal(scorer.compute(), vectors()["corpus_public"]["funsd"][perturbation])


def test_scorers_merge_like_one_pass():
    funsd_halves, ec_halves = (FunsdScorer(), FunsdScorer()), (EcFunsdScorer(), EcFunsdScorer())
    for k, case in enumerate(cases("funsd_cases", perturbation="merge_split")):
        funsd_halves[k % 2].update(gt_document(case["doc"]), FunsdDocument.from_json(case["pred"], doc_id=case["doc"]))
    for k, case in enumerate(cases("ec_cases", perturbation="drop_and_add")):
        ec_halves[k % 2].update(ec_gold(case["doc"]), EcEntities.from_json(case["pred"]))
    assert_panel_equal(funsd_halves[1].merge(funsd_halves[0]).compute(), vectors()["corpus_public"]["funsd"]["merge_split"])
    assert_panel_equal(ec_halves[1].merge(ec_halves[0]).compute(), vectors()["corpus_public"]["ec"]["drop_and_add"])


def test_undefined_values_are_null():
    reference = FunsdDocument.from_json({"form": [
        entity(0, "question", (0, 0, 10, 10), linking=[(0, 1)]), entity(1, "answer", (20, 0, 30, 10), linking=[(0, 1)]),
    ]}, doc_id="d")
    panel = score_document(reference, FunsdDocument.empty("d")).panel()
    assert panel["ocr"]["mean_similarity_matched"] is None and panel["ocr"]["mean_similarity_over_gt"] == 0.0
    assert panel["word_grouping"]["ari_matched_only"] is None
    assert panel["entity_labeling"]["matched_label_accuracy"] is None
    assert panel["entity_linking"]["conditional_labeled_undirected"] is None
    nothing = score_document(FunsdDocument.empty("e"), FunsdDocument.empty("e")).panel()
    assert nothing["word_grouping"]["ari"] is None and nothing["ser_seqeval"]["token_accuracy"] is None
    assert nothing["entity_labeling"]["micro"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    assert nothing["ser_seqeval"]["overall"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    assert nothing["entity_linking"]["conditional_labeled_undirected"]["f1"] == 1.0
