"""Fixtures of the shared real samples (../shared/data) that tests in several folders start from:
one DocILE document, one FUNSD form, two OmniDocBench pages with the official layout prediction."""

from __future__ import annotations

import json

import pytest
from tests.helpers import DOCILE_ID, FUNSD_FORM, shared_path


@pytest.fixture(scope="module")
def docile_files():
    dataset = shared_path("data", "docile")
    annotation = json.loads((dataset / "annotations" / f"{DOCILE_ID}.json").read_text())
    fields = [{k: f[k] for k in ("bbox", "page", "fieldtype")} | {"score": 0.5} for f in annotation["field_extractions"]]
    return dataset, annotation, json.loads((dataset / "ocr" / f"{DOCILE_ID}.json").read_text()), {DOCILE_ID: fields}


@pytest.fixture(scope="module")
def funsd_form():
    folder = shared_path("data", "funsd", "funsd", "testing_data")
    return folder, json.loads((folder / "annotations" / f"{FUNSD_FORM}.json").read_text())


@pytest.fixture(scope="module")
def omnidocbench_files():
    reference = json.loads(shared_path("data", "omnidocbench", "OmniDocBench_demo.json").read_text())
    layout = json.loads(shared_path("data", "omnidocbench", "pred_layout_detection", "detection_prediction.json").read_text())
    return reference[:2], layout
