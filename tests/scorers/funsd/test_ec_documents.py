"""EC-FUNSD documents and predicted entities (tore_engine.scorers.funsd.ec_documents): malformed predictions
are input errors; tags and linking on a hand-made gold document."""

from __future__ import annotations

import pytest

from tore_engine.core.errors import InputError
from tore_engine.scorers.funsd import EcDocument, EcEntities, score_ec_document

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
