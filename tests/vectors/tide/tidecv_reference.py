"""Run tidecv 1.0.1, unmodified, on box-outcome cases and print what it decides, as JSON.

Runs in tidecv's own environment, never in the product's:

    python3 -m venv /tmp/tidecv-venv && /tmp/tidecv-venv/bin/pip install tidecv==1.0.1
    /tmp/tidecv-venv/bin/python tests/vectors/tide/tidecv_reference.py [--timed] < cases.json > expected.json

Input: a JSON list of cases, each {"pages": [{"reference": [[class, x1, y1, x2, y2], ...],
"prediction": [[class, x1, y1, x2, y2, score or null], ...]}, ...]}: the boxes as
docs/cli.md#box-outcomes-and-tides-error-types hands them to TIDE (each reference page an image, in order; class ids in taxonomy order;
x, y, width, height; an unscored prediction counts as 1.0). Output: a list of results, each with
TIDE's AP@50, main and special dAPs and error counts (its percentages, as it computes them; or
"failure", the exception tidecv raised) and, for every box of every page in file order,
[outcome, error, partner, iou] read from TIDE's own objects after the run. With --timed: the
seconds TIDE's own work takes (`timed`) and its figures, for benchmarks/bench_box_outcomes.py.
"""

import json
import sys
import time

from pycocotools import mask as mask_utils
from tidecv import TIDE, Data
from tidecv.errors.main_errors import BoxError, ClassError, DuplicateError, MissedError


def iou(pred, gt):
    return float(mask_utils.iou([pred["bbox"]], [gt["bbox"]], [False])[0][0])


def tide_data(case):
    """The case's boxes as TIDE's ground truth and predictions, and where each of TIDE's ids is."""
    gt, preds = Data("reference"), Data("prediction")
    where = {"reference": {}, "prediction": {}}  # TIDE's _id -> (page, index)
    for page in range(len(case["pages"])):
        gt.add_image(page, str(page))
    for page, boxes in enumerate(case["pages"]):
        for index, (label, x1, y1, x2, y2) in enumerate(boxes["reference"]):
            where["reference"][len(gt.annotations)] = (page, index)
            gt.add_ground_truth(page, label, [x1, y1, x2 - x1, y2 - y1])
        for index, (label, x1, y1, x2, y2, score) in enumerate(boxes["prediction"]):
            where["prediction"][len(preds.annotations)] = (page, index)
            preds.add_detection(page, label, 1.0 if score is None else score, [x1, y1, x2 - x1, y2 - y1])
    return gt, preds, where


def run_case(case):
    gt, preds, where = tide_data(case)
    tide = TIDE(pos_threshold=0.5, background_threshold=0.1, mode=TIDE.BOX)
    result = {}
    try:
        run = tide.evaluate(gt, preds, mode=TIDE.BOX, name="prediction")
    except ZeroDivisionError as error:
        return {"failure": f"{type(error).__name__}: {error}"}
    try:
        result["ap"] = run.ap
        result["main"] = tide.get_main_errors()["prediction"]
        result["special"] = tide.get_special_errors()["prediction"]
    except ZeroDivisionError as error:
        result = {"failure": f"{type(error).__name__}: {error}"}
    result["counts"] = {error.short_name: count for error, count in run.count_errors().items()}
    rows = {side: [[None] * len(page[side]) for page in case["pages"]] for side in where}

    def put(side, annotation, outcome, error, partner=None):
        page, index = where[side][annotation["_id"]]
        rows[side][page][index] = [outcome, error, None if partner is None else where["prediction" if side == "reference" else "reference"][partner["_id"]][1],
                                   None if partner is None else iou(annotation, partner) if side == "prediction" else iou(partner, annotation)]

    for pred in preds.annotations:
        if "used" not in pred:
            put("prediction", pred, "ignored", None)
        elif pred["used"]:
            matched = gt.annotations[pred["matched_with"]]
            put("prediction", pred, "tp", None, matched)
            put("reference", matched, "tp", None, pred)
    for error in run.errors:
        if isinstance(error, MissedError):
            put("reference", error.gt, "fn", "Miss")
        elif isinstance(error, (ClassError, BoxError)):
            put("prediction", error.pred, "fp", error.short_name, error.gt)
        elif isinstance(error, DuplicateError):
            put("prediction", error.pred, "fp", error.short_name, gt.annotations[error.suppressor["matched_with"]])
        else:
            put("prediction", error.pred, "fp", error.short_name)
    for page in rows["reference"]:
        for index, row in enumerate(page):
            if row is None:
                page[index] = ["fn", None, None, None]
    result["boxes"] = rows
    return result


def timed(case):
    """TIDE's own work on the case, timed: its data made, evaluated, its main and special errors."""
    start = time.perf_counter()
    gt, preds, _ = tide_data(case)
    tide = TIDE(pos_threshold=0.5, background_threshold=0.1, mode=TIDE.BOX)
    run = tide.evaluate(gt, preds, mode=TIDE.BOX, name="prediction")
    main, special = tide.get_main_errors()["prediction"], tide.get_special_errors()["prediction"]
    return {"seconds": time.perf_counter() - start, "ap": run.ap, "main": main, "special": special}


if __name__ == "__main__":
    cases = json.load(sys.stdin)
    json.dump([timed(case) for case in cases] if sys.argv[1:] == ["--timed"] else [run_case(case) for case in cases], sys.stdout)
