"""`tore score docile` as a user runs it: every public vector case through the command line
(metrics, validation errors, the blank-page decision) and the human summary of the real sample."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.cli.helpers import docile_dataset, exits_cleanly, run_cli
from tests.helpers import DOCILE_ID
from tests.helpers import write_json as write
from tests.mutations import EXAMPLES, any_mutation, mutated
from tests.scorers.docile.helpers import (
    CASES,
    COUNTS_ONLY,
    CRASH_CASE,
    CRASH_EXPECTED,
    RUNS,
    SAMPLE,
    _gold_as_predictions,
    _run_id,
    _sample_dataset,
    assert_metrics,
    write_case,
)
from tore_engine.cli import main


def tore(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tore_engine", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("case_run", RUNS or [None], ids=_run_id if RUNS else None)
def test_cli_matches_official(case_run, tmp_path, capsys):
    case, run = case_run
    dataset_dir, files = write_case(case, tmp_path)
    argv = ["score", "docile", "--dataset", str(dataset_dir), "--split", case["dataset"]["split"]]
    for task, path in files.items():
        argv += [f"--{task}", str(path)]
    argv += ["--iou-threshold", str(run["iou_threshold"]), "--json"]
    code = main(argv)
    out, err = capsys.readouterr()
    if case["name"] == CRASH_CASE:
        # docs/benchmarks.md#pages-without-ocr-words: a page without OCR words has no PCCs; the official code crashes.
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


# --- hostile input (issue 10, safe to serve) ----------------------------------------------------------


@EXAMPLES
@given(data=st.data())
def test_docile_mutated_predictions_annotations_and_ocr(tmp_path, docile_files, data):
    _, annotation, ocr, predictions = docile_files
    target = data.draw(st.sampled_from(["predictions", "annotation", "ocr"]))
    documents = {"predictions": predictions, "annotation": annotation, "ocr": ocr}
    documents[target] = mutated(documents[target], *data.draw(any_mutation(documents[target])))
    root = docile_dataset(tmp_path / "dataset", documents["annotation"], documents["ocr"])
    write(tmp_path / "kile.json", documents["predictions"])
    exits_cleanly("score", "docile", "--dataset", str(root), "--split", "dev", "--kile", str(tmp_path / "kile.json"), "--json")


def test_a_docid_listed_twice_is_scored_once_with_a_warning(tmp_path, docile_files):
    _, annotation, ocr, predictions = docile_files
    root = docile_dataset(tmp_path / "dataset", annotation, ocr)
    write(tmp_path / "kile.json", predictions)
    once = run_cli("score", "docile", "--dataset", str(root), "--split", "dev", "--kile", str(tmp_path / "kile.json"), "--json")
    write(root / "dev.json", [DOCILE_ID, DOCILE_ID])
    code, out, err = run_cli("score", "docile", "--dataset", str(root), "--split", "dev", "--kile", str(tmp_path / "kile.json"), "--json")
    assert code == 0 and out == once[1]
    assert json.loads(out)["kile"]["TP"] == len(annotation["field_extractions"]) == 11
    assert err == f"tore: the split lists document {DOCILE_ID} 2 times; it is scored once\n"


@pytest.mark.parametrize("docid", ["../../outside", "/etc/hostname", "sub/../../../outside"])
def test_a_docid_cannot_read_outside_the_dataset_folder(tmp_path, docile_files, docid):
    _, annotation, ocr, _ = docile_files
    root = docile_dataset(tmp_path / "deep" / "dataset", annotation, ocr)
    write(tmp_path / "outside.json", annotation)  # a readable annotation just outside the folder
    write(root / "dev.json", [docid])
    write(tmp_path / "kile.json", {docid: []})
    code, out, err = run_cli("score", "docile", "--dataset", str(root), "--split", "dev", "--kile", str(tmp_path / "kile.json"))
    assert (code, out) == (2, "")
    assert f"the annotations file of document {docid!r}" in err and "is outside the folder it must stay in" in err


def test_a_symbolic_link_out_of_the_dataset_is_refused(tmp_path, docile_files):
    _, annotation, ocr, predictions = docile_files
    root = docile_dataset(tmp_path / "dataset", annotation, ocr)
    write(tmp_path / "elsewhere.json", ocr)
    (root / "ocr" / f"{DOCILE_ID}.json").unlink()
    (root / "ocr" / f"{DOCILE_ID}.json").symlink_to(tmp_path / "elsewhere.json")
    write(tmp_path / "kile.json", predictions)
    code, _, err = run_cli("score", "docile", "--dataset", str(root), "--split", "dev", "--kile", str(tmp_path / "kile.json"))
    assert code == 2 and "is outside the folder it must stay in" in err


@pytest.mark.parametrize("key, value, problem", [
    ("page", 2**70, "Expected int <= 1048576 (at 516f2d61ea404b30a9192a72[0].page)"),
    ("page", -(2**63) - 1, "Expected int >= -1048576 (at 516f2d61ea404b30a9192a72[0].page)"),
    ("line_item_id", 2**64, "Expected int <= 9223372036854775807 (at 516f2d61ea404b30a9192a72[0].line_item_id)"),
])
def test_integers_beyond_their_bounds_are_schema_errors(tmp_path, docile_files, key, value, problem):
    _, annotation, ocr, predictions = docile_files
    root = docile_dataset(tmp_path / "dataset", annotation, ocr)
    first = predictions[DOCILE_ID][0] | {key: value}
    write(tmp_path / "kile.json", {DOCILE_ID: [first, *predictions[DOCILE_ID][1:]]})
    code, out, err = run_cli("score", "docile", "--dataset", str(root), "--split", "dev", "--kile", str(tmp_path / "kile.json"))
    assert (code, out) == (2, "") and err.endswith(f"kile.json: {problem}\n"), err


def test_an_unknown_prediction_key_is_dropped_with_a_warning_as_docile_benchmark_does(tmp_path, docile_files):
    _, annotation, ocr, predictions = docile_files
    root = docile_dataset(tmp_path / "dataset", annotation, ocr)
    write(tmp_path / "kile.json", predictions)
    clean = run_cli("score", "docile", "--dataset", str(root), "--split", "dev", "--kile", str(tmp_path / "kile.json"), "--json")
    write(tmp_path / "kile.json", {DOCILE_ID: [field | {"confidence": 0.3, "scroe": 1} for field in predictions[DOCILE_ID]]})
    code, out, err = run_cli("score", "docile", "--dataset", str(root), "--split", "dev", "--kile", str(tmp_path / "kile.json"), "--json")
    assert code == 0 and out == clean[1]
    assert "unknown field key(s) 'confidence', 'scroe' ignored, as docile-benchmark ignores them" in err
