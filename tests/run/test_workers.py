"""Local worker pools (tore_engine.run.workers): an interrupted evaluation leaves no worker running,
even one that had started a moment before the pool knew of it."""

from __future__ import annotations

import multiprocessing
import pickle
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from tests.helpers import load_vector
from tore_engine.core.layout import PageColumns
from tore_engine.formats.native import from_document as from_native
from tore_engine.run import workers

EXIT_BOUND_SECONDS = 30


def test_a_stop_right_after_a_worker_started_still_stops_that_worker(monkeypatch):
    """The stop lands between a worker's start and the pool's record of it (the window where a
    SIGTERM once left the driver waiting at exit for a worker nothing had killed)."""
    started = []
    make = workers._RecordingContext.Process

    def interrupted_after_start(self, *args, **kwargs):
        process = make(self, *args, **kwargs)
        real_start = process.start

        def start() -> None:
            real_start()
            started.append(process)
            raise KeyboardInterrupt  # as the stop handler raises it, before the pool stores the worker

        process.start = start
        return process

    monkeypatch.setattr(workers._RecordingContext, "Process", interrupted_after_start)
    with pytest.raises(KeyboardInterrupt), workers.worker_pool(2) as pool:
        pool.submit(abs, -1)
    assert len(started) == 1
    started[0].join(EXIT_BOUND_SECONDS)
    assert not started[0].is_alive()
    deadline = time.monotonic() + EXIT_BOUND_SECONDS
    while multiprocessing.active_children() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert multiprocessing.active_children() == []


def test_a_pool_evaluates_and_its_workers_end_with_it():
    with workers.worker_pool(2) as pool:
        assert list(pool.map(abs, [-1, -2, 3])) == [1, 2, 3]
    assert multiprocessing.active_children() == []


def _columns_held(part) -> PageColumns:
    return part.columns()


def _same_columns(one: PageColumns, other: PageColumns) -> bool:
    arrays = ("sizes", "offsets", "bboxes", "codes", "scores")
    return (one.ids == other.ids and one.vocabulary == other.vocabulary and one.images == other.images
            and all(np.array_equal(getattr(one, name), getattr(other, name)) for name in arrays))


@pytest.fixture(scope="module")
def columns() -> PageColumns:
    pages = load_vector("tore_public_pages.json")
    layout = from_native(pages["prediction"], "model.json")
    assert isinstance(layout.pages, PageColumns)
    return layout.pages


@pytest.mark.skipif(multiprocessing.get_start_method() != "fork", reason="workers inherit columns only when they are forked")
def test_forked_workers_are_sent_the_positions_of_the_columns_they_inherited(columns):
    """A task names the pages its forked worker holds already (a few hundred bytes), and the worker
    reads from its copy exactly the pages the driver would have sent, in the order asked for."""
    positions = [np.arange(5, 30), np.array([40, 3, 17, 3])]  # a run of pages (what jobs send), and any order
    with workers.worker_pool(2, inherited=[columns]) as pool:
        parts = [workers.task_part(pool, columns, chosen) for chosen in positions]
        assert all(isinstance(part, workers.InheritedPart) for part in parts)
        assert all(len(pickle.dumps(part)) < len(pickle.dumps(columns.part(chosen))) / 10 for part, chosen in zip(parts, positions))
        held = list(pool.map(_columns_held, parts))
    assert all(_same_columns(got, columns.part(chosen)) for got, chosen in zip(held, positions))
    assert workers._INHERITED == {}, "the driver lets go of the columns with the pool"


def test_any_other_executor_or_start_method_is_sent_the_columns(columns, monkeypatch):
    """Workers started by spawn or a fork server hold nothing of the driver's; nor do a Dask
    cluster's, or a pool that did not name the columns: each is sent them."""
    for executor in (None, ThreadPoolExecutor(1)):
        assert isinstance(workers.task_part(executor, columns, np.arange(3)), PageColumns)
    with workers.worker_pool(1) as pool:
        assert isinstance(workers.task_part(pool, columns, np.arange(3)), PageColumns)
    spawn = multiprocessing.get_context("spawn")
    monkeypatch.setattr(workers.multiprocessing, "get_context", lambda *method: spawn)
    with workers.worker_pool(1, inherited=[columns]) as pool:
        assert pool.inherited == frozenset()
        assert isinstance(workers.task_part(pool, columns, np.arange(3)), PageColumns)


def test_columns_two_pools_inherit_are_held_until_both_end(columns):
    """Two evaluations in threads (the app's Compare) may run pools on one layout set at once."""
    with workers.worker_pool(1, inherited=[columns]):
        with workers.worker_pool(1, inherited=[columns]) as second:
            assert id(columns) in second.inherited
        assert workers._INHERITED == {id(columns): columns}
    assert workers._INHERITED == {}


HALF_A_RESULT = """
import os, struct, sys, time
from pathlib import Path
from tore_engine.run import workers

def half_a_result(writer, flag):  # a worker killed after sending a result's header and a little of it
    os.write(writer, struct.pack("!i", 1 << 20) + bytes(100))
    Path(flag).touch()
    time.sleep(600)

try:
    with workers.worker_pool(1) as pool:
        pool.submit(half_a_result, pool._result_queue._writer.fileno(), sys.argv[1])
        while not Path(sys.argv[1]).exists():
            time.sleep(0.01)
        raise KeyboardInterrupt
except KeyboardInterrupt:
    print("stopped")
"""


@pytest.mark.skipif(multiprocessing.get_start_method() != "fork", reason="the worker writes into the results pipe it inherited by fork")
def test_a_worker_killed_halfway_through_a_result_stops_the_pool(tmp_path):
    """The pool's thread had read a result's header and waited for its bytes, which the killed
    worker would never send, and the stopped driver waited for that thread for ever (seen in CI:
    `tore evaluate` alive 20 minutes after its SIGTERM). Without the fix this times out."""
    done = subprocess.run([sys.executable, "-c", HALF_A_RESULT, str(tmp_path / "sent")], capture_output=True, text=True,
                          timeout=EXIT_BOUND_SECONDS)
    assert (done.returncode, done.stdout, done.stderr) == (0, "stopped\n", "")
