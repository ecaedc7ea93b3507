"""Local worker pools (tore_engine.run.workers): an interrupted evaluation leaves no worker running,
even one that had started a moment before the pool knew of it."""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
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
