"""`score_order.descending`, the compiled radix sort of scores, against NumPy's stable argsort it
replaces at scale (kept as its path for small jobs), and mAP's and TIDE's orders made with it."""

from __future__ import annotations

import numpy as np
import pytest

from tore_engine.core import jit
from tore_engine.metrics import map_kernel, score_order
from tore_engine.metrics.box_outcomes import _by_class, _by_score
from tore_engine.metrics.map_types import ranking

pytestmark = pytest.mark.skipif(not jit.numba_available(), reason="numba is not installed: no compiled path to check")

# ties, both zeros, infinities, NaN, negatives, subnormals and numbers one bit apart: every case of the key
SPECIAL = [-0.0, 0.0, 0.1, 0.5, 0.5000000000000001, 0.9, 1.0, np.inf, -np.inf, np.nan, -np.nan, -0.3, -1e300, 5e-324, -5e-324, 1e300]


def _scores(generator: np.random.Generator, records: int, kind: str) -> np.ndarray:
    if kind == "special":
        return generator.choice(SPECIAL, records)
    if kind == "two decimals":
        return np.round(generator.random(records), 2)
    if kind == "float32":  # a model's scores: the low 29 bits of every float64 zero, those passes left out
        return generator.random(records).astype(np.float32).astype(np.float64)
    return generator.standard_normal(records) * 10.0 ** generator.integers(-300, 300, records)


@pytest.mark.parametrize("kind", ["special", "two decimals", "float32", "any"])
def test_descending_is_numpys_stable_argsort_of_the_negated_scores(kind):
    generator = np.random.default_rng(3)
    for records in (0, 1, 2, 7, 1_000, 70_000):
        scores = _scores(generator, records, kind)
        expected = np.argsort(-scores, kind="stable")
        np.testing.assert_array_equal(score_order.descending(scores, compiled=True), expected)
        np.testing.assert_array_equal(score_order.descending(scores, compiled=False), expected)
        for first in (generator.permutation(records), generator.permutation(records)[: records // 3]):  # every position, or some
            first = first.astype(np.int32)
            expected_from_first = first[np.argsort(-scores[first], kind="stable")]
            np.testing.assert_array_equal(score_order.descending(scores, first, compiled=True), expected_from_first)
            np.testing.assert_array_equal(score_order.descending(scores, first, compiled=False), expected_from_first)
        classes = generator.integers(0, 2**15, records).astype(np.int16)  # then by class: mAP's ranking
        by_class = np.lexsort((np.arange(records), -scores, classes)) if not np.isnan(scores).any() else None
        for compiled in (True, False):
            ranked = score_order.descending(scores, compiled=compiled, classes=classes)
            np.testing.assert_array_equal(ranked, expected[np.argsort(classes[expected], kind="stable")])
            if by_class is not None:
                np.testing.assert_array_equal(ranked, by_class)


@pytest.mark.parametrize("kind", ["special", "two decimals", "float32"])
def test_maps_ranking_and_tides_orders_are_the_same_either_way(kind):
    """mAP's ranking (by class, then score) and TIDE's two score orders, compiled against NumPy's,
    and against numpy's lexsort of the same keys."""
    generator = np.random.default_rng(5)
    for records, class_count in ((0, 1), (1, 1), (5_000, 17), (40_000, 2048)):
        scores = _scores(generator, records, kind)
        scores[np.isnan(scores)] = 1.0  # records hold no NaN (an unscored box ranks as 1.0)
        classes = generator.integers(0, class_count, records).astype(np.int32)
        true = generator.random(records) < 0.6
        compiled = ranking(classes, scores, compiled=True)
        np.testing.assert_array_equal(compiled, ranking(classes, scores))
        np.testing.assert_array_equal(compiled, np.lexsort((-scores, classes)))
        # TIDE's records are some of the prediction columns (the kept ones, in page order): here
        # every other position among as many again, whose scores must not count
        columns = np.repeat(scores, 2)
        columns[1::2] = generator.choice([0.0, 0.5, 2.0], records)
        kept = np.arange(0, 2 * records, 2, dtype=np.int32)
        plain, errors_first = _by_score(columns, kept, true, compiled=True)
        np.testing.assert_array_equal(_by_class(plain // 2, classes), np.lexsort((-scores, classes)))
        np.testing.assert_array_equal(_by_class(errors_first // 2, classes), np.lexsort((true, -scores, classes)))
        numpy_plain, numpy_errors_first = _by_score(columns, kept, true)
        np.testing.assert_array_equal(plain, numpy_plain)
        np.testing.assert_array_equal(errors_first, numpy_errors_first)


def test_the_kernel_sorts_only_what_numpy_sorts_slower_than_it_loads(monkeypatch):
    monkeypatch.delenv("TORE_MAP_KERNEL", raising=False)
    records = score_order.COMPILED_FROM_RECORDS
    assert not map_kernel.use_score_order(records - 1, 1_000_000)
    assert map_kernel.use_score_order(records, 1_000_000)
    monkeypatch.setenv("TORE_MAP_KERNEL", "numpy")
    assert not map_kernel.use_score_order(records, 1_000_000)


@pytest.mark.parametrize("kind", ["special", "two decimals", "float32"])
def test_descending_twice_is_the_order_and_its_ties_with_the_marked_last(kind):
    """The second order against NumPy's stable argsort of (score descending, marked last) over the
    listed positions, whatever their order; the first is `descending`'s. Scores hold no NaN (TIDE's
    unscored boxes rank as 1.0); -0.0 and 0.0 are one run of ties, as NumPy compares them."""
    generator = np.random.default_rng(7)
    for records in (0, 1, 2, 9, 3_000, 60_000):
        scores = _scores(generator, records, kind)
        scores[np.isnan(scores)] = 1.0
        marked = generator.random(records) < 0.5
        for first in (np.arange(records), generator.permutation(records)[: records // 2 + 1][:records]):
            first = first.astype(np.int32)
            plain, marked_last = score_order.descending_twice(scores, first, marked)
            np.testing.assert_array_equal(plain, score_order.descending(scores, first, compiled=False))
            np.testing.assert_array_equal(marked_last, first[np.lexsort((marked[first], -scores[first]))])
    with pytest.raises(ValueError, match="mark each position"):
        score_order.descending_twice(np.zeros(3), np.arange(2, dtype=np.int32), np.zeros(2, bool))
