"""What the two mAP paths (`map_numpy`, the NumPy one, and `map_kernel`, the compiled one) share:
the conventions, the pages they read and the match records they write.

COCOeval's work splits in two (pycocotools `evaluateImg`, then `accumulate`): each page's
detections are matched against its reference boxes on their own, and only the precision-recall
curves need all pages at once. So a run of pages yields `PageMatches`, one record per detection
that COCOeval keeps (class, score, rank on its page, and which thresholds and area ranges made it a
match or an ignored box) in page order, plus each page's own mAP; the records of consecutive runs
merge into exactly the records of all the pages, in the order the curves read them
(`PageMatches.merged`, which ranks them once), so workers can compute them on page chunks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tore_engine.core.memory import Appended, FreedMemory
from tore_engine.core.offsets import offsets_of
from tore_engine.core.taxonomy import MAX_CLASSES
from tore_engine.metrics import score_order

MAX_DETECTIONS = (1, 10, 100)  # COCOeval maxDets; a page keeps its 100 best detections of a class
AREA_RANGES = np.array([[0.0, 1e5**2], [0.0, 32.0**2], [32.0**2, 96.0**2], [96.0**2, 1e5**2]])  # all, small, medium, large
AREA_NAMES = ("all", "small", "medium", "large")
THRESHOLDS = 10  # IoU thresholds 0.50:0.05:0.95
RECALL_POINTS = 101
PAGE_FIELDS = ("map", "map_50", "map_75")
CLASS_TYPE = np.int16  # a class index, held for every box and record (4 million at 100,000 pages)
assert MAX_CLASSES <= np.iinfo(CLASS_TYPE).max, "a class index must fit CLASS_TYPE"
RANK_TYPE = np.uint8  # a detection's rank on its page
assert MAX_DETECTIONS[-1] <= np.iinfo(RANK_TYPE).max, "a rank must fit RANK_TYPE"
CODE_TYPE = np.int32  # a record's row of its run's table of match bits (`match_patterns`)


def _torch_float32_linspace(start: float, end: float, steps: int) -> np.ndarray:
    """`torch.linspace(start, end, steps).tolist()` in float32 as torch 2.x computes it on the CPU:
    a float32 step, the first half counted up from `start` and the rest down from `end`, each with
    one rounding (a fused multiply-add); widened to float64. 0.55 becomes 0.550000011920929."""
    first, last = float(np.float32(start)), float(np.float32(end))
    step = float(np.float32((np.float32(end) - np.float32(start)) / np.float32(steps - 1)))
    values = [first + step * k if k < steps // 2 else last - step * (steps - 1 - k) for k in range(steps)]  # exact in float64
    return np.array(values, dtype=np.float64).astype(np.float32).astype(np.float64)


@dataclass(frozen=True)
class Convention:
    """How one reference computes mAP. `single_precision`: coordinates, widths and scores rounded
    to float32 before use and the results rounded to float32 (torch tensors); `epsilon` is added to
    the detection count in the precision's denominator (pycocotools adds `np.spacing(1)`)."""

    name: str
    iou_thresholds: np.ndarray  # (THRESHOLDS,) float64
    recall_thresholds: np.ndarray  # (RECALL_POINTS,) float64
    epsilon: float
    single_precision: bool

    def value(self, number: float) -> float:
        """A result as this convention reports it."""
        return float(np.float32(number)) if self.single_precision else float(number)

    def values(self, numbers: np.ndarray) -> np.ndarray:
        """`value` of each number (NaN stays NaN)."""
        return numbers.astype(np.float32).astype(np.float64) if self.single_precision else numbers


# pycocotools 2.0.11 `Params.setDetParams`, built exactly as it builds them.
COCO = Convention(
    "coco",
    np.linspace(0.5, 0.95, int(np.round((0.95 - 0.5) / 0.05)) + 1, endpoint=True),
    np.linspace(0.0, 1.00, int(np.round((1.00 - 0.0) / 0.01)) + 1, endpoint=True),
    float(np.spacing(1)),
    False,
)
# docling-metrics-layout 0.17.0: torchmetrics 1.9.0 hands its float32 thresholds to faster-coco-eval
# 1.8.0, whose precision is tp / (tp + fp).
DOCLING = Convention("docling", _torch_float32_linspace(0.5, 0.95, THRESHOLDS), _torch_float32_linspace(0.0, 1.0, RECALL_POINTS), 0.0, True)
CONVENTIONS = {convention.name: convention for convention in (COCO, DOCLING)}


@dataclass(frozen=True)
class SideBoxes:
    """One side's boxes of a run of pages, column-wise: page p's are `offsets[p]:offsets[p + 1]`, in
    file order, `xyxy` as given (unclipped), `classes` indices in taxonomy order, `scores` NaN (or
    None for all) where a box has none, which counts as 1.0."""

    offsets: np.ndarray  # (pages + 1,) int64
    xyxy: np.ndarray  # (boxes, 4) float64
    classes: np.ndarray  # (boxes,) int64
    scores: np.ndarray | None = None  # (boxes,) float64

    @classmethod
    def from_pages(cls, pages: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray | None]]) -> "SideBoxes":
        """From each page's (xyxy, classes, scores or None)."""
        counts = [len(classes) for _, classes, _ in pages]
        scores = [np.full(count, np.nan) if page_scores is None else np.asarray(page_scores, np.float64)
                  for count, (_, _, page_scores) in zip(counts, pages)]
        return cls(
            offsets_of(counts),
            np.concatenate([np.asarray(xyxy, np.float64).reshape(-1, 4) for xyxy, _, _ in pages] or [np.zeros((0, 4))]),
            np.concatenate([np.asarray(classes, np.int64).reshape(-1) for _, classes, _ in pages] or [np.zeros(0, np.int64)]),
            np.concatenate(scores or [np.zeros(0)]),
        )

    @property
    def pages(self) -> int:
        return len(self.offsets) - 1


# What a value beyond the floating-point range becomes, in both conventions: what the references compute
# with it, silently (Python floats and C doubles in pycocotools, float32 tensors in torch): an area
# width x height beyond float64 is infinite (outside every area range), a coordinate or score beyond
# float32 in the docling convention is infinite, and an infinite box's inf - inf is NaN, which COCO's
# `bbIou` passes through its fmin/fmax (`map_numpy.box_ious`). NumPy's overflow warnings are off there.
OVERFLOW_RULE = "IEEE arithmetic, as the references"


def coco_boxes(side: SideBoxes, convention: Convention) -> tuple[np.ndarray, np.ndarray]:
    """The boxes as COCOeval reads them, (x, y, width, height) with width = x2 - x1 computed in the
    convention's precision (torchvision's `box_convert` on float32 tensors), and their areas
    width x height in float64, which decide the area ranges."""
    with np.errstate(over="ignore", invalid="ignore"):  # IEEE as the references: beyond the range, infinite (see `OVERFLOW_RULE`)
        xyxy = side.xyxy.astype(np.float32) if convention.single_precision else side.xyxy
        xywh = np.empty((len(xyxy), 4))  # written in place: a joined copy and its float64 copy took 3.5x as long
        xywh[:, :2] = xyxy[:, :2]
        xywh[:, 2:] = xyxy[:, 2:] - xyxy[:, :2]  # in the convention's precision, then widened
        return xywh, xywh[:, 2] * xywh[:, 3]


def detection_scores(side: SideBoxes, convention: Convention) -> np.ndarray:
    """Scores as the convention ranks them: 1.0 for an unscored box (the reference's default)."""
    scores = np.ones(len(side.classes)) if side.scores is None else np.where(np.isnan(side.scores), 1.0, side.scores)
    with np.errstate(over="ignore"):  # a score beyond float32's range is infinite there, as in torch
        return scores.astype(np.float32).astype(np.float64) if convention.single_precision else scores.astype(np.float64)


def index_type(count: int) -> type[np.signedinteger]:
    """The integer type of positions among `count` records: 32 bits where they fit (orders and
    positions of millions of records are held at once), else 64."""
    return np.int32 if count <= np.iinfo(np.int32).max else np.int64


def by_class(classes: np.ndarray) -> np.ndarray:
    """The stable order of records by class. NumPy's stable sort of keys of 16 bits or fewer is a
    radix sort, one pass over the records, so a taxonomy's classes are sorted as such when they fit."""
    keys = classes.astype(np.int16, copy=False) if classes.max(initial=0) <= np.iinfo(np.int16).max else classes
    return np.argsort(keys, kind="stable").astype(index_type(len(classes)), copy=False)


def ranking(classes: np.ndarray, scores: np.ndarray, compiled: bool = False) -> np.ndarray:
    """The order of records by class, then by score descending, ties kept in their order: COCOeval's
    stable sort of a class's detections, concatenated in image order (records come in page and
    rank order). `compiled`: every record by score at once, then stably by class, in one radix
    sort (`score_order.descending`). Else each class's part of the order is sorted in place by
    NumPy's stable sort (records already in this order in runs sort in about linear time: it finds
    the runs)."""
    if compiled:  # records hold CLASS_TYPE classes, which the sort's last pass takes (it refuses others)
        return score_order.descending(scores, compiled=True, classes=classes)
    order = by_class(classes)
    bounds = np.searchsorted(classes[order], np.arange(int(classes.max(initial=-1)) + 2))
    for first, last in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        segment = order[first:last]
        order[first:last] = segment[np.argsort(-scores[segment], kind="stable")]
    return order


def match_patterns(matched: np.ndarray, ignored: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Records' (matched, ignored) bits as rows of a table of the distinct pairs, and each record's
    row: a run holds few distinct pairs (137 among 4 million synthetic records), so a record's 16
    bytes of bits become 4. Each side's values are sorted once; the pairs of their ranks are then
    told apart in a table of every possible pair when that is no larger than the records (the usual
    case: a pass, no sort), else sorted too. Exact for any 64-bit values."""
    if len(matched) == 0:
        return np.zeros(0, CODE_TYPE), np.zeros((0, 2), np.uint64)
    matched_values, matched_rows = np.unique(matched, return_inverse=True)
    ignored_values, ignored_rows = np.unique(ignored, return_inverse=True)
    pairs = matched_rows.astype(np.int64) * len(ignored_values) + ignored_rows  # below records^2 < 2^63
    if len(matched_values) * len(ignored_values) <= max(len(matched), 1024):
        present = np.zeros(len(matched_values) * len(ignored_values), bool)
        present[pairs] = True
        distinct = np.flatnonzero(present)
        row_of = np.cumsum(present, dtype=np.int64) - 1
        codes = row_of[pairs]
    else:
        distinct, codes = np.unique(pairs, return_inverse=True)
    patterns = np.stack((matched_values[distinct // len(ignored_values)], ignored_values[distinct % len(ignored_values)]), axis=1)
    return codes.astype(CODE_TYPE), patterns


@dataclass(frozen=True)
class PageMatches:
    """What a run of pages contributes to mAP; `merged` joins consecutive runs exactly.

    One record per kept detection (a page's 100 best of a class), in page order as matched (a
    page's by class, then rank), or in ranking order (`ranking`) once `merged`: its class, score,
    rank on its page (score order, ties in file order) and `codes`, its row of `patterns`, which
    holds each distinct pair of (matched, ignored) bits (area range a, threshold t at bit
    `a * THRESHOLDS + t`): whether it matched a reference box and whether COCOeval ignores it (an
    ignored detection's match bit is 0: no figure reads it). `ground_truths[c, a]` counts the
    reference boxes of class c that area range a does not ignore; `boxes[c]` counts both sides'
    boxes of class c (classes with none get no per-class value). `page_values` holds each page's
    map, map_50 and map_75 in float64, NaN where the page has no reference box to score.
    """

    classes: np.ndarray  # (records,) CLASS_TYPE
    scores: np.ndarray  # (records,) float64
    ranks: np.ndarray  # (records,) RANK_TYPE, below `MAX_DETECTIONS[-1]`
    codes: np.ndarray  # (records,) CODE_TYPE, rows of `patterns`
    patterns: np.ndarray  # (distinct pairs, 2) uint64: matched bits, ignored bits
    ground_truths: np.ndarray  # (classes, areas) int64
    boxes: np.ndarray  # (classes,) int64
    page_values: np.ndarray  # (pages, 3) float64

    RECORDS = ("classes", "scores", "ranks", "codes")
    # 15 bytes a record: a taxonomy's classes fit 16 bits, a page's 100 ranks 8, the bits a row of
    # `patterns` (4 million records at 100,000 pages: 57 MiB; 103 MiB with the bits in each record)
    RECORD_TYPES = (CLASS_TYPE, np.float64, RANK_TYPE, CODE_TYPE)

    @classmethod
    def from_bits(cls, classes: np.ndarray, scores: np.ndarray, ranks: np.ndarray, matched: np.ndarray, ignored: np.ndarray,
                  ground_truths: np.ndarray, boxes: np.ndarray, page_values: np.ndarray) -> "PageMatches":
        """From each record's matched and ignored bits (`match_patterns`)."""
        return cls(classes, scores, ranks, *match_patterns(matched, ignored), ground_truths, boxes, page_values)

    def bits(self) -> tuple[np.ndarray, np.ndarray]:
        """Each record's matched and ignored bits (made here: the records hold rows of `patterns`)."""
        return self.patterns[self.codes, 0], self.patterns[self.codes, 1]

    @classmethod
    def merged(cls, parts: list["PageMatches"], compiled: bool = False) -> "PageMatches":
        """The records of consecutive runs of pages, each in page order or its own ranking order
        (or joined in run order, `MatchRuns`), as one in ranking order. `parts` is emptied, each run
        let go of once copied and each column once reordered, so that the records are held once,
        with their order beside them."""
        if not parts:
            raise ValueError("no page matches to merge")
        if len(parts) > 1:
            runs = MatchRuns(sum(len(part.classes) for part in parts))
            parts.reverse()  # taken from the end, in run order
            while parts:
                runs.add(parts.pop())
            parts.append(runs.joined())
            del runs
        whole = parts.pop()
        columns, totals = [getattr(whole, name) for name in cls.RECORDS], (whole.ground_truths, whole.boxes, whole.page_values)
        patterns = whole.patterns
        del whole
        order = ranking(columns[0], columns[1], compiled)
        for k, (column, dtype) in enumerate(zip(columns, cls.RECORD_TYPES)):
            columns[k] = column[order].astype(dtype, copy=False)  # one column at a time: the unordered one goes at once
        del column
        classes, scores, ranks, codes = columns
        return cls(classes, scores, ranks, codes, patterns, *totals)

    @property
    def nbytes(self) -> int:
        """The bytes of its records."""
        return sum(getattr(self, name).nbytes for name in self.RECORDS) + self.patterns.nbytes

    def class_bounds(self) -> np.ndarray:
        """Where each class's records start (and, last, where they end)."""
        return np.searchsorted(self.classes, np.arange(len(self.boxes) + 1, dtype=self.classes.dtype)).astype(np.int64)


class MatchRuns:
    """The records of consecutive runs of pages joined as they come (`add`, in run order), into
    columns reserved for `records` (an upper bound: what is not written costs nothing,
    `memory.Appended`), each run let go of once copied, so that the runs of a pool are never all
    held beside their join; `joined` hands them over in run order, for `PageMatches.merged` to rank.
    Each run's rows of match bits become rows of one table, in the order first met."""

    def __init__(self, records: int) -> None:
        self._columns = [Appended(dtype, records) for dtype in PageMatches.RECORD_TYPES]
        self._rows: dict[tuple[int, int], int] = {}  # (matched, ignored) -> row of the joined table
        self._ground_truths: np.ndarray | int = 0
        self._boxes: np.ndarray | int = 0
        self._page_values: list[np.ndarray] = []
        self._freed = FreedMemory()

    def add(self, run: PageMatches) -> None:
        """The next run of pages (consumed: the caller lets it go)."""
        rows = np.array([self._rows.setdefault(pair, len(self._rows)) for pair in zip(*run.patterns.T.tolist())] or [0], CODE_TYPE)
        for column, name in zip(self._columns, PageMatches.RECORDS):
            column.append(rows[run.codes] if name == "codes" else getattr(run, name))
        self._ground_truths = self._ground_truths + run.ground_truths
        self._boxes = self._boxes + run.boxes
        self._page_values.append(run.page_values)
        self._freed.let_go(run.nbytes)

    def joined(self) -> PageMatches:
        """The runs added (at least one), as one in run order; the join lets go of them."""
        classes, scores, ranks, codes = (column.array() for column in self._columns)
        self._columns = []
        patterns = np.array(list(self._rows), np.uint64).reshape(-1, 2)
        return PageMatches(classes, scores, ranks, codes, patterns, np.asarray(self._ground_truths), np.asarray(self._boxes),
                           np.concatenate(self._page_values))
