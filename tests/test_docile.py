"""DocILE scorer against the official evaluator's outputs (shared/vectors/docile_public.json) and
the real sample document (shared/data/docile)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from tore_engine.docile import evaluate, load_dataset, load_predictions, score_docile
from tore_engine.docile.metrics import average_precision
from tore_engine.errors import InputError

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared"
VECTORS = SHARED / "vectors" / "docile_public.json"
SAMPLE = SHARED / "data" / "docile"
CRASH_CASE = "official_crash_page_without_words"
CRASH_EXPECTED = {"kile": {"AP": 1.0, "f1": 1.0, "precision": 1.0, "recall": 1.0, "TP": 1, "FP": 0, "FN": 0}, "lir": None}
COUNTS_ONLY = ("f1", "precision", "recall", "TP", "FP", "FN")


def _load_cases() -> list[dict]:
    if not VECTORS.is_file():
        return []
    return json.loads(VECTORS.read_text())["cases"]


CASES = _load_cases()
RUNS = [(case, run) for case in CASES for run in case["result"]["runs"]]
SCORED_RUNS = [(case, run) for case, run in RUNS if "error" not in run]  # the crash case has an error


def _skip_without_vectors() -> None:
    if not CASES:
        pytest.skip(f"shared vectors not found at {VECTORS}; skipping")


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


@pytest.mark.parametrize("case_run", SCORED_RUNS or [None], ids=_run_id if SCORED_RUNS else None)
def test_library_matches_official(case_run, tmp_path):
    _skip_without_vectors()
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


@pytest.mark.parametrize("case", CASES or [None], ids=[c["name"] for c in CASES] if CASES else None)
def test_pccs_match_official(case, tmp_path):
    _skip_without_vectors()
    dataset_dir, _ = write_case(case, tmp_path)
    dataset = load_dataset(dataset_dir, case["dataset"]["split"])
    for document in dataset.documents:
        expected = np.array(case["result"]["pccs"][document.docid], dtype=np.float64).reshape(-1, 3)
        assert document.pccs.shape == expected.shape
        assert np.array_equal(document.pccs, expected)  # exact: coverage depends on exact floats


def test_crash_page_matching(tmp_path):
    """The blank page decision at library level: prediction 0 -> gold 0 (docile.md section 8)."""
    _skip_without_vectors()
    case = next(c for c in CASES if c["name"] == CRASH_CASE)
    assert case["result"]["runs"][0]["error"]["type"] == "KeyError"
    dataset_dir, files = write_case(case, tmp_path)
    result = score_docile(dataset_dir, case["dataset"]["split"], files.get("kile"), files.get("lir"))
    (docid,) = result.kile.matchings
    assert result.kile.matchings[docid].pred_to_gold.tolist() == [0]
    assert result.to_json() == CRASH_EXPECTED


def test_average_precision_by_hand():
    # ranks: TP, FP, TP, FP with 4 golds -> points (.25, 1), (.25, .5), (.5, 2/3), (.5, .5)
    # envelope: 1, 2/3, 2/3, .5 -> AP = .25 * 1 + .25 * 2/3
    assert average_precision(np.array([True, False, True, False]), 4) == pytest.approx(0.25 + 0.25 * 2 / 3, abs=1e-15)
    assert average_precision(np.array([True]), 0) == 0.0
    assert average_precision(np.array([], dtype=bool), 3) == 0.0


def _sample_dataset():
    if not (SAMPLE / "dev.json").is_file():
        pytest.skip(f"shared DocILE sample not found at {SAMPLE}; skipping")
    return load_dataset(SAMPLE, "dev")


def test_real_sample_loads():
    dataset = _sample_dataset()
    (document,) = dataset.documents
    assert (len(document.kile_golds), len(document.lir_golds)) == (11, 40)
    assert len({field.line_item_id for field in document.lir_golds}) == 8
    assert len(document.pccs) == 1346  # 256 OCR words, 1346 characters (NOTICE.md)
    assert document.page_sizes == [(1692, 2245)]
    assert document.pdf is not None


def _gold_as_predictions(dataset, task: str) -> dict:
    return {
        d.docid: [
            {"bbox": list(f.bbox), "page": f.page, "fieldtype": f.fieldtype, "text": f.text}
            | ({"line_item_id": f.line_item_id} if task == "lir" else {})
            for f in d.golds(task)
        ]
        for d in dataset.documents
    }


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


def test_missing_snapped_geometry_names_the_document(tmp_path):
    _skip_without_vectors()
    case = CASES[0]
    dataset_dir, _ = write_case(case, tmp_path)
    docid = case["dataset"]["docids"][0]
    ocr_file = dataset_dir / "ocr" / f"{docid}.json"
    ocr = json.loads(ocr_file.read_text())
    del ocr["pages"][0]["blocks"][0]["lines"][0]["words"][0]["snapped_geometry"]
    ocr_file.write_text(json.dumps(ocr))
    with pytest.raises(InputError, match=f"document {docid}.*snapped_geometry"):
        load_dataset(dataset_dir, case["dataset"]["split"])


def test_nan_score_is_rejected(tmp_path):
    path = tmp_path / "kile.json"
    path.write_text('{"d": [{"bbox": [0, 0, 1, 1], "page": 0, "fieldtype": "x", "score": NaN}]}')
    with pytest.raises(InputError, match="NaN"):
        load_predictions(path)


def test_layout_sets_of_the_real_sample(tmp_path):
    from tore_engine.docile.tore_sets import docile_layout_sets

    dataset = _sample_dataset()
    (document,) = dataset.documents
    predictions = _gold_as_predictions(dataset, "kile")
    for k, field in enumerate(predictions[document.docid]):
        field["score"] = k / 10
    predictions[document.docid].append({"bbox": [0, 0, 0.1, 0.1], "page": 3, "fieldtype": "x", "score": 1.0})
    path = tmp_path / "kile.json"
    path.write_text(json.dumps(predictions))
    gold, predicted = docile_layout_sets(SAMPLE, "dev", path)
    assert [page.id for page in gold.pages] == [f"{document.docid}/p0"] == [page.id for page in predicted.pages]
    page = gold.pages[0]
    assert (page.width, page.height) == (1692, 2245)
    assert page.labels == [field.fieldtype for field in document.kile_golds]
    first = document.kile_golds[0].bbox
    assert page.bboxes[0].tolist() == [first[0] * 1692, first[1] * 2245, first[2] * 1692, first[3] * 2245]
    assert page.image.path == SAMPLE / "pdfs" / f"{document.docid}.pdf" and page.image.pdf_page == 0
    assert page.scores is None
    assert predicted.pages[0].box_count == 11  # the page-3 prediction is left out ...
    assert predicted.pages[0].scores.tolist() == [k / 10 for k in range(11)]
    (warning,) = predicted.warnings  # ... with a warning
    assert (warning.page, warning.box, warning.side) == (f"{document.docid}/p3", 11, "prediction")
    # Without a split, the documents of the prediction file; LIR detected from line_item_id.
    lir = tmp_path / "lir.json"
    lir.write_text(json.dumps(_gold_as_predictions(dataset, "lir")))
    gold, predicted = docile_layout_sets(SAMPLE, None, lir)
    assert gold.pages[0].box_count == predicted.pages[0].box_count == 40
    assert set(gold.pages[0].labels) == {field.fieldtype for field in document.lir_golds}


def test_layout_sets_apply_the_official_checks(tmp_path):
    from tore_engine.docile.tore_sets import docile_layout_sets

    dataset = _sample_dataset()
    predictions = _gold_as_predictions(dataset, "kile")
    next(iter(predictions.values()))[0]["bbox"] = [0.5, 0, 0.4, 1]
    path = tmp_path / "kile.json"
    path.write_text(json.dumps(predictions))
    with pytest.raises(InputError, match="KILE: Prediction bbox does not have valid relative coordinates."):
        docile_layout_sets(SAMPLE, "dev", path)


def test_panel_structure_is_plain_json(tmp_path):
    """The structure an app panel renders: headline, tables, and per document the matched pairs."""
    _skip_without_vectors()
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
    from tore_engine.docile.dataset import load_documents

    _skip_without_vectors()
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

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_docile.py"
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


def test_structural_errors_name_the_document(tmp_path):
    path = tmp_path / "kile.json"
    path.write_text('{"d1": [], "d2": [{"bbox": [0, 0, 1, 1], "page": "0", "fieldtype": "x"}]}')
    with pytest.raises(InputError, match=r"expected int, got str \(at d2\[0\]\.page\)"):
        load_predictions(path)
    path.write_text('{"d": [{"bbox": [0, 0, 1, 1], "page": 0, "fieldtype": "x", "score": Infinity}]}')
    assert load_predictions(path)["d"][0].score == math.inf  # Python's JSON dialect, as the official loader reads it
    path.write_text('{"d": [')
    with pytest.raises(InputError, match="is not valid JSON: Input data was truncated"):
        load_predictions(path)


def test_predictions_for_a_document_outside_the_split(tmp_path):
    """Message checked against docile-benchmark 0.3.5 by hand (the vectors have no such case)."""
    _skip_without_vectors()
    case = next(c for c in CASES if c["name"] == "kile_perfect_localization")
    dataset_dir, files = write_case(case, tmp_path)
    predictions = json.loads(files["kile"].read_text()) | {"extra_doc": []}
    files["kile"].write_text(json.dumps(predictions))
    expected = "KILE: Predictions provided for 1 documents not in the dataset dataset:vectors."
    with pytest.raises(InputError, match=expected.replace(".", r"\.")):
        score_docile(dataset_dir, case["dataset"]["split"], files["kile"])


def test_coverage_equals_brute_force_on_boundaries():
    """Boxes whose edges sit exactly on PCC coordinates, duplicated PCCs, several pages."""
    from tore_engine.docile.pcc import PCCSet

    rng = np.random.default_rng(3)
    grid = np.round(rng.uniform(0, 1, 12), 3)  # few distinct values: many exact ties
    pccs = np.column_stack([rng.choice(grid, 400), rng.choice(grid, 400), rng.integers(0, 3, 400)]).astype(float)
    pcc_set = PCCSet(pccs)
    points = {tuple(p) for p in pccs.tolist()}
    assert len(pcc_set) == len(points)
    xs, ys = np.sort(rng.choice(grid, (300, 2)), axis=1), np.sort(rng.choice(grid, (300, 2)), axis=1)
    boxes = np.column_stack([xs[:, 0], ys[:, 0], xs[:, 1], ys[:, 1]])  # left, top, right, bottom
    pages = rng.integers(-1, 4, 300)
    box, row = pcc_set.covered(boxes, pages)
    for k, ((left, top, right, bottom), page) in enumerate(zip(boxes.tolist(), pages.tolist())):
        expected = {(x, y, p) for x, y, p in points if p == page and left <= x <= right and top <= y <= bottom}
        found = {(pcc_set.x[r], pcc_set.y[r], pcc_set.page[r]) for r in row[box == k]}
        assert found == expected


def test_dataset_errors_name_the_file(tmp_path):
    _skip_without_vectors()
    case = CASES[0]
    dataset_dir, _ = write_case(case, tmp_path)
    split, docid = case["dataset"]["split"], case["dataset"]["docids"][0]
    with pytest.raises(InputError, match="no index file for split 'nope'"):
        load_dataset(dataset_dir, "nope")
    (dataset_dir / "annotations" / f"{docid}.json").write_text('{"metadata": {}}')
    with pytest.raises(InputError, match=rf"document {docid}: missing key 'page_count' \(at metadata\)"):
        load_dataset(dataset_dir, split)
    (dataset_dir / "annotations" / f"{docid}.json").unlink()
    with pytest.raises(InputError, match=f"document {docid} is listed in the split but has no such file"):
        load_dataset(dataset_dir, split)


def test_a_repeated_docid_is_one_document_and_a_warning(tmp_path):
    _skip_without_vectors()
    case = next(c for c in CASES if c["name"] == "kile_perfect_localization")
    dataset_dir, files = write_case(case, tmp_path)
    split, docids = case["dataset"]["split"], case["dataset"]["docids"]
    once = score_docile(dataset_dir, split, files["kile"])
    (dataset_dir / f"{split}.json").write_text(json.dumps([*docids, docids[0]]))
    twice = score_docile(dataset_dir, split, files["kile"])
    assert twice.kile.metrics() == once.kile.metrics() and twice.to_json() == once.to_json()
    assert load_dataset(dataset_dir, split).docids == docids
    assert twice.warnings == [f"the split lists document {docids[0]} 2 times; it is scored once"] and once.warnings == []


def test_predictions_in_pythons_json_dialect_with_unknown_keys_are_read_as_officially(tmp_path):
    path = tmp_path / "kile.json"
    path.write_text('{"d": [{"bbox": [0, 0, 1, 1], "page": 0, "fieldtype": "x", "score": Infinity, "extra": 1}]}')
    warnings: list[str] = []
    (field,) = load_predictions(path, warnings)["d"]
    assert (field.score, field.fieldtype, field.bbox) == (math.inf, "x", (0.0, 0.0, 1.0, 1.0))
    assert warnings == [f"{path}: unknown field key(s) 'extra' ignored, as docile-benchmark ignores them"]
    path.write_text('{"d": [{"bbox": [0, 0, 1, 1], "page": 0, "fieldtype": "x"}]}')
    assert load_predictions(path, warnings)["d"][0].score is None and len(warnings) == 1  # the strict fast path
