"""Independent values for mAP: pycocotools 2.0.11 run in this process (`coco`), and
docling-metrics-layout 0.17.0 run unmodified in the Python that has it (`docling`, through
`docling_reference.py`), on pages given as the API takes them:

    pages = [((reference xyxy, reference classes), (prediction xyxy, prediction classes, scores or None)), ...]

`REFERENCE_PYTHON` is `$TORE_MAP_REFERENCE_PYTHON`, else `../refenv/bin/python` beside the repository
(a venv with docling-metrics-layout==0.17.0, torchmetrics==1.9.0, faster-coco-eval==1.8.0 and torch);
tests that need it skip with the reason when it is missing.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tests.helpers import REPOSITORY
from tore_engine.metrics.map_types import PageMatches
from tore_engine.metrics.mean_average_precision import (
    FIELDS as STATS,  # COCOeval's `stats`, in order
)

REFERENCE_PYTHON = Path(os.environ.get("TORE_MAP_REFERENCE_PYTHON") or REPOSITORY.parent / "refenv" / "bin" / "python")
RUNNER = Path(__file__).with_name("docling_reference.py")


def _annotations(pages: list, side: int) -> list[dict]:
    annotations = []
    for page, boxes in enumerate(pages):
        xyxy, classes, *scores = boxes[side]
        scores = scores[0] if scores else None
        for k, (box, label) in enumerate(zip(np.asarray(xyxy, np.float64).reshape(-1, 4).tolist(), np.asarray(classes).tolist())):
            width, height = box[2] - box[0], box[3] - box[1]
            annotation = {"id": len(annotations) + 1, "image_id": page + 1, "category_id": label + 1,
                          "bbox": [box[0], box[1], width, height], "area": width * height, "iscrowd": 0}
            if side == 1:
                score = None if scores is None else float(scores[k])
                annotation["score"] = 1.0 if score is None or np.isnan(score) else score
            annotations.append(annotation)
    return annotations


def _coco_run(sides: list[list[dict]], page_count: int, class_count: int, image_id: int | None = None, summarised: bool = True):
    """pycocotools' COCOeval with its default parameters on both sides' annotations (`_annotations`)
    over all pages, or over page `image_id` alone (its images restricted to it), evaluated (and
    accumulated and summarised)."""
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    def dataset(annotations: list[dict]) -> COCO:
        coco = COCO()
        coco.dataset = {"images": [{"id": page + 1} for page in range(page_count)],
                        "categories": [{"id": label + 1} for label in range(class_count)],
                        "annotations": [a for a in annotations if image_id in (None, a["image_id"])]}
        coco.createIndex()
        return coco

    with contextlib.redirect_stdout(io.StringIO()):
        evaluation = COCOeval(dataset(sides[0]), dataset(sides[1]), "bbox")
        if image_id is not None:
            evaluation.params.imgIds = [image_id]
        evaluation.evaluate()
        if summarised:
            evaluation.accumulate()
            evaluation.summarize()
    return evaluation


def coco_oracle(pages: list, class_count: int) -> dict:
    """pycocotools COCOeval with its default parameters: `stats` (the twelve figures, -1 where
    undefined), `per_class` {class: (ap, ar_100)} for the classes with a box on either side, and
    `pages` [(map, map_50, map_75)], each page evaluated alone."""
    def mean(values: np.ndarray) -> float:
        defined = values[values > -1]
        return float(np.mean(defined)) if len(defined) else -1.0

    sides = [_annotations(pages, side) for side in (0, 1)]
    whole = _coco_run(sides, len(pages), class_count)
    used = {int(label) for page in pages for side in page for label in np.asarray(side[1]).tolist()}
    per_class = {label: (mean(whole.eval["precision"][:, :, label, 0, -1]), mean(whole.eval["recall"][:, label, 0, -1])) for label in sorted(used)}
    page_stats = [tuple(float(v) for v in _coco_run(sides, len(pages), class_count, page + 1).stats[:3]) for page in range(len(pages))]
    return {"stats": dict(zip(STATS, (float(v) for v in whole.stats))), "per_class": per_class, "pages": page_stats}


def coco_detections(pages: list, class_count: int, min_score: float) -> tuple[np.ndarray, np.ndarray]:
    """True and false positives of each class, as pycocotools' `evaluateImg` marks the predictions
    scored at least `min_score` (unscored ones kept) when they are all it is given: IoU 0.50, area
    range all, 100 detections a page and class; ignored detections neither."""
    def kept(boxes: tuple) -> tuple:
        xyxy, classes, scores = boxes
        keep = np.ones(len(classes), bool) if scores is None else ~(np.asarray(scores) < min_score)
        return np.asarray(xyxy).reshape(-1, 4)[keep], np.asarray(classes)[keep], None if scores is None else np.asarray(scores)[keep]

    kept_pages = [(reference, kept(prediction)) for reference, prediction in pages]
    evaluation = _coco_run([_annotations(kept_pages, side) for side in (0, 1)], len(pages), class_count, summarised=False)
    true, false = np.zeros(class_count, np.int64), np.zeros(class_count, np.int64)
    for image in evaluation.evalImgs:
        if image is None or image["aRng"] != [0, 1e10]:
            continue
        hit, ignored = image["dtMatches"][0] > 0, image["dtIgnore"][0].astype(bool)
        true[image["category_id"] - 1] += int((hit & ~ignored).sum())
        false[image["category_id"] - 1] += int((~hit & ~ignored).sum())
    return true, false


def docling_case(pages: list, taxonomy: list[str], page_ids: list[str] | None = None) -> dict:
    """One case for `docling_reference.py`."""
    def rows(boxes, scored: bool) -> list[list]:
        xyxy, classes, *scores = boxes
        scores = scores[0] if scores else None
        out = []
        for k, (box, label) in enumerate(zip(np.asarray(xyxy, np.float64).reshape(-1, 4).tolist(), np.asarray(classes).tolist())):
            row = [int(label), *box]
            if scored:
                score = None if scores is None else float(scores[k])
                row.append(None if score is None or np.isnan(score) else score)
            out.append(row)
        return out

    ids = page_ids or [f"p{k}" for k in range(len(pages))]
    return {"taxonomy": taxonomy, "pages": [{"id": page_id, "reference": rows(reference, False), "prediction": rows(prediction, True)}
                                            for page_id, (reference, prediction) in zip(ids, pages)]}


def run_docling_reference(cases: list[dict]) -> list[dict]:
    """The reference's `MAPDatasetLayoutEvaluation.model_dump()` of each case, in one process (its
    import of torch takes about 12 s); skips the test when its environment is missing."""
    return [run["evaluation"] for run in timed_docling_reference(cases)]


def timed_docling_reference(cases: list[dict]) -> list[dict]:
    """`docling_reference.py`'s output: each case's evaluation and the CPU time it took."""
    if not REFERENCE_PYTHON.exists():
        pytest.skip(f"the docling-metrics-layout 0.17.0 reference environment is not at {REFERENCE_PYTHON}; "
                    "set TORE_MAP_REFERENCE_PYTHON to a Python with docling-metrics-layout==0.17.0, torchmetrics==1.9.0, "
                    "faster-coco-eval==1.8.0 and torch")
    done = subprocess.run([str(REFERENCE_PYTHON), str(RUNNER)], input=json.dumps(cases), capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def layout_pages(reference, prediction, taxonomy: list[str]) -> list:
    """Two layout sets as mAP pages: the reference's pages in order, each with the prediction page of
    the same id (none: no boxes), classes as indices into `taxonomy`."""
    index = {name: k for k, name in enumerate(taxonomy)}
    predicted = {p.id: p for p in prediction.pages}
    pages = []
    for ref in reference.pages:
        pred = predicted.get(ref.id)
        labels = pred.labels if pred is not None else []
        pages.append(((ref.bboxes, np.array([index[label] for label in ref.labels], np.int64)),
                      (pred.bboxes if pred is not None else np.zeros((0, 4)), np.array([index[label] for label in labels], np.int64),
                       pred.scores if pred is not None else None)))
    return pages


def record_columns(matches: PageMatches) -> tuple[np.ndarray, ...]:
    """Every column of the records, the match bits made from their table (whose rows differ with how runs were joined)."""
    return (matches.classes, matches.scores, matches.ranks, *matches.bits(), matches.ground_truths, matches.boxes, matches.page_values)
