"""What the FUNSD and EC-FUNSD tests share: tests/vectors/funsd_public.json (its cases as test
parameters, its documents), the real sample forms in ../shared/data/funsd, panel comparison (every
number at abs 1e-9, nulls kept) and hand-made entities."""

from __future__ import annotations

import functools

import pytest

from tests.helpers import load_vector
from tore_engine.scorers.funsd import EcDocument, FunsdDocument

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
def vectors() -> dict:
    """The FUNSD vectors, read once (about 0.8 MB); no test changes them."""
    return load_vector("funsd_public.json")


def case_params(section: str) -> list:
    """One parameter per vector case."""
    return [pytest.param(index, id=case["id"]) for index, case in enumerate(vectors()[section])]


def corpus_params(section: str) -> list:
    return list(vectors()["corpus_public"][section])


def gt_document(doc_id: str) -> FunsdDocument:
    return FunsdDocument.from_json(vectors()["documents"][doc_id]["gt"], doc_id=doc_id)


def ec_gold(doc_id: str) -> EcDocument:
    return EcDocument.from_json(vectors()["documents"][doc_id]["ec_gt"], doc_id=doc_id)


def cases(section: str, **where) -> list[dict]:
    return [case for case in vectors()[section] if all(case[key] == value for key, value in where.items())]


def entity(entity_id, label, box, texts=("w",), linking=()):
    return {"id": entity_id, "label": label, "box": list(box), "text": " ".join(texts),
            "words": [{"box": list(box), "text": t} for t in texts], "linking": [list(l) for l in linking]}


def grid_form(n: int, links_each: int) -> dict:
    """`n` one-word entities on a grid, none overlapping another, entity i linked to the
    `links_each` next ones (mod n): the worst cases of issue 20 (B15)."""
    form = []
    for i in range(n):
        x, y = (i % 100) * 12, (i // 100) * 12
        box = [x, y, x + 10, y + 10]
        form.append({"id": i, "label": "question" if i % 2 else "answer", "box": box, "words": [{"box": box, "text": "w"}],
                     "linking": [[i, (i + k) % n] for k in range(1, links_each + 1)]})
    return {"form": form}
