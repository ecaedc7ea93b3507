"""What the DocILE tests share: the official evaluator's outputs (tests/vectors/docile_public.json)
written out as datasets, the real sample document (../shared/data/docile), and metric comparisons."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import SHARED, load_vector
from tore_engine.scorers.docile import load_dataset

SAMPLE = SHARED / "data" / "docile"
CRASH_CASE = "official_crash_page_without_words"
CRASH_EXPECTED = {"kile": {"AP": 1.0, "f1": 1.0, "precision": 1.0, "recall": 1.0, "TP": 1, "FP": 0, "FN": 0}, "lir": None}
COUNTS_ONLY = ("f1", "precision", "recall", "TP", "FP", "FN")


CASES = load_vector("docile_public.json")["cases"]
RUNS = [(case, run) for case in CASES for run in case["result"]["runs"]]
SCORED_RUNS = [(case, run) for case, run in RUNS if "error" not in run]  # the crash case has an error


def write_case(case: dict, folder: Path) -> tuple[Path, dict[str, Path]]:
    """The case's dataset in the official layout (folder `dataset`), and its prediction files."""
    dataset = folder / "dataset"
    for sub in ("annotations", "ocr"):
        (dataset / sub).mkdir(parents=True)
    for docid, document in case["dataset"]["documents"].items():
        (dataset / "annotations" / f"{docid}.json").write_text(json.dumps(document["annotation"]))
        (dataset / "ocr" / f"{docid}.json").write_text(json.dumps(document["ocr"]))
    (dataset / f"{case['dataset']['split']}.json").write_text(json.dumps(case["dataset"]["docids"]))
    files = {}
    for task, predictions in case["predictions"].items():
        if predictions is not None:
            files[task] = folder / f"{task}.json"
            files[task].write_text(json.dumps(predictions))
    return dataset, files


def assert_metrics(actual: dict, expected: dict, keys=("AP", *COUNTS_ONLY)) -> None:
    for key in keys:
        if isinstance(expected[key], int):
            assert actual[key] == expected[key], key
        else:
            assert actual[key] == pytest.approx(expected[key], abs=1e-9, rel=0), key


def _run_id(item) -> str:
    case, run = item
    return f"{case['name']}@{run['iou_threshold']}"


def _sample_dataset():
    if not (SAMPLE / "dev.json").is_file():
        pytest.skip(f"shared DocILE sample not found at {SAMPLE}; skipping")
    return load_dataset(SAMPLE, "dev")


def _gold_as_predictions(dataset, task: str) -> dict:
    return {
        d.docid: [
            {"bbox": list(f.bbox), "page": f.page, "fieldtype": f.fieldtype, "text": f.text}
            | ({"line_item_id": f.line_item_id} if task == "lir" else {})
            for f in d.golds(task)
        ]
        for d in dataset.documents
    }
