"""Folder scoring (tore_engine.scorers.funsd.score: `score_funsd`, `score_ec_funsd`) on the real sample forms in
../shared/data/funsd."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import shared_path, write_json
from tests.scorers.funsd.helpers import (
    EC_DATA,
    FUNSD_DATA,
    assert_panel_equal,
    cases,
    vectors,
)
from tore_engine.scorers.funsd import FUNSD_CLASSES, score_ec_funsd, score_funsd


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
    """Valid words and entities counted straight from the JSON (docs/benchmarks.md#valid-words-and-entities)."""
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
