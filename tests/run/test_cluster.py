"""Dask schedulers (tore_engine.run.cluster): a real cluster (a scheduler and two worker processes on loopback)
gives the same bits as a local run, through an executor and through `tore evaluate --scheduler`; reaching
a scheduler, a cluster without workers and a scheduler that dies mid-run end within their stated bounds,
in one paragraph."""

from __future__ import annotations

import contextlib
import http.server
import io
import json
import os
import socketserver
import subprocess
import sys
import threading
import time
from concurrent.futures import Executor, Future

import pytest

from tests.helpers import load_vector, write_json
from tore_engine.cli import main
from tore_engine.formats.native import from_document as from_native
from tore_engine.run import cluster as cluster_module
from tore_engine.run.cluster import (
    CONNECT_TIMEOUT_SECONDS,
    WatchedExecutor,
    quiet_dask_logs,
)
from tore_engine.run.runner import evaluate_dataset

distributed = pytest.importorskip("distributed", reason="Dask is not installed (pip install 'tore-studio[dask]')")


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None) as local:
        yield local


@pytest.fixture(scope="module")
def public():
    pages = load_vector("tore_public_pages.json")
    return pages, from_native(pages["reference"], "gt.json"), from_native(pages["prediction"], "model.json")


def test_dask_executor_matches_a_local_run_bit_for_bit(cluster, public):
    _, reference, prediction = public
    local = evaluate_dataset(reference, prediction, workers=1)
    with distributed.Client(cluster) as client, client.get_executor() as executor:
        remote = evaluate_dataset(reference, prediction, executor=executor)
        assert len(client.scheduler_info()["workers"]) == 2
    assert remote.to_json() == local.to_json()
    assert remote.contribution_value.tobytes() == local.contribution_value.tobytes()


def test_cli_scheduler_option_matches_a_local_run(cluster, public, tmp_path):
    pages, _, _ = public
    gt, model = write_json(tmp_path / "gt.json", pages["reference"]), write_json(tmp_path / "model.json", pages["prediction"])
    runs = {}
    for name, extra in {"local": ["--workers", "1"], "dask": ["--scheduler", cluster.scheduler_address]}.items():
        result = subprocess.run(
            [sys.executable, "-m", "tore_engine", "evaluate", str(gt), str(model), "--out", str(tmp_path / name), *extra],
            capture_output=True, text=True, timeout=180,
        )
        assert result.returncode == 0, result.stderr
        runs[name] = (tmp_path / name / "report.json").read_bytes()
    assert runs["local"] == runs["dask"]
    assert json.loads(runs["dask"])["pages"] == 60


def test_unreachable_scheduler_is_a_clear_error(tmp_path, public):
    pages, _, _ = public
    gt = write_json(tmp_path / "gt.json", pages["reference"])
    result = subprocess.run(
        [sys.executable, "-m", "tore_engine", "evaluate", str(gt), str(gt), "--out", str(tmp_path / "o"), "--scheduler", "tcp://127.0.0.1:9"],
        capture_output=True, text=True, timeout=180,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in result.stderr


# --- bounded waits -----------------------------------------------------------------------------

HANG_BOUND_SECONDS = CONNECT_TIMEOUT_SECONDS + 60  # start-up and loading on a busy machine included


class SilentHandler(socketserver.BaseRequestHandler):
    """Accepts the connection and never says a word."""

    def handle(self) -> None:
        self.server.stop.wait()


class KeepAliveHTTP(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keeps the connection open after answering


@pytest.fixture(params=["silent", "http"])
def not_a_scheduler(request):
    if request.param == "silent":
        server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), SilentHandler)
    else:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), KeepAliveHTTP)
    server.daemon_threads = True
    server.stop = threading.Event()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"tcp://127.0.0.1:{server.server_address[1]}"
    server.stop.set()
    server.shutdown()
    server.server_close()


def test_a_port_that_is_no_scheduler_ends_within_the_stated_timeout(public, tmp_path, not_a_scheduler):
    pages, _, _ = public
    gt = write_json(tmp_path / "gt.json", pages["reference"])
    result = subprocess.run(
        [sys.executable, "-m", "tore_engine", "evaluate", str(gt), str(gt), "--out", str(tmp_path / "o"), "--scheduler", not_a_scheduler],
        capture_output=True, text=True, timeout=HANG_BOUND_SECONDS,
    )
    assert result.returncode == 2 and result.stdout == "" and result.stderr.count("\n") == 1
    assert f"tore: error: cannot reach the Dask scheduler at {not_a_scheduler}" in result.stderr


def test_a_cluster_without_workers_fails_clearly(public, tmp_path, monkeypatch):
    pages, _, _ = public
    gt = write_json(tmp_path / "gt.json", pages["reference"])
    monkeypatch.setattr(cluster_module, "NO_WORKERS_TIMEOUT_SECONDS", 2)
    monkeypatch.setattr(cluster_module, "WORKER_POLL_SECONDS", 0.2)
    with distributed.LocalCluster(n_workers=0, host="127.0.0.1", dashboard_address=":0") as empty:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["evaluate", str(gt), str(gt), "--out", str(tmp_path / "o"), "--scheduler", empty.scheduler_address])
    assert (code, out.getvalue()) == (2, "")
    assert err.getvalue() == (
        f"tore: error: the Dask cluster at {empty.scheduler_address} has had no worker for 2 s; start one "
        f"(dask worker {empty.scheduler_address}) or run without --scheduler\n"
    )
    assert not (tmp_path / "o").exists()


def test_the_scheduler_address_comes_from_the_environment_unless_given(cluster, public, tmp_path):
    pages, _, _ = public
    gt, model = write_json(tmp_path / "gt.json", pages["reference"]), write_json(tmp_path / "model.json", pages["prediction"])
    command = [sys.executable, "-m", "tore_engine", "evaluate", str(gt), str(model), "--workers", "1"]
    local = subprocess.run([*command, "--out", str(tmp_path / "local")], capture_output=True, text=True, timeout=180)
    bogus = {**os.environ, "DASK_SCHEDULER_ADDRESS": "tcp://127.0.0.1:9"}
    refused = subprocess.run([*command, "--out", str(tmp_path / "env")], capture_output=True, text=True, timeout=180, env=bogus)
    assert refused.returncode == 2 and "tcp://127.0.0.1:9" in refused.stderr  # the variable was used
    flag = subprocess.run([*command, "--out", str(tmp_path / "flag"), "--scheduler", cluster.scheduler_address],
                          capture_output=True, text=True, timeout=180, env=bogus)
    assert (local.returncode, flag.returncode) == (0, 0), flag.stderr
    assert (tmp_path / "flag" / "report.json").read_bytes() == (tmp_path / "local" / "report.json").read_bytes()


# --- a scheduler that dies mid-run (issue 20, B16) -----------------------------------------------


class FakeExecutor(Executor):
    """Hands out futures that the test settles itself; `shutdown` fails as Dask's does once its
    client has closed (it cancels what is left through the lost scheduler)."""

    def __init__(self) -> None:
        self.futures: list[Future] = []

    def submit(self, fn, /, *args, **kwargs) -> Future:
        self.futures.append(Future())
        return self.futures[-1]

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        raise RuntimeError("Client is closed. Can't send cancel-keys message.")


def test_tasks_cancelled_under_the_executor_fail_with_the_lost_scheduler_error():
    inner = FakeExecutor()
    executor = WatchedExecutor(inner, lambda: 1, "tcp://10.0.0.5:8786", connected=lambda: False)
    done, lost = executor.submit(print), executor.submit(print)
    inner.futures[0].set_result(7)
    inner.futures[1].cancel()
    assert done.result() == 7
    assert str(lost.exception()) == (
        "the Dask scheduler at tcp://10.0.0.5:8786 stopped answering during the run (or the cluster was restarted), "
        "and this run's tasks were lost with it; start the scheduler again (dask scheduler), or run without --scheduler")
    executor.shutdown(wait=False)  # nothing left to cancel on a scheduler that is gone: no error


def test_a_failing_shutdown_still_fails_while_the_client_is_connected():
    executor = WatchedExecutor(FakeExecutor(), lambda: 1, "tcp://10.0.0.5:8786", connected=lambda: True)
    with pytest.raises(RuntimeError, match="cancel-keys"):
        executor.shutdown(wait=False)


def test_distributed_logs_nothing_while_quiet_and_as_before_after():
    import logging

    loggers = [logging.getLogger(name) for name in ("distributed", "distributed.client", "distributed.scheduler")]
    before = [logger.level for logger in loggers]
    assert loggers[1].isEnabledFor(logging.ERROR)  # "Failed to reconnect to scheduler ..." is an error
    with quiet_dask_logs():
        later = logging.getLogger("distributed.comm.tore-test")  # a logger first used during the run
        assert not any(logger.isEnabledFor(logging.CRITICAL) for logger in [*loggers, later])
    assert [logger.level for logger in loggers] == before and loggers[1].isEnabledFor(logging.ERROR)


SLOW_TASKS = """
import time

import tore_engine.run.runner

evaluate = tore_engine.run.runner.evaluate_task


def slow(*args, **kwargs):
    time.sleep(1)
    return evaluate(*args, **kwargs)


tore_engine.run.runner.evaluate_task = slow  # tasks name the function by module and name: this one runs
"""


@pytest.fixture
def doomed_scheduler(tmp_path):
    """A scheduler and a worker in processes of their own (so that the scheduler can be killed
    alone), the worker taking a second a batch: yields the scheduler's process and address; both
    ended afterwards."""
    scheduler_file, preload = tmp_path / "scheduler.json", write_text(tmp_path / "slow_tasks.py", SLOW_TASKS)
    dask = [sys.executable, "-m", "dask"]
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    scheduler = subprocess.Popen([*dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                  "--scheduler-file", str(scheduler_file)], **quiet)
    worker = None
    try:
        deadline = time.monotonic() + HANG_BOUND_SECONDS
        while not scheduler_file.exists() or not scheduler_file.read_text():
            assert time.monotonic() < deadline, "the scheduler did not start"
            time.sleep(0.2)
        address = json.loads(scheduler_file.read_text())["address"]
        worker = subprocess.Popen([*dask, "worker", "--scheduler-file", str(scheduler_file), "--nthreads", "1",
                                   "--no-dashboard", "--preload", str(preload)], **quiet)
        with distributed.Client(address, timeout="30s") as client:
            client.wait_for_workers(1, timeout=HANG_BOUND_SECONDS)
        yield scheduler, address
    finally:
        for process in (worker, scheduler):
            if process is not None:
                process.kill()
                process.wait()


def write_text(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_a_scheduler_that_dies_mid_run_ends_in_one_clear_paragraph(public, tmp_path, doomed_scheduler):
    # seen: "internal error (CancelledError) ... this is a bug", after distributed's own log line
    # "distributed.client - ERROR - Failed to reconnect to scheduler after 10.00 seconds, closing client"
    scheduler, address = doomed_scheduler
    pages, _, _ = public
    gt, model = write_json(tmp_path / "gt.json", pages["reference"]), write_json(tmp_path / "model.json", pages["prediction"])
    run = subprocess.Popen(
        [sys.executable, "-m", "tore_engine", "evaluate", str(gt), str(model), "--out", str(tmp_path / "o"), "--workers", "1",
         "--scheduler", address], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        with distributed.Client(address, timeout="30s") as watcher:
            while not any(watcher.processing().values()):  # the run's first batch is on the worker
                assert run.poll() is None, run.communicate()
                time.sleep(0.05)
            scheduler.kill()
        out, err = run.communicate(timeout=HANG_BOUND_SECONDS)
    finally:
        run.kill()
    assert (run.returncode, out) == (2, "")
    assert err == (
        f"tore: error: the Dask scheduler at {address} stopped answering during the run (or the cluster was restarted), "
        "and this run's tasks were lost with it; start the scheduler again (dask scheduler), or run without --scheduler\n"
    )
    assert not (tmp_path / "o").exists()
