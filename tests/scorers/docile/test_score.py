"""`score_docile` and `evaluate` (tore_engine.scorers.docile.score) against the official evaluator's outputs,
docile-benchmark itself, and the real sample document."""

from __future__ import annotations

import json
import math

import pytest

from tests.helpers import DOCILE_ID, REPOSITORY
from tests.scorers.docile.helpers import (
    CASES,
    COUNTS_ONLY,
    SAMPLE,
    SCORED_RUNS,
    _gold_as_predictions,
    _run_id,
    _sample_dataset,
    assert_metrics,
    write_case,
)
from tore_engine.core.errors import InputError
from tore_engine.scorers.docile import Field, evaluate, load_predictions, score_docile


@pytest.mark.parametrize("case_run", SCORED_RUNS or [None], ids=_run_id if SCORED_RUNS else None)
def test_library_matches_official(case_run, tmp_path):
    case, run = case_run
    dataset_dir, files = write_case(case, tmp_path)
    result = score_docile(dataset_dir, case["dataset"]["split"], files.get("kile"), files.get("lir"), run["iou_threshold"])
    for task in ("kile", "lir"):
        expected = run[task]
        actual = getattr(result, task)
        if expected is None:
            assert actual is None
            continue
        tie_sensitive = bool(expected.get("tie_sensitive_docs"))
        keys = COUNTS_ONLY if tie_sensitive else ("AP", *COUNTS_ONLY)
        assert_metrics(actual.metrics().to_json(), expected["metrics"], keys)
        assert actual.primary == pytest.approx(run["primary"][task], abs=1e-9)
        if not tie_sensitive:
            assert_metrics(actual.metrics(same_text=True).to_json(), expected["metrics_same_text"])
            assert sorted(actual.table.fieldtypes()) == sorted(expected["metrics_per_fieldtype"])
            for fieldtype, metrics in expected["metrics_per_fieldtype"].items():
                assert_metrics(actual.metrics(fieldtype=fieldtype).to_json(), metrics)
        for docid, metrics in expected["metrics_per_document"].items():
            doc_keys = COUNTS_ONLY if docid in expected.get("tie_sensitive_docs", []) else ("AP", *COUNTS_ONLY)
            assert_metrics(actual.metrics(docid=docid).to_json(), metrics, doc_keys)
        for docid, matching in expected["matching"].items():
            if docid in expected.get("tie_sensitive_docs", []):
                continue
            mine = actual.matchings[docid]
            assert [g if g >= 0 else None for g in mine.pred_to_gold.tolist()] == matching["prediction_to_gold"]
            assert sorted(mine.false_negative_golds) == sorted(matching["false_negative_golds"])
            if "pred_li_to_gold_li" in matching:
                assert {str(k): v for k, v in mine.line_item_assignment.items()} == matching["pred_li_to_gold_li"]


def test_real_sample_gold_as_prediction_is_perfect(tmp_path):
    dataset = _sample_dataset()
    kile, lir = tmp_path / "kile.json", tmp_path / "lir.json"
    kile.write_text(json.dumps(_gold_as_predictions(dataset, "kile")))
    lir.write_text(json.dumps(_gold_as_predictions(dataset, "lir")))
    result = score_docile(SAMPLE, "dev", kile, lir)
    assert result.to_json() == {
        "kile": {"AP": 1.0, "f1": 1.0, "precision": 1.0, "recall": 1.0, "TP": 11, "FP": 0, "FN": 0},
        "lir": {"AP": 1.0, "f1": 1.0, "precision": 1.0, "recall": 1.0, "TP": 40, "FP": 0, "FN": 0},
    }


def test_panel_structure_is_plain_json(tmp_path):
    """The structure an app panel renders: headline, tables, and per document the matched pairs."""
    case = next(c for c in CASES if c["name"] == "lir_maximum_matching_not_greedy")
    run = case["result"]["runs"][0]
    dataset_dir, files = write_case(case, tmp_path)
    result = score_docile(dataset_dir, case["dataset"]["split"], files.get("kile"), files.get("lir"))
    panel = json.loads(json.dumps(result.panel()))  # JSON-able as it is
    assert panel["kile"] is None and panel["iou_threshold"] == 1.0
    lir = panel["lir"]
    assert lir["primary_metric"] == "f1"
    assert_metrics(lir["metrics"], run["lir"]["metrics"])
    assert set(lir["per_fieldtype"]) == set(run["lir"]["metrics_per_fieldtype"])
    for docid, matching in run["lir"]["matching"].items():
        document = lir["documents"][docid]
        assert [p["gold"] for p in document["predictions"]] == matching["prediction_to_gold"]
        assert document["false_negative_golds"] == sorted(matching["false_negative_golds"])
        assert document["line_item_assignment"] == matching["pred_li_to_gold_li"]
        for k, gold in enumerate(document["golds"]):
            assert (gold["prediction"] is None) == (k in matching["false_negative_golds"])
        assert len(document["predictions"][0]["bbox"]) == 4


def test_results_of_disjoint_halves_merge_into_the_whole(tmp_path):
    from tore_engine.scorers.docile.dataset import load_documents

    case = next(c for c in CASES if c["name"] == "kile_stress_scored")
    dataset_dir, files = write_case(case, tmp_path)
    predictions = load_predictions(files["kile"])
    docids = case["dataset"]["docids"]
    halves = [docids[: len(docids) // 2], docids[len(docids) // 2 :]]
    parts = [
        evaluate(load_documents(dataset_dir, half), {d: predictions[d] for d in half}, None).kile for half in halves
    ]
    merged = parts[0].merged(parts[1])
    expected = case["result"]["runs"][0]["kile"]
    assert_metrics(merged.metrics().to_json(), expected["metrics"])
    for fieldtype, metrics in expected["metrics_per_fieldtype"].items():
        assert_metrics(merged.metrics(fieldtype=fieldtype).to_json(), metrics)


def _benchmark_module():
    import importlib.util

    path = REPOSITORY / "benchmarks" / "bench_docile.py"
    spec = importlib.util.spec_from_file_location("bench_docile", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("iou_threshold", [1.0, 0.8, 0.5])
def test_agrees_with_the_official_package_on_generated_documents(tmp_path, iou_threshold):
    """30 synthetic documents (the benchmark's generator) scored by docile-benchmark 0.3.5 itself."""
    pytest.importorskip("docile", reason="docile-benchmark (the 'bench' extra) is not installed")
    from docile.dataset import CachingConfig, Dataset
    from docile.dataset import load_predictions as official_predictions
    from docile.evaluation import evaluate_dataset

    bench = _benchmark_module()
    dataset_dir, kile, lir = bench.generate(tmp_path / "dataset", 30, seed=7)
    official = evaluate_dataset(
        Dataset(bench.SPLIT, dataset_dir, cache_images=CachingConfig.OFF),
        official_predictions(kile),
        official_predictions(lir),
        iou_threshold,
    )
    ours = score_docile(dataset_dir, bench.SPLIT, kile, lir, iou_threshold)
    for task in ("kile", "lir"):
        mine = getattr(ours, task)
        assert_metrics(mine.metrics().to_json(), official.get_metrics(task))
        assert_metrics(mine.metrics(same_text=True).to_json(), official.get_metrics(task, same_text=True))
        for fieldtype in mine.table.fieldtypes():
            assert_metrics(mine.metrics(fieldtype=fieldtype).to_json(), official.get_metrics(task, fieldtype=fieldtype))
        for docid in official.task_to_docid_to_matching[task]:
            assert_metrics(mine.metrics(docid=docid).to_json(), official.get_metrics(task, docids=[docid]))


def test_a_non_finite_iou_threshold_is_refused_by_the_scorer_itself(docile_files):
    from tore_engine.scorers.docile import evaluate, load_dataset, score_docile

    dataset_dir, _, _, predictions = docile_files
    dataset = load_dataset(dataset_dir, "dev")
    fields = {DOCILE_ID: [Field(tuple(f["bbox"]), f["page"], f["fieldtype"], score=0.5) for f in predictions[DOCILE_ID]]}
    for threshold in (math.nan, math.inf, -math.inf):
        with pytest.raises(InputError, match="the PCC IoU threshold must be a finite number"):
            evaluate(dataset, fields, None, threshold)
    with pytest.raises(InputError, match="the PCC IoU threshold must be a finite number, got nan"):
        score_docile(dataset_dir, "dev", None, None, math.nan)
    assert evaluate(dataset, fields, None, 1.0).kile.metrics().TP == 11
