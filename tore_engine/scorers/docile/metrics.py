"""DocILE metrics from field matchings (docs/benchmarks.md#docile-metrics): AP over a global ranking of all
predictions, and F1/precision/recall without the `use_only_for_ap` predictions.

Everything works on a flat `PredictionTable` (one row per prediction of every document), so that
per-fieldtype, per-document and same-text metrics are masks over the same arrays.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from tore_engine.metrics.rates import EmptyRule, rates
from tore_engine.scorers.docile.dataset import Field
from tore_engine.scorers.docile.matching import DocumentMatching


@dataclass(frozen=True)
class Metrics:
    """The official metric dictionary of `EvaluationResult.get_metrics`."""

    AP: float
    f1: float
    precision: float
    recall: float
    TP: int
    FP: int
    FN: int

    def to_json(self) -> dict[str, float | int]:
        return asdict(self)


@dataclass
class PredictionTable:
    """All predictions of one task, document after document, with their match and ranking keys."""

    document: np.ndarray  # (n,) int64 index of the document in the split
    position: np.ndarray  # (n,) int64 index in the document's prediction list
    fieldtype: np.ndarray  # (n,) object
    ap_only: np.ndarray  # (n,) bool
    negated_score: np.ndarray  # (n,) float64, -(score or 0)
    matched: np.ndarray  # (n,) bool
    same_text: np.ndarray  # (n,) bool: matched and the texts are equal
    gold_document: np.ndarray  # (g,) int64
    gold_fieldtype: np.ndarray  # (g,) object
    tie_break: np.ndarray  # (n,) uint64: the official hash of (docid, position) of row n

    @classmethod
    def from_matchings(
        cls,
        docids: Sequence[str],
        predictions: Sequence[Sequence[Field]],
        golds: Sequence[Sequence[Field]],
        matchings: Sequence[DocumentMatching],
    ) -> "PredictionTable":
        flat = [field for fields in predictions for field in fields]
        matched_text = [
            fields[k].text == gold_fields[g].text if g >= 0 else False
            for fields, gold_fields, matching in zip(predictions, golds, matchings)
            for k, g in enumerate(matching.pred_to_gold.tolist())
        ]
        pred_to_gold = np.concatenate([m.pred_to_gold for m in matchings]) if matchings else np.zeros(0, np.int64)
        return cls(
            document=np.repeat(np.arange(len(docids)), [len(fields) for fields in predictions]),
            position=np.concatenate([np.arange(len(fields)) for fields in predictions] or [np.zeros(0, np.int64)]),
            fieldtype=np.array([field.fieldtype for field in flat], dtype=object),
            ap_only=np.array([field.use_only_for_ap for field in flat], dtype=bool),
            negated_score=np.array([-(field.score or 0.0) for field in flat], dtype=np.float64),
            matched=pred_to_gold >= 0,
            same_text=np.array(matched_text, dtype=bool),
            gold_document=np.repeat(np.arange(len(docids)), [len(fields) for fields in golds]),
            gold_fieldtype=np.array([field.fieldtype for fields in golds for field in fields], dtype=object),
            tie_break=_tie_break_hashes(docids, [len(fields) for fields in predictions]),
        )

    def fieldtypes(self) -> list[str]:
        """Every fieldtype of a gold or a prediction, sorted."""
        return sorted({t for t in [*self.fieldtype, *self.gold_fieldtype] if t is not None})

    def metrics(self, *, same_text: bool = False, fieldtype: str | None = None, document: int | None = None) -> Metrics:
        rows = np.ones(len(self.document), dtype=bool)
        gold_rows = np.ones(len(self.gold_document), dtype=bool)
        position = self.position
        if document is not None:
            rows &= self.document == document
            gold_rows &= self.gold_document == document
        if fieldtype is not None:
            rows &= self.fieldtype == fieldtype
            gold_rows &= self.gold_fieldtype == fieldtype
            position = _position_within_selection(self.document, rows)
        matched = (self.same_text if same_text else self.matched)[rows]
        # The hash of (docid, filtered position) is the hash of the row at that position.
        tie_break = self.tie_break[np.flatnonzero(rows) - self.position[rows] + position[rows]]
        ranking = np.lexsort(
            (
                tie_break,
                position[rows],
                self.negated_score[rows],
                self.ap_only[rows],
            )
        )
        gold_count = int(gold_rows.sum())
        return counting_metrics(
            ap=average_precision(matched[ranking], gold_count),
            matched_normal=matched[~self.ap_only[rows]],
            gold_count=gold_count,
        )


def counting_metrics(ap: float, matched_normal: np.ndarray, gold_count: int) -> Metrics:
    """F1, precision, recall, TP, FP, FN of the predictions without `use_only_for_ap`."""
    true_positives = int(matched_normal.sum())
    prediction_count = len(matched_normal)
    scores = rates(true_positives, prediction_count, gold_count, EmptyRule.ZERO)  # as docile-benchmark
    f1, precision, recall = scores.f1, scores.precision, scores.recall
    assert f1 is not None and precision is not None and recall is not None  # EmptyRule.ZERO: 0.0, never None
    return Metrics(
        AP=ap,
        f1=f1,
        precision=precision,
        recall=recall,
        TP=true_positives,
        FP=prediction_count - true_positives,
        FN=gold_count - true_positives,
    )


def average_precision(ranked_matched: np.ndarray, gold_count: int) -> float:
    """Area under the precision envelope, summed sequentially as the official loop does."""
    if gold_count == 0 or len(ranked_matched) == 0:
        return 0.0
    true_positives = np.cumsum(ranked_matched, dtype=np.int64)
    recall = np.concatenate([[0.0], true_positives / gold_count])
    precision = true_positives / np.arange(1, len(ranked_matched) + 1)
    envelope = np.maximum.accumulate(precision[::-1])[::-1]
    # np.cumsum adds left to right, unlike np.sum's pairwise summation.
    return float(np.cumsum(np.diff(recall) * envelope)[-1])


def _position_within_selection(document: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """For selected rows, their index among the selected rows of the same document."""
    position = np.zeros(len(document), dtype=np.int64)
    selected = np.flatnonzero(rows)
    if len(selected):
        documents = document[selected]
        first = np.searchsorted(documents, documents, side="left")  # documents are sorted
        position[selected] = np.arange(len(selected)) - first
    return position


def _tie_break_hashes(docids: Sequence[str], counts: Sequence[int]) -> np.ndarray:
    """sha1(docid + position as 8 little-endian bytes), first 16 hex digits, as sortable uint64,
    for every position of every document's prediction list."""
    return np.array(
        [
            int(hashlib.sha1(docid.encode() + i.to_bytes(8, "little")).hexdigest()[:16], 16)
            for docid, count in zip(docids, counts)
            for i in range(count)
        ],
        dtype=np.uint64,
    )
