"""The counting rules shared by every FUNSD and EC-FUNSD panel (docs/benchmarks.md#precision-recall-f1 to docs/benchmarks.md#ser).

Precision/recall/F1 from counts, class-wise labeling scores (scikit-learn), entity-level SER
(seqeval, the library LayoutLM-family papers use) and the Adjusted Rand Index (scikit-learn).
The libraries are the ones the conformance vectors were produced with, so the numbers match to
the last bits rather than "almost".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import Field, dataclass, field, fields
from typing import Any, ClassVar, Generic, Protocol, Self, TypeVar

from tore_engine.metrics.rates import EmptyRule, rates

NO_LABEL = "<none>"  # the other side of an unmatched entity in labeling pairs; never a class


class Summable:
    """Mergeable state: a dataclass whose fields all support `+` adds field by field."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]  # set by @dataclass on each subclass

    def __add__(self, other: Self) -> Self:
        return type(self)(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)})


@dataclass(frozen=True)
class Counts(Summable):
    """tp/fp/fn of one precision/recall/F1 figure; sums over documents are micro averages."""

    tp: int = 0
    fp: int = 0
    fn: int = 0

    @classmethod
    def from_sizes(cls, tp: int, predicted: int, reference: int) -> "Counts":
        return cls(tp, predicted - tp, reference - tp)

    @property
    def is_empty(self) -> bool:
        return self.tp + self.fp + self.fn == 0

    def prf(self) -> dict:
        """docs/benchmarks.md#precision-recall-f1: all 1.0 when nothing exists on either side, else 0.0 for an empty denominator."""
        return self._with_rates(EmptyRule.ONE_IF_NOTHING)

    def prf_layoutxlm(self) -> dict:
        """layoutlmft `re_score`: everything is 0 when tp is 0, even with nothing on either side."""
        return self._with_rates(EmptyRule.ZERO_WITHOUT_HITS)

    def _with_rates(self, rule: EmptyRule) -> dict:
        scores = rates(self.tp, self.tp + self.fp, self.tp + self.fn, rule)
        return {"tp": self.tp, "fp": self.fp, "fn": self.fn, **scores.to_json()}


def mean_or_none(total: float, count: int) -> float | None:
    return total / count if count else None


def labeling_panel(y_true: Sequence[str], y_pred: Sequence[str], classes: Sequence[str]) -> dict:
    """docs/benchmarks.md#entity-labeling: per class, micro, macro and micro without `other` over the classes present."""
    from sklearn.metrics import precision_recall_fscore_support

    present = [c for c in classes if c in set(y_true) | set(y_pred)]
    if not present:
        ones = {"precision": 1.0, "recall": 1.0, "f1": 1.0}
        return {"per_class": {}, "micro": ones, "macro": dict(ones), "micro_excluding_other": dict(ones),
                "classes_in_macro": []}

    def averaged(labels: list[str], average: str) -> dict:
        p, r, f, _ = precision_recall_fscore_support(y_true, y_pred, labels=labels, average=average, zero_division=0)
        return {"precision": float(p), "recall": float(r), "f1": float(f)}

    p, r, f, support = precision_recall_fscore_support(y_true, y_pred, labels=present, average=None, zero_division=0)
    per_class = {
        c: {"precision": float(p[i]), "recall": float(r[i]), "f1": float(f[i]),
            "support_gt": int(support[i]), "n_pred": sum(1 for label in y_pred if label == c)}
        for i, c in enumerate(present)
    }
    without_other = [c for c in present if c != "other"]
    return {
        "per_class": per_class,
        "micro": averaged(present, "micro"),
        "macro": averaged(present, "macro"),
        "micro_excluding_other": averaged(without_other, "micro") if without_other else None,
        "classes_in_macro": present,
    }


def seqeval_panel(true_tags: Sequence[Sequence[str]], pred_tags: Sequence[Sequence[str]]) -> dict:
    """docs/benchmarks.md#ser: entity-level (chunk) scores in seqeval's default conlleval mode, one sequence per document."""
    from seqeval.metrics.sequence_labeling import (
        get_entities,
        precision_recall_fscore_support,
    )

    true_lists = [list(tags) for tags in true_tags]
    pred_lists = [list(tags) for tags in pred_tags]
    true_chunks = set(get_entities(true_lists))
    pred_chunks = set(get_entities(pred_lists))
    tp = len(true_chunks & pred_chunks)
    n_words = sum(len(tags) for tags in true_lists)
    correct_words = sum(t == p for ts, ps in zip(true_lists, pred_lists) for t, p in zip(ts, ps))
    panel: dict[str, object] = {
        "per_type": {},
        "overall": {"precision": 0.0, "recall": 0.0, "f1": 0.0},
        "token_accuracy": mean_or_none(correct_words, n_words),
        "span_counts": {"tp": tp, "fp": len(pred_chunks) - tp, "fn": len(true_chunks) - tp},
    }
    if not true_chunks and not pred_chunks:
        return panel
    types = sorted({chunk[0] for chunk in true_chunks | pred_chunks})  # seqeval's own order
    p, r, f, support = precision_recall_fscore_support(true_lists, pred_lists, average=None, zero_division=0)
    panel["per_type"] = {
        name: {"precision": float(p[i]), "recall": float(r[i]), "f1": float(f[i]), "support": int(support[i])}
        for i, name in enumerate(types)
    }
    p, r, f, _ = precision_recall_fscore_support(true_lists, pred_lists, average="micro", zero_division=0)
    panel["overall"] = {"precision": float(p), "recall": float(r), "f1": float(f)}
    return panel


def adjusted_rand_index(true_clusters: Sequence[int], predicted_clusters: Sequence[int]) -> float | None:
    """scikit-learn's ARI; `None` (undefined) for an empty list of items."""
    from sklearn.metrics import adjusted_rand_score

    if not true_clusters:
        return None
    return float(adjusted_rand_score(list(true_clusters), list(predicted_clusters)))


class ScoredDocument(Protocol):
    doc_id: str


Reference = TypeVar("Reference")
Prediction = TypeVar("Prediction")
Score = TypeVar("Score", bound=ScoredDocument)


@dataclass
class DocumentScorer(Generic[Reference, Prediction, Score]):
    """Documents scored one at a time and merged across workers (torchmetrics' update / merge /
    compute); a subclass names how one document is scored and how the corpus panel is made."""

    documents: list[Score] = field(default_factory=list)

    def score(self, reference: Reference, prediction: Prediction) -> Score:  # pragma: no cover - each subclass scores its own documents
        raise NotImplementedError

    def update(self, reference: Reference, prediction: Prediction) -> Score:
        score = self.score(reference, prediction)
        self.documents.append(score)
        return score

    def merge(self, other: Self) -> Self:
        return type(self)(self.documents + other.documents)

    def sorted_documents(self) -> list[Score]:
        """The documents in id order (the corpus panel does not depend on the order they came in)."""
        if not self.documents:
            raise ValueError("no document to aggregate")
        return sorted(self.documents, key=lambda document: document.doc_id)
