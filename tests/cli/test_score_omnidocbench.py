"""`tore score omnidocbench` as a user runs it (formats.md section 5, omnidocbench.md section 6)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from tests.helpers import load_shared_json, shared_path, write_json

DEMO = ("data", "omnidocbench")


def tore(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tore_engine", *args], capture_output=True, text=True, timeout=300)


def test_json_output_on_the_demo():
    result = tore(
        "score", "omnidocbench", "--json",
        "--reference", str(shared_path(*DEMO, "OmniDocBench_demo.json")),
        "--layout", str(shared_path(*DEMO, "pred_layout_detection", "detection_prediction.json")),
        "--markdown", str(shared_path(*DEMO, "pred_end2end_markdown")),
    )
    assert result.returncode == 0, result.stderr
    output = json.loads(result.stdout)
    expected = load_shared_json(*DEMO, "reference_results", "layout_detection_official_demo_mAP.json")
    layout = output["layout"]
    assert layout["mAP"] == pytest.approx(0.5999473124324551, abs=1e-9)
    assert layout["AP50"] == pytest.approx(expected["bbox_mAP_50"], abs=1e-9)
    assert layout["AP75"] == pytest.approx(expected["bbox_mAP_75"], abs=1e-9)
    assert list(layout["per_class"]) == ["title", "text", "abandon", "figure", "figure_caption", "table",
                                         "table_caption", "table_footnote", "isolate_formula", "formula_caption"]
    assert layout["per_class"]["table_footnote"] == pytest.approx(0.6999999999999998, abs=1e-9)
    end_to_end = output["end_to_end"]
    assert {"text_edit", "reading_order_edit", "table_teds", "overall"} <= set(end_to_end)
    assert end_to_end["overall"] is None and 0 <= end_to_end["text_edit"] <= 1
    assert output["pages"] == 18 and len(output["per_page"]) == 18
    row = output["per_page"][0]
    assert row["page"] == "yanbaopptmerge_SE05.pdf_7.jpg" and row["attributes"]["data_source"] == "PPT2PDF"
    assert row["attributes"]["layout"] == "single_column"
    assert set(row["layout"]) >= {"f1", "tp"} and "text_edit" in row["end_to_end"]


def test_sections_not_requested_are_null_and_the_summary_is_readable():
    reference = str(shared_path(*DEMO, "OmniDocBench_demo.json"))
    result = tore("score", "omnidocbench", "--reference", reference, "--json")
    assert result.returncode == 0, result.stderr
    output = json.loads(result.stdout)
    assert output["layout"] is None and output["end_to_end"] is None and output["pages"] == 18
    human = tore("score", "omnidocbench", "--reference", reference,
                 "--layout", str(shared_path(*DEMO, "pred_layout_detection", "detection_prediction.json")))
    assert human.returncode == 0 and "mAP        0.5999" in human.stdout


def test_bad_input_is_one_paragraph_and_exit_2(tmp_path):
    reference = str(shared_path(*DEMO, "OmniDocBench_demo.json"))
    bad = write_json(tmp_path / "pred.json", {"results": "nope", "categories": {}})
    result = tore("score", "omnidocbench", "--reference", reference, "--layout", str(bad), "--json")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("tore: error:") and "pred.json: expected array, got str (at results)" in result.stderr
    assert "Traceback" not in result.stderr
