"""Reading a layout-detection prediction for OmniDocBench, in any of its three forms
(docs/benchmarks.md#layout-ap, docs/cli.md#tore-score):

- the official flat form `{"results": [{image_name, bbox [x0,y0,x1,y1], category_id, score}],
  "categories": {"<id>": "<name>"}}`;
- a COCO results list `[{image_id, category_id, bbox [x,y,w,h], score}]`, image ids being 1-based
  positions in the reference file and category ids 1..10 the eval classes;
- a TORE layout JSON (docs/formats.md#layout-json) whose page ids are the image names; its boxes are
  scaled into the reference frame when its page size differs.

Each form keeps its own class names (`taxonomy`), so that TORE can compare them with the ground
truth's categories in dual-taxonomy mode; the layout AP maps them to the 10 eval classes.
Pages are matched with or without the image extension; predictions for pages the reference lacks
are kept aside in `unknown_pages` rather than dropped silently. The official evaluator and COCO
tools read these files as dictionaries, so keys they do not use are skipped here too; the keys
that are used are type-checked (and are finite: strict JSON has no NaN or Infinity).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from tore_engine.core.errors import InputError
from tore_engine.core.layout import Page, PageImage
from tore_engine.io.json import read_json, schema_error
from tore_engine.scorers.omnidocbench.categories import EVAL_CLASSES
from tore_engine.scorers.omnidocbench.reference import Reference

Numbers4 = tuple[float, float, float, float]


class _OfficialResult(msgspec.Struct):
    image_name: str
    bbox: Numbers4  # x0, y0, x1, y1
    category_id: int | str  # looked up as a key of `categories`
    score: float | None = None


class _Official(msgspec.Struct):
    results: list[_OfficialResult]
    categories: dict[str, str]


class _CocoResult(msgspec.Struct):
    image_id: int
    category_id: int
    bbox: Numbers4  # x, y, w, h
    score: float | None = None


@dataclass
class LayoutPrediction:
    """A layout-detection prediction aligned with a reference: one `Page` per reference page, in
    the reference frame and with its image, boxes in the prediction's own class names."""

    name: str
    source: str
    taxonomy: list[str]  # the prediction's own class names, in its order
    pages: list[Page]  # parallel to Reference.pages; scores NaN where a box has none
    unknown_pages: list[str]  # page keys with predictions but no reference page

    @property
    def box_count(self) -> int:
        return sum(page.box_count for page in self.pages)

    @property
    def has_scores(self) -> bool:
        """True when every box has a score (AP then ranks by score; else only P/R/F1 are meaningful)."""
        return not any(np.isnan(scores_or_nan(page)).any() for page in self.pages)


def scores_or_nan(page: Page) -> np.ndarray:
    """A page's box scores (n,), NaN for a box without one (every page of a `LayoutPrediction` has them)."""
    return page.scores if page.scores is not None else np.full(len(page.labels), np.nan)


def load_layout_prediction(path: str | Path, reference: Reference) -> LayoutPrediction:
    """Read a prediction file in any of the three forms and align it with `reference`."""
    path = Path(path)
    source = str(path)
    data = read_json(path)
    if isinstance(data, dict) and "results" in data:
        return _from_official(_convert(data, _Official, source), source, reference, path.stem)
    if isinstance(data, list):
        return _from_coco_results(_convert(data, list[_CocoResult], source), source, reference, path.stem)
    if isinstance(data, dict) and "pages" in data:
        return _from_tore(data, source, reference)
    raise InputError(
        "not a layout-detection prediction: expected the official {'results': [...], 'categories': {...}} "
        "form, a COCO results list, or a layout JSON with 'pages'",
        file=source,
    )


def _convert(data: Any, schema: Any, source: str) -> Any:
    try:
        return msgspec.convert(data, schema)
    except msgspec.ValidationError as error:
        raise schema_error(error, source) from None


class _Aligner:
    """Collects boxes into per-reference-page buckets, remembering unknown page keys."""

    def __init__(self, reference: Reference) -> None:
        self.reference = reference
        self.index = reference.page_index()
        self.boxes: list[list[tuple[str, list[float], float]]] = [[] for _ in reference.pages]
        self.unknown: dict[str, None] = {}

    def add(self, key: str, label: str, bbox: list[float], score: float) -> None:
        position = self.index.get(key)
        if position is None:
            self.unknown.setdefault(key)
        else:
            self.boxes[position].append((label, bbox, score))

    def prediction(self, name: str, source: str, taxonomy: list[str]) -> LayoutPrediction:
        pages = [
            Page(
                id=page.id,
                width=page.width,
                height=page.height,
                labels=[label for label, _, _ in boxes],
                bboxes=np.array([bbox for _, bbox, _ in boxes], dtype=np.float64).reshape(-1, 4),
                scores=np.array([score for _, _, score in boxes], dtype=np.float64),
                image=PageImage(page.image_path) if page.image_path is not None else None,
            )
            for page, boxes in zip(self.reference.pages, self.boxes)
        ]
        return LayoutPrediction(name, source, taxonomy, pages, list(self.unknown))


def _from_official(data: _Official, source: str, reference: Reference, name: str) -> LayoutPrediction:
    aligner = _Aligner(reference)
    for position, item in enumerate(data.results):
        where = f"results[{position}]"
        label = data.categories.get(str(item.category_id))
        if label is None:
            raise InputError(f"{where}: category_id {item.category_id!r} is not in 'categories'", file=source, page=item.image_name)
        aligner.add(item.image_name, label, _corners(item.bbox, where, source, item.image_name), _score(item.score))
    taxonomy = list(dict.fromkeys(data.categories[key] for key in sorted(data.categories, key=_id_order)))
    return aligner.prediction(name, source, taxonomy)


def _from_coco_results(data: list[_CocoResult], source: str, reference: Reference, name: str) -> LayoutPrediction:
    aligner = _Aligner(reference)
    for position, item in enumerate(data):
        where = f"entry {position}"
        if item.category_id not in range(1, len(EVAL_CLASSES) + 1):
            raise InputError(
                f"{where}: 'category_id' must be 1..{len(EVAL_CLASSES)} (the eval classes), got {item.category_id!r}",
                file=source,
            )
        x, y, w, h = item.bbox
        if w < 0 or h < 0:
            raise InputError(f"{where}: bbox width and height must not be negative", file=source)
        if not 1 <= item.image_id <= len(reference.pages):
            aligner.unknown.setdefault(f"image_id {item.image_id}")
            continue
        key = reference.pages[item.image_id - 1].id
        aligner.add(key, EVAL_CLASSES[item.category_id - 1], [x, y, x + w, y + h], _score(item.score))
    return aligner.prediction(name, source, list(EVAL_CLASSES))


def _from_tore(data: dict, source: str, reference: Reference) -> LayoutPrediction:
    from tore_engine.formats.native import (
        from_document,  # the native reader (docs/formats.md#layout-json)
    )

    layout = from_document(data, source)
    aligner = _Aligner(reference)
    for page in layout.pages:
        position = aligner.index.get(page.id)
        if position is None:
            aligner.unknown.setdefault(page.id)
            continue
        frame = reference.pages[position]
        scale = _scale_to_reference((page.width, page.height), frame.width, frame.height, frame.declared_size)
        for label, bbox, score in zip(page.labels, (page.bboxes * scale).tolist(), scores_or_nan(page).tolist()):
            aligner.add(page.id, label, bbox, float(score))
    return aligner.prediction(layout.name, source, layout.class_list())


def _scale_to_reference(
    size: tuple[float, float], width: float, height: float, declared: tuple[float, float]
) -> np.ndarray:
    """Factors `[sx, sy, sx, sy]` taking a layout JSON page's boxes into the reference frame
    (docs/formats.md#layout-json). A page that copied the reference's `page_info` size, even swapped, is
    taken to be in image pixels already, as the reference polygons are."""
    if size in ((width, height), declared):
        return np.ones(4)
    sx, sy = width / size[0], height / size[1]
    return np.array([sx, sy, sx, sy])


def _id_order(key: str) -> tuple[int, Any]:
    return (0, int(key)) if key.lstrip("-").isdigit() else (1, key)


def _corners(values: Numbers4, where: str, source: str, page: str) -> list[float]:
    x1, y1, x2, y2 = values
    if x2 < x1 or y2 < y1:
        raise InputError(f"{where}: 'bbox' must be [x0, y0, x1, y1] with x1 >= x0 and y1 >= y0", file=source, page=page)
    return [x1, y1, x2, y2]


def _score(score: float | None) -> float:
    """NaN for a box without a score."""
    return math.nan if score is None else score
