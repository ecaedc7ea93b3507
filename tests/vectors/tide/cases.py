"""The TIDE vectors' cases as the product reads them: a case's boxes as mAP's columns, a real set's
boxes as `tore evaluate` hands them to TIDE, and the product's decisions in tidecv_reference.py's
form, so that a test compares them with tidecv's as they are."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tests.helpers import DEMO, shared_path
from tore_engine.api import load_pair
from tore_engine.core.taxonomy import resolve_taxonomy
from tore_engine.metrics.box_outcomes import PREDICTION_KINDS, REFERENCE_KINDS, BoxOutcomes, BoxPartners
from tore_engine.metrics.map_types import SideBoxes
from tore_engine.run.runner import box_batches, pair_positions

VECTORS = Path(__file__).resolve().parent


def vectors() -> list[Path]:
    return sorted(VECTORS.glob("*.json"))


def read_vector(path: Path) -> dict:
    return json.loads(path.read_text())


def _path(where: str) -> Path:
    """A source's file: the demo's (demo:NAME), any file by its absolute path, else one under ../shared/data/layouts."""
    if Path(where).is_absolute():
        return Path(where)
    return DEMO / where.removeprefix("demo:") if where.startswith("demo:") else shared_path("data", "layouts", *where.split("/"))


def layout_pair(source: dict):
    """A real set's reference and prediction layout sets (skips when ../shared/data is absent)."""
    images = _path(source["images"]) if "images" in source else None
    return load_pair(_path(source["reference"]), _path(source["prediction"]), source["format"], coco_images=images)


def case_of_source(source: dict) -> dict:
    """A real set's boxes as the evaluation hands them to TIDE (after pairing, unclipped, scaled),
    class ids in taxonomy order."""
    reference, prediction = layout_pair(source)
    taxonomy = resolve_taxonomy(reference, prediction, "single")
    matched, _ = pair_positions(reference, prediction)
    pages = []
    for batch in box_batches(reference, prediction, matched, taxonomy, min_score=None):
        for local in range(len(batch.page_ids)):
            sides = {}
            for name, side in (("reference", batch.reference), ("prediction", batch.prediction)):
                rows = range(int(side.offsets[local]), int(side.offsets[local + 1]))
                scores = [None if side.scores is None or np.isnan(side.scores[k]) else float(side.scores[k]) for k in rows]
                sides[name] = [[int(side.classes[k]), *map(float, side.xyxy[k])] + ([scores[i]] if name == "prediction" else [])
                               for i, k in enumerate(rows)]
            pages.append(sides)
    return {"pages": pages}


def case_sides(case: dict) -> tuple[SideBoxes, SideBoxes]:
    """A case's boxes as mAP's columns."""
    reference = SideBoxes.from_pages([(np.array([box[1:5] for box in page["reference"]], float).reshape(-1, 4),
                                       np.array([box[0] for box in page["reference"]], np.int64), None) for page in case["pages"]])
    prediction = SideBoxes.from_pages([(np.array([box[1:5] for box in page["prediction"]], float).reshape(-1, 4),
                                        np.array([box[0] for box in page["prediction"]], np.int64),
                                        np.array([np.nan if box[5] is None else box[5] for box in page["prediction"]], float))
                                       for page in case["pages"]])
    return reference, prediction


def decisions(outcomes: BoxOutcomes, partners: BoxPartners) -> dict:
    """Every box's [outcome, error, partner, iou] by side and page, as tidecv_reference.py writes them."""
    out: dict[str, list] = {"reference": [], "prediction": []}
    for side, kinds_named in (("reference", REFERENCE_KINDS), ("prediction", PREDICTION_KINDS)):
        offsets, kinds = (getattr(outcomes, f"{side}_{name}") for name in ("offsets", "kinds"))
        partner_column, ious = (getattr(partners, f"{side}_{name}") for name in ("partners", "ious"))
        for page in range(outcomes.pages):
            rows = []
            for k in range(offsets[page], offsets[page + 1]):
                outcome, error = kinds_named[int(kinds[k])]
                rows.append([outcome, error or None, None if partner_column[k] < 0 else int(partner_column[k]), None if np.isnan(ious[k]) else float(ious[k])])
            out[side].append(rows)
    return out
