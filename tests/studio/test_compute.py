"""The app's Compute settings: Dask schedulers come from the server's configuration only, are chosen
by name, and give the same matrices as a local run; an address in the URL never connects."""

from __future__ import annotations

import socket

import numpy as np
import pytest

from tests.helpers import DEMO
from tests.studio.helpers import _app, _no_exception
from tore_engine.api import load_pair
from tore_engine.plots.plain_text import plain_for_markdown
from tore_engine.run.runner import evaluate_dataset
from tore_engine.studio import compute, evaluations, state

distributed = pytest.importorskip("distributed", reason="Dask is not installed (pip install 'tore-studio[dask]')")


@pytest.fixture
def listening_socket():
    """A plain TCP socket listening on a loopback port: it records whether anything connected."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        yield listener


def _connections(listener: socket.socket) -> int:
    """How many connections wait to be accepted (none when nobody connected)."""
    count = 0
    while True:
        try:
            connection, _ = listener.accept()
        except BlockingIOError:
            return count
        connection.close()
        count += 1


def test_a_scheduler_address_in_the_url_never_connects(listening_socket):
    port = listening_socket.getsockname()[1]
    at = _app(src="demo", tax="single", dask=f"tcp://127.0.0.1:{port}", compute_open="1")
    _no_exception(at)
    assert _connections(listening_socket) == 0
    assert [warning.value for warning in at.warning if "`dask`" in warning.value] == [
        "Some parameters of this link were ignored, their values kept as default: `dask` (not one of the choices)."
    ]
    assert [w.key for w in at.sidebar.text_input if w.key == "dask"] == []  # no free-text scheduler field
    assert at.session_state[state.DATASET].scheduler is None
    assert any("No Dask scheduler is configured" in caption.value for caption in at.sidebar.caption)


def test_a_configured_scheduler_is_chosen_by_name_and_gives_the_local_numbers(monkeypatch):
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None) as cluster:
        monkeypatch.setenv(compute.SCHEDULERS_VARIABLE, f"lab={cluster.scheduler_address}, broken entry")
        store = evaluations.EvaluationStore()  # empty: no local result cached by other tests
        monkeypatch.setattr(evaluations, "evaluation_store", lambda: store)
        used = []
        original = compute._client_executor

        def spy(address):
            used.append(address)
            return original(address)

        monkeypatch.setattr(compute, "_client_executor", spy)
        at = _app(dask="lab", compute_open="1")
        _no_exception(at)
        assert used == [cluster.scheduler_address]
        assert at.sidebar.selectbox(key="dask").options == ["none: local processes", "lab"]
        (evaluated,) = store._entries.values()
        local = evaluate_dataset(*load_pair(DEMO / "reference.json", DEMO / "model_a.json"))
        assert np.array_equal(evaluated.evaluation.matrices.full.confusion, local.matrices.full.confusion)


def test_a_malformed_scheduler_secret_is_skipped():
    at = _app(secrets={compute.SCHEDULERS_SECRET: "tcp://10.0.0.2:8786"}, compute_open="1")
    _no_exception(at)
    assert not at.error and any("No Dask scheduler is configured" in caption.value for caption in at.sidebar.caption)


def test_schedulers_also_come_from_the_secrets(monkeypatch):
    monkeypatch.setenv(compute.SCHEDULERS_VARIABLE, "lab=tcp://10.0.0.1:8786")
    at = _app(secrets={compute.SCHEDULERS_SECRET: {"gpu": "tcp://10.0.0.2:8786", "lab": "tcp://10.0.0.3:8786"}}, compute_open="1")
    _no_exception(at)
    assert at.sidebar.selectbox(key="dask").options == ["none: local processes", "lab", "gpu"]


def test_an_unreachable_configured_scheduler_is_named_but_its_address_is_not_shown(monkeypatch):
    monkeypatch.setenv(compute.SCHEDULERS_VARIABLE, "down=tcp://127.0.0.1:9")
    store = evaluations.EvaluationStore()  # empty: a cached evaluation would not need the scheduler
    monkeypatch.setattr(evaluations, "evaluation_store", lambda: store)
    at = _app(dask="down")
    _no_exception(at)
    messages = [error.value for error in at.error]
    assert any(plain_for_markdown("the Dask scheduler 'down' cannot be reached") in message for message in messages), messages
    assert not any("127.0.0.1" in message for message in messages)
