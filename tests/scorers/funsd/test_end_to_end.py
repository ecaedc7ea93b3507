"""FUNSD end-to-end scoring of a form (tore_engine.scorers.funsd.end_to_end: `score_document`, `FunsdScorer`)
against every case of tests/vectors/funsd_public.json, its null rules, the dense brute force on
random forms, and its worst cases."""

from __future__ import annotations

import time
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.scorers.funsd import dense
from tests.scorers.funsd.helpers import (
    assert_panel_equal,
    case_params,
    cases,
    corpus_params,
    ec_gold,
    entity,
    grid_form,
    gt_document,
    vectors,
)
from tore_engine.core.errors import InputError
from tore_engine.scorers.funsd import (
    FUNSD_CLASSES,
    EcEntities,
    EcFunsdScorer,
    FunsdDocument,
    FunsdScorer,
    score_document,
)
from tore_engine.scorers.funsd.end_to_end import MAX_WORD_CHARS, score_matched
from tore_engine.scorers.funsd.matching import MAX_BOXES


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


# --- the dense brute force, on random forms --------------------------------------------------------

LABELS = st.sampled_from(FUNSD_CLASSES)
TEXTS = st.sampled_from(["a", "ab", "b", "ba", "", " "])  # blank words are dropped (docs/benchmarks.md#valid-words-and-entities)


@st.composite
def grid_boxes(draw) -> list[float]:
    x1, y1 = draw(st.integers(0, 6)), draw(st.integers(0, 6))
    return [float(x1), float(y1), float(x1 + draw(st.integers(0, 3))), float(y1 + draw(st.integers(1, 3)))]


@st.composite
def form_pair(draw) -> tuple[dict, dict]:
    """A reference form on a small grid, and a prediction that keeps, moves, relabels or drops its
    entities and adds its own: ties, partial overlaps and links of every kind are frequent."""
    reference = []
    for entity_id in range(draw(st.integers(0, 7))):
        words = [{"box": draw(grid_boxes()), "text": draw(TEXTS)} for _ in range(draw(st.integers(1, 3)))]
        reference.append({"id": entity_id, "label": draw(LABELS), "box": draw(grid_boxes()), "words": words, "linking": []})
    prediction = []
    for item in reference:
        fate = draw(st.sampled_from(["keep", "move", "relabel", "drop"]))
        if fate != "drop":
            shift = 1.0 if fate == "move" else 0.0
            moved = [{"box": [x1 + shift, y1, x2 + shift, y2], "text": draw(TEXTS)} for x1, y1, x2, y2 in (w["box"] for w in item["words"])]
            label = draw(LABELS) if fate == "relabel" else item["label"]
            prediction.append({**item, "id": item["id"] + 100, "label": label, "words": moved, "linking": []})
    prediction += [{"id": 200 + k, "label": draw(LABELS), "box": draw(grid_boxes()),
                    "words": [{"box": draw(grid_boxes()), "text": draw(TEXTS)}], "linking": []}
                   for k in range(draw(st.integers(0, 3)))]
    for form in (reference, prediction):
        ids = [item["id"] for item in form]
        if len(ids) >= 2:
            for a, b in draw(st.lists(st.tuples(st.sampled_from(ids), st.sampled_from(ids)), max_size=6)):
                form[ids.index(a)]["linking"].append([a, b])
    return {"form": reference}, {"form": prediction}


@settings(max_examples=300, deadline=None)
@given(form_pair())
def test_scores_equal_the_dense_path(forms):
    """Wherever docs/benchmarks.md#funsd-and-ec-funsd fixes the matches (one optimum), every panel and the overlay are exactly
    those of the dense Hungarian path."""
    reference = FunsdDocument.from_json(forms[0], doc_id="d")
    prediction = FunsdDocument.from_json(forms[1], doc_id="d")
    words = dense.iou_matrix(reference.word_boxes(), prediction.word_boxes())
    entities = dense.iou_matrix(reference.entity_boxes(), prediction.entity_boxes())
    got = score_document(reference, prediction)
    if dense.unique_optimum(words) and dense.unique_optimum(entities):
        expected = score_matched(reference, prediction, dense.dense_matching(words), dense.dense_matching(entities))
        assert got.panel() == expected.panel()
        assert got.overlay == expected.overlay


# --- worst cases (issue 20, B15) -----------------------------------------------------------------


def test_many_links_are_scored_in_linear_time():
    # 2,000 entities with 50 links each (100,000 links): the overlay rebuilt the reference's link set
    # for every predicted link, and had no result after 200 s
    document = FunsdDocument.from_json(grid_form(2000, 50), doc_id="d")
    start = time.perf_counter()
    score = score_document(document, document)
    assert time.perf_counter() - start < 60
    assert score.panel()["entity_linking"]["e2e_labeled_undirected"] == {
        "tp": 100_000, "fp": 0, "fn": 0, "precision": 1.0, "recall": 1.0, "f1": 1.0}
    assert sum(link["correct"] for link in score.overlay["pred_links"]) == 100_000


def test_many_entities_are_matched_in_bounded_memory():
    # 8,000 entities: the dense IoU matrices and their temporaries took 3.6 GB
    document = FunsdDocument.from_json(grid_form(8000, 0), doc_id="d")
    tracemalloc.start()
    try:
        score = score_document(document, document)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 200 * 2**20
    assert score.panel()["entity_detection"]["tp"] == 8000 and score.panel()["word_detection"]["tp"] == 8000


def test_a_matched_word_too_long_to_compare_is_an_input_error_naming_the_file():
    long_text = "x" * (MAX_WORD_CHARS + 1)
    reference = FunsdDocument.from_json({"form": [entity(7, "other", (0, 0, 10, 10), texts=(long_text,))]}, doc_id="d", file="r.json")
    prediction = FunsdDocument.from_json({"form": [entity(3, "other", (0, 0, 10, 10))]}, doc_id="d", file="p.json")
    with pytest.raises(InputError, match=r"^file r\.json: entity 7 has a word of 1,001 characters, more than the 1,000"):
        score_document(reference, prediction)
    elsewhere = FunsdDocument.from_json({"form": [entity(3, "other", (50, 50, 60, 60))]}, doc_id="d", file="p.json")
    assert score_document(reference, elsewhere).panel()["ocr"]["n_matched"] == 0  # an unmatched long word costs nothing


def test_too_many_words_name_their_file():
    many = FunsdDocument.from_json({"form": [entity(0, "other", (0, 0, 1, 1), texts=("w",) * (MAX_BOXES + 1))]}, doc_id="d", file="p.json")
    one = FunsdDocument.from_json({"form": [entity(0, "other", (0, 0, 1, 1))]}, doc_id="d", file="r.json")
    with pytest.raises(InputError, match=r"^file p\.json: the prediction has 20,001 words on this form, more than the 20,000"):
        score_document(one, many)
