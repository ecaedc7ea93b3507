"""Precision, recall and F1 from counts, with the rule for an empty denominator made explicit.

The benchmarks disagree, on purpose, about a ratio whose denominator is zero (nothing predicted,
nothing to find): each follows its own official evaluator or spec, so the rule is a parameter
(`EmptyRule`) of the one helper (`rates`) rather than five copies with five silent choices.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class EmptyRule(Enum):
    """What a ratio with an empty denominator is."""

    ZERO = "zero"  # 0.0 (docile-benchmark; TORE's per-page Foreground scores)
    ONE_IF_NOTHING = "one if nothing"  # all 1.0 when tp = fp = fn = 0, else ZERO (docs/benchmarks.md#precision-recall-f1)
    ZERO_WITHOUT_HITS = "zero without hits"  # all 0.0 when tp = 0, else as ZERO (layoutlmft re_score)
    UNDEFINED = "undefined"  # None; F1 = 2 tp / (predicted + actual), defined if either side has items


@dataclass(frozen=True)
class Rates:
    precision: float | None
    recall: float | None
    f1: float | None

    def to_json(self) -> dict[str, float | None]:
        return {"precision": self.precision, "recall": self.recall, "f1": self.f1}


def f1_score(precision: float, recall: float) -> float:
    """The harmonic mean of precision and recall, 0.0 when both are 0."""
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


def rates(true_positives: int, predicted: int, actual: int, rule: EmptyRule = EmptyRule.ZERO) -> Rates:
    """Precision (`true_positives / predicted`), recall (`true_positives / actual`) and F1."""
    if rule is EmptyRule.UNDEFINED:
        return Rates(
            true_positives / predicted if predicted else None,
            true_positives / actual if actual else None,
            2 * true_positives / (predicted + actual) if predicted + actual else None,
        )
    if rule is EmptyRule.ZERO_WITHOUT_HITS and true_positives == 0:
        return Rates(0.0, 0.0, 0.0)
    if rule is EmptyRule.ONE_IF_NOTHING and predicted == actual == 0:
        return Rates(1.0, 1.0, 1.0)
    precision = true_positives / predicted if predicted else 0.0
    recall = true_positives / actual if actual else 0.0
    return Rates(precision, recall, f1_score(precision, recall))
