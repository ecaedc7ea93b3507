"""The OmniDocBench demo's reference, its official layout prediction, and that prediction's scores,
read once a module."""

from __future__ import annotations

import pytest

from tests.helpers import shared_path
from tests.scorers.omnidocbench.helpers import DEMO
from tore_engine.scorers.omnidocbench.layout_ap import score_layout
from tore_engine.scorers.omnidocbench.layout_predictions import load_layout_prediction
from tore_engine.scorers.omnidocbench.reference import load_reference


@pytest.fixture(scope="module")
def reference():
    return load_reference(shared_path(*DEMO, "OmniDocBench_demo.json"))


@pytest.fixture(scope="module")
def prediction_file():
    return shared_path(*DEMO, "pred_layout_detection", "detection_prediction.json")


@pytest.fixture(scope="module")
def layout_scores(reference, prediction_file):
    return score_layout(reference, load_layout_prediction(prediction_file, reference))
