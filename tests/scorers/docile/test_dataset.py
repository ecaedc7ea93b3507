"""DocILE datasets and prediction files (tore_engine.scorers.docile.dataset): the real sample, the
official JSON dialect, and errors that name the document or the file."""

from __future__ import annotations

import json
import math

import pytest

from tests.scorers.docile.helpers import (
    CASES,
    SAMPLE,
    _sample_dataset,
    write_case,
)
from tore_engine.core.errors import InputError
from tore_engine.scorers.docile import load_dataset, load_predictions, score_docile


def test_real_sample_loads():
    dataset = _sample_dataset()
    (document,) = dataset.documents
    assert (len(document.kile_golds), len(document.lir_golds)) == (11, 40)
    assert len({field.line_item_id for field in document.lir_golds}) == 8
    assert len(document.pccs) == 1346  # 256 OCR words, 1346 characters (NOTICE.md)
    assert document.page_sizes == [(1692, 2245)]
    assert document.pdf.resolve() == (SAMPLE / "pdfs" / f"{document.docid}.pdf").resolve()


def test_nan_score_is_rejected(tmp_path):
    path = tmp_path / "kile.json"
    path.write_text('{"d": [{"bbox": [0, 0, 1, 1], "page": 0, "fieldtype": "x", "score": NaN}]}')
    with pytest.raises(InputError, match="NaN"):
        load_predictions(path)


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


def test_dataset_errors_name_the_file(tmp_path):
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
