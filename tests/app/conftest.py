"""The app's tests read the shared samples as the app does in `./run.sh app`: from a data root that
is the folder holding the repository (tests that need another root set their own)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tore_engine.studio.data_root import DATA_ROOT_VARIABLE

BESIDE_THE_REPOSITORY = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def data_root_beside_the_repository(monkeypatch):
    monkeypatch.setenv(DATA_ROOT_VARIABLE, str(BESIDE_THE_REPOSITORY))
