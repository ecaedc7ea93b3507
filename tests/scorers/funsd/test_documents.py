"""FUNSD forms (tore_engine.scorers.funsd.documents): the real files are the vectors' documents, blank words and
entities are dropped, and malformed files are input errors."""

from __future__ import annotations

import hashlib
import json
import math

import pytest

from tests.helpers import shared_path
from tests.scorers.funsd.helpers import ec_gold, entity, vectors
from tore_engine.core.errors import InputError
from tore_engine.scorers.funsd import EcDocument, FunsdDocument


def test_real_files_are_the_vectors_documents():
    """Loading from disk gives the same documents as the vectors' embedded copies (checked by hash too)."""
    for doc_id, document in vectors()["documents"].items():
        annotation = shared_path(document["annotation"])
        assert hashlib.sha256(annotation.read_bytes()).hexdigest() == document["annotation_sha256"]
        assert FunsdDocument.load(annotation) == FunsdDocument.from_json(document["gt"], doc_id=doc_id, file=str(annotation))
        ec_path = shared_path(document["ec_annotation"])
        assert EcDocument.from_json(json.loads(ec_path.read_text()), doc_id=doc_id) == ec_gold(doc_id)


def test_blank_words_and_entities_are_dropped_with_their_links():
    document = FunsdDocument.from_json({"form": [
        entity(0, "question", (0, 0, 10, 10), ("Name:", ""), linking=[(0, 1), (0, 2)]),
        entity(1, "answer", (20, 0, 30, 10), ("  ",), linking=[(0, 1)]),
        entity(2, "answer", (40, 0, 50, 10), ("Bob",), linking=[(0, 2), (2, 2), (2, 99)]),
    ]}, doc_id="d")
    assert [e.id for e in document.entities] == [0, 2] and [w.text for w in document.words] == ["Name:", "Bob"]
    assert document.links == {(0, 2)} and (document.dropped_words, document.dropped_entities) == (2, 1)


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
