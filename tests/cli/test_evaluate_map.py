"""`tore evaluate` with mAP and the sweep, end to end, against independent values: the public mAP
vectors (docling-metrics-layout 0.17.0 and pycocotools 2.0.11, run by their authors), pycocotools
and the reference run here on real scored predictions, and runs with `--min-score` for the sweep."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest
from openpyxl import load_workbook

from tests.cli.helpers import run_cli
from tests.helpers import load_vector, shared_path, write_json
from tests.metrics.oracles import coco_oracle, docling_case, layout_pages, run_docling_reference
from tore_engine.api import load_pair
from tore_engine.metrics.box_outcomes import PAGE_COUNT_COLUMNS
from tore_engine.metrics.map_report import DUAL_TAXONOMY, NOTHING_TO_RANK, SWITCHED_OFF
from tore_engine.metrics.mean_average_precision import FIELDS
from tore_engine.metrics.sweep import MIN_SCORES, SWEEP_COLUMNS

TOLERANCE = 1e-12
MAP_PAGE_COLUMNS = ["map", "map_50", "map_75"]


def evaluate(tmp_path: Path, *args: str) -> tuple[dict, str, Path]:
    """`tore evaluate ARGS --out DIR` in this process: report.json, the summary printed, DIR."""
    out = tmp_path / f"out{len(list(tmp_path.glob('out*')))}"
    code, stdout, stderr = run_cli("evaluate", *args, "--out", str(out), "--workers", "1")
    assert code == 0, stderr
    return json.loads((out / "report.json").read_text(encoding="ascii")), stdout, out


def read_csv(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def defined(value: float | None) -> float:
    """A figure as the references write it: -1 where undefined (null in report.json)."""
    return -1.0 if value is None else value


def cell(text: str) -> float:
    """A pages.csv cell as the references write it: -1 where undefined (empty)."""
    return -1.0 if text == "" else float(text)


def page_cells(rows: list[list[str]]) -> list[float]:
    """pages.csv's map, map_50 and map_75 cells, page after page."""
    return [cell(text) for row in rows for text in row[5:8]]


# --- the public vectors, through the whole command ---------------------------------------------------


def _vector_cases() -> list[dict]:
    return load_vector("map_public.json")["cases"]


@pytest.fixture(scope="module")
def vector_files(tmp_path_factory) -> dict[str, tuple[Path, Path]]:
    folder = tmp_path_factory.mktemp("map_vectors")
    return {case["name"]: (write_json(folder / f"{case['name']}_gt.json", case["reference"]), write_json(folder / f"{case['name']}_model.json", case["prediction"]))
            for case in load_vector("map_public.json")["cases"]}


@pytest.mark.parametrize("name", [case["name"] for case in _vector_cases()])
def test_the_public_vectors_map_block_in_both_conventions(vector_files, tmp_path, name):
    case = next(case for case in load_vector("map_public.json")["cases"] if case["name"] == name)
    for convention in ("docling", "coco"):
        report, _, out = evaluate(tmp_path, *map(str, vector_files[name]), "--map", convention)
        expected, block = case["expected"][convention], report["map"]
        exact = convention == "docling"  # float32 values, compared exactly; coco within 1e-12 of pycocotools
        assert block["convention"] == convention and report["map_reason"] is None
        assert list(block) == ["convention", *FIELDS, "per_class", "page_stats"]
        assert [defined(block[field]) for field in FIELDS] == pytest.approx([expected[field] for field in FIELDS], abs=0 if exact else TOLERANCE)
        assert set(block["per_class"]) == set(expected["map_per_class"])
        for label, values in block["per_class"].items():
            assert [defined(values["ap"]), defined(values["ar_100"])] == \
                   pytest.approx([expected["map_per_class"][label], expected["mar_100_per_class"][label]], abs=0 if exact else TOLERANCE)
        _, *rows = read_csv(out / "pages.csv")
        if exact:
            pages = expected["page_evaluations"]
            assert page_cells(rows) == [pages[row[0]][field] for row in rows for field in MAP_PAGE_COLUMNS]
            for field in MAP_PAGE_COLUMNS:
                ours, theirs = block["page_stats"][field], expected[f"{field}_stats"]
                assert (ours["total"], ours["median"], ours["bins"], ours["hist"]) == (theirs["total"], theirs["median"], theirs["bins"], theirs["hist"])
                assert ours["mean"] == pytest.approx(theirs["mean"], abs=TOLERANCE) and ours["std"] == pytest.approx(theirs["std"], abs=TOLERANCE)
        else:  # the vectors hold the dataset's figures only: each page against pycocotools run on it alone
            reference, prediction = load_pair(*vector_files[name])
            oracle = coco_oracle(layout_pages(reference, prediction, case["taxonomy"]), len(case["taxonomy"]))
            assert page_cells(rows) == pytest.approx([value for page in oracle["pages"] for value in page], abs=TOLERANCE)


# --- real scored predictions: docling's two layout models ---------------------------------------------


def _two_models() -> tuple[Path, ...]:
    folder = shared_path("data", "layouts", "docling_two_layout_models")
    return (folder / "coco_results_pre_heron_default_layout_model.json", folder / "coco_results_heron_layout_model.json",
            folder / "coco_images_and_categories.json")


def _kept_pages(reference, prediction, taxonomy: list[str], min_score: float | None) -> list:
    """mAP's pages after `--min-score` (both sides), as the oracles take them."""
    def kept(layout):
        return type(layout)(layout.name, [page.above_score(min_score)[0] if min_score is not None else page for page in layout.pages], layout.taxonomy)

    return layout_pages(kept(reference), kept(prediction), taxonomy)


@pytest.fixture(scope="module")
def real_runs(tmp_path_factory) -> dict:
    """report.json of the real pair in both conventions, with and without `--min-score 0.5`, and
    what pycocotools and docling-metrics-layout make of the same boxes."""
    reference_path, prediction_path, images = _two_models()
    reference, prediction = load_pair(reference_path, prediction_path, coco_images=images)
    folder = tmp_path_factory.mktemp("real")
    runs = {}
    for min_score in (None, 0.5):
        for convention in ("coco", "docling"):
            options = ["--map", convention, "--images", str(images), *(["--min-score", str(min_score)] if min_score else [])]
            runs[convention, min_score] = evaluate(folder, str(reference_path), str(prediction_path), *options)
    taxonomy = runs["coco", None][0]["classes"]  # Background, then the classes in taxonomy order
    pages = {min_score: _kept_pages(reference, prediction, taxonomy, min_score) for min_score in (None, 0.5)}
    return {"runs": runs, "taxonomy": taxonomy, "pages": pages}


@pytest.mark.parametrize("min_score", [None, 0.5])
def test_real_scored_predictions_equal_pycocotools_after_the_minimum_score(real_runs, min_score):
    report, summary, out = real_runs["runs"]["coco", min_score]
    taxonomy = real_runs["taxonomy"]
    oracle = coco_oracle(real_runs["pages"][min_score], len(taxonomy))
    assert [defined(report["map"][field]) for field in FIELDS] == pytest.approx([oracle["stats"][field] for field in FIELDS], abs=TOLERANCE)
    assert {taxonomy[label] for label in oracle["per_class"]} == set(report["map"]["per_class"])
    for label, (ap, ar) in oracle["per_class"].items():
        values = report["map"]["per_class"][taxonomy[label]]
        assert [defined(values["ap"]), defined(values["ar_100"])] == pytest.approx([ap, ar], abs=TOLERANCE)
    _, *rows = read_csv(out / "pages.csv")
    assert page_cells(rows) == pytest.approx([value for page in oracle["pages"] for value in page], abs=TOLERANCE)
    assert f"mAP (coco) {report['map']['map']:.4f}, mAP50 {report['map']['map_50']:.4f}, mAP75 {report['map']['map_75']:.4f}" in summary.splitlines()
    assert not any("no score" in warning["message"] for warning in report["warnings"])  # every box is scored


def test_real_scored_predictions_equal_docling_metrics_layout(real_runs):
    taxonomy = real_runs["taxonomy"]
    expected = run_docling_reference([docling_case(real_runs["pages"][min_score], taxonomy) for min_score in (None, 0.5)])
    for min_score, theirs in zip((None, 0.5), expected):
        report, _, out = real_runs["runs"]["docling", min_score]
        block = report["map"]
        assert [defined(block[field]) for field in FIELDS] == [theirs[field] for field in FIELDS]  # float32 values, exactly
        for label, values in block["per_class"].items():
            assert [defined(values["ap"]), defined(values["ar_100"])] == [theirs["map_per_class"][label], theirs["mar_100_per_class"][label]]
        _, *rows = read_csv(out / "pages.csv")
        assert page_cells(rows) == [page[field] for page in theirs["page_evaluations"].values() for field in MAP_PAGE_COLUMNS]
        for field in MAP_PAGE_COLUMNS:
            assert block["page_stats"][field]["hist"] == theirs[f"{field}_stats"]["hist"]
            assert block["page_stats"][field]["mean"] == pytest.approx(theirs[f"{field}_stats"]["mean"], abs=TOLERANCE)


# --- unscored boxes, null mAP ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def public_files(tmp_path_factory) -> tuple[Path, Path]:
    pages = load_vector("tore_public_pages.json")
    folder = tmp_path_factory.mktemp("public")
    return write_json(folder / "gt.json", pages["reference"]), write_json(folder / "model.json", pages["prediction"])


def test_unscored_predictions_are_ranked_in_file_order_and_said_so(public_files, tmp_path):
    report, summary, _ = evaluate(tmp_path, *map(str, public_files))
    boxes = sum(len(page["boxes"]) for page in load_vector("tore_public_pages.json")["prediction"]["pages"])
    sentence = (f"{boxes:,} of {boxes:,} prediction boxes have no score: mAP ranks them as score 1.0, as the reference does, so in "
                "file order, and its result depends on the order of the boxes")
    notes = [warning for warning in report["warnings"] if "no score" in warning["message"]]
    assert notes == [{"page": None, "box": None, "side": "prediction", "message": sentence}]
    assert sentence in summary.splitlines()  # the same words in the terminal


@pytest.mark.parametrize("options, reason, line", [
    (["--taxonomy", "dual"], DUAL_TAXONOMY, f"mAP: none ({DUAL_TAXONOMY})"),
    (["--map", "off"], SWITCHED_OFF, None),  # asked for: nothing to say
])
def test_no_map_is_null_with_its_reason(public_files, tmp_path, options, reason, line):
    report, summary, out = evaluate(tmp_path, *map(str, public_files), *options)
    assert (report["map"], report["map_reason"]) == (None, reason)
    assert [text for text in summary.splitlines() if text.startswith("mAP")] == ([line] if line else [])
    counts = [] if report["mode"] == "dual" else list(PAGE_COUNT_COLUMNS)  # box counts in single taxonomy, with or without mAP
    assert read_csv(out / "pages.csv")[0] == ["page", "pixels", "foreground_recall", "foreground_precision", "foreground_f1", *counts]
    assert not any("no score" in warning["message"] for warning in report["warnings"])


def test_with_no_box_at_all_map_is_null_with_nothing_to_rank(tmp_path):
    empty = {"name": "x", "taxonomy": ["Text"], "pages": [{"id": "p", "width": 10, "height": 10, "boxes": []}]}
    report, summary, _ = evaluate(tmp_path, str(write_json(tmp_path / "gt.json", empty)), str(write_json(tmp_path / "model.json", empty)))
    assert (report["map"], report["map_reason"]) == (None, NOTHING_TO_RANK)
    assert f"mAP: none ({NOTHING_TO_RANK})" in summary.splitlines()


# --- the sweep and every report's columns ----------------------------------------------------------------


@pytest.fixture(scope="module")
def swept(tmp_path_factory) -> tuple[dict, str, Path]:
    reference, prediction, images = _two_models()
    return evaluate(tmp_path_factory.mktemp("swept"), str(reference), str(prediction), "--images", str(images), "--sweep", "--xlsx", "--html")


def test_the_sweep_points_are_runs_with_their_minimum_score(swept, tmp_path):
    report, summary, _ = swept
    reference, prediction, images = _two_models()
    sweep = report["sweep"]
    assert sweep["min_scores"] == list(MIN_SCORES)
    for point in (0, 9, 18):  # 0.05, 0.50, 0.95 as `--min-score` reads them
        run, _, _ = evaluate(tmp_path, str(reference), str(prediction), "--images", str(images), "--min-score", f"{MIN_SCORES[point]:.2f}", "--map", "off")
        recall, precision = run["reduced"]["recall"][1][1], run["reduced"]["precision"][1][1]
        assert (sweep["foreground"]["recall"][point], sweep["foreground"]["precision"][point]) == (recall, precision)
        for name, curve in sweep["per_class"].items():
            assert [curve[key][point] for key in ("recall", "precision", "f1")] == [run["per_class"][name][key] for key in ("recall", "precision", "f1")]
    best = sweep["foreground"]["best"]
    assert best["f1"] == max(sweep["foreground"]["f1"]) and best["min_score"] == MIN_SCORES[sweep["foreground"]["f1"].index(best["f1"])]
    assert f"Best minimum score: Foreground F1 {best['f1']:.4f} at {best['min_score']:.2f}" in summary
    detection = sweep["detection"]
    assert detection["convention"] == "coco" and detection["all"]["map"] == report["map"]["map"]
    assert {name: curve["ap"] for name, curve in detection["per_class"].items()} == {name: v["ap"] for name, v in report["map"]["per_class"].items()}


def test_sweep_csv_holds_report_json_s_sweep(swept):
    report, _, out = swept
    header, *rows = read_csv(out / "sweep.csv")
    assert header == list(SWEEP_COLUMNS) and len(rows) == len(MIN_SCORES) * (1 + len(report["sweep"]["detection"]["per_class"]))
    by_scope = {(row[1], row[2], float(row[0])): row for row in rows}
    for name, curve in [(None, report["sweep"]["foreground"]), *report["sweep"]["per_class"].items()]:
        detection = report["sweep"]["detection"]["all" if name is None else "per_class"].get(name) if name else report["sweep"]["detection"]["all"]
        for point, min_score in enumerate(MIN_SCORES):
            row = by_scope["foreground" if name is None else "class", name or "", min_score]
            # an empty cell is null (a class never predicted at a high minimum score has no precision there, not 0)
            assert [float(row[k]) if row[k] else None for k in (3, 4, 5)] == [curve["recall"][point], curve["precision"][point], curve["f1"][point]]
            assert row[6] == str(curve["best"]["min_score"] == min_score)
            if detection is not None and detection["f1"][point] is not None:
                assert float(row[10]) == detection["f1"][point]


def test_every_report_has_the_map_columns_and_the_sweep(swept):
    report, _, out = swept
    header, *rows = read_csv(out / "pages.csv")
    assert header[5:8] == MAP_PAGE_COLUMNS and header[8:] == list(PAGE_COUNT_COLUMNS) and len(rows) == report["pages"]
    workbook = load_workbook(out / "report.xlsx")
    assert [cell.value for cell in workbook["Pages"][1]] == header
    per_class = [[cell.value for cell in row] for row in workbook["Per class"].iter_rows()]
    assert per_class[0][5:7] == ["ap", "ar_100"]
    for row in per_class[1:]:
        if row[0] in report["map"]["per_class"]:
            assert row[5:7] == [report["map"]["per_class"][row[0]]["ap"], report["map"]["per_class"][row[0]]["ar_100"]]
    figures = {row[0]: row[1] for row in workbook["mAP"].iter_rows(min_row=2, values_only=True) if row[0] in FIELDS}
    assert figures == {field: report["map"][field] for field in FIELDS}
    assert [cell.value for cell in workbook["Sweep"][1]] == list(SWEEP_COLUMNS)
    assert workbook["Sweep"].max_row >= 1 + len(MIN_SCORES) * (1 + len(report["sweep"]["per_class"]))
    html = (out / "report.html").read_text(encoding="utf-8")
    assert all(f"<th>{name}</th>" in html for name in [*MAP_PAGE_COLUMNS, "ap", "ar_100", *SWEEP_COLUMNS])
    assert "<h2>Minimum score sweep</h2>" in html and f"mAP (coco) {report['map']['map']:.4f}" in html
    stats = report["map"]["page_stats"]["map"]  # over every page, an undefined one as -1 (docling-metrics-layout's compute_stats)
    assert stats["total"] == len(rows) and math.isclose(np.mean([cell(row[5]) for row in rows]), stats["mean"], abs_tol=TOLERANCE)
