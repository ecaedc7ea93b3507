"""`tore score docile` as a user runs it: every public vector case through the command line
(metrics, validation errors, the blank-page decision) and the human summary of the real sample."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from tests.docile.helpers import (
    CASES,
    COUNTS_ONLY,
    CRASH_CASE,
    CRASH_EXPECTED,
    RUNS,
    SAMPLE,
    _gold_as_predictions,
    _run_id,
    _sample_dataset,
    _skip_without_vectors,
    assert_metrics,
    write_case,
)

from tore_engine.cli import main


def tore(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tore_engine", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("case_run", RUNS or [None], ids=_run_id if RUNS else None)
def test_cli_matches_official(case_run, tmp_path, capsys):
    _skip_without_vectors()
    case, run = case_run
    dataset_dir, files = write_case(case, tmp_path)
    argv = ["score", "docile", "--dataset", str(dataset_dir), "--split", case["dataset"]["split"]]
    for task, path in files.items():
        argv += [f"--{task}", str(path)]
    argv += ["--iou-threshold", str(run["iou_threshold"]), "--json"]
    code = main(argv)
    out, err = capsys.readouterr()
    if case["name"] == CRASH_CASE:
        # docile.md section 8: a page without OCR words has no PCCs; the official code crashes.
        assert code == 0
        assert json.loads(out) == CRASH_EXPECTED
        return
    if "error" in run:
        assert run["error"]["type"] == "PredictionsValidationError"
        assert code != 0
        assert out == ""
        assert run["error"]["message"] in err
        assert "Traceback" not in err
        return
    assert code == 0, err
    output = json.loads(out)
    assert set(output) == {"kile", "lir"}
    for task in ("kile", "lir"):
        if run[task] is None:
            assert output[task] is None
        else:
            keys = COUNTS_ONLY if run[task].get("tie_sensitive_docs") else ("AP", *COUNTS_ONLY)
            assert_metrics(output[task], run[task]["metrics"], keys)




def test_validation_error_as_a_user_sees_it(tmp_path):
    _skip_without_vectors()
    case = next(c for c in CASES if c["name"] == "error_missing_document")
    dataset_dir, files = write_case(case, tmp_path)
    result = tore("score", "docile", "--dataset", str(dataset_dir), "--split", case["dataset"]["split"], "--kile", str(files["kile"]), "--json")
    assert result.returncode == 2
    assert result.stdout == ""
    assert "KILE: Predictions not provided for 1/2 documents." in result.stderr
    assert str(files["kile"]) in result.stderr
    assert "Traceback" not in result.stderr


def test_no_prediction_file_is_the_official_error(tmp_path):
    _sample_dataset()
    result = tore("score", "docile", "--dataset", str(SAMPLE), "--split", "dev")
    assert result.returncode == 2
    assert "You need to provide at least one prediction for at least one of the tasks." in result.stderr


def test_human_summary_of_the_real_sample(tmp_path):
    dataset = _sample_dataset()
    predictions = _gold_as_predictions(dataset, "kile")
    (docid,) = predictions
    del predictions[docid][0]  # one gold field missed: 10 of 11
    path = tmp_path / "kile.json"
    path.write_text(json.dumps(predictions))
    result = tore("score", "docile", "--dataset", str(SAMPLE), "--split", "dev", "--kile", str(path))
    assert result.returncode == 0, result.stderr
    assert "KILE: primary metric AP = 0.9091" in result.stdout  # 10/11, unscored: list order
    assert "LIR: no predictions (n/a)" in result.stdout
    assert dataset.documents[0].kile_golds[0].fieldtype in result.stdout  # the per-fieldtype table
    json_result = tore("score", "docile", "--dataset", str(SAMPLE), "--split", "dev", "--kile", str(path), "--json")
    assert json.loads(json_result.stdout) == {
        "kile": {"AP": 10 / 11, "f1": 2 * (10 / 11) / (1 + 10 / 11), "precision": 1.0, "recall": 10 / 11, "TP": 10, "FP": 0, "FN": 1},
        "lir": None,
    }


def test_help_names_every_option():
    result = tore("score", "docile", "--help")
    for option in ("--dataset", "--split", "--kile", "--lir", "--iou-threshold", "--json"):
        assert option in result.stdout
