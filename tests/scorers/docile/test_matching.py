"""DocILE matching (tore_engine.scorers.docile.matching): the blank-page decision at library level."""

from __future__ import annotations

from tests.scorers.docile.helpers import (
    CASES,
    CRASH_CASE,
    CRASH_EXPECTED,
    write_case,
)
from tore_engine.scorers.docile import score_docile


def test_crash_page_matching(tmp_path):
    """The blank page decision at library level: prediction 0 -> gold 0 (docs/benchmarks.md#pages-without-ocr-words)."""
    case = next(c for c in CASES if c["name"] == CRASH_CASE)
    assert case["result"]["runs"][0]["error"]["type"] == "KeyError"
    dataset_dir, files = write_case(case, tmp_path)
    result = score_docile(dataset_dir, case["dataset"]["split"], files.get("kile"), files.get("lir"))
    (docid,) = result.kile.matchings
    assert result.kile.matchings[docid].pred_to_gold.tolist() == [0]
    assert result.to_json() == CRASH_EXPECTED
