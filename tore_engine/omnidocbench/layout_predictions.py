"""Reading a layout-detection prediction for OmniDocBench, in any of its three forms
(omnidocbench.md section 4, formats.md section 5):

- the official flat form `{"results": [{image_name, bbox [x0,y0,x1,y1], category_id, score}],
  "categories": {"<id>": "<name>"}}`;
- a COCO results list `[{image_id, category_id, bbox [x,y,w,h], score}]`, image ids being 1-based
  positions in the reference file and category ids 1..10 the eval classes;
- a TORE layout JSON (formats.md section 1) whose page ids are the image names; its boxes are
  scaled into the reference frame when its page size differs.

Each form keeps its own class names (`taxonomy`), so that TORE can compare them with the ground
truth's categories in dual-taxonomy mode; the layout AP maps them to the 10 eval classes.
Pages are matched with or without the image extension; predictions for pages the reference lacks
are kept aside in `unknown_pages` rather than dropped silently.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tore_engine.errors import InputError
from tore_engine.loaders import from_native, read_json
from tore_engine.omnidocbench.categories import EVAL_CLASSES
from tore_engine.omnidocbench.reference import Reference


@dataclass
class PredictedPage:
    """One page's predicted boxes, in the prediction's own class names."""

    labels: list[str] = field(default_factory=list)
    bboxes: list[list[float]] = field(default_factory=list)  # [x1, y1, x2, y2]
    scores: list[float] = field(default_factory=list)  # NaN where a box has no score

    def add(self, label: str, bbox: list[float], score: float) -> None:
        self.labels.append(label)
        self.bboxes.append(bbox)
        self.scores.append(score)

    def bbox_array(self) -> np.ndarray:
        return np.array(self.bboxes, dtype=np.float64).reshape(-1, 4)


@dataclass
class LayoutPrediction:
    """A layout-detection prediction aligned with a reference: one entry per reference page."""

    name: str
    source: str
    taxonomy: list[str]  # the prediction's own class names, in its order
    pages: list[PredictedPage]  # parallel to Reference.pages
    unknown_pages: list[str]  # page keys with predictions but no reference page

    @property
    def box_count(self) -> int:
        return sum(len(page.labels) for page in self.pages)

    @property
    def has_scores(self) -> bool:
        """True when every box has a score (AP then ranks by score; else only P/R/F1 are meaningful)."""
        return all(not math.isnan(s) for page in self.pages for s in page.scores)


def load_layout_prediction(path: str | Path, reference: Reference) -> LayoutPrediction:
    """Read a prediction file in any of the three forms and align it with `reference`."""
    path = Path(path)
    source = str(path)
    data = read_json(path)
    if isinstance(data, dict) and "results" in data:
        return _from_official(data, source, reference, path.stem)
    if isinstance(data, list):
        return _from_coco_results(data, source, reference, path.stem)
    if isinstance(data, dict) and "pages" in data:
        return _from_tore(data, source, reference)
    raise InputError(
        "not a layout-detection prediction: expected the official {'results': [...], 'categories': {...}} "
        "form, a COCO results list, or a layout JSON with 'pages'",
        file=source,
    )


class _Aligner:
    """Collects boxes into per-reference-page buckets, remembering unknown page keys."""

    def __init__(self, reference: Reference) -> None:
        self.index = reference.page_index()
        self.pages = [PredictedPage() for _ in reference.pages]
        self.unknown: dict[str, None] = {}

    def page(self, key: str) -> PredictedPage | None:
        position = self.index.get(key)
        if position is None:
            self.unknown.setdefault(key)
            return None
        return self.pages[position]


def _from_official(data: dict, source: str, reference: Reference, name: str) -> LayoutPrediction:
    categories = data.get("categories")
    results = data.get("results")
    if not isinstance(categories, dict) or not all(isinstance(v, str) for v in categories.values()):
        raise InputError("'categories' must map category ids to class names", file=source)
    if not isinstance(results, list):
        raise InputError("'results' must be a list", file=source)
    names = {str(key): value for key, value in categories.items()}
    aligner = _Aligner(reference)
    for position, item in enumerate(results):
        where = f"results[{position}]"
        if not isinstance(item, dict):
            raise InputError(f"{where} must be an object", file=source)
        image_name = item.get("image_name")
        if not isinstance(image_name, str):
            raise InputError(f"{where} has no 'image_name' string", file=source)
        label = names.get(str(item.get("category_id")))
        if label is None:
            raise InputError(
                f"{where}: category_id {item.get('category_id')!r} is not in 'categories'", file=source, page=image_name
            )
        bbox = _corners(item.get("bbox"), where, source, image_name)
        page = aligner.page(image_name)
        if page is not None:
            page.add(label, bbox, _score(item, where, source, image_name))
    taxonomy = list(dict.fromkeys(names[key] for key in sorted(names, key=_id_order)))
    return LayoutPrediction(name, source, taxonomy, aligner.pages, list(aligner.unknown))


def _from_coco_results(data: list, source: str, reference: Reference, name: str) -> LayoutPrediction:
    aligner = _Aligner(reference)
    for position, item in enumerate(data):
        where = f"entry {position}"
        if not isinstance(item, dict):
            raise InputError(f"{where} must be an object", file=source)
        image_id = item.get("image_id")
        if isinstance(image_id, bool) or not isinstance(image_id, int):
            raise InputError(f"{where}: 'image_id' must be an integer, got {image_id!r}", file=source)
        category_id = item.get("category_id")
        if isinstance(category_id, bool) or category_id not in range(1, len(EVAL_CLASSES) + 1):
            raise InputError(
                f"{where}: 'category_id' must be 1..{len(EVAL_CLASSES)} (the eval classes), got {category_id!r}",
                file=source,
            )
        x, y, w, h = _numbers(item.get("bbox"), where, source, None)
        if w < 0 or h < 0:
            raise InputError(f"{where}: bbox width and height must not be negative", file=source)
        if not 1 <= image_id <= len(reference.pages):
            aligner.unknown.setdefault(f"image_id {image_id}")
            continue
        key = reference.pages[image_id - 1].id
        aligner.page(key).add(EVAL_CLASSES[category_id - 1], [x, y, x + w, y + h], _score(item, where, source, key))
    return LayoutPrediction(name, source, list(EVAL_CLASSES), aligner.pages, list(aligner.unknown))


def _from_tore(data: dict, source: str, reference: Reference) -> LayoutPrediction:
    layout = from_native(data, source)
    aligner = _Aligner(reference)
    for page in layout.pages:
        target = aligner.page(page.id)
        if target is None:
            continue
        frame = reference.pages[aligner.index[page.id]]
        scale = _scale_to_reference((page.width, page.height), frame.width, frame.height, frame.declared_size)
        scores = page.scores if page.scores is not None else np.full(len(page.labels), np.nan)
        for label, bbox, score in zip(page.labels, (page.bboxes * scale).tolist(), scores.tolist()):
            target.add(label, bbox, float(score))
    return LayoutPrediction(layout.name, source, layout.class_list(), aligner.pages, list(aligner.unknown))


def _scale_to_reference(
    size: tuple[float, float], width: float, height: float, declared: tuple[float, float]
) -> np.ndarray:
    """Factors `[sx, sy, sx, sy]` taking a layout JSON page's boxes into the reference frame
    (formats.md section 1). A page that copied the reference's `page_info` size, even swapped, is
    taken to be in image pixels already, as the reference polygons are."""
    if size in ((width, height), declared):
        return np.ones(4)
    sx, sy = width / size[0], height / size[1]
    return np.array([sx, sy, sx, sy])


def _id_order(key: str) -> tuple[int, Any]:
    return (0, int(key)) if key.lstrip("-").isdigit() else (1, key)


def _numbers(value: Any, where: str, source: str, page: str | None) -> list[float]:
    if (
        not isinstance(value, list)
        or len(value) != 4
        or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value)
    ):
        raise InputError(f"{where}: 'bbox' must be 4 finite numbers, got {value!r}", file=source, page=page)
    return [float(v) for v in value]


def _corners(value: Any, where: str, source: str, page: str) -> list[float]:
    x1, y1, x2, y2 = _numbers(value, where, source, page)
    if x2 < x1 or y2 < y1:
        raise InputError(f"{where}: 'bbox' must be [x0, y0, x1, y1] with x1 >= x0 and y1 >= y0", file=source, page=page)
    return [x1, y1, x2, y2]


def _score(item: dict, where: str, source: str, page: str) -> float:
    score = item.get("score")
    if score is None:
        return math.nan
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
        raise InputError(f"{where}: 'score' must be a finite number, got {score!r}", file=source, page=page)
    return float(score)
