"""COCO-style mean Average Precision of the same boxes TORE scores, in the two conventions users
quote (docs/cli.md#map-beside-tore):

- `coco`: pycocotools 2.0.11 `COCOeval` with its default float64 parameters;
- `docling`: docling-metrics-layout 0.17.0, which runs torchmetrics 1.9.0 `MeanAveragePrecision`
  on faster-coco-eval 1.8.0 once per page and once over all pages: float32 coordinates, scores,
  thresholds and results (an IoU of exactly 0.55 fails its 0.550000011920929), no epsilon in the
  precision, and -1 where a value is undefined, which we report as None.

Both read the boxes as given (unclipped; area = width x height), pages in the reference's order
each with its prediction page, boxes in file order, classes as taxonomy indices, and an unscored
box as score 1.0 (so the ranking falls back to the boxes' order).

The work splits like COCOeval's: `match_pages` matches a run of pages (in a worker, on a chunk),
`PageMatches.merged` joins runs in page order, and `summarise` builds the precision-recall curves
and every figure. `mean_average_precision` does all three for pages in memory.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from tore_engine.metrics import map_kernel, map_numpy
from tore_engine.metrics.map_types import (
    AREA_NAMES,
    CONVENTIONS,
    MAX_DETECTIONS,
    PAGE_FIELDS,
    Convention,
    PageMatches,
    SideBoxes,
)

FIELDS = ("map", "map_50", "map_75", "map_small", "map_medium", "map_large",
          "mar_1", "mar_10", "mar_100", "mar_small", "mar_medium", "mar_large")  # COCOeval's `stats`, in order
HISTOGRAM_BINS = 20
UNDEFINED = -1.0  # what COCOeval and the reference write for a value that does not exist


@dataclass(frozen=True)
class PageStatistics:
    """docling-metrics-layout's `compute_stats` of one per-page figure: mean, median and (sample)
    standard deviation over all pages, the undefined ones counted as -1 as it counts them, and a
    20-bin histogram over [0, 1] that leaves them out."""

    total: int
    mean: float | None
    median: float | None
    std: float
    bins: list[float]
    hist: list[float]


@dataclass(frozen=True)
class MeanAveragePrecision:
    """mAP of a data set. Each figure is None where undefined (no reference box it could score).

    `per_class[c] = (ap, ar_100)` for every class index c with a box on either side; `pages` holds
    each page's (map, map_50, map_75), NaN where the page has no reference box;
    `page_stats[field]` summarises them for field in `PAGE_FIELDS`."""

    convention: str
    map: float | None
    map_50: float | None
    map_75: float | None
    map_small: float | None
    map_medium: float | None
    map_large: float | None
    mar_1: float | None
    mar_10: float | None
    mar_100: float | None
    mar_small: float | None
    mar_medium: float | None
    mar_large: float | None
    per_class: dict[int, tuple[float | None, float | None]]
    pages: np.ndarray  # (pages, 3) float64
    page_stats: dict[str, PageStatistics]


def convention_named(name: str) -> Convention:
    try:
        return CONVENTIONS[name]
    except KeyError:
        raise ValueError(f"unknown mAP convention {name!r}: expected one of {', '.join(CONVENTIONS)}") from None


def match_pages(reference: SideBoxes, prediction: SideBoxes, class_count: int, convention: Convention,
                job_pages: int = 0) -> PageMatches:
    """The match records of a run of pages (reference page p against prediction page p) in
    ranking order, as `summarise` reads them; `job_pages`, the size of the whole job when known,
    decides whether the compiled paths pay off."""
    records = page_records(reference, prediction, class_count, convention, job_pages)
    return PageMatches.merged([records], map_kernel.use_score_order(len(records.classes), max(reference.pages, job_pages)))


def page_records(reference: SideBoxes, prediction: SideBoxes, class_count: int, convention: Convention,
                 job_pages: int = 0) -> PageMatches:
    """`match_pages`' records in page order, unranked: what a worker sends, its runs ranked once
    all are in (`PageMatches.merged`)."""
    if reference.pages != prediction.pages:
        raise ValueError(f"{reference.pages} reference pages but {prediction.pages} prediction pages: pair them first")
    for name, side in (("reference", reference), ("prediction", prediction)):
        _check_side(name, side, class_count)
    compiled = map_kernel.use_kernels(map_kernel.matching, max(reference.pages, job_pages), len(reference.classes) + len(prediction.classes))
    return (map_kernel if compiled else map_numpy).match_pages(reference, prediction, class_count, convention)


def _check_side(name: str, side: SideBoxes, class_count: int) -> None:
    """The columns the compiled path indexes without checks: consistent, classes in the taxonomy."""
    boxes = len(side.classes)
    if side.xyxy.shape != (boxes, 4) or (side.scores is not None and side.scores.shape != (boxes,)):
        raise ValueError(f"{name}: {boxes} classes but boxes of shape {side.xyxy.shape}" + ("" if side.scores is None else f" and scores of shape {side.scores.shape}"))
    if len(side.offsets) == 0 or side.offsets[0] != 0 or side.offsets[-1] != boxes or (np.diff(side.offsets) < 0).any():
        raise ValueError(f"{name}: page offsets must rise from 0 to the {boxes} boxes")
    if boxes and not (0 <= side.classes.min() and side.classes.max() < class_count):
        raise ValueError(f"{name}: class indices must lie in 0..{class_count - 1}, got {int(side.classes.min())}..{int(side.classes.max())}")


def _mean(values: np.ndarray) -> float:
    """pycocotools `_summarize`: the mean of the defined entries, or -1."""
    defined = values[values > -1]
    return UNDEFINED if len(defined) == 0 else float(np.mean(defined))


def _stats(precision: np.ndarray, recall: np.ndarray, iou_thresholds: np.ndarray) -> list[float]:
    """COCOeval `summarize()`'s twelve `stats` from its precision (T, R, K, A, M) and recall
    (T, K, A, M) arrays: AP over all, at 0.50 and 0.75, per area range, then AR per maxDets and
    per area range."""
    last = len(MAX_DETECTIONS) - 1
    at = {threshold: np.where(threshold == iou_thresholds)[0] for threshold in (0.5, 0.75)}
    return [
        _mean(precision[:, :, :, 0, last]),
        _mean(precision[at[0.5]][:, :, :, 0, last]),
        _mean(precision[at[0.75]][:, :, :, 0, last]),
        *(_mean(precision[:, :, :, area, last]) for area in range(1, len(AREA_NAMES))),
        *(_mean(recall[:, :, 0, limit]) for limit in range(len(MAX_DETECTIONS))),
        *(_mean(recall[:, :, area, last]) for area in range(1, len(AREA_NAMES))),
    ]


def _reported(value: float, convention: Convention) -> float | None:
    return None if value == UNDEFINED else convention.value(value)


def page_statistics(values: Sequence[float]) -> PageStatistics:
    """`compute_stats` of docling-metrics-layout 0.17.0 on per-page values (-1 for undefined): its
    `statistics.mean` and `statistics.stdev` are the exact mean and the correctly rounded square
    root of the exact sample variance, which `_exact_sums` gives ten times faster (the same bits)."""
    hist, bins = np.histogram(values, bins=HISTOGRAM_BINS, range=(0, 1.0))
    count = len(values)
    total, squares, shift = _exact_sums(np.asarray(values, np.float64))  # the values are integers over 2^shift
    return PageStatistics(
        total=count,
        mean=float(Fraction(total, count << shift)) if count else None,
        median=statistics.median(values) if count else None,
        std=_square_root(count * squares - total * total, (count * (count - 1)) << (2 * shift)) if count > 1 else 0.0,
        bins=bins.tolist(),
        hist=hist.astype(np.float64).tolist(),
    )


def _exact_sums(values: np.ndarray) -> tuple[int, int, int]:
    """The sum and the sum of squares of finite float64 values, exactly, as integers (S, Q) and a
    shift s with sum = S / 2^s and sum of squares = Q / 2^2s: each value is an integer mantissa
    times a power of two, added up a power at a time."""
    mantissas, exponents = np.frexp(values)
    integers, powers = (mantissas * 2.0**53).astype(np.int64), exponents.astype(np.int64) - 53  # value = integer * 2^power, exactly
    lowest = int(powers.min(initial=0))
    total = squares = 0
    for power in np.unique(powers).tolist():
        group = integers[powers == power].tolist()
        total += sum(group) << (power - lowest)
        squares += sum(value * value for value in group) << (2 * (power - lowest))
    return total, squares, -lowest


def _square_root(numerator: int, denominator: int) -> float:
    """The float nearest the square root of numerator / denominator (integers, the numerator not
    negative): an integer square root of at least 60 bits, its last bit set when inexact (rounding
    to odd), then one correctly rounded division by a power of two."""
    if numerator == 0:
        return 0.0
    shift = max(0, 120 - (numerator.bit_length() - denominator.bit_length()))
    shift += shift % 2
    scaled, remainder = divmod(numerator << shift, denominator)
    root = math.isqrt(scaled)
    if remainder or root * root != scaled:
        root |= 1
    return root / (1 << (shift // 2))


def summarise(matches: PageMatches, convention: Convention) -> MeanAveragePrecision:
    """Every figure of the data set from its pages' match records."""
    compiled = map_kernel.use_kernels(map_kernel.accumulating, max(len(matches.page_values), int(np.count_nonzero(matches.boxes))), int(matches.boxes.sum()))  # its cost grows with the classes too
    precision, recall = (map_kernel if compiled else map_numpy).accumulate(matches, convention)
    stats = _stats(precision, recall, convention.iou_thresholds)
    last = len(MAX_DETECTIONS) - 1
    per_class = {
        label: (_reported(_mean(precision[:, :, label, 0, last]), convention), _reported(_mean(recall[:, label, 0, last]), convention))
        for label in np.flatnonzero(matches.boxes).tolist()
    }
    pages = convention.values(matches.page_values)
    with_undefined = np.where(np.isnan(pages), UNDEFINED, pages)
    return MeanAveragePrecision(
        convention.name,
        **{field: _reported(value, convention) for field, value in zip(FIELDS, stats)},
        per_class=per_class,
        pages=pages,
        page_stats={field: page_statistics(with_undefined[:, k].tolist()) for k, field in enumerate(PAGE_FIELDS)},
    )


def mean_average_precision(
    pages: Sequence[tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray | None]]],
    class_count: int,
    convention: Convention | str = "coco",
) -> MeanAveragePrecision:
    """mAP of pages in memory: for each reference page in file order, ((xyxy, classes) of its
    reference boxes, (xyxy, classes, scores or None) of its prediction page's boxes), with
    classes indices into a taxonomy of `class_count` classes and NaN (or None) for no score."""
    convention = convention_named(convention) if isinstance(convention, str) else convention
    reference = SideBoxes.from_pages([(xyxy, classes, None) for (xyxy, classes), _ in pages])
    prediction = SideBoxes.from_pages([boxes for _, boxes in pages])
    return summarise(match_pages(reference, prediction, class_count, convention), convention)
