"""`tore evaluate --format` on the benchmarks' own files (real samples in ../shared/data)."""

from __future__ import annotations

import json

from tests.cli.test_evaluate import tore
from tests.helpers import shared_path


def report_of(tmp_path, *args: str) -> dict:
    result = tore("evaluate", *args, "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    return json.loads((tmp_path / "report.json").read_text())


def test_funsd_entities_against_themselves_are_perfect(tmp_path):
    annotations = shared_path("data", "funsd", "funsd", "testing_data", "annotations")
    report = report_of(tmp_path, str(annotations), str(annotations), "--format", "funsd")
    assert report["mode"] == "single" and report["classes"] == ["Background", "header", "question", "answer", "other"]
    assert report["pages"] == 10
    assert all(scores["f1"] == 1.0 for scores in report["per_class"].values())
    assert report["reduced"]["recall"] == [[1.0, 0.0], [0.0, 1.0]]


def test_omnidocbench_model_in_its_own_taxonomy_is_scored_in_dual_mode(tmp_path):
    reference = shared_path("data", "omnidocbench", "OmniDocBench_demo.json")
    prediction = shared_path("data", "omnidocbench", "pred_layout_detection", "detection_prediction.json")
    report = report_of(tmp_path, str(reference), str(prediction), "--format", "omnidocbench")
    assert report["mode"] == "dual" and report["pages"] == 18 and report["per_class"] is None
    rows = [name for name in report["classes"] if not name.startswith("detection_prediction_")]
    assert rows[1:3] == ["omnidocbench_title", "omnidocbench_text_block"] and len(rows) == 16
    confusion = report["matrices"]["confusion"]
    total = sum(map(sum, confusion))
    # Taxonomy invariance: the reduced matrix holds the same mass as the full one.
    assert abs(sum(map(sum, report["reduced"]["confusion"])) - total) <= 1e-6 * total


def test_docile_gold_fields_as_prediction_are_perfect(tmp_path):
    dataset = shared_path("data", "docile")
    annotation = json.loads((dataset / "annotations" / "516f2d61ea404b30a9192a72.json").read_text())
    fields = [{key: field[key] for key in ("bbox", "page", "fieldtype")} for field in annotation["field_extractions"]]
    predictions = tmp_path / "kile.json"
    predictions.write_text(json.dumps({"516f2d61ea404b30a9192a72": fields}))
    report = report_of(tmp_path / "out", str(dataset), str(predictions), "--format", "docile")
    assert report["mode"] == "single" and report["pages"] == 1
    confusion = report["matrices"]["confusion"]
    present = [name for k, name in enumerate(report["classes"]) if k and confusion[k][k] > 0]
    assert set(present) == {field["fieldtype"] for field in fields}  # every field type, on its own diagonal cell
    assert all(report["per_class"][name]["f1"] == 1.0 for name in present)
    assert report["reduced"]["recall"] == [[1.0, 0.0], [0.0, 1.0]]
