"""FUNSD and EC-FUNSD scoring against ../shared/vectors/funsd_public.json (every case, every number
at abs 1e-9, nulls kept) and the real sample forms in ../shared/data/funsd."""

from __future__ import annotations

import functools
import hashlib
import json
import math
import operator
from pathlib import Path

import pytest
from tests.helpers import SHARED, load_shared_json, shared_path, write_json

from tore_engine.errors import InputError
from tore_engine.funsd import (
    FUNSD_CLASSES, EcDocument, EcEntities, EcFunsdScorer, FunsdDocument, FunsdScorer, funsd_layout_sets,
    links_given_gt_entities, score_document, score_ec_document, score_ec_funsd, score_funsd,
)
from tore_engine.funsd.matching import greedy_icdar_matches, iou_matrix, optimal_matches

VECTORS = ("vectors", "funsd_public.json")
FUNSD_DATA = ("data", "funsd", "funsd", "testing_data")
EC_DATA = ("data", "funsd", "ec_funsd", "jsons")


def assert_panel_equal(got, expected, path="panel"):
    """Same keys, integers and strings equal, floats within 1e-9, null stays null."""
    if isinstance(expected, dict):
        assert isinstance(got, dict) and set(got) == set(expected), f"{path}: keys {sorted(got)} != {sorted(expected)}"
        for key in expected:
            assert_panel_equal(got[key], expected[key], f"{path}.{key}")
    elif expected is None or isinstance(expected, (bool, str, list)):
        assert got == expected, f"{path}: {got!r} != {expected!r}"
    elif isinstance(expected, int):  # counts exactly (sum_similarity of nothing is 0 there, 0.0 here)
        assert got == expected and not isinstance(got, bool), f"{path}: {got!r} != {expected!r}"
    else:
        assert got is not None and abs(got - expected) <= 1e-9, f"{path}: {got!r} != {expected!r}"


@functools.cache
def _vectors_or_none():
    path = SHARED.joinpath(*VECTORS)
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def vectors() -> dict:
    load_shared_json(*VECTORS)  # skips with the reason when ../shared is absent
    return _vectors_or_none()


def case_params(section: str) -> list:
    """One parameter per vector case; a single skipping parameter when the vectors are absent."""
    data = _vectors_or_none()
    if data is None:
        return [pytest.param(None, id=f"{section}-absent")]
    return [pytest.param(index, id=case["id"]) for index, case in enumerate(data[section])]


def corpus_params(section: str) -> list:
    data = _vectors_or_none()
    if data is None:
        return [pytest.param(None, id=f"{section}-absent")]
    return list(data["corpus_public"][section])


def gt_document(doc_id: str) -> FunsdDocument:
    return FunsdDocument.from_json(vectors()["documents"][doc_id]["gt"], doc_id=doc_id)


def ec_gold(doc_id: str) -> EcDocument:
    return EcDocument.from_json(vectors()["documents"][doc_id]["ec_gt"], doc_id=doc_id)


def cases(section: str, **where) -> list[dict]:
    return [case for case in vectors()[section] if all(case[key] == value for key, value in where.items())]


# --- conformance vectors through the Python API ---------------------------------------------------


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


@pytest.mark.parametrize("index", case_params("link_cases"))
def test_links_given_gt_entities_case(index):
    case = vectors()["link_cases"][index]
    assert_panel_equal(links_given_gt_entities(gt_document(case["doc"]), case["pred_links"]).panel(), case["expected"])


@pytest.mark.parametrize("variant", corpus_params("links"))
def test_links_given_gt_entities_corpus(variant):
    counts = [links_given_gt_entities(gt_document(c["doc"]), c["pred_links"]) for c in cases("link_cases", variant=variant)]
    total = functools.reduce(operator.add, counts)
    assert_panel_equal(total.panel(with_counts=False), vectors()["corpus_public"]["links"][variant])


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


# --- the real sample forms ------------------------------------------------------------------------


def test_real_files_are_the_vectors_documents():
    """Loading from disk gives the same documents as the vectors' embedded copies (checked by hash too)."""
    for doc_id, document in vectors()["documents"].items():
        annotation = shared_path(document["annotation"])
        assert hashlib.sha256(annotation.read_bytes()).hexdigest() == document["annotation_sha256"]
        assert FunsdDocument.load(annotation) == FunsdDocument.from_json(document["gt"], doc_id=doc_id, file=str(annotation))
        ec_path = shared_path(document["ec_annotation"])
        assert EcDocument.from_json(json.loads(ec_path.read_text()), doc_id=doc_id) == ec_gold(doc_id)


def test_real_forms_scored_from_disk_match_the_vectors(tmp_path):
    """The combined perturbation, with the references read from the real annotation folder."""
    annotations = shared_path(*FUNSD_DATA, "annotations")
    reference = tmp_path / "ref"
    reference.mkdir()
    for case in cases("funsd_cases", perturbation="combined"):
        (reference / f"{case['doc']}.json").write_bytes((annotations / f"{case['doc']}.json").read_bytes())
        write_json(tmp_path / f"{case['doc']}.pred.json", case["pred"])
    prediction = tmp_path / "pred"
    prediction.mkdir()
    for case in cases("funsd_cases", perturbation="combined"):
        write_json(prediction / f"{case['doc']}.json", case["pred"])
    report = score_funsd(reference, prediction)
    assert_panel_equal(report.corpus, vectors()["corpus_public"]["funsd"]["combined"])
    for case in cases("funsd_cases", perturbation="combined"):
        assert_panel_equal(report.documents[case["doc"]], case["expected"])


def _valid_counts(annotation: Path) -> tuple[int, int]:
    """Valid words and entities counted straight from the JSON (funsd.md 2.2)."""
    form = json.loads(annotation.read_text())["form"]
    words = [sum(1 for w in entity["words"] if w["text"].strip()) for entity in form]
    return sum(words), sum(1 for n in words if n)


def test_all_ten_real_forms_against_themselves():
    annotations = shared_path(*FUNSD_DATA, "annotations")
    report = score_funsd(annotations, annotations)
    assert len(report.documents) == 10 and not report.missing_predictions and not report.unused_predictions
    assert all(item["value"] == 1.0 for item in report.headline())
    words, entities = map(sum, zip(*(_valid_counts(path) for path in sorted(annotations.glob("*.json")))))
    assert report.corpus["counts"]["gt_words"] == report.corpus["counts"]["pred_words"] == words
    assert report.corpus["counts"]["gt_entities"] == entities
    assert report.corpus["entity_labeling"]["classes_in_macro"] == list(FUNSD_CLASSES)
    panel = report.panel()
    assert [item["key"] for item in panel["headline"]][:3] == ["word_f1", "word_f1_icdar", "entity_f1"]
    assert set(panel["per_class"]) == {"entity_labeling", "ser_seqeval"}
    first = panel["documents"][0]
    assert first["doc"] == "82092117" and first["image"].endswith("82092117.png") and not first["prediction_missing"]
    assert set(first["row"]) == {item["key"] for item in panel["headline"]}
    overlay = first["overlay"]
    assert len(overlay["gt_entities"]) == len(overlay["pred_entities"]) == first["panel"]["counts"]["gt_entities"]
    assert all(e["matched_pred_id"] == e["id"] and e["iou"] == 1.0 for e in overlay["gt_entities"])
    assert len(overlay["gt_links"]) == first["panel"]["counts"]["gt_links_directed"]
    assert all(link["found"] for link in overlay["gt_links"]) and all(link["correct"] for link in overlay["pred_links"])
    form = json.loads((annotations / "82092117.json").read_text())["form"]
    blank_words = sum(1 for e in form for w in e["words"] if not w["text"].strip())
    blank_entities = sum(1 for e in form if not any(w["text"].strip() for w in e["words"]))
    assert (blank_words, blank_entities) == (4, 1)
    assert overlay["dropped"] == {"gt_blank_words": 4, "gt_blank_entities": 1, "pred_blank_words": 4, "pred_blank_entities": 1}


def test_real_ec_forms_against_themselves():
    jsons = shared_path(*EC_DATA)
    report = score_ec_funsd(jsons, jsons)
    assert len(report.documents) == 10
    assert all(item["value"] == 1.0 for item in report.headline())
    # 85540866 has no gold link: linking is 1.0 there by the "nothing on either side" rule
    assert report.documents["85540866"]["el_e2e_directed"] == {"tp": 0, "fp": 0, "fn": 0, "precision": 1.0, "recall": 1.0, "f1": 1.0}


def test_empty_prediction_folder_scores_zero_and_names_the_files(tmp_path):
    annotations = shared_path(*FUNSD_DATA, "annotations")
    report = score_funsd(annotations, tmp_path)
    assert len(report.missing_predictions) == 10
    assert report.corpus["word_detection"]["recall"] == 0.0
    assert report.corpus["entity_linking"]["conditional_labeled_undirected"] is None
    json.dumps(report.panel(), allow_nan=False)  # plain JSON for the panel


# --- TORE layout sets -----------------------------------------------------------------------------


def test_funsd_layout_sets_from_the_real_folder(tmp_path):
    annotations = shared_path(*FUNSD_DATA, "annotations")
    prediction = tmp_path / "pred"
    prediction.mkdir()
    for case in cases("funsd_cases", perturbation="relabel"):
        write_json(prediction / f"{case['doc']}.json", case["pred"])
    write_json(prediction / "not_a_reference.json", {"form": []})
    reference_set, prediction_set = funsd_layout_sets(annotations, prediction)
    assert reference_set.taxonomy == prediction_set.taxonomy == ["header", "question", "answer", "other"]
    assert [page.id for page in reference_set.pages] == sorted(path.stem for path in annotations.glob("*.json"))
    assert [page.id for page in prediction_set.pages] == sorted(vectors()["documents"])
    for page in reference_set.pages + prediction_set.pages:
        assert page.image.path.name == f"{page.id}.png"
        assert (page.width, page.height) == _png_header_size(page.image.path)
    for doc_id, document in vectors()["documents"].items():
        page = next(p for p in prediction_set.pages if p.id == doc_id)
        assert [page.width, page.height] == document["image_size_wh"]
    for doc_id in vectors()["documents"]:
        form = vectors()["documents"][doc_id]["gt"]["form"]
        page = next(p for p in reference_set.pages if p.id == doc_id)
        valid = [e for e in form if any(w["text"].strip() for w in e["words"])]
        assert page.labels == [e["label"] for e in valid]
        assert page.bboxes.tolist() == [[float(v) for v in e["box"]] for e in valid]
    assert [(w.page, w.side) for w in prediction_set.warnings] == [("not_a_reference", "prediction")]


def _png_header_size(path: Path) -> tuple[int, int]:
    """Width and height straight from the PNG IHDR chunk, without Pillow."""
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n" and header[12:16] == b"IHDR"
    return int.from_bytes(header[16:20], "big"), int.from_bytes(header[20:24], "big")


def test_funsd_layout_sets_need_the_page_image(tmp_path):
    reference, prediction = tmp_path / "ref", tmp_path / "pred"
    reference.mkdir(), prediction.mkdir()
    write_json(reference / "form.json", {"form": []})
    with pytest.raises(InputError, match="no PNG image form.png"):
        funsd_layout_sets(reference, prediction)


def test_funsd_layout_sets_read_the_size_from_a_png_beside_the_json(tmp_path):
    from PIL import Image

    reference, prediction = tmp_path / "ref", tmp_path / "pred"
    reference.mkdir(), prediction.mkdir()
    Image.new("L", (30, 20)).save(reference / "form.png")
    write_json(reference / "form.json", {"form": [
        {"id": 0, "label": "header", "box": [1, 2, 3, 4], "words": [{"box": [1, 2, 3, 4], "text": "A"}], "linking": []},
        {"id": 1, "label": "other", "box": [5, 5, 9, 9], "words": [{"box": [5, 5, 9, 9], "text": " "}], "linking": []},
    ]})
    reference_set, prediction_set = funsd_layout_sets(reference, prediction)
    page = reference_set.pages[0]
    assert (page.width, page.height, page.labels, page.bboxes.tolist()) == (30, 20, ["header"], [[1, 2, 3, 4]])
    assert prediction_set.pages == []


# --- rules checked on hand-made inputs ------------------------------------------------------------


def entity(entity_id, label, box, texts=("w",), linking=()):
    return {"id": entity_id, "label": label, "box": list(box), "text": " ".join(texts),
            "words": [{"box": list(box), "text": t} for t in texts], "linking": [list(l) for l in linking]}


def test_optimal_and_greedy_matching_differ_as_the_spec_says():
    # GT 0 overlaps both predictions; greedy takes pred 0 for GT 0 and leaves GT 1 unmatched.
    gt = iou_matrix(FunsdDocument.from_json({"form": [entity(0, "other", (0, 0, 10, 10)), entity(1, "other", (4, 0, 14, 10))]}, doc_id="g").entity_boxes(),
                    FunsdDocument.from_json({"form": [entity(0, "other", (3, 0, 13, 10)), entity(1, "other", (0, 0, 10, 10))]}, doc_id="p").entity_boxes())
    assert gt[0, 0] == pytest.approx(7 / 13) and gt[1, 0] == pytest.approx(9 / 11)
    assert optimal_matches(gt) == [(0, 1), (1, 0)]
    assert greedy_icdar_matches(gt) == [(0, 0)]


def test_iou_of_exactly_one_half_is_a_match_only_for_the_optimal_rule():
    import numpy as np

    iou = iou_matrix(np.array([[0.0, 0, 10, 10]]), np.array([[0.0, 0, 10, 5]]))
    assert iou[0, 0] == 0.5
    assert optimal_matches(iou) == [(0, 0)] and greedy_icdar_matches(iou) == []
    assert iou_matrix(np.array([[0.0, 0, 10, 10]]), np.array([[10.0, 0, 20, 10]]))[0, 0] == 0.0  # touching


def test_blank_words_and_entities_are_dropped_with_their_links():
    document = FunsdDocument.from_json({"form": [
        entity(0, "question", (0, 0, 10, 10), ("Name:", ""), linking=[(0, 1), (0, 2)]),
        entity(1, "answer", (20, 0, 30, 10), ("  ",), linking=[(0, 1)]),
        entity(2, "answer", (40, 0, 50, 10), ("Bob",), linking=[(0, 2), (2, 2), (2, 99)]),
    ]}, doc_id="d")
    assert [e.id for e in document.entities] == [0, 2] and [w.text for w in document.words] == ["Name:", "Bob"]
    assert document.links == {(0, 2)} and (document.dropped_words, document.dropped_entities) == (2, 1)


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


@pytest.mark.parametrize("data, message", [
    ([], r"expected object, got array"),
    ({"form": [entity(0, "key", (0, 0, 1, 1))]}, r"Invalid enum value 'key' \(at form\[0\]\.label\)"),
    ({"form": [entity(3, "other", (0, 0, 1, 1)), entity(3, "other", (0, 0, 1, 1))]}, r"duplicate entity ids \[3\]"),
    ({"form": [entity(0, "other", (5, 0, 1, 1))]}, r"x2 < x1 or y2 < y1 \(at form\[0\]\.box\)"),
    ({"form": [entity(0, "other", (0, 0, 1, math.nan))]}, r"not a finite number \(at form\[0\]\.box\)"),
    ({"form": [{**entity(0, "other", (0, 0, 1, 1)), "box": [0, 0, 1]}]}, r"got 3 values \(at form\[0\]\.box\)"),
    ({"form": [{**entity(0, "other", (0, 0, 1, 1)), "words": [{"box": [0, 0, 1, 1]}]}]},
     r"missing key 'text' \(at form\[0\]\.words\[0\]\)"),
    ({"form": [{**entity(0, "other", (0, 0, 1, 1)), "linking": [[0]]}]}, r"got 1 values \(at form\[0\]\.linking\[0\]\)"),
    ({"form": [{**entity(0, "other", (0, 0, 1, 1)), "lable": "other"}]}, r"unknown key 'lable' \(at form\[0\]\)"),
    ({"form": [], "version": 2}, r"unknown key 'version'"),
])
def test_malformed_funsd_files_are_input_errors(data, message):
    with pytest.raises(InputError, match=message) as error:
        FunsdDocument.from_json(data, doc_id="d", file="d.json")
    assert error.value.file == "d.json"


def test_unreadable_json_is_an_input_error(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text("{", encoding="utf-8")
    with pytest.raises(InputError, match="not valid JSON"):
        FunsdDocument.load(path)


EC_GOLD = {
    "document": [{"id": 0, "words": [{"id": 0}, {"id": 1}, {"id": 2}]}, {"id": 1, "words": [{"id": 3}]}],
    "label_entities": [{"entity_id": 0, "label": "question", "word_idx": [0, 1]},
                       {"entity_id": 1, "label": "answer", "word_idx": [3]}],
    "label_linkings": [[0, 1]],
}


@pytest.mark.parametrize("prediction, message", [
    ({"label_entities": [{"entity_id": 0, "label": "question", "word_idx": [7]}]}, r"word ids \[7\]"),
    ({"label_entities": [{"entity_id": 0, "label": "question", "word_idx": [0, 2]}]}, "consecutive"),
    ({"label_entities": [{"entity_id": 0, "label": "question", "word_idx": [0, 1]},
                         {"entity_id": 1, "label": "answer", "word_idx": [1]}]}, "shares words"),
    ({"label_entities": [{"entity_id": 0, "label": "other", "word_idx": [0]}]}, r"Invalid enum value 'other' \(at label_entities\[0\]\.label\)"),
    ({"label_entities": [{"entity_id": 0, "label": "answer", "word_idx": []}]}, r"label_entities\[0\]\.word_idx"),
    ({"label_entities": [], "label_linking": []}, r"unknown key 'label_linking'"),
    ({"label_entities": [], "label_linkings": [[0, 1]]}, "not in \"label_entities\""),
])
def test_malformed_ec_predictions_are_input_errors(prediction, message):
    gold = EcDocument.from_json(EC_GOLD, doc_id="g")
    with pytest.raises(InputError, match=message):
        score_ec_document(gold, EcEntities.from_json(prediction, file="p.json"))


def test_ec_tags_and_given_entity_linking():
    gold = EcDocument.from_json(EC_GOLD, doc_id="g")
    assert gold.tags(gold.labels) == ["B-question", "I-question", "O", "B-answer"]
    reversed_links = EcEntities.from_json({**EC_GOLD, "label_linkings": [[1, 0]]})
    panel = score_ec_document(gold, reversed_links).panel()
    assert panel["el_given_gold_entities"]["f1"] == 0.0 and panel["el_e2e_directed"]["fn"] == 1
