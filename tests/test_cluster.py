"""Dask schedulers (tore_engine.cluster): a real cluster (a scheduler and two worker processes on loopback)
gives the same bits as a local run, through an executor and through `tore evaluate --scheduler`; reaching
a scheduler, and a cluster without workers, end within their stated bounds."""

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

import pytest
from tests.helpers import load_shared_json, write_json

from tore_engine import cluster as cluster_module
from tore_engine.cli import main
from tore_engine.cluster import CONNECT_TIMEOUT_SECONDS
from tore_engine.dataset import evaluate_dataset
from tore_engine.formats.native import from_document as from_native
from tore_engine.report import build_report

distributed = pytest.importorskip("distributed", reason="Dask is not installed (pip install 'tore-studio[dask]')")


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None) as local:
        yield local


@pytest.fixture(scope="module")
def public():
    pages = load_shared_json("vectors", "tore_public_pages.json")
    return pages, from_native(pages["reference"], "gt.json"), from_native(pages["prediction"], "model.json")


def test_dask_executor_matches_a_local_run_bit_for_bit(cluster, public):
    _, reference, prediction = public
    local = evaluate_dataset(reference, prediction, workers=1)
    with distributed.Client(cluster) as client, client.get_executor() as executor:
        remote = evaluate_dataset(reference, prediction, executor=executor)
        assert len(client.scheduler_info()["workers"]) == 2
    assert build_report(remote) == build_report(local)
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
