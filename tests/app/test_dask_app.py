"""The app's Compute settings: a Dask scheduler gives the same matrices as a local run."""

from __future__ import annotations

import numpy as np
import pytest
from test_pages import DEMO, _app

from tore_engine.studio import state
from tore_engine.dataset import evaluate_dataset
from tore_engine.formats import load_pair

distributed = pytest.importorskip("distributed", reason="Dask is not installed (pip install 'tore-studio[dask]')")


def test_matrices_page_evaluates_on_a_dask_cluster(monkeypatch):
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None) as cluster:
        store = state.EvaluationStore()  # empty: no local result cached by other tests
        monkeypatch.setattr(state, "evaluation_store", lambda: store)
        used = []
        original = state._dask_executor

        def spy(address):
            used.append(address)
            return original(address)

        monkeypatch.setattr(state, "_dask_executor", spy)
        at = _app(dask=cluster.scheduler_address)
        assert not at.exception and used == [cluster.scheduler_address]
        (evaluated,) = store._entries.values()
        local = evaluate_dataset(*load_pair(DEMO / "reference.json", DEMO / "model_a.json"))
        assert np.array_equal(evaluated.evaluation.matrices.full.confusion, local.matrices.full.confusion)


def test_an_unreachable_scheduler_shows_the_error():
    at = _app(dask="tcp://127.0.0.1:9")
    assert any("cannot reach the Dask scheduler at tcp://127.0.0.1:9" in error.value for error in at.error)
