"""`tore evaluate --boxes` and report.json's `errors` end to end, against tidecv 1.0.1's own decisions
(tests/vectors/tide): the figures, every row of boxes.csv, each page's counts in pages.csv; the same
bytes for any number of workers; file indices kept under --min-score; null with a reason where TIDE
has nothing to say."""

from __future__ import annotations

import csv
import json
import math
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from tests.cli.helpers import run_cli
from tests.helpers import DEMO, write_json
from tests.metrics.test_box_outcomes import TOLERANCE
from tests.vectors.tide.cases import VECTORS, read_vector
from tore_engine.api import load_pair
from tore_engine.metrics.box_outcomes import DUAL_TAXONOMY, NO_PREDICTION
from tore_engine.run.runner import evaluate_dataset

CLASSES = ["C1", "C2", "C3", "C4", "C5"]  # a case's class ids 1..5 (taxonomy order; 0 is Background)
SIDES = ("reference", "prediction")


def evaluate(tmp_path: Path, *args: str, workers: int = 1) -> Path:
    out = tmp_path / f"out{len(list(tmp_path.glob('out*')))}"
    code, _, stderr = run_cli("evaluate", *args, "--out", str(out), "--workers", str(workers), "-q")
    assert code == 0, stderr
    return out


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def blank(value) -> str:
    return "" if value is None else str(value)


def check_errors(report: dict, theirs: dict) -> None:
    errors = report["errors"]
    assert report["errors_reason"] is None and errors["reference"] == "tidecv 1.0.1"
    assert abs(errors["ap50"] - theirs["ap"] / 100) <= TOLERANCE
    for block, values in (("dap", theirs["main"]), ("dap_special", theirs["special"])):
        assert errors[block].keys() == values.keys()
        assert all(abs(errors[block][name] - value / 100) <= TOLERANCE for name, value in values.items())
    assert errors["counts"] == theirs["counts"]


def check_rows(rows: list[dict[str, str]], page_ids: list[str], theirs: dict, indices: dict | None = None) -> None:
    """boxes.csv's outcome, error, partner and IoU are tidecv's, page by page, side by side; `indices`
    maps a case's box positions to the file's (a minimum score dropped some)."""
    expected = []
    for page, page_id in enumerate(page_ids):
        def position(side: str, k: int, page: int = page) -> int:
            return indices[side][page][k] if indices else k

        for side, other in (SIDES, SIDES[::-1]):
            for k, (outcome, error, partner, iou) in enumerate(theirs["boxes"][side][page]):
                expected.append([page_id, side, str(position(side, k)), outcome, blank(error),
                                 blank(None if partner is None else position(other, partner)), blank(iou)])
    assert [[row[name] for name in ("page", "side", "index", "outcome", "error", "partner", "iou")] for row in rows] == expected


def page_counts(theirs: dict) -> list[list[int]]:
    """Each page's tp, fp, fn and error counts, from tidecv's decisions."""
    counts = []
    for references, predictions in zip(theirs["boxes"]["reference"], theirs["boxes"]["prediction"]):
        row = [sum(o == "tp" for o, *_ in predictions), sum(o == "fp" for o, *_ in predictions), sum(o == "fn" for o, *_ in references)]
        row += [sum(e == name for _, e, *_ in (references if name == "Miss" else predictions)) for name in ("Cls", "Loc", "Both", "Dupe", "Bkg", "Miss")]
        counts.append(row)
    return counts


def test_the_demo_model_equals_tidecv_box_by_box(tmp_path):
    theirs = read_vector(VECTORS / "demo_model_a.json")["tidecv"]
    out = evaluate(tmp_path, str(DEMO / "reference.json"), str(DEMO / "model_a.json"), "--boxes")
    report = json.loads((out / "report.json").read_text())
    check_errors(report, theirs)
    pages = read_csv(out / "pages.csv")
    assert [[int(page[name]) for name in ("tp", "fp", "fn", "Cls", "Loc", "Both", "Dupe", "Bkg", "Miss")] for page in pages] == page_counts(theirs)
    boxes = read_csv(out / "boxes.csv")
    check_rows(boxes, [page["page"] for page in pages], theirs)
    source = json.loads((DEMO / "model_a.json").read_text())
    first = source["pages"][0]["boxes"][0]
    row = next(row for row in boxes if row["side"] == "prediction")
    assert (row["class"], float(row["score"]), [float(row[k]) for k in ("x0", "y0", "x1", "y1")]) == (first["label"], first["score"], first["bbox"])
    totals = {name: sum(counts[k] for counts in page_counts(theirs)) for k, name in enumerate(("tp", "fp", "fn"))}
    assert {name: sum(values[name] for values in report["errors"]["per_class"].values()) for name in totals} == totals


def test_any_number_of_workers_writes_the_same_bytes(tmp_path):
    runs = [evaluate(tmp_path, str(DEMO / "reference.json"), str(DEMO / "model_a.json"), "--boxes", workers=workers) for workers in (1, 2)]
    for name in ("report.json", "pages.csv", "boxes.csv"):
        assert (runs[0] / name).read_bytes() == (runs[1] / name).read_bytes(), name


def _layout(name: str, pages: list[dict]) -> dict:
    return {"name": name, "taxonomy": CLASSES, "pages": pages}


def test_a_minimum_score_keeps_each_box_its_index_in_the_file(tmp_path):
    """A case's predictions with low-scored boxes put between them, dropped by --min-score: the figures
    and decisions are tidecv's on the case, and boxes.csv names every box (and partner) by its index
    in the file."""
    vector = read_vector(VECTORS / "mixed_real_1.json")
    references, predictions, indices = [], [], {"reference": [], "prediction": []}
    threshold = min(box[5] for page in vector["case"]["pages"] for box in page["prediction"] if box[5] is not None)  # keeps every box of the case
    for number, page in enumerate(vector["case"]["pages"]):
        boxes, positions = [], []
        for k, (label, *bbox, score) in enumerate(page["prediction"]):
            if k % 3 == 0:
                boxes.append({"label": CLASSES[label - 1], "bbox": bbox, "score": threshold / 2})
            positions.append(len(boxes))
            boxes.append({"label": CLASSES[label - 1], "bbox": bbox} | ({} if score is None else {"score": score}))
        page_id = f"p{number}"
        references.append({"id": page_id, "width": 100, "height": 100,
                           "boxes": [{"label": CLASSES[label - 1], "bbox": bbox} for label, *bbox in page["reference"]]})
        predictions.append({"id": page_id, "width": 100, "height": 100, "boxes": boxes})
        indices["reference"].append(list(range(len(page["reference"]))))
        indices["prediction"].append(positions)
    write_json(tmp_path / "gt.json", _layout("gt", references))
    write_json(tmp_path / "model.json", _layout("model", predictions))
    out = evaluate(tmp_path, str(tmp_path / "gt.json"), str(tmp_path / "model.json"), "--boxes", "--min-score", repr(threshold))
    check_errors(json.loads((out / "report.json").read_text()), vector["tidecv"])
    check_rows(read_csv(out / "boxes.csv"), [page["id"] for page in references], vector["tidecv"], indices)


def test_nothing_to_match_gives_null_with_a_reason_and_still_lists_every_box(tmp_path):
    page = {"id": "p", "width": 50, "height": 50}
    write_json(tmp_path / "gt.json", _layout("gt", [page | {"boxes": [{"label": "C1", "bbox": [0, 0, 10, 10]}, {"label": "C2", "bbox": [20, 20, 30, 30]}]}]))
    write_json(tmp_path / "model.json", _layout("model", [page | {"boxes": []}]))
    out = evaluate(tmp_path, str(tmp_path / "gt.json"), str(tmp_path / "model.json"), "--boxes")
    report = json.loads((out / "report.json").read_text())
    assert report["errors"] is None and report["errors_reason"] == NO_PREDICTION
    assert [(row["side"], row["outcome"], row["error"]) for row in read_csv(out / "boxes.csv")] == [("reference", "fn", "Miss")] * 2


def test_dual_taxonomy_has_no_errors_and_no_boxes_table(tmp_path):
    out = evaluate(tmp_path, str(DEMO / "reference.json"), str(DEMO / "model_a.json"), "--taxonomy", "dual")
    report = json.loads((out / "report.json").read_text())
    assert report["errors"] is None and report["errors_reason"] == DUAL_TAXONOMY
    assert "tp" not in read_csv(out / "pages.csv")[0]
    code, stdout, stderr = run_cli("evaluate", str(DEMO / "reference.json"), str(DEMO / "model_a.json"), "--taxonomy", "dual",
                                   "--boxes", "--out", str(tmp_path / "dual"), "--workers", "1", "-q")
    assert (code, stdout) == (2, "") and "--boxes" in stderr and "Traceback" not in stderr


@pytest.mark.parametrize("workers", [1, 2])
def test_the_api_gives_the_same_errors_and_boxes(tmp_path, workers):
    import tore_engine as tore

    out = evaluate(tmp_path, str(DEMO / "reference.json"), str(DEMO / "model_a.json"), "--boxes")
    ev = tore.evaluate(str(DEMO / "reference.json"), str(DEMO / "model_a.json"), workers=workers)
    assert ev.errors == json.loads((out / "report.json").read_text())["errors"]
    rows = read_csv(out / "boxes.csv")
    table = ev.boxes
    assert list(table.columns) == list(rows[0]) and str(table["partner"].dtype) == "Int64"

    def cell(value) -> str:
        return "" if value is pd.NA or (isinstance(value, float) and math.isnan(value)) else str(value)

    assert [[cell(value) for value in record] for record in table.astype(object).values.tolist()] == [list(row.values()) for row in rows]


def test_merged_halves_equal_the_whole_and_compare_gives_b_minus_a():
    import tore_engine as tore

    reference, prediction = load_pair(DEMO / "reference.json", DEMO / "model_a.json")
    whole = evaluate_dataset(reference, prediction)
    ids = reference.page_ids()
    halves = []
    for part in (ids[: len(ids) // 3], ids[len(ids) // 3 :]):
        kept = set(part)
        halves.append(evaluate_dataset(replace(reference, pages=[page for page in reference.pages if page.id in kept]),
                                       replace(prediction, pages=[page for page in prediction.pages if page.id in kept])))
    merged = halves[0].merge(halves[1])
    assert merged.errors == whole.errors and merged.errors is not None
    assert merged.pages.equals(whole.pages)
    stricter = evaluate_dataset(reference, prediction, min_score=0.9)
    table = tore.compare(whole, stricter).errors
    for name, count in whole.errors["counts"].items():
        assert table.loc[name, ["count_a", "count_b", "count_b_minus_a"]].tolist() == [count, stricter.errors["counts"][name],
                                                                                      stricter.errors["counts"][name] - count]
    assert table.loc["FalseNeg", "dap_b_minus_a"] == stricter.errors["dap_special"]["FalseNeg"] - whole.errors["dap_special"]["FalseNeg"]
