"""Preparing a whole batch of pages at once, from their columns: each box's class index and its
painted pixel range (outward rounding, clipping), prediction boxes scaled into the reference frame,
and the warnings for boxes that paint nothing or are clipped.

This is `dataset.prepare_page` for every page of a batch in a few NumPy operations instead of a few
dozen a page, so that the compiled page kernel is not left waiting on Python. The per-page
function stays the reference: tests check that both give the same tasks and warnings, in order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tore_engine.core.errors import InputWarning
from tore_engine.core.layout import Page, PageColumns, scaled_boxes
from tore_engine.core.offsets import offsets_of, rows_of_runs, run_of_items
from tore_engine.core.polygons import Polygons
from tore_engine.core.taxonomy import Taxonomy
from tore_engine.engine import page_kernel as kernel
from tore_engine.engine.raster import PageTask, PixelExtents
from tore_engine.metrics.map_types import SideBoxes

NO_PREDICTION = "no prediction for this page; scored as all Background"


@dataclass(frozen=True)
class PreparedBatch:
    """A batch ready for the page kernel: both sides' boxes of every page, side after side."""

    page_ids: list[str]
    frames: np.ndarray  # (pages, 2) int64 width, height of each reference frame
    offsets: np.ndarray  # (2 * pages + 1,) first box of each side: page 0 reference, page 0 prediction, ...
    classes: np.ndarray  # (boxes,) int64 class index
    extents: PixelExtents  # of every box, in the same order
    warnings: list[InputWarning]
    boxes: np.ndarray  # (boxes, 4) as given (predictions scaled into the reference frame), unclipped: what mAP reads
    scores: np.ndarray  # (boxes,) NaN where a box has no score

    def kernel_inputs(self) -> tuple[np.ndarray, kernel.Pieces | None, np.ndarray | None]:
        """The boxes and the polygons' pieces as the page kernel takes them (`kernel.kernel_arrays`),
        and which pages have a polygon (None when none has)."""
        boxes, pieces = kernel.kernel_arrays(self.extents, self.classes)
        if pieces is None or self.extents.polygon is None:
            return boxes, None, None
        polygon_sides = np.bincount(run_of_items(self.offsets), weights=self.extents.polygon, minlength=len(self.offsets) - 1) > 0
        return boxes, pieces, polygon_sides[0::2] | polygon_sides[1::2]

    def side_boxes(self) -> tuple[SideBoxes, SideBoxes]:
        """Each side's boxes as mAP reads them: unclipped, in file order, page by page."""
        side_of = run_of_items(self.offsets)
        counts = np.diff(self.offsets)

        def side(parity: int, scored: bool) -> SideBoxes:
            rows = np.flatnonzero(side_of % 2 == parity)
            offsets = offsets_of(counts[parity::2])
            return SideBoxes(offsets, self.boxes[rows], self.classes[rows], self.scores[rows] if scored else None)

        return side(0, False), side(1, True)

    def prediction_boxes(self) -> np.ndarray:
        """(boxes,) bool: which boxes are the prediction's (the others, the reference's)."""
        return run_of_items(self.offsets) % 2 == 1

    def kept(self, keep: np.ndarray) -> "PreparedBatch":
        """The same pages with only the boxes where `keep` is true (as if the others had never
        been read; no warnings)."""
        offsets = offsets_of(np.bincount(run_of_items(self.offsets)[keep], minlength=len(self.offsets) - 1))
        return PreparedBatch(self.page_ids, self.frames, offsets, self.classes[keep], self.extents.take(keep), [], self.boxes[keep], self.scores[keep])

    def tasks(self) -> list[PageTask]:
        """The same pages as the NumPy path's tasks (views of these arrays)."""
        tasks = []
        for page, page_id in enumerate(self.page_ids):
            reference, prediction = (slice(self.offsets[side], self.offsets[side + 1]) for side in (2 * page, 2 * page + 1))
            tasks.append(PageTask(page_id, int(self.frames[page, 0]), int(self.frames[page, 1]),
                                  self.classes[reference], self.extents.part(reference),
                                  self.classes[prediction], self.extents.part(prediction)))
        return tasks


def _class_indices(columns: PageColumns, index: dict[str, int]) -> np.ndarray:
    by_code = np.array([index[label] for label in columns.vocabulary], dtype=np.int64)
    return by_code[columns.codes] if len(columns.codes) else np.zeros(0, dtype=np.int64)


def _scaled(predictions: PageColumns, matched: np.ndarray, references: PageColumns) -> tuple[np.ndarray, np.ndarray, np.ndarray, Polygons | None]:
    """The matched prediction pages' boxes in their reference frames (multiply, then divide, and
    only where the declared frames differ, as `Page.scaled_to`), with each box's index among the
    predictions, the number of boxes of each reference page's prediction, and their polygons."""
    present = np.flatnonzero(matched >= 0)
    sources = matched[present]
    counts = np.zeros(len(matched), dtype=np.int64)
    counts[present] = predictions.offsets[sources + 1] - predictions.offsets[sources]
    starts = predictions.offsets[sources]
    pick = rows_of_runs(starts, counts[present])
    boxes = predictions.bboxes[pick]
    page = np.repeat(present, counts[present])
    reference_size, prediction_size = references.sizes[page], predictions.sizes[np.repeat(sources, counts[present])]
    differs = (reference_size != prediction_size).any(axis=1)
    polygons = None if predictions.polygons is None else predictions.polygons.take(pick)
    if differs.any():
        numerator, denominator = np.tile(reference_size[differs], 2), np.tile(prediction_size[differs], 2)
        boxes[differs] = scaled_boxes(boxes[differs], numerator, denominator)
        if polygons is not None:
            polygons = polygons.scaled(np.where(differs[:, None], reference_size, 1.0), np.where(differs[:, None], prediction_size, 1.0))
    return boxes, pick, counts, polygons


def _interleaved_polygons(references: PageColumns, predictions: Polygons | None, reference_at: np.ndarray, prediction_at: np.ndarray) -> Polygons | None:
    """Both sides' polygons in the batch's box order (`_interleaved`), or None when no box is one."""
    if references.polygons is None and predictions is None:
        return None
    reference_polygons = references.polygons or Polygons.none(len(reference_at))
    order = np.empty(len(reference_at) + len(prediction_at), np.int64)
    order[reference_at], order[prediction_at] = np.arange(len(reference_at)), len(reference_at) + np.arange(len(prediction_at))
    return Polygons.concatenate([reference_polygons, predictions or Polygons.none(len(prediction_at))]).take(order)


def _interleaved(reference_counts: np.ndarray, prediction_counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Offsets of the sides in page order (reference, prediction, reference, ...), and where each
    side's boxes go in that order."""
    sizes = np.stack([reference_counts, prediction_counts], axis=1).reshape(-1)
    offsets = offsets_of(sizes)
    return offsets, rows_of_runs(offsets[0:-1:2], reference_counts), rows_of_runs(offsets[1::2], prediction_counts)


def prepare_columns(references: PageColumns, predictions: PageColumns, matched: np.ndarray, taxonomy: Taxonomy) -> PreparedBatch:
    """Every page of a batch prepared at once: `matched[k]` is the position in `predictions` of
    reference page k's prediction, or -1."""
    frames = np.ceil(references.sizes).astype(np.int64).reshape(-1, 2)
    reference_counts = np.diff(references.offsets)
    prediction_boxes, pick, prediction_counts, prediction_polygons = _scaled(predictions, matched, references)
    offsets, reference_at, prediction_at = _interleaved(reference_counts, prediction_counts)
    boxes = np.empty((int(offsets[-1]), 4))
    boxes[reference_at], boxes[prediction_at] = references.bboxes, prediction_boxes
    classes = np.empty(len(boxes), dtype=np.int64)
    classes[reference_at] = _class_indices(references, taxonomy.reference_index)
    present = np.flatnonzero(matched >= 0)
    prediction_codes = np.concatenate([predictions.codes[predictions.offsets[j] : predictions.offsets[j + 1]] for j in matched[present]]) if len(present) else np.zeros(0, np.int64)
    classes[prediction_at] = np.array([taxonomy.prediction_index[label] for label in predictions.vocabulary], dtype=np.int64)[prediction_codes] if len(prediction_codes) else prediction_codes
    side_frames = np.repeat(np.repeat(frames, 2, axis=0), np.diff(offsets), axis=0)
    polygons = _interleaved_polygons(references, prediction_polygons, reference_at, prediction_at)
    extents = PixelExtents.from_boxes(boxes, side_frames[:, 0], side_frames[:, 1], polygons)
    scores = np.full(len(boxes), np.nan)
    if references.scores is not None:
        scores[reference_at] = references.scores
    if predictions.scores is not None:
        scores[prediction_at] = predictions.scores[pick]
    warnings = _warnings(references.ids, frames, offsets, boxes, extents, matched)
    return PreparedBatch(list(references.ids), frames, offsets, classes, extents, warnings, boxes, scores)


PAINTS_NOTHING, CLIPPED = 0, 1  # a side's box warnings: those that paint nothing first, then the clipped, each in box order


def _warnings(page_ids: list[str], frames: np.ndarray, offsets: np.ndarray, boxes: np.ndarray, extents: PixelExtents, matched: np.ndarray) -> list[InputWarning]:
    """Every page's warnings in `prepare_page`'s order (`dataset._box_warnings`): by page; the
    reference's boxes, then the prediction's (or that there is none); on each side the boxes that
    paint nothing, then the clipped ones. Ordered for the whole batch at once, then worded."""
    side_of = run_of_items(offsets)
    flagged = np.concatenate([np.flatnonzero(~extents.paints), np.flatnonzero(extents.clipped)])
    kinds = np.repeat([PAINTS_NOTHING, CLIPPED], [int((~extents.paints).sum()), int(extents.clipped.sum())])
    missing = np.flatnonzero(matched < 0)
    sides = np.concatenate([side_of[flagged], 2 * missing + 1])  # a missing prediction has no box
    order = np.lexsort((np.concatenate([flagged, np.zeros(len(missing), np.int64)]), np.concatenate([kinds, np.zeros(len(missing), np.int64)]), sides))
    boxes_text = boxes[flagged].tolist()
    frame_text = [f"{width} x {height}" for width, height in frames.tolist()]
    warnings: list[InputWarning] = []
    for k in order.tolist():
        if k >= len(flagged):
            warnings.append(InputWarning(page_ids[int(missing[k - len(flagged)])], None, "prediction", NO_PREDICTION))
            continue
        side = int(side_of[flagged[k]])
        page, name, box = side // 2, "prediction" if side % 2 else "reference", int(flagged[k] - offsets[side])
        if kinds[k] == PAINTS_NOTHING:
            message = f"box paints no pixel (outside the {frame_text[page]} page, or zero area after rounding): bbox {boxes_text[k]}"
        else:
            message = f"box clipped at the edge of the {frame_text[page]} page: bbox {boxes_text[k]}"
        warnings.append(InputWarning(page_ids[page], box, name, message))
    return warnings


def _box_warnings(page_id: str, side: str, bboxes: np.ndarray, extents: PixelExtents, frame: str) -> list[InputWarning]:
    warnings = []
    for box in np.flatnonzero(~extents.paints):
        warnings.append(InputWarning(page_id, int(box), side, f"box paints no pixel (outside the {frame} page, or zero area after rounding): bbox {bboxes[box].tolist()}"))
    for box in np.flatnonzero(extents.clipped):
        warnings.append(InputWarning(page_id, int(box), side, f"box clipped at the edge of the {frame} page: bbox {bboxes[box].tolist()}"))
    return warnings


def _classes(labels: list[str], index: dict[str, int]) -> np.ndarray:
    return np.fromiter((index[label] for label in labels), dtype=np.int64, count=len(labels))


def prepare_page(reference: Page, prediction: Page | None, taxonomy: Taxonomy) -> tuple[PageTask, list[InputWarning]]:
    """A page's task (class indices and painted extents of each side) and its box warnings."""
    width, height = math.ceil(reference.width), math.ceil(reference.height)
    frame = f"{width} x {height}"
    scaled = prediction.scaled_to(reference.width, reference.height) if prediction else None
    prediction_boxes = scaled.bboxes if scaled else np.zeros((0, 4))
    reference_extents = PixelExtents.from_boxes(reference.bboxes, width, height, reference.polygons)
    prediction_extents = PixelExtents.from_boxes(prediction_boxes, width, height, scaled.polygons if scaled else None)
    warnings = _box_warnings(reference.id, "reference", reference.bboxes, reference_extents, frame)
    if prediction is None:
        warnings.append(InputWarning(reference.id, None, "prediction", "no prediction for this page; scored as all Background"))
    else:
        warnings += _box_warnings(reference.id, "prediction", prediction_boxes, prediction_extents, frame)
    task = PageTask(
        reference.id,
        width,
        height,
        _classes(reference.labels, taxonomy.reference_index),
        reference_extents,
        _classes(prediction.labels if prediction else [], taxonomy.prediction_index),
        prediction_extents,
    )
    return task, warnings
