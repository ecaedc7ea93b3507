"""Hostile input for every `tore score` command: mutated real files end in a result or in one
paragraph and exit code 2, never a traceback."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import shared_path
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_hostile import HOSTILE, json_values, mutated, paths_of, run_cli

DOCILE_ID = "516f2d61ea404b30a9192a72"
FUNSD_FORM = "82092117"
EXAMPLES = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def any_mutation(document):
    return st.tuples(st.sampled_from(list(paths_of(document))), st.sampled_from(HOSTILE) | json_values)


def exits_cleanly(*args: str) -> None:
    code, out, err = run_cli(*args)
    assert code in (0, 2)
    if code == 2:
        assert out == "" and err.startswith("tore: error: ")


def write(path: Path, document) -> None:
    path.write_text(json.dumps(document), encoding="utf-8")


@pytest.fixture(scope="module")
def docile_files():
    dataset = shared_path("data", "docile")
    annotation = json.loads((dataset / "annotations" / f"{DOCILE_ID}.json").read_text())
    fields = [{k: f[k] for k in ("bbox", "page", "fieldtype")} | {"score": 0.5} for f in annotation["field_extractions"]]
    return dataset, annotation, json.loads((dataset / "ocr" / f"{DOCILE_ID}.json").read_text()), {DOCILE_ID: fields}


def docile_dataset(root: Path, annotation, ocr) -> Path:
    (root / "annotations").mkdir(parents=True, exist_ok=True)
    (root / "ocr").mkdir(exist_ok=True)
    write(root / "annotations" / f"{DOCILE_ID}.json", annotation)
    write(root / "ocr" / f"{DOCILE_ID}.json", ocr)
    write(root / "dev.json", [DOCILE_ID])
    return root


@EXAMPLES
@given(data=st.data())
def test_docile_mutated_predictions_annotations_and_ocr(tmp_path, docile_files, data):
    _, annotation, ocr, predictions = docile_files
    target = data.draw(st.sampled_from(["predictions", "annotation", "ocr"]))
    documents = {"predictions": predictions, "annotation": annotation, "ocr": ocr}
    documents[target] = mutated(documents[target], *data.draw(any_mutation(documents[target])))
    root = docile_dataset(tmp_path / "dataset", documents["annotation"], documents["ocr"])
    write(tmp_path / "kile.json", documents["predictions"])
    exits_cleanly("score", "docile", "--dataset", str(root), "--split", "dev", "--kile", str(tmp_path / "kile.json"), "--json")


@pytest.fixture(scope="module")
def funsd_form():
    folder = shared_path("data", "funsd", "funsd", "testing_data")
    return folder, json.loads((folder / "annotations" / f"{FUNSD_FORM}.json").read_text())


@EXAMPLES
@given(data=st.data())
def test_funsd_mutated_prediction_and_reference(tmp_path, funsd_form, data):
    folder, form = funsd_form
    side = data.draw(st.sampled_from(["reference", "prediction"]))
    for name in ("reference", "prediction"):
        (tmp_path / name).mkdir(exist_ok=True)
        document = mutated(form, *data.draw(any_mutation(form))) if name == side else form
        write(tmp_path / name / f"{FUNSD_FORM}.json", document)
    shutil.copy(folder / "images" / f"{FUNSD_FORM}.png", tmp_path / "reference" / f"{FUNSD_FORM}.png")
    exits_cleanly("score", "funsd", "--reference", str(tmp_path / "reference"), "--prediction", str(tmp_path / "prediction"), "--json")


@EXAMPLES
@given(data=st.data())
def test_ec_funsd_mutated_prediction(tmp_path, data):
    gold = json.loads(shared_path("data", "funsd", "ec_funsd", "jsons", f"{FUNSD_FORM}.json").read_text())
    prediction = {"label_entities": gold.get("label_entities", []), "label_linkings": gold.get("label_linkings", [])}
    for name, document in (("reference", gold), ("prediction", mutated(prediction, *data.draw(any_mutation(prediction))))):
        (tmp_path / name).mkdir(exist_ok=True)
        write(tmp_path / name / f"{FUNSD_FORM}.json", document)
    exits_cleanly("score", "ec-funsd", "--reference", str(tmp_path / "reference"), "--prediction", str(tmp_path / "prediction"), "--json")


@pytest.fixture(scope="module")
def omnidocbench_files():
    reference = json.loads(shared_path("data", "omnidocbench", "OmniDocBench_demo.json").read_text())
    layout = json.loads(shared_path("data", "omnidocbench", "pred_layout_detection", "detection_prediction.json").read_text())
    return reference[:2], layout


@EXAMPLES
@given(data=st.data())
def test_omnidocbench_mutated_reference_and_layout(tmp_path, omnidocbench_files, data):
    reference, layout = omnidocbench_files
    side = data.draw(st.sampled_from(["reference", "layout"]))
    documents = {"reference": reference, "layout": layout}
    documents[side] = mutated(documents[side], *data.draw(any_mutation(documents[side])))
    write(tmp_path / "OmniDocBench.json", documents["reference"])
    write(tmp_path / "layout.json", documents["layout"])
    exits_cleanly("score", "omnidocbench", "--reference", str(tmp_path / "OmniDocBench.json"), "--layout", str(tmp_path / "layout.json"), "--json")


def test_the_unmutated_inputs_are_valid(tmp_path, docile_files, funsd_form, omnidocbench_files):
    _, annotation, ocr, predictions = docile_files
    root = docile_dataset(tmp_path / "dataset", annotation, ocr)
    write(tmp_path / "kile.json", predictions)
    assert run_cli("score", "docile", "--dataset", str(root), "--split", "dev", "--kile", str(tmp_path / "kile.json"), "--json")[0] == 0
    folder, _ = funsd_form
    assert run_cli("score", "funsd", "--reference", str(folder / "annotations"), "--prediction", str(folder / "annotations"), "--json")[0] == 0
    reference, layout = omnidocbench_files
    write(tmp_path / "OmniDocBench.json", reference)
    write(tmp_path / "layout.json", layout)
    assert run_cli("score", "omnidocbench", "--reference", str(tmp_path / "OmniDocBench.json"), "--layout", str(tmp_path / "layout.json"), "--json")[0] == 0
    ec = shared_path("data", "funsd", "ec_funsd", "jsons")
    assert run_cli("score", "ec-funsd", "--reference", str(ec), "--prediction", str(ec), "--json")[0] == 0
