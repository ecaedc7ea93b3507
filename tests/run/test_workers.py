"""Local worker pools (tore_engine.run.workers): an interrupted evaluation leaves no worker running,
even one that had started a moment before the pool knew of it."""

from __future__ import annotations

import multiprocessing
import time

import pytest

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
