"""The app's tests read the shared samples as the app does in `./run.sh app`: from a data root that
is the folder holding the repository (tests that need another root set their own: `root`, a fresh
temporary folder, or `whole_disk_as_data_root`). The demo's model A is evaluated once a module
(model B: `demo_b` in tests/conftest.py)."""

from __future__ import annotations

import pytest

from tests.helpers import DEMO, REPOSITORY
from tore_engine.api import load_pair
from tore_engine.run.runner import evaluate_dataset
from tore_engine.studio.data_root import DATA_ROOT_VARIABLE

BESIDE_THE_REPOSITORY = REPOSITORY.parent


@pytest.fixture(autouse=True)
def data_root_beside_the_repository(monkeypatch):
    monkeypatch.setenv(DATA_ROOT_VARIABLE, str(BESIDE_THE_REPOSITORY))


@pytest.fixture
def whole_disk_as_data_root(monkeypatch):
    """These tests mix files in the repository and in a temporary folder."""
    monkeypatch.setenv(DATA_ROOT_VARIABLE, "/")


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.setenv(DATA_ROOT_VARIABLE, str(tmp_path))
    return tmp_path


@pytest.fixture(scope="module")
def demo():
    reference, model_a = load_pair(DEMO / "reference.json", DEMO / "model_a.json")
    return reference, model_a, evaluate_dataset(reference, model_a)


@pytest.fixture(scope="module")
def demo_evaluation(demo):
    """Model A of the demo against its reference."""
    return demo[2]
