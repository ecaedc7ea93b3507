"""The operating point: TORE's scores at the minimum scores 0.05, 0.10, ..., 0.95, and mAP's view of
the same scores beside them.

TORE scores hard predictions, so a model with scores needs a threshold. The sweep keeps, for each
minimum score t, the exact counts a run with `--min-score t` would make (`SweepState`, merged from
the workers' batches like the run's own counts), so each point's matrices, and every F1 made from
them, are that run's to the last bit. Beside them, the detection view: the boxes scored at least t
matched at IoU 0.50 as COCOeval matches them (its greedy matching in score order, 100 boxes a page
and class), which gives a precision, recall and F1 per class and threshold, and AP, which needs no
threshold.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from tore_engine.metrics.algorithm1 import ExactCounts, contribution_entries, reduced_counts
from tore_engine.metrics.map_report import MapReport, MapState
from tore_engine.metrics.map_types import PageMatches
from tore_engine.metrics.matrices import ClassScores, ClassTotals, ExactMatrix, foreground
from tore_engine.metrics.rates import EmptyRule, f1_score, rates

MIN_SCORES = tuple(k / 20 for k in range(1, 20))  # k / 20 is the double nearest each decimal, as `--min-score 0.15` reads it
POINTS = len(MIN_SCORES)
DETECTION_IOU = 0.5
SWEEP_COLUMNS = ("min_score", "scope", "class", "recall", "precision", "f1", "best",
                 "ap", "detection_precision", "detection_recall", "detection_f1", "detection_best")
FOREGROUND, CLASS = "foreground", "class"  # a row's scope: the reduced view's Foreground (all classes pooled), or one class
BOTH_SIDES, PREDICTION_SIDE = "both", "prediction"
MIN_SCORE_SIDES = (BOTH_SIDES, PREDICTION_SIDE)  # whose boxes a minimum score drops (--min-score-side)
NO_SCORES_NOTICE = ("no prediction box has a score: every minimum score keeps every box, so the points are one and there is "
                    "no best minimum score (the sweep needs a model's confidences)")


def score_levels(scores: np.ndarray | None, count: int) -> np.ndarray:
    """For each box, how many of the points keep it: a box is kept at t unless its score is below
    t (as `--min-score`), so a box scored s is kept at the first `level` points; an unscored box
    at all of them."""
    if scores is None:
        return np.full(count, POINTS, np.int64)
    return np.searchsorted(np.array(MIN_SCORES), scores, side="right").astype(np.int64)  # NaN sorts last: all points


@dataclass(frozen=True)
class SweepState:
    """The sweep's mergeable state: for each point, the exact counts and the integer 2x2
    Background/Foreground matrix of the pages so far, and, for the detection view, mAP's state of
    all their boxes when a minimum score made the evaluation's own mAP state of fewer boxes (None:
    the evaluation's mAP state is the detection view's, or there is no mAP). `merged` adds runs of
    pages (in page order, for mAP's records), exactly."""

    counts: tuple[ExactCounts, ...]
    reduced: np.ndarray  # (POINTS, 2, 2) integers
    detection: MapState | None = None

    @classmethod
    def from_label_sets(cls, truth: np.ndarray, predicted: np.ndarray, pixels: np.ndarray) -> "SweepState":
        """From each distinct (reference set, predicted set) pair of some pages, as boolean
        (pairs, K) label sets (the empty set as {Background}), and its pixels at each point,
        (pairs, POINTS): Algorithm 1 once a pair (its contribution is linear in the pixels),
        weighted by the pair's pixels at each point. int64 throughout: the caller keeps the pixels
        below 2^63 / K."""
        class_count = truth.shape[1]
        ones = np.ones(len(truth), np.int64)
        entry, denominator, row, column, coefficient = contribution_entries(truth, predicted, ones)
        keys = (denominator.astype(np.int64) * class_count + row) * class_count + column
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
        starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]) if len(keys) else np.zeros(0, np.int64)
        totals = np.add.reduceat(coefficient[order, None].astype(np.int64) * pixels[entry[order]], starts, axis=0) if len(keys) else np.zeros((0, POINTS), np.int64)
        distinct = keys[starts]
        counts = tuple(_point_counts(distinct, totals[:, point], class_count) for point in range(POINTS))
        per_pair = reduced_counts(truth, predicted, ones, np.arange(len(truth)), len(truth))  # each pair's 2x2 at one pixel
        return cls(counts, np.einsum("pij,pk->kij", per_pair.astype(np.int64), pixels))

    @classmethod
    def merged(cls, parts: Sequence["SweepState"], class_count: int) -> "SweepState":
        if not parts:
            raise ValueError("no sweep states to merge")
        counts = tuple(ExactCounts.merge([part.counts[point] for part in parts], class_count) for point in range(POINTS))
        reduced = sum((part.reduced.astype(object) for part in parts[1:]), parts[0].reduced.astype(object))
        detection = None if any(part.detection is None for part in parts) else MapState.merged([part.detection for part in parts])  # type: ignore[misc]
        return cls(counts, np.asarray(reduced), detection)

    def foreground_points(self) -> list[tuple[float, float]]:
        """Each point's Foreground recall and precision, as the run at that minimum score gives them."""
        return [foreground(ExactMatrix.from_integers(reduced)) for reduced in self.reduced]

    def class_totals(self, classes: list[str]) -> list[ClassTotals]:
        """Each point's per-class totals (single taxonomy), without its K x K matrices."""
        return [ClassTotals.from_counts(classes, counts) for counts in self.counts]


def _point_counts(keys: np.ndarray, totals: np.ndarray, class_count: int) -> ExactCounts:
    """One point's non-zero totals of (denominator, row, column) keys, as `ExactCounts.summed` gives them."""
    kept = totals != 0
    keys, k = keys[kept], class_count
    return ExactCounts(k, keys // (k * k), (keys // k) % k, keys % k, totals[kept])


@dataclass(frozen=True)
class Curve:
    """Recall, precision and F1 at each point (None where undefined), and AP for a detection curve."""

    recall: tuple[float | None, ...]
    precision: tuple[float | None, ...]
    f1: tuple[float | None, ...]
    ap: float | None = None
    has_best: bool = True  # False when no box has a score: the points are one, none is best

    @property
    def best(self) -> int | None:
        """The point of the highest F1 (the lowest such minimum score on a tie), or None (no defined
        point, or no scored box)."""
        defined = [(value, -point) for point, value in enumerate(self.f1) if value is not None and self.has_best]
        return -max(defined)[1] if defined else None

    def to_json(self, ap_name: str | None = None) -> dict:
        """The curve, with its AP under `ap_name` when given."""
        best = self.best
        return {**({ap_name: self.ap} if ap_name else {}), "recall": list(self.recall), "precision": list(self.precision), "f1": list(self.f1),
                "best": None if best is None else {"min_score": MIN_SCORES[best], "f1": self.f1[best]}}


def _foreground_curve(pairs: list[tuple[float, float]]) -> Curve:
    """The reduced view's Foreground (recall, precision) across the points."""
    return Curve(tuple(r for r, _ in pairs), tuple(p for _, p in pairs), tuple(f1_score(p, r) for r, p in pairs))


def _class_curve(per_point: list[dict[str, ClassScores]], name: str) -> Curve:
    """A class's diagonal across the points, from each point's `per_class`."""
    scores = [per_class[name] for per_class in per_point]
    return Curve(tuple(s["recall"] for s in scores), tuple(s["precision"] for s in scores), tuple(s["f1"] for s in scores))


def detection_counts(matches: PageMatches) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """True and false positives of each class at each point, (classes, POINTS), at IoU 0.50 over
    all areas (bit 0 of the records), and each class's reference boxes. A record is kept at a
    point when its score (as its convention ranks it) reaches the minimum score: COCOeval's greedy
    matching takes detections in score order, so the boxes above t match as they would alone."""
    class_count = len(matches.boxes)
    hit, skipped = ((matches.patterns & np.uint64(1)) == 1)[matches.codes].T  # bit 0 of each table row, then of each record
    levels = score_levels(matches.scores, len(matches.scores))

    def at_points(chosen: np.ndarray) -> np.ndarray:
        by_level = np.zeros((class_count, POINTS + 1), np.int64)
        np.add.at(by_level, (matches.classes[chosen], levels[chosen]), 1)
        return np.cumsum(by_level[:, ::-1], axis=1)[:, ::-1][:, 1:]  # kept at point k: level > k

    return at_points(hit & ~skipped), at_points(~hit & ~skipped), matches.ground_truths[:, 0].copy()


def _detection_curve(true: np.ndarray, false: np.ndarray, references: int, ap: float | None) -> Curve:
    scores = [rates(int(t), int(t + f), references, EmptyRule.UNDEFINED) for t, f in zip(true.tolist(), false.tolist())]
    return Curve(tuple(s.recall for s in scores), tuple(s.precision for s in scores), tuple(s.f1 for s in scores), ap)


@dataclass(frozen=True)
class DetectionView:
    """mAP's answer to the same question: per class and for all classes pooled, the detection
    curves at IoU 0.50 with AP beside them (mAP for the pool)."""

    convention: str
    pooled: Curve
    per_class: dict[str, Curve]

    @classmethod
    def build(cls, state: MapState, report: MapReport, classes: Sequence[str]) -> "DetectionView":
        """From mAP's state of all boxes and its report (which gives AP)."""
        true, false, references = detection_counts(state.matches)
        per_class = {classes[label]: _detection_curve(true[label], false[label], int(references[label]), report.per_class[classes[label]][0])
                     for label in np.flatnonzero(state.matches.boxes).tolist()}
        return cls(state.convention, _detection_curve(true.sum(axis=0), false.sum(axis=0), int(references.sum()), report.map), per_class)

    def to_json(self) -> dict:
        return {"convention": self.convention, "iou": DETECTION_IOU, "all": self.pooled.to_json("map"),
                "per_class": {name: curve.to_json("ap") for name, curve in self.per_class.items()}}


@dataclass(frozen=True, repr=False)
class SweepReport:
    """TORE's Foreground and per-class curves over `MIN_SCORES` (per class: single taxonomy only,
    the classes present at the lowest point), and the detection view (None without mAP)."""

    foreground: Curve
    per_class: dict[str, Curve] | None
    detection: DetectionView | None
    notice: str | None = None  # why no curve has a best point (`NO_SCORES_NOTICE`), or None

    @classmethod
    def build(cls, state: SweepState, mode: str, classes: list[str], detection: DetectionView | None, *, scored: bool = True) -> "SweepReport":
        """`scored`: whether any prediction box has a score; without one no curve has a best point."""
        per_class = None
        if mode == "single":
            totals = state.class_totals(classes)
            per_point = [point.per_class() for point in totals]
            per_class = {name: _class_curve(per_point, name) for name in totals[0].present_classes()}
        report = cls(_foreground_curve(state.foreground_points()), per_class, detection)
        return report if scored else report.without_best()

    def without_best(self) -> "SweepReport":
        """The same curves without a best point, and the notice saying why."""
        def flat(curve: Curve) -> Curve:
            return replace(curve, has_best=False)

        detection = self.detection
        if detection is not None:
            detection = replace(detection, pooled=flat(detection.pooled), per_class={name: flat(c) for name, c in detection.per_class.items()})
        per_class = None if self.per_class is None else {name: flat(curve) for name, curve in self.per_class.items()}
        return SweepReport(flat(self.foreground), per_class, detection, NO_SCORES_NOTICE)

    def __repr__(self) -> str:
        best = self.foreground.best
        at = "n/a" if best is None else f"{self.foreground.f1[best]:.4f} at min-score {MIN_SCORES[best]:.2f}"
        return f"SweepReport({POINTS} min-scores {MIN_SCORES[0]:.2f}..{MIN_SCORES[-1]:.2f}: best Foreground F1 {at})"

    def to_json(self) -> dict:
        """report.json's `sweep` block."""
        return {
            "min_scores": list(MIN_SCORES),
            "foreground": self.foreground.to_json(),
            "per_class": None if self.per_class is None else {name: curve.to_json() for name, curve in self.per_class.items()},
            "detection": None if self.detection is None else self.detection.to_json(),
            "notice": self.notice,
        }

    def rows(self) -> list[tuple]:
        """sweep.csv's rows (`SWEEP_COLUMNS`): the Foreground with the pooled detection curve, then
        each class with its own, point by point; None where undefined or absent."""
        detection = self.detection
        scopes: list[tuple[str, str | None, Curve, Curve | None]] = [(FOREGROUND, None, self.foreground, detection.pooled if detection else None)]
        names = list(self.per_class or {}) + [name for name in (detection.per_class if detection else {}) if name not in (self.per_class or {})]
        for name in names:
            scopes.append((CLASS, name, (self.per_class or {}).get(name, _EMPTY), detection.per_class.get(name) if detection else None))
        return [row for scope in scopes for row in _curve_rows(*scope)]


_EMPTY = Curve((None,) * POINTS, (None,) * POINTS, (None,) * POINTS)


def _curve_rows(scope: str, name: str | None, tore: Curve, detection: Curve | None) -> list[tuple]:
    other = detection or _EMPTY
    best, other_best = tore.best, other.best
    return [(t, scope, name, tore.recall[k], tore.precision[k], tore.f1[k], k == best, other.ap,
             other.precision[k], other.recall[k], other.f1[k], k == other_best) for k, t in enumerate(MIN_SCORES)]
