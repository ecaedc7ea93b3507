"""Fixtures that tests in several folders start from: the shared real samples (../shared/data: one
DocILE document, one FUNSD form, two OmniDocBench pages with the official layout prediction), the
embedded demo's two models evaluated, and two small pages counted by hand."""

from __future__ import annotations

import json
import os

import pytest

from tests.helpers import DEMO, DOCILE_ID, FUNSD_FORM, shared_path
from tests.helpers import small_layout as _layout
from tore_engine.api import load_pair
from tore_engine.run.runner import POOL_ENV, evaluate_dataset

# A test that asks for workers tests the pool, on inputs far smaller than the jobs that start one by
# default (`runner.POOL_AFTER_PAGES`); subprocesses inherit it. tests/run/test_runner.py tests the default.
os.environ[POOL_ENV] = "always"


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


@pytest.fixture(scope="module")
def small():
    """Two 10 x 10 pages. p1: Text [0,0,5,2] (10 px), 6 of them predicted as Title, 4 missed; p2: Title [0,0,2,2]
    (4 px) found, and 5 Background pixels called Text."""
    reference = _layout("gt", [("p1", [{"label": "Text", "bbox": [0, 0, 5, 2]}]), ("p2", [{"label": "Title", "bbox": [0, 0, 2, 2]}])])
    prediction = _layout("model", [("p1", [{"label": "Title", "bbox": [0, 0, 3, 2]}]),
                                   ("p2", [{"label": "Title", "bbox": [0, 0, 2, 2]}, {"label": "Text", "bbox": [5, 5, 10, 6]}])])
    return evaluate_dataset(reference, prediction)


@pytest.fixture(scope="module")
def demo_a():
    return evaluate_dataset(*load_pair(DEMO / "reference.json", DEMO / "model_a.json"))


@pytest.fixture(scope="module")
def demo_b():
    return evaluate_dataset(*load_pair(DEMO / "reference.json", DEMO / "model_b.json"))
