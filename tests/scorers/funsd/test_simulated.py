"""Simulated FUNSD / EC-FUNSD predictions: deterministic, and each perturbation moves exactly the
numbers it should (scored by the engine's own scorers)."""

from __future__ import annotations

import dataclasses
import json
import time
from collections import Counter

import pytest

from tests.helpers import shared_path
from tests.scorers.funsd.helpers import grid_form
from tore_engine.core.errors import InputError
from tore_engine.scorers.funsd import (
    EcDocument,
    EcEntities,
    FunsdDocument,
    score_document,
    score_ec_document,
)
from tore_engine.scorers.funsd.matching import MAX_BOXES
from tore_engine.scorers.funsd.score import score_ec_funsd, score_funsd
from tore_engine.scorers.funsd.simulated import (
    NO_EC_NOISE,
    NO_NOISE,
    FunsdNoise,
    simulate_ec_prediction,
    simulate_funsd_prediction,
    write_simulated_predictions,
)

LABELS = ("question", "answer", "header", "other")


def synthetic_form(n: int = 12) -> dict:
    """`n` two-word entities on a grid far apart (no box overlaps another), question k linked to answer k+1,
    plus one entity of blank words only (ignored by the scorer, never perturbed)."""
    form = []
    for k in range(n):
        x, y = 100 + 300 * (k % 3), 100 + 80 * (k // 3)
        words = [{"box": [x, y, x + 60, y + 20], "text": f"w{k}a"}, {"box": [x + 70, y, x + 130, y + 20], "text": f"w{k}b"}]
        form.append({"id": k, "label": LABELS[k % 4], "box": [x, y, x + 130, y + 20], "text": "", "words": words, "linking": []})
    for k in range(0, n - 1, 4):
        form[k]["linking"].append([k, k + 1])
        form[k + 1]["linking"].append([k, k + 1])
    form.append({"id": n, "label": "other", "box": [0, 0, 5, 5], "text": "", "words": [{"box": [0, 0, 5, 5], "text": " "}], "linking": []})
    return {"form": form}


def score(gold: dict, prediction: dict) -> dict:
    return score_document(FunsdDocument.from_json(gold, doc_id="d"), FunsdDocument.from_json(prediction, doc_id="d")).panel()


def only(**rates) -> FunsdNoise:
    return dataclasses.replace(NO_NOISE, **rates)


def test_same_seed_same_prediction_other_seed_other_prediction():
    gold = synthetic_form()
    first, log = simulate_funsd_prediction(gold, doc_id="d", seed=3)
    again, log_again = simulate_funsd_prediction(gold, doc_id="d", seed=3)
    other, _ = simulate_funsd_prediction(gold, doc_id="d", seed=4)
    assert json.dumps(first) == json.dumps(again) and log == log_again
    assert json.dumps(first) != json.dumps(other)
    assert gold == synthetic_form(), "the gold form is never modified"


def test_no_noise_is_a_perfect_prediction():
    panel = score(synthetic_form(), simulate_funsd_prediction(synthetic_form(), doc_id="d", noise=NO_NOISE)[0])
    assert panel["word_detection"]["f1"] == panel["entity_detection"]["f1"] == 1.0
    assert panel["entity_labeling"]["micro"]["f1"] == panel["entity_linking"]["e2e_labeled_directed"]["f1"] == 1.0
    assert panel["ocr"]["exact_match_rate_matched"] == 1.0


def test_small_jitter_keeps_every_match_but_moves_the_boxes():
    gold = synthetic_form()
    prediction, _ = simulate_funsd_prediction(gold, doc_id="d", noise=only(jitter=0.02))
    assert prediction["form"][0]["box"] != gold["form"][0]["box"]
    panel = score(gold, prediction)
    assert panel["word_detection"]["f1"] == panel["entity_detection"]["f1"] == 1.0


def test_dropped_entities_lower_recall_by_exactly_their_number():
    prediction, log = simulate_funsd_prediction(synthetic_form(), doc_id="d", noise=only(drop=0.3))
    panel = score(synthetic_form(), prediction)["entity_detection"]
    assert 0 < log["dropped"] < 12 and set(log) <= {"dropped", "dropped_links"}
    assert (panel["tp"], panel["fp"], panel["fn"]) == (12 - log["dropped"], 0, log["dropped"])


def test_displaced_entities_are_one_miss_and_one_false_alarm_each():
    prediction, log = simulate_funsd_prediction(synthetic_form(), doc_id="d", noise=only(displace=0.4))
    panel = score(synthetic_form(), prediction)["entity_detection"]
    assert log["displaced"] > 0
    assert (panel["tp"], panel["fp"], panel["fn"]) == (12 - log["displaced"], log["displaced"], log["displaced"])


def test_relabelled_entities_are_matched_with_the_wrong_class():
    prediction, log = simulate_funsd_prediction(synthetic_form(), doc_id="d", noise=only(relabel=0.5))
    panel = score(synthetic_form(), prediction)
    assert 0 < log["relabelled"] < 12
    assert panel["entity_detection"]["f1"] == 1.0
    assert panel["entity_labeling"]["matched_label_accuracy"] == pytest.approx(1 - log["relabelled"] / 12, abs=1e-12)


def test_typos_change_text_only():
    prediction, log = simulate_funsd_prediction(synthetic_form(), doc_id="d", noise=only(typo=0.5))
    panel = score(synthetic_form(), prediction)
    assert 0 < log["typos"] < 24
    assert panel["word_detection"]["f1"] == 1.0
    assert panel["ocr"]["exact_match_rate_matched"] == pytest.approx(1 - log["typos"] / 24, abs=1e-12)
    assert panel["ocr"]["sum_edit_distance"] == log["typos"]  # one edit each


def test_merges_and_splits_change_the_entity_count_and_the_grouping():
    merged, merge_log = simulate_funsd_prediction(synthetic_form(), doc_id="d", noise=only(merge=0.3))
    split, split_log = simulate_funsd_prediction(synthetic_form(), doc_id="d", noise=only(split=0.3))
    assert merge_log["merged"] > 0 and split_log["split"] > 0
    merged_panel, split_panel = score(synthetic_form(), merged), score(synthetic_form(), split)
    assert merged_panel["counts"]["pred_entities"] == 12 - merge_log["merged"]
    assert split_panel["counts"]["pred_entities"] == 12 + split_log["split"]
    for panel in (merged_panel, split_panel):
        assert panel["word_detection"]["f1"] == 1.0  # words untouched
        assert panel["word_grouping"]["ari"] < 1.0


def test_link_noise():
    gold = synthetic_form()
    dropped, log = simulate_funsd_prediction(gold, doc_id="d", noise=only(drop_link=1.0))
    assert log["dropped_links"] == 3 and score(gold, dropped)["entity_linking"]["e2e_labeled_directed"]["recall"] == 0.0
    added, log = simulate_funsd_prediction(gold, doc_id="d", noise=only(add_link=1.0))
    links = score(gold, added)["entity_linking"]["e2e_labeled_directed"]
    assert log["added_links"] > 0 and (links["tp"], links["fp"]) == (3, log["added_links"])


def test_bad_gold_is_an_input_error():
    with pytest.raises(InputError, match="unknown key 'forms'"):
        simulate_funsd_prediction({"forms": []}, doc_id="d")


def test_real_sample_gets_a_known_mix(tmp_path):
    """Default noise on the 10 real forms: every perturbation happens, and the entity counts add up."""
    reference = shared_path("data", "funsd", "funsd", "testing_data", "annotations")
    logs = write_simulated_predictions("funsd", reference, tmp_path, seed=0)
    again = write_simulated_predictions("funsd", reference, tmp_path / "again", seed=0)
    assert logs == again and len(logs) == 10
    total = sum(logs.values(), Counter())
    assert set(total) == {"dropped", "displaced", "merged", "split", "relabelled", "typos", "dropped_links", "added_links"}
    report = score_funsd(reference, tmp_path)
    counts = report.corpus["counts"]
    assert counts["pred_entities"] == counts["gt_entities"] - total["dropped"] - total["merged"] + total["split"]
    detection = report.corpus["entity_detection"]
    assert detection["fn"] >= total["dropped"] + total["displaced"]
    for item in report.headline():
        assert 0.0 < item["value"] < 1.0, item


def test_ec_simulation_is_deterministic_and_valid():
    reference = shared_path("data", "funsd", "ec_funsd", "jsons")
    gold_json = json.loads((reference / "85540866.json").read_text(encoding="utf-8"))
    first, log = simulate_ec_prediction(gold_json, doc_id="85540866", seed=1)
    assert (first, log) == simulate_ec_prediction(gold_json, doc_id="85540866", seed=1)
    gold = EcDocument.from_json(gold_json, doc_id="85540866")
    perfect = score_ec_document(gold, EcEntities.from_json(simulate_ec_prediction(gold_json, doc_id="x", noise=NO_EC_NOISE)[0]))
    assert perfect.panel()["el_given_gold_entities"]["f1"] == 1.0


@pytest.mark.parametrize("rates, field", [({"drop": 0.3}, "dropped"), ({"trim": 0.5}, "trimmed"), ({"relabel": 0.3}, "relabelled")])
def test_ec_each_entity_perturbation_costs_one_exact_match(rates, field):
    reference = shared_path("data", "funsd", "ec_funsd", "jsons")
    gold_json = json.loads((reference / "82504862.json").read_text(encoding="utf-8"))
    prediction, log = simulate_ec_prediction(gold_json, doc_id="82504862", noise=dataclasses.replace(NO_EC_NOISE, **rates))
    panel = score_ec_document(EcDocument.from_json(gold_json, doc_id="g"), EcEntities.from_json(prediction)).panel()
    n = len(gold_json["label_entities"])
    assert log[field] > 0
    assert panel["entity_exact_match"]["tp"] == n - log[field]
    assert panel["el_given_gold_entities"] is None  # shown as n/a: the entities are no longer the gold ones


def test_ec_real_sample_folder(tmp_path):
    reference = shared_path("data", "funsd", "ec_funsd", "jsons")
    logs = write_simulated_predictions("ec-funsd", reference, tmp_path, seed=0)
    report = score_ec_funsd(reference, tmp_path)
    total = sum(logs.values(), Counter())
    exact = report.corpus["entity_exact_match"]
    assert exact["fn"] == total["dropped"] + exact["fp"]  # every kept but altered entity is one fp and one fn
    assert report.corpus["el_given_gold_entities"] is None


def test_many_links_are_simulated_in_linear_time():
    # 2,000 entities with 50 links each: every entity's `linking` was a pass over all 100,000 links (191 s)
    start = time.perf_counter()
    prediction, log = simulate_funsd_prediction(grid_form(2000, 50), doc_id="d", seed=0, noise=dataclasses.replace(NO_NOISE, drop_link=0.5))
    assert time.perf_counter() - start < 60
    links = {tuple(link) for entity in prediction["form"] for link in entity["linking"]}
    assert len(links) == 100_000 - log["dropped_links"] and 40_000 < log["dropped_links"] < 60_000
    for entity in prediction["form"]:  # each link listed once in each of its two ends, in sorted order
        linking = [tuple(link) for link in entity["linking"]]
        assert linking == sorted(set(linking)) and all(entity["id"] in link for link in linking)
    assert sum(len(entity["linking"]) for entity in prediction["form"]) == 2 * len(links)


def test_a_form_too_large_to_score_is_not_simulated():
    form = {"form": [{"id": 0, "label": "other", "box": [0, 0, 1, 1], "words": [{"box": [0, 0, 1, 1], "text": "w"}] * (MAX_BOXES + 1)}]}
    with pytest.raises(InputError, match=r"^file g\.json: the reference has 20,001 words on this form"):
        simulate_funsd_prediction(form, doc_id="d", file="g.json")
