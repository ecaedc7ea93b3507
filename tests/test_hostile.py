"""Hostile and broken input: every loader and command ends in a clear error or a correct result,
never a traceback, a hang or a memory blow-up."""

from __future__ import annotations

import contextlib
import io
import json
import math
import tempfile
from pathlib import Path

import numpy as np
import pytest
from tests.helpers import layout_json, write_json
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tore_engine.cli import main
from tore_engine.dataset import evaluate_dataset
from tore_engine.errors import InputError
from tore_engine.formats import coco
from tore_engine.formats.native import from_document as from_native

HOSTILE = [None, math.nan, math.inf, -math.inf, 1e308, -1, 0, 2**70, "", "x", [], {}, [1, 2, 3], True, [None] * 4]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=12,
)

VALID_NATIVE = layout_json(
    "m",
    [{"id": "p1", "width": 50, "height": 40, "image": "p1.png", "boxes": [{"label": "a", "bbox": [1, 2, 30, 20], "score": 0.4}, {"label": "b", "bbox": [5, 5, 45, 39]}]}],
    ["a", "b"],
)
VALID_COCO = {
    "images": [{"id": 1, "file_name": "p1.png", "width": 50, "height": 40}],
    "categories": [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}],
    "annotations": [{"id": 1, "image_id": 1, "category_id": 2, "bbox": [1, 2, 10, 10], "score": 0.3}],
}


def paths_of(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, child in value.items():
            yield from paths_of(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from paths_of(child, (*prefix, index))


def mutated(document, path, replacement):
    document = json.loads(json.dumps(document))
    if not path:
        return replacement
    target = document
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = replacement
    return document


def mutations(document):
    paths = list(paths_of(document))
    return st.tuples(st.sampled_from(paths), st.sampled_from(HOSTILE) | json_values).map(lambda m: mutated(document, *m))


def loads_or_input_error(load, document) -> None:
    try:
        load(document)
    except InputError as error:
        assert error.paragraph() and "\n" not in error.paragraph()


@settings(max_examples=300, deadline=None)
@given(json_values | mutations(VALID_NATIVE))
def test_native_loader_never_crashes(document):
    loads_or_input_error(lambda d: from_native(d, "hostile.json"), document)


def read_coco_document(document) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "hostile.json"
        path.write_text(json.dumps(document), encoding="utf-8")
        coco.read(path)


@settings(max_examples=300, deadline=None)
@given(json_values | mutations(VALID_COCO))
def test_coco_loader_never_crashes(document):
    loads_or_input_error(read_coco_document, document)


def run_cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mutations(VALID_NATIVE), mutations(VALID_NATIVE))
def test_evaluate_on_mutated_files_exits_0_or_2(tmp_path, reference, prediction):
    gt = tmp_path / "gt.json"
    gt.write_text(json.dumps(reference), encoding="utf-8")
    model = tmp_path / "model.json"
    model.write_text(json.dumps(prediction), encoding="utf-8")
    code, out, err = run_cli("evaluate", str(gt), str(model), "--out", str(tmp_path / "o"), "--workers", "1")
    assert code in (0, 2)
    if code == 2:
        assert out == "" and err.startswith("tore: error: ") and err.count("\n") == 1


@pytest.mark.parametrize("damage", ["truncate", "latin1", "empty", "binary"])
def test_damaged_files_give_one_paragraph(tmp_path, damage):
    text = json.dumps(VALID_NATIVE).encode()
    data = {"truncate": text[: len(text) // 2], "latin1": text.replace(b'"m"', b'"\xe9"'), "empty": b"", "binary": bytes(range(256))}[damage]
    (tmp_path / "gt.json").write_bytes(data)
    write_json(tmp_path / "model.json", VALID_NATIVE)
    code, out, err = run_cli("evaluate", str(tmp_path / "gt.json"), str(tmp_path / "model.json"), "--out", str(tmp_path / "o"))
    assert code == 2 and out == "" and str(tmp_path / "gt.json") in err


def one_page(boxes, width, height, taxonomy=None):
    return from_native(layout_json("x", [{"id": "p", "width": width, "height": height, "boxes": boxes}], taxonomy), "x.json")


def test_enormous_page_allocates_no_raster():
    boxes = [{"label": "a", "bbox": [0, 0, 5e5, 5e5]}, {"label": "b", "bbox": [2.5e5, 2.5e5, 1e6, 1e6]}]
    evaluation = evaluate_dataset(one_page(boxes, 1e6, 1e6), one_page(boxes[:1], 1e6, 1e6))
    assert evaluation.pixels == 10**12
    assert evaluation.matrices.exact.fractions()[2][1] == 2.5e5**2  # the overlap: a predicted, b missed


def test_ten_thousand_boxes_on_one_page_give_a_correct_total():
    rng = np.random.default_rng(7)
    corners = rng.uniform(-20, 1040, (10_000, 2))
    sizes = rng.uniform(1, 300, (10_000, 2))
    labels = [f"c{k}" for k in rng.integers(0, 17, 10_000)]
    boxes = [{"label": l, "bbox": [*c, *(c + s)]} for l, c, s in zip(labels, corners.tolist(), sizes)]
    reference = one_page(boxes, 1025, 1025)
    prediction = one_page(boxes[::-1][:5000], 1025, 1025)
    evaluation = evaluate_dataset(reference, prediction, workers=1)
    numerators = evaluation.matrices.exact.numerators
    # Every reference label's row gets exactly one a pixel: row sums are the supports.
    assert int(np.asarray(numerators, dtype=object).sum()) == evaluation.matrices.exact.denominator * int(evaluation.page_reduced.sum())


def test_thousands_of_classes_end_in_a_clear_error_or_a_result():
    labels = [f"class-{k}" for k in range(1500)]
    boxes = [{"label": l, "bbox": [k % 40, k // 40, k % 40 + 1, k // 40 + 1]} for k, l in enumerate(labels)]
    evaluation = evaluate_dataset(one_page(boxes, 40, 40, labels), one_page(boxes[:10], 40, 40, labels))
    assert evaluation.taxonomy.size == 1501 and evaluation.matrices.full.confusion[1, 1] == 1
    with pytest.raises(InputError, match="more than 2048"):
        evaluate_dataset(one_page(boxes, 40, 40, labels), one_page(boxes, 40, 40, labels + ["z"]), taxonomy="dual")


def test_duplicate_ids_are_an_error():
    page = {"id": "p", "width": 5, "height": 5, "boxes": []}
    with pytest.raises(InputError, match="duplicate page id"):
        from_native({"pages": [page, page]}, "dup.json")
