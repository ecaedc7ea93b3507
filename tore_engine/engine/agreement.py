"""Where on a page the reference and a prediction agree, for the app's agreement view.

Each pixel of a (possibly down-scaled) raster of the page gets one category: nothing, only in the
reference, only in the prediction, in both with a shared class, or in both with no shared class.
With two different taxonomies (dual mode) classes cannot be compared, so overlapping pixels are
simply "in both". Boxes are rounded outward and clipped as in rasterisation (docs/algorithm.md#rasterisation).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tore_engine.core.layout import Page
from tore_engine.core.polygons import Polygons
from tore_engine.engine.raster import WORD_BITS, PixelExtents, words_for

NOTHING, ONLY_REFERENCE, ONLY_PREDICTION, SAME_CLASS, DIFFERENT_CLASS, BOTH = range(6)
CATEGORY_NAMES = {
    ONLY_REFERENCE: "only in the reference",
    ONLY_PREDICTION: "only in the prediction",
    SAME_CLASS: "in both, same class",
    DIFFERENT_CLASS: "in both, different classes",
    BOTH: "in both (classes not comparable)",
}


@dataclass(frozen=True)
class AgreementRaster:
    """Per-pixel categories (rows x columns, uint8) of a raster `scale` times the page frame."""

    codes: np.ndarray
    scale: float

    def shares(self) -> dict[str, float]:
        """The fraction of the page's raster pixels in each category (nothing excluded)."""
        counts = np.bincount(self.codes.reshape(-1), minlength=len(CATEGORY_NAMES) + 1)
        return {name: counts[code] / self.codes.size for code, name in CATEGORY_NAMES.items()}


def _label_bits(labels: list[str], boxes: np.ndarray, index: dict[str, int], width: int, height: int,
                polygons: Polygons | None = None) -> np.ndarray:
    """(height, width, words) uint64: each pixel's set of label indices (a polygon as painted)."""
    grid = np.zeros((height, width, words_for(len(index))), dtype=np.uint64)
    owners, extents = PixelExtents.from_boxes(boxes, width, height, polygons).rectangles()
    for k, owner in enumerate(owners.tolist()):
        word, bit = divmod(index[labels[owner]], WORD_BITS)
        grid[extents.row0[k] : extents.row1[k], extents.col0[k] : extents.col1[k], word] |= np.uint64(1) << np.uint64(bit)
    return grid


def _scaled(polygons: Polygons | None, scale: float) -> Polygons | None:
    if polygons is None:
        return None
    factors = np.full((len(polygons), 2), scale)
    return polygons.scaled(factors, np.ones_like(factors))


def agreement_raster(reference: Page, prediction: Page | None, *, compare_classes: bool, max_side: int = 1024) -> AgreementRaster:
    """The agreement categories of one page; the raster's longer side is at most `max_side`."""
    width, height = math.ceil(reference.width), math.ceil(reference.height)
    scale = min(1.0, max_side / max(width, height))
    columns, rows = max(1, math.ceil(width * scale)), max(1, math.ceil(height * scale))
    labels = prediction.labels if prediction is not None else []
    scaled = None if prediction is None else prediction.scaled_to(reference.width, reference.height)
    boxes = np.zeros((0, 4)) if scaled is None else scaled.bboxes
    index = {label: k for k, label in enumerate(sorted(set(reference.labels) | set(labels)))}
    truth = _label_bits(reference.labels, reference.bboxes * scale, index, columns, rows, _scaled(reference.polygons, scale))
    predicted = _label_bits(labels, boxes * scale, index, columns, rows, _scaled(scaled.polygons if scaled else None, scale))
    in_truth, in_prediction = truth.any(axis=2), predicted.any(axis=2)
    codes = np.full((rows, columns), NOTHING, dtype=np.uint8)
    codes[in_truth & ~in_prediction] = ONLY_REFERENCE
    codes[~in_truth & in_prediction] = ONLY_PREDICTION
    both = in_truth & in_prediction
    if compare_classes:
        shared = (truth & predicted).any(axis=2)
        codes[both & shared] = SAME_CLASS
        codes[both & ~shared] = DIFFERENT_CLASS
    else:
        codes[both] = BOTH
    return AgreementRaster(codes, scale)
