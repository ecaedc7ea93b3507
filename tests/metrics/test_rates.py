"""The one precision/recall/F1 helper and its empty-case rules (each benchmark keeps its own)."""

from __future__ import annotations

import pytest

from tore_engine.metrics.rates import EmptyRule, Rates, f1_score, rates
from tore_engine.scorers.common import MISSING, format_score


def test_rates_from_counts():
    scores = rates(3, 4, 6)
    assert (scores.precision, scores.recall) == (0.75, 0.5)
    assert scores.f1 == f1_score(0.75, 0.5) == pytest.approx(0.6, abs=1e-15)


@pytest.mark.parametrize("rule, nothing, no_prediction, no_hit", [
    # (tp, predicted, actual) = (0, 0, 0), (0, 0, 5), (0, 2, 5)
    (EmptyRule.ZERO, Rates(0.0, 0.0, 0.0), Rates(0.0, 0.0, 0.0), Rates(0.0, 0.0, 0.0)),
    (EmptyRule.ONE_IF_NOTHING, Rates(1.0, 1.0, 1.0), Rates(0.0, 0.0, 0.0), Rates(0.0, 0.0, 0.0)),
    (EmptyRule.ZERO_WITHOUT_HITS, Rates(0.0, 0.0, 0.0), Rates(0.0, 0.0, 0.0), Rates(0.0, 0.0, 0.0)),
    (EmptyRule.UNDEFINED, Rates(None, None, None), Rates(None, 0.0, 0.0), Rates(0.0, 0.0, 0.0)),
])
def test_each_benchmark_keeps_its_rule_for_empty_denominators(rule, nothing, no_prediction, no_hit):
    assert rates(0, 0, 0, rule) == nothing
    assert rates(0, 0, 5, rule) == no_prediction
    assert rates(0, 2, 5, rule) == no_hit


def test_with_hits_every_rule_but_undefined_gives_the_harmonic_mean():
    harmonic = {rule: rates(1, 3, 7, rule) for rule in EmptyRule}
    assert len({harmonic[rule] for rule in EmptyRule if rule is not EmptyRule.UNDEFINED}) == 1
    assert harmonic[EmptyRule.ZERO].f1 == f1_score(1 / 3, 1 / 7)
    assert harmonic[EmptyRule.UNDEFINED].f1 == 2 * 1 / (3 + 7)  # OmniDocBench's IoU-0.5 table: 2 tp / (p + t)


def test_an_undefined_number_is_written_n_a():
    assert MISSING == "n/a"
    assert (format_score(None), format_score(0.5), format_score(1 / 3, 2)) == ("n/a", "0.5000", "0.33")
