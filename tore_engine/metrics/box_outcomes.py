"""Box outcomes and TIDE's error types beside TORE (docs/cli.md#box-outcomes-and-tides-error-types), equal to tidecv 1.0.1.

`match_outcomes` decides every box of a run of pages (`box_kernel`: what TIDE decides on a page);
`BoxOutcomes.merged` joins runs in page order, exactly (the decisions are per page); `summarise`
computes what TIDE computes from all pages: AP@50, and AP@50 again after fixing each error type.

TIDE's AP (`tidecv.ap.APDataObject.get_ap`) ranks a class's records by score with a stable sort,
so the order its records were pushed in decides ties, and that order differs between its plain AP
(page order, then rank on the page) and its fixed APs (`TIDERun.fix_errors` pushes the records of
the errors first, then the true positives): both orders are reproduced here, as are the class order
of its means and its sums, term by term, so the figures are TIDE's to the bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tore_engine.core.memory import Appended, FreedMemory
from tore_engine.metrics import box_kernel, map_kernel, score_order
from tore_engine.metrics.box_kernel import BKG, BOTH, CLS, DUPE, ERROR_KINDS, FN, IGNORED, LOC, MISS, TP
from tore_engine.metrics.map_types import CLASS_TYPE, COCO, SideBoxes, by_class, coco_boxes, detection_scores, index_type

REFERENCE = "tidecv 1.0.1"
RECALL_POINTS = np.array([point / 100 for point in range(101)])  # TIDE's 101 recall points, as it makes them
PREDICTION_KINDS = {IGNORED: ("ignored", ""), TP: ("tp", ""), CLS: ("fp", "Cls"), LOC: ("fp", "Loc"), BOTH: ("fp", "Both"),
                    DUPE: ("fp", "Dupe"), BKG: ("fp", "Bkg")}
REFERENCE_KINDS = {TP: ("tp", ""), FN: ("fn", ""), MISS: ("fn", "Miss")}
PAGE_COUNT_COLUMNS = ("tp", "fp", "fn", *ERROR_KINDS)  # pages.csv's columns of each page's counts
NO_REFERENCE = "no reference box on any reference page (after the minimum score): nothing to match (tidecv divides by zero)"
NO_PREDICTION = "no prediction box on any reference page (after the minimum score): nothing to match (tidecv divides by zero)"
DUAL_TAXONOMY = "dual taxonomy: the two sides have different classes, so no box can match one of its own class"

map_kernel.OTHER_KERNELS[box_kernel.outcomes] = ("TIDE's box outcome kernel", 4.0)
map_kernel.OTHER_KERNELS[box_kernel.class_aps] = ("TIDE's AP kernel", 2.0)


@dataclass(frozen=True)
class BoxOutcomes:
    """What TIDE decides on a run of pages, box by box, in file order (page p's boxes at
    `offsets[p]:offsets[p + 1]` of each side): each box's kind (`box_kernel` codes); each
    prediction's class, score (1.0 where it has none) and partner's index on its page (-1: none;
    the box-level matrix reads it), and for a Cls or Loc error the class its fix makes it a true
    positive of (-1: the fix drops it); `ranked`, the kept predictions in page order, each page's by
    rank. What only a page's or a table's boxes show (the reference boxes' partners, the IoUs) is
    decided again from the boxes when asked (`BoxPartners`), not held: 80 MB at 100,000 pages."""

    reference_offsets: np.ndarray  # (pages + 1,) int64
    reference_classes: np.ndarray  # CLASS_TYPE
    reference_kinds: np.ndarray  # int8
    prediction_offsets: np.ndarray
    prediction_classes: np.ndarray
    prediction_scores: np.ndarray  # float64
    prediction_kinds: np.ndarray
    prediction_partners: np.ndarray  # int32
    fixes: np.ndarray  # CLASS_TYPE
    ranked: np.ndarray  # int32 positions into the prediction columns (int64 beyond 2^31 - 1 of them)

    @property
    def pages(self) -> int:
        return len(self.reference_offsets) - 1

    @classmethod
    def merged(cls, parts: list["BoxOutcomes"]) -> "BoxOutcomes":
        """Consecutive runs of pages as one: the columns joined, offsets and positions shifted. It
        consumes `parts`, letting each go once copied (`BoxOutcomeRuns`)."""
        if not parts:
            raise ValueError("no box outcomes to merge")
        joined = BoxOutcomeRuns(sum(len(part.reference_classes) for part in parts), sum(len(part.prediction_classes) for part in parts))
        parts.reverse()  # taken from the end, in run order
        while parts:
            joined.add(parts.pop())
        return joined.outcomes()

    def page_counts(self) -> np.ndarray:
        """(pages, 9) each page's tp, fp, fn and count of each error type (`PAGE_COUNT_COLUMNS`)."""
        def per_page(offsets: np.ndarray, hits: np.ndarray) -> np.ndarray:
            running = np.zeros(len(hits) + 1, index_type(len(hits)))  # a running count 32 bits wide where it fits, made once
            np.cumsum(hits, out=running[1:])
            return np.diff(running[offsets]).astype(np.int64, copy=False)

        predictions, references = self.prediction_kinds, self.reference_kinds
        columns = [per_page(self.prediction_offsets, predictions == TP),
                   per_page(self.prediction_offsets, (predictions != TP) & (predictions != IGNORED)),
                   per_page(self.reference_offsets, references != TP)]
        columns += [per_page(self.reference_offsets if kind == MISS else self.prediction_offsets,
                             (references if kind == MISS else predictions) == kind) for kind in ERROR_KINDS.values()]
        return np.stack(columns, axis=1)


    def on_page(self, page: int, partners: "BoxPartners") -> dict[str, list[BoxDecision]]:
        """What TIDE decided for each box of page `page` (its index in the run), by side: the boxes in
        the order they were evaluated (file order, after the minimum score), partners as positions
        on the other side of the same page (`partners`: the same run's)."""
        sides = {"reference": (self.reference_offsets, self.reference_kinds, partners.reference_partners, partners.reference_ious, REFERENCE_KINDS),
                 "prediction": (self.prediction_offsets, self.prediction_kinds, partners.prediction_partners, partners.prediction_ious, PREDICTION_KINDS)}
        decided = {}
        for side, (offsets, kinds, partner_column, ious, names) in sides.items():
            start, end = int(offsets[page]), int(offsets[page + 1])
            decided[side] = [BoxDecision(*names[int(kind)], int(partner), float(iou))
                             for kind, partner, iou in zip(kinds[start:end].tolist(), partner_column[start:end].tolist(), ious[start:end].tolist())]
        return decided


@dataclass(frozen=True)
class BoxPartners:
    """Each box's partner on the other side of its page (-1: none) and the IoU with it (NaN: none),
    for a run of pages in `BoxOutcomes`' order: made again from the boxes (`decided`) for a table
    or a page, where they are shown."""

    reference_partners: np.ndarray  # int32
    reference_ious: np.ndarray  # float64
    prediction_partners: np.ndarray  # int32
    prediction_ious: np.ndarray  # float64


_ROW_OF = {name: "ranked" if name == "ranked" else "reference" if name.startswith("reference") else "prediction"
           for name in BoxOutcomes.__dataclass_fields__ if not name.endswith("offsets")}  # fixes: one a prediction


class BoxOutcomeRuns:
    """Box outcomes of consecutive runs of pages, joined as they come (`add`, in run order): each
    run is copied into columns reserved for `references` and `predictions` boxes (upper bounds: what
    is not written costs nothing, `memory.Appended`) and can be let go of at once, so that the runs
    of a pool are never all held beside their join (their columns take about 95 MB at 100,000 pages)."""

    DTYPES = {"reference_classes": CLASS_TYPE, "reference_kinds": np.int8, "prediction_classes": CLASS_TYPE, "prediction_scores": np.float64,
              "prediction_kinds": np.int8, "prediction_partners": np.int32, "fixes": CLASS_TYPE}

    def __init__(self, references: int, predictions: int) -> None:
        capacity = {"reference": references, "prediction": predictions, "ranked": predictions}
        self._positions = index_type(predictions)
        self._columns = {name: Appended(self._positions if name == "ranked" else self.DTYPES[name], capacity[_ROW_OF[name]]) for name in _ROW_OF}
        self._offsets = {side: [np.zeros(1, np.int64)] for side in ("reference", "prediction")}
        self._freed = FreedMemory()

    def add(self, run: BoxOutcomes) -> None:
        """The next run of pages (consumed: the caller lets it go)."""
        for side, offsets in self._offsets.items():
            offsets.append(getattr(run, f"{side}_offsets")[1:] + len(self._columns[f"{side}_classes"]))
        predictions = len(self._columns["prediction_classes"])
        for name, column in self._columns.items():
            source = getattr(run, name)
            # positions within the run, shifted in the joined width (int64 beyond 2^31 - 1 boxes)
            column.append(source.astype(self._positions) + predictions if name == "ranked" else source)
        self._freed.let_go(sum(getattr(run, name).nbytes for name in _ROW_OF))

    def outcomes(self) -> BoxOutcomes:
        """The runs added so far, as one."""
        offsets = {f"{side}_offsets": np.concatenate(parts) for side, parts in self._offsets.items()}
        return BoxOutcomes(**offsets, **{name: column.array() for name, column in self._columns.items()})


@dataclass(frozen=True)
class BoxDecision:
    """One box's outcome as boxes.csv says it (tp, fp, fn, ignored), its TIDE error type ("" when
    none), its partner's position among the other side's boxes of the page (-1: none) and the IoU
    with it (NaN: none)."""

    outcome: str
    error: str
    partner: int
    iou: float


def preload_for_pool() -> None:
    """Before a local pool forks: the box outcome kernel loaded here, for the workers to inherit
    (each loaded it at its first batch: 10,000 pages 0.67 s median against 0.70, eight runs each)."""
    map_kernel.preload_for_pool(box_kernel.outcomes)


def match_outcomes(reference: SideBoxes, prediction: SideBoxes, job_pages: int = 0) -> BoxOutcomes:
    """TIDE's decisions on a run of pages (reference page p against prediction page p), its boxes
    as mAP reads them (COCO's x, y, width, height in float64; unscored as 1.0); compiled when
    `map_kernel.use_kernels` says it pays off for a job of `job_pages`, the same either way."""
    return decided(reference, prediction, job_pages)[0]


def decided(reference: SideBoxes, prediction: SideBoxes, job_pages: int = 0) -> tuple[BoxOutcomes, BoxPartners]:
    """`match_outcomes` with each box's partner and IoU (TIDE decides page by page, so a run's
    decisions are those the whole evaluation made of its pages)."""
    if reference.pages != prediction.pages:
        raise ValueError(f"{reference.pages} reference pages but {prediction.pages} prediction pages: pair them first")
    reference_boxes, _ = coco_boxes(reference, COCO)
    prediction_boxes, _ = coco_boxes(prediction, COCO)
    scores = detection_scores(prediction, COCO)
    compiled = map_kernel.use_kernels(box_kernel.outcomes, max(reference.pages, job_pages), len(reference.classes) + len(prediction.classes))
    decide = box_kernel.outcomes.load() if compiled else box_kernel.plain_page_outcomes
    reference_classes, prediction_classes = (np.ascontiguousarray(side.classes, np.int64) for side in (reference, prediction))
    kinds, partners, ious, fixes, ranked, reference_kinds, reference_partners, reference_ious = decide(
        np.ascontiguousarray(reference.offsets, np.int64), np.ascontiguousarray(reference_boxes), reference_classes,
        np.ascontiguousarray(prediction.offsets, np.int64), np.ascontiguousarray(prediction_boxes), prediction_classes, scores)
    outcomes = BoxOutcomes(np.asarray(reference.offsets, np.int64), reference_classes.astype(CLASS_TYPE), reference_kinds,
                           np.asarray(prediction.offsets, np.int64), prediction_classes.astype(CLASS_TYPE), scores, kinds, partners,
                           fixes.astype(CLASS_TYPE), ranked)
    return outcomes, BoxPartners(reference_partners, reference_ious, partners, ious)


@dataclass(frozen=True)
class ErrorSummary:
    """TIDE's figures as fractions (its percentages / 100): AP@50, the gain of fixing each main error
    type (clipped at 0, as TIDE clips them) and the special FalsePos and FalseNeg (not clipped), the
    count of each error type and each class's true positives, false positives and false negatives."""

    ap50: float
    dap: dict[str, float]
    dap_special: dict[str, float]
    counts: dict[str, int]
    per_class: dict[int, tuple[int, int, int]]

    def to_json(self, classes: Sequence[str]) -> dict:
        """report.json's `errors` block (docs/cli.md#box-outcomes-and-tides-error-types), classes named by taxonomy index."""
        return {"reference": REFERENCE, "iou": box_kernel.POSITIVE, "background_iou": box_kernel.BACKGROUND, "ap50": self.ap50,
                "dap": self.dap, "dap_special": self.dap_special, "counts": self.counts,
                "per_class": {classes[label]: {"tp": tp, "fp": fp, "fn": fn} for label, (tp, fp, fn) in self.per_class.items()}}


def nothing_to_match(outcomes: BoxOutcomes) -> str | None:
    """Why TIDE cannot summarise these pages (it divides by zero), or None."""
    if len(outcomes.reference_classes) == 0:
        return NO_REFERENCE
    if len(outcomes.ranked) == 0:
        return NO_PREDICTION
    return None


def summarise(outcomes: BoxOutcomes, class_count: int) -> ErrorSummary:
    """TIDE's figures of all pages (`nothing_to_match` must be None). What reads the records in page
    order comes first (each fixed run's class order, the false-positive mAP, the counts), so that
    their page-order columns are let go of before the two score orders and the records in ranking
    order are made: 4 million records at 100,000 pages, tens of MB each."""
    ranked = outcomes.ranked
    references = np.bincount(outcomes.reference_classes, minlength=class_count)
    missed = np.bincount(outcomes.reference_classes[outcomes.reference_kinds == MISS], minlength=class_count)
    unmatched = np.bincount(outcomes.reference_classes[outcomes.reference_kinds != TP], minlength=class_count)
    compiled = map_kernel.use_kernels(box_kernel.class_aps, outcomes.pages)
    classes, kinds, fixes = (column[ranked] for column in (outcomes.prediction_classes, outcomes.prediction_kinds, outcomes.fixes))
    true = kinds == TP
    errors_first = ~true  # TIDE's fixed records: the errors' first (ties of score), then the true positives
    order = _class_order(outcomes, classes)
    # each fixed run's class order, from its errors' records in page order
    fixed_orders = {kind: _fixed_order(_kept_errors(kind, classes, kinds, fixes, errors_first), order) for kind in ERROR_KINDS.values()}
    first_errors = _fixed_order(classes[errors_first], order)
    # every true positive scored 1, the rest 0: the true positives first, each part in page order
    true_first = np.zeros(len(true), bool)
    true_first[: np.count_nonzero(true)] = True
    false_positive = _mean_ap(np.concatenate((classes[true], classes[errors_first])), true_first, None, references, first_errors, compiled)
    del true_first
    predicted_false = np.bincount(classes[errors_first], minlength=class_count)
    matched = np.bincount(classes[true], minlength=class_count)
    counts = {name: int(np.count_nonzero((outcomes.reference_kinds if kind == MISS else kinds) == kind)) for name, kind in ERROR_KINDS.items()}
    del classes, kinds, fixes, errors_first
    # positions of the prediction columns, read there: no copy of the kept records' scores is made
    by_score, by_score_errors_first = _by_score(outcomes.prediction_scores, ranked, true, map_kernel.use_score_order(len(ranked), outcomes.pages))
    del true
    base = _mean_ap(outcomes.prediction_classes[by_score], outcomes.prediction_kinds[by_score] == TP, None, references, order, compiled)
    del by_score
    # the fixed runs' records in their ranking order, read by every fixed mAP but one
    ranked_classes, ranked_kinds, ranked_fixes = (column[by_score_errors_first] for column in (outcomes.prediction_classes, outcomes.prediction_kinds, outcomes.fixes))
    ranked_true = ranked_kinds == TP
    del by_score_errors_first

    def fixed(kind: int) -> float:
        """The mAP with the errors of `kind` fixed."""
        ranked_keep, ranked_moved_to, gained = _fixed_records(kind, ranked_classes, ranked_kinds, ranked_fixes, ranked_true)
        return _mean_ap(ranked_moved_to, gained, ranked_keep, references - missed if kind == MISS else references, fixed_orders[kind], compiled)

    errors = {name: max(fixed(kind) - base, 0) / 100 for name, kind in ERROR_KINDS.items()}
    false_negative = _mean_ap(ranked_classes, ranked_true, None, references - unmatched, first_errors, compiled)
    per_class = {label: (int(matched[label]), int(predicted_false[label]), int(unmatched[label]))
                 for label in range(class_count) if matched[label] or predicted_false[label] or unmatched[label]}
    return ErrorSummary(base / 100, errors, {"FalsePos": (false_positive - base) / 100, "FalseNeg": (false_negative - base) / 100},
                        counts, per_class)


def _kept_errors(kind: int, classes: np.ndarray, kinds: np.ndarray, fixes: np.ndarray, errors: np.ndarray) -> np.ndarray:
    """The classes, in page order, of the error records that a run fixing the errors of `kind`
    keeps (`_fixed_records`): what its class order is made from."""
    keep, moved_to, _ = _fixed_records(kind, classes, kinds, fixes, ~errors)
    return moved_to[errors if keep is None else keep & errors]


def _fixed_records(kind: int, classes: np.ndarray, kinds: np.ndarray, fixes: np.ndarray, true: np.ndarray) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    """The records as TIDE's `fix_errors` leaves them when it fixes the errors of `kind`: which
    stay (None: all), their classes (a fixed Cls error changes class) and which are true positives."""
    if kind in (CLS, LOC):
        moved = kinds == kind
        return ~moved | (fixes >= 0), np.where(moved, fixes, classes), true | moved
    if kind != MISS:
        return kinds != kind, classes, true
    return None, classes, true


def _by_score(scores: np.ndarray, records: np.ndarray, true: np.ndarray, compiled: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The records (positions of `scores`, `true` marking each true positive) by score, highest
    first (TIDE's stable sort): ties in record order, and ties with the errors before the true
    positives, then in record order; as positions of `scores`. `compiled`: one radix sort
    (`score_order.descending_twice`, reading the scores where they are), the second order made
    from the first by moving each run of equal scores' true positives last.

    Else both from one NumPy sort of the records' scores: the second reorders only runs of equal
    scores, which a stable sort of a nearly sorted key does in one pass. Each temporary is let go
    of as soon as it is read, and positions are 32 bits where they fit: at 100,000 pages they are
    4 million records."""
    if compiled and len(scores) <= np.iinfo(np.int32).max:
        true_at = np.zeros(len(scores), bool)
        true_at[records[true]] = True
        return score_order.descending_twice(scores, records, true_at)
    negated = np.negative(scores[records])
    plain = np.argsort(negated, kind="stable").astype(index_type(len(negated)), copy=False)
    ordered = negated[plain]
    del negated
    starts = np.ones(len(ordered), bool)  # where a run of equal scores starts
    np.not_equal(ordered[1:], ordered[:-1], out=starts[1:])
    del ordered
    key = np.cumsum(starts, dtype=index_type(2 * len(starts) + 1))  # the run's number, from 1
    del starts
    key *= 2
    key += true[plain]
    return records[plain], records[plain[np.argsort(key, kind="stable")]]


def _by_class(ranking: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """`ranking` stably sorted by class (`by_class`: one radix pass, where a sort by (class, score)
    would compare the records)."""
    return ranking[by_class(classes[ranking])]


def _first_positions(labels: np.ndarray, class_count: int) -> np.ndarray:
    """Where each class first occurs in `labels` (len(labels) where it does not)."""
    first = np.full(class_count, len(labels), np.int64)
    first[labels[::-1]] = np.arange(len(labels) - 1, -1, -1, dtype=index_type(len(labels)))  # the last write, the first position, wins
    return first


def _class_order(outcomes: BoxOutcomes, classes: np.ndarray) -> list[int]:
    """The classes in the order TIDE's plain records first meet them: page by page, a page's
    reference boxes (counted in `add_gt_positives`) before its kept predictions."""
    class_count = int(max(outcomes.reference_classes.max(initial=-1), classes.max(initial=-1))) + 1
    sides = ((outcomes.reference_classes, outcomes.reference_offsets, None), (classes, outcomes.prediction_offsets, outcomes.ranked))
    keys: dict[int, tuple[int, int]] = {}
    for side, (labels, offsets, boxes) in enumerate(sides):
        first = _first_positions(labels, class_count)
        for label in np.flatnonzero(first < len(labels)).tolist():
            position = int(first[label])
            page = int(np.searchsorted(offsets, position if boxes is None else boxes[position], side="right")) - 1
            key = (2 * page + side, position)
            keys[label] = min(keys.get(label, key), key)
    return sorted(keys, key=keys.__getitem__)


def _fixed_order(error_classes: np.ndarray, order: list[int]) -> list[int]:
    """The class order of a fixed run's records (`fix_errors`): the classes of the errors' records
    as first met, then the others in the plain order."""
    first = _first_positions(error_classes, len(order) and max(order) + 1)
    leading = sorted((label for label in order if first[label] < len(error_classes)), key=lambda label: first[label])
    return leading + [label for label in order if first[label] >= len(error_classes)]


def _mean_ap(classes: np.ndarray, true: np.ndarray, keep: np.ndarray | None, references: np.ndarray, order: list[int], compiled: bool) -> float:
    """TIDE's `get_mAP` in percent of records given in ranking order (their classes and whether
    each is a true positive), those `keep` keeps (None: all), each class's in their order: the
    mean of the class APs in `order` over the classes with a record or a reference box.
    `compiled`: each class's AP from `box_kernel.class_aps`, which reads the records in sequence
    (at 100,000 pages, 4 million records: none sorted by class or filtered into a copy); else the
    NumPy path sorts the kept records by class (a stable sort: each class's keep their order) and
    `_class_aps` reads them."""
    if compiled:
        aps, counts = _compiled_class_aps(classes, true, keep, references)
    else:
        kept = np.flatnonzero(np.ones(len(classes), bool) if keep is None else keep).astype(index_type(len(classes)))
        aps, counts = _class_aps(_by_class(kept, classes), classes, true, references)
    total, shown = 0.0, 0
    for label in order:
        if counts[label] or references[label]:
            total += float(aps[label])
            shown += 1
    return total / shown


def _class_aps(ranking: np.ndarray, classes: np.ndarray, true: np.ndarray, references: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each class's AP (`_average_precision`) over the records `ranking` lists, sorted by class, and
    its count of records."""
    sorted_classes, sorted_true = classes[ranking], true[ranking]
    bounds = np.searchsorted(sorted_classes, np.arange(len(references) + 1))
    aps = np.array([_average_precision(sorted_true[bounds[label]:bounds[label + 1]], int(references[label])) for label in range(len(references))])
    return aps, np.diff(bounds)


def _compiled_class_aps(classes: np.ndarray, true: np.ndarray, keep: np.ndarray | None, references: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`box_kernel.class_aps` of records in ranking order, those `keep` keeps (None: all)."""
    aps, counts = np.zeros(len(references)), np.zeros(len(references), np.int64)
    box_kernel.class_aps.load()(np.ascontiguousarray(classes, CLASS_TYPE), np.ascontiguousarray(true, bool),
                                np.zeros(0, bool) if keep is None else np.ascontiguousarray(keep, bool),
                                references.astype(np.int64, copy=False), RECALL_POINTS, aps, counts)
    return aps, counts


def _average_precision(true: np.ndarray, references: int) -> float:
    """`APDataObject.get_ap` of ranked records marked true or false against `references` boxes."""
    if references == 0:
        return 0.0
    hits = np.cumsum(true, dtype=np.int64)
    precision = np.maximum.accumulate((hits / np.arange(1, len(true) + 1))[::-1])[::-1]  # the best at or after each record
    found = np.searchsorted(hits / references, RECALL_POINTS, side="left")
    sampled = np.where(found < len(true), precision[np.minimum(found, len(true) - 1)] if len(true) else 0.0, 0.0)
    total = 0.0
    for value in sampled.tolist():  # summed in order, as TIDE's `sum`
        total += value
    return total / len(sampled) * 100
