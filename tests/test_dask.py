"""A real Dask cluster (a scheduler and two worker processes on loopback) gives the same bits."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import load_shared_json, write_json

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
