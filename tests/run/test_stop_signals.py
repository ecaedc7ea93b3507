"""A stop signal at each step of the worker pool's start and shutdown (tore_engine.run.workers,
tore_engine.core.signals), delivered by a hook at that step, not after a sleep: `tore evaluate`
ends with its one-line stop and exit 128 + the signal, leaves no --out behind and no worker alive;
a second stop while the first is handled ends it at once.

Each case runs `tore evaluate` in a process of its own through a driver that wraps the step's
function so that it sends the signal to its own process right before (or after) the step, and
records the pid of every worker it starts, so that the test can check that none outlives it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import layout_json, write_json

DRIVER = r'''
import concurrent.futures.process as pool_module
import multiprocessing.process
import os
import sys

from tore_engine.cli import main
from tore_engine.run import workers

step, signum, pids_file, *command = sys.argv[1:]
signum = int(signum)
calls = {}


def hook(name, function, *, after=False, count=1):
    """`function`, sending the signal to this process before (or after) its `count`-th call when
    `name` is the step asked for; the record notes that it fired."""
    def hooked(*args, **kwargs):
        calls[name] = calls.get(name, 0) + 1
        fire = name == step and calls[name] == count
        if fire:
            with open(pids_file, "a") as record:
                record.write("fired\n")
        if fire and not after:
            os.kill(os.getpid(), signum)
        result = function(*args, **kwargs)
        if fire and after:
            os.kill(os.getpid(), signum)
        return result
    return hooked


def recorded_start(process):
    real_start(process)
    with open(pids_file, "a") as pids:
        pids.write(f"{process.pid}\n")


real_start = multiprocessing.process.BaseProcess.start
multiprocessing.process.BaseProcess.start = recorded_start
workers._RecordingContext.Process = hook("process", workers._RecordingContext.Process)
multiprocessing.process.BaseProcess.start = hook("fork-1", multiprocessing.process.BaseProcess.start, after=True)
multiprocessing.process.BaseProcess.start = hook("fork-2", multiprocessing.process.BaseProcess.start, after=True, count=2)
pool_module._ExecutorManagerThread.start = hook("thread", pool_module._ExecutorManagerThread.start)
pool_module._ExecutorManagerThread.start = hook("thread-started", pool_module._ExecutorManagerThread.start, after=True)
pool_module.ProcessPoolExecutor.submit = hook("submitted", pool_module.ProcessPoolExecutor.submit, after=True)
pool_module.ProcessPoolExecutor.shutdown = hook("shutdown", pool_module.ProcessPoolExecutor.shutdown)
if step == "second":  # the first stop once the pool runs, the second as the workers are stopped
    step = "submitted"
    real_kill = workers._kill
    def kill_after_a_second_stop(context):
        os.kill(os.getpid(), signum)
        real_kill(context)
    workers._kill = kill_after_a_second_stop
sys.exit(main(command))
'''

STEPS = ["process", "fork-1", "fork-2", "thread", "thread-started", "submitted", "shutdown"]
EXIT_BOUND_SECONDS = 120  # a hang is minutes; an answer, seconds
WORKER_EXIT_BOUND_SECONDS = 15


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """Pages enough for two workers and several batches, few enough to evaluate in a moment."""
    folder = tmp_path_factory.mktemp("inputs")
    pages = [{"id": f"p{k}", "width": 200, "height": 200,
              "boxes": [{"label": f"c{j % 3}", "bbox": [(k * 7 + j * 11) % 150, (k * 5 + j * 13) % 150, (k * 7 + j * 11) % 150 + 40, (k * 5 + j * 13) % 150 + 30]}
                        for j in range(6)]} for k in range(400)]
    return write_json(folder / "gt.json", layout_json("gt", pages)), write_json(folder / "model.json", layout_json("model", pages[::-1]))


def alive(pid: int) -> bool:
    with contextlib.suppress(OSError):
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    return False


def run_stopped_at(step: str, signum: int, inputs, tmp_path: Path) -> tuple[subprocess.CompletedProcess, list[int]]:
    """`tore evaluate` with the signal sent at `step`; every worker it started is gone when this returns
    (those still alive after the bound are killed, and the test fails)."""
    pids_file = tmp_path / "pids"
    command = [sys.executable, "-c", DRIVER, step, str(int(signum)), str(pids_file),
               "evaluate", *map(str, inputs), "--out", str(tmp_path / "o"), "--workers", "2"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "TORE_PAGE_KERNEL": "numpy"})
    try:
        stdout, stderr = process.communicate(timeout=EXIT_BOUND_SECONDS)
    finally:
        if process.poll() is None:  # hung: leave nothing behind
            process.kill()
            process.communicate()
    lines = pids_file.read_text().split() if pids_file.exists() else []
    assert "fired" in lines, f"the run never reached {step}"
    pids = [int(line) for line in lines if line.isdigit()]
    deadline = time.monotonic() + WORKER_EXIT_BOUND_SECONDS
    try:
        while any(alive(pid) for pid in pids):
            assert time.monotonic() < deadline, f"workers still alive: {[pid for pid in pids if alive(pid)]}"
            time.sleep(0.05)
    finally:
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr), pids


pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc; the pool forks")

SIGNALS = [(signal.SIGTERM, "tore: stopped by SIGTERM\n"), (signal.SIGHUP, "tore: stopped by SIGHUP\n"), (signal.SIGINT, "tore: interrupted\n")]


@pytest.mark.parametrize("signum, message", SIGNALS, ids=["SIGTERM", "SIGHUP", "SIGINT"])
@pytest.mark.parametrize("step", STEPS)
def test_a_stop_at_any_step_of_the_pools_start_or_shutdown_ends_the_run_cleanly(inputs, tmp_path, step, signum, message):
    result, pids = run_stopped_at(step, signum, inputs, tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (128 + signum, "", message)
    assert len(pids) == 2  # a stop during the start is held until both workers run (then both are stopped)
    assert not (tmp_path / "o").exists()  # its staging folder removed, then the folder made for the run


@pytest.mark.parametrize("signum, message", SIGNALS, ids=["SIGTERM", "SIGHUP", "SIGINT"])
def test_a_second_stop_while_the_workers_are_stopped_ends_the_run_at_once(inputs, tmp_path, signum, message):
    result, pids = run_stopped_at("second", signum, inputs, tmp_path)
    assert (result.returncode, result.stdout) == (128 + signum, "")
    assert result.stderr == f"{message[:-1]} (a second stop: ended at once)\n"
    assert len(pids) == 2
